import Foundation
import Testing
@testable import IMHostRuntime
@testable import IMHost
import IMHostTerminal
@testable import IMHostWeb
import IMKit

/// A listing with every part of a card: a status, so a badge.
let availableListing = #"{"id":"L1","title":"Sunny flat","price":4200,"area":56,"rooms":2,"status":"available"}"#

/// Cards (IMKit 1.3) and their buttons, through the real house, jobs and tasks plugins, loaded as
/// every command loads them.
@Suite("Cards and their buttons")
struct CardPageTests {
    @Test("a card from a real plugin is a card in the page value, and the terminal draws it as the box of text it drew: title and fields, with the subtitle, badge and each button with what to type (a listing sent without a photo keeps no place for one)")
    func terminal() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let house = try host.open(houseURL)
        try house.receive(key: "house.listing", payload: MessagePayload(json: #"{"id":"L7","title":"Loft","price":5100,"area":70,"rooms":2,"status":"reserved"}"#))
        let card = try #require(try house.view(width: 72).messages.first?.body.card)
        #expect(card == PageView.Card(MessageCard(
            title: "🏠 Loft", subtitle: "Listing L7",
            fields: [CardField("Price", "¥5100"), CardField("Area", "70 m²"), CardField("Rooms", "2")],
            image: .photo(0), badge: CardBadge("Reserved", tone: .warning),
            inputs: [.date(id: "day", label: "Day", required: true), .time(id: "time", label: "Time", required: true, earliest: "09:00", latest: "20:00")],
            buttons: [CardButton(id: "details", label: "Details"), CardButton(id: "viewing", label: "Book a viewing", submits: true)])))
        let text = try house.render()
        #expect(text.contains("""
             ╭──────────────────────────────────────────────╮
             │ 🏠 Loft                                      │
             │ Listing L7                                   │
             │ ● Reserved                                   │
             │ Price: ¥5100                                 │
             │ Area: 70 m²                                  │
             │ Rooms: 2                                     │
             │ ▸ Day*: date YYYY-MM-DD                      │
             │ ▸ Time*: time HH:MM from 09:00 to 20:00      │
             │ [Details] /tap 1 details                     │
             │ [Book a viewing] /tap 1 viewing day=… time=… │
             ╰──────────────────────────────────────────────╯
            """), "\(text)")
        // A card stored before listings had a status has no badge; text is text, as it was written.
        try house.receive(key: "house.listing", payload: MessagePayload(json: listingJSON))
        try house.receive(key: "text", payload: MessagePayload(json: #"{"text":"hi"}"#))
        let view = try house.view(width: 72)
        #expect(view.messages[1].body.card?.badge == nil)
        #expect(view.messages[2].body == .text("hi"))
    }

    @Test("a button reaches its card's builder on any page; a text, a placeholder and an id the card lacks never reach a line")
    func pressing() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let house = try host.open(houseURL)
        try house.receive(key: "house.listing", payload: MessagePayload(json: listingJSON))
        try house.receive(key: "text", payload: MessagePayload(json: #"{"text":"hi"}"#))
        try house.receive(key: "cars.offer", payload: MessagePayload(json: "{}"))
        #expect(try house.tapButton(1, "details") == .success(.handled("opened listing L1001 detail: 阳光两居室 Sunny 2-room flat, ¥4200, 2 rooms")))
        #expect(try house.tapButton(1, "nope") == .failure(.unknown("nope", buttons: ["details", "viewing"])))
        #expect(try house.tapButton(1, "Details") == .failure(.unknown("Details", buttons: ["details", "viewing"])), "ids are exact")
        #expect(try house.tapButton(2, "details") == .failure(.noButtons))
        #expect(try house.tapButton(3, "details") == .failure(.placeholder))
        #expect(try house.tapButton(9, "details") == nil)

        // The jobs card on the house page: its builder answers the recruiter, here the house page's peer.
        try house.receive(key: "jobs.interview", payload: MessagePayload(json: interviewJSON))
        #expect(try house.tapButton(4, "decline") == .success(.handled("declined interview at 58 Tech, 2026-11-25 10:00")))
        #expect(try #require(host.store).messages(of: "u42", endingBefore: nil, limit: 1).last?.message.payload.json
                == #"{"text":"Sorry, I have to decline the interview at 58 Tech."}"#)
        // A house card on the jobs page opens its listing there.
        let jobs = try host.open(jobsURL)
        try jobs.receive(key: "house.listing", payload: MessagePayload(json: listingJSON))
        #expect(try jobs.tapButton(1, "details") == .success(.handled("opened listing L1001 detail: 阳光两居室 Sunny 2-room flat, ¥4200, 2 rooms")))
        // One's own card: the builder says why its button does nothing.
        try jobs.send(key: "house.listing", payload: MessagePayload(json: listingJSON))
        let day = ["day": ["2026-12-05"], "time": ["10:00"]]
        #expect(try jobs.tapButton(2, "viewing", values: day) == .success(.failed("you sent this listing; the one you sent it to books a viewing")))

        // A button that submits: the host checks the inputs first, and the line sees nothing of a refused value.
        guard case .failure(.invalid(let missing))? = try house.tapButton(1, "viewing") else { Issue.record("no values were not refused"); return }
        #expect(missing.map(\.input) == ["day", "time"] && missing.map(\.code) == [.required, .required])
        guard case .failure(.invalid(let bad))? = try house.tapButton(1, "viewing", values: ["day": ["2026-02-30"], "time": ["21:00"], "pet": ["cat"]]) else {
            Issue.record("bad values were not refused"); return
        }
        #expect(bad.map(\.code) == [.notADate, .tooLate, .noSuchInput] && bad[1].limit == "20:00", "\(bad)")
        let before = try #require(host.store).count(of: "u42")
        // Values given for another revision of the card than the one it shows are not taken.
        #expect(try house.tapButton(1, "viewing", values: day, revision: 1) == .failure(.stale))
        // Good values: the line revises the card where it stands; no message is added.
        #expect(try house.tapButton(1, "viewing", values: day)
                == .success(.handled("booked a viewing of listing L1001 (阳光两居室 Sunny 2-room flat) on 2026-12-05 at 10:00")))
        #expect(try #require(host.store).count(of: "u42") == before)
        let revised = try house.view(width: 72).messages[0]
        #expect(revised.body.card?.badge?.text == "Viewing booked" && revised.body.card?.inputs == nil, "\(revised.body)")
        #expect(revised.body.card?.fields.last?.value == "2026-12-05 10:00")
        #expect(revised.revised?.number == 1 && revised.revised?.by == host.config.user)
        // It is the message's newest revision in the store, not a new message, and the first payload is kept beside it.
        #expect(try #require(host.store).message(from: "u42", globalID: try #require(revised.envelope.globalID))?.revision?.number == 1)
        // The revised card asks nothing more: Book a viewing is gone.
        #expect(try house.tapButton(1, "viewing", values: day) == .failure(.unknown("viewing", buttons: ["details"])))
        #expect(try house.tapButton(1, "details", revision: 0) == .failure(.stale), "pressed on the card as first shown")

        // What a peer may not revise: a text (only a line's cards change), or a card far past
        // the revision here (it would leave no room for the next).
        let store = try #require(host.store)
        let text = try #require(try house.view(width: 72).messages[1].envelope.globalID)
        #expect(try !store.applyRevision(Envelope.Revision(id: text, from: "u42", number: 1, key: "text", payload: MessagePayload(json: #"{"text":"rewritten"}"#), at: 1),
                                         by: "u42", peer: "u42"))
        #expect(try house.view(width: 72).messages[1].body == .text("hi"))
        let listing = try #require(revised.envelope.globalID)
        func revise(_ number: Int) throws -> Bool {
            try store.applyRevision(Envelope.Revision(id: listing, from: "u42", number: number, key: "house.listing",
                                                      payload: MessagePayload(json: listingJSON), at: 2), by: "u42", peer: "u42")
        }
        #expect(try !revise(1 + Envelope.Revision.window + 1) && revise(1 + Envelope.Revision.window))
    }

    @Test("the jobs card accepts at the time chosen among those offered (the first, when none is named), the cars card takes an offered price; each changes the card in place and the line refuses what it cannot take")
    func answersInPlace() throws {
        let workspace = try Workspace.standard()
        try workspace.install("Cars", as: "cars.so")
        try workspace.writeConfig(Workspace.standardConfig
            .replacingOccurrences(of: #""jobs": { "enabled": true }"#, with: #""jobs": { "enabled": true }, "cars": { "enabled": true }"#))
        let interview = #"{"company":"58 Tech","position":"iOS engineer","time":"2026-11-25 10:00","place":"A","otherTimes":["2026-11-26 14:00"]}"#
        let offer = #"{"id":"C7","model":"Golf","year":2019,"price":86000,"mileage":42000}"#
        let result = try imhost(["chat", ChatCommandTests.houseURL], input: """
            /recv jobs.interview \(interview)
            /recv jobs.interview \(interview)
            /recv cars.offer \(offer)
            /tap 1 accept time=t3
            /tap 1 accept time=t2
            /tap 2 accept
            /tap 3 bid price=lots
            /tap 3 bid price=80,000
            /quit
            """, in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        #expect(out.contains("\n/tap: nothing sent: time is not one of its options;"), "\(out)")
        #expect(out.contains("\ntap #1 accept: accepted interview at 58 Tech, 2026-11-26 14:00\n"), "\(out)")
        #expect(out.contains("\ntap #2 accept: accepted interview at 58 Tech, 2026-11-25 10:00\n"), "the time the card showed chosen: \(out)")
        #expect(out.contains("\ntap #3 bid: failed: \"lots\" is not a price: give a whole number of yuan, e.g. 86000\n"), "\(out)")
        #expect(out.contains("\ntap #3 bid: offered ¥80000 for the Golf\n"), "\(out)")
        let shown = try imhost(["open", ChatCommandTests.houseURL], in: workspace).stdout
        #expect(shown.contains("│ ● Accepted") && shown.contains("│ Time: 2026-11-26 14:00") && shown.contains("│ Time: 2026-11-25 10:00"), "\(shown)")
        #expect(shown.contains("│ ● Offer made") && shown.contains("│ Offered: ¥80000") && !shown.contains("[Make an offer]"), "\(shown)")
        #expect(shown.contains("I accept the interview at 58 Tech on 2026-11-26"), "the recruiter is told too: \(shown)")
    }

    @Test("/tap N BUTTON in imhost chat: the line's answer shows as a tap's; an id the card lacks is refused in one line naming its buttons; a message without buttons and a bad argument say so")
    func chatVerb() throws {
        let workspace = try Workspace.standard()
        let result = try imhost(["chat", ChatCommandTests.houseURL], input: """
            /recv house.listing \(availableListing)
            /recv text {"text":"a text has no buttons"}
            /tap 1 details
            /tap 1 nope
            /tap 1 viewing
            /tap 1 viewing day=2026-12-32 time=10:00
            /tap 1 viewing day=2026-12-05 time=10:00
            /tap 2 details
            /tap 1 a b
            /tap 7 details
            /tap 1
            /quit
            """, in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        #expect(out.contains("│ [Details] /tap 1 details "), "\(out)")
        #expect(out.contains("│ ● Available "))
        #expect(out.contains("\ntap #1 details: opened listing L1 detail: Sunny flat, ¥4200, 2 rooms\n"))
        #expect(out.contains("\n/tap: message #1 has no button 'nope'; its buttons: details, viewing\n"), "one line")
        #expect(out.contains("\n/tap: nothing sent: day is required; time is required; give each a good value and press it again"), "\(out)")
        #expect(out.contains("\n/tap: nothing sent: day is not a date written YYYY-MM-DD; give each a good value"), "\(out)")
        #expect(out.contains("\ntap #1 viewing: booked a viewing of listing L1 (Sunny flat) on 2026-12-05 at 10:00\n"))
        #expect(out.contains("│ ● Viewing booked") && out.contains("│ Viewing: 2026-12-05 10:00"), "the card changed where it stands")
        #expect(out.contains("│ (updated by you at "), "and says it was updated")
        #expect(out.contains("\n/tap: message #2 has no buttons; /tap 2 taps it\n"))
        #expect(out.contains("\nusage: /tap N [BUTTON [INPUT=VALUE ...]], with N a number from 1\n"))
        #expect(out.contains("\n/tap: there is no message #7 on screen\n"))
        #expect(out.contains("\ntap #1: opened listing L1 detail: Sunny flat, ¥4200, 2 rooms\n"), "a tap on the card is still a tap")
        #expect(result.stderr == noTransportNotice)
    }

    @Test("a card whose button id no one could type shows as a placeholder that says which; the sender's own line refuses to send one; the smallest card is a title")
    func badButton() throws {
        let workspace = try Workspace()
        try workspace.install("FixtureCards", as: "tasks.so")
        try workspace.writeConfig(#"{ "lines": { "tasks": { "enabled": true } }, "routes": [ { "rootCateID": 77, "cateID": "*", "line": "tasks" } ] }"#)
        let result = try imhost(["chat", "im://chat?rootCateID=77&peer=u1"], input: """
            /recv tasks.note {"text":"hi"}
            /recv tasks.task {"title":"Sign the lease","due":"Friday"}
            /recv tasks.broken {"text":"oops"}
            /tap 2 done
            /tap 3 do
            /why 3
            /send tasks.broken {"text":"mine"}
            /quit
            """, in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        #expect(out.contains("""
             ╭───────╮
             │ 📝 hi │
             ╰───────╯
            """), "\(out)")
        #expect(out.contains("│ [Mark done] /tap 2 done │"))
        #expect(out.contains("tap #2 done: marked \"Sign the lease\" done"))
        #expect(out.contains("tap #3 do: nothing happens: it shows as a placeholder (/why 3 says why)"))
        #expect(out.contains("why #3 (tasks.broken): the builder failed: buttons[0].id: \"do it\" has a space; an id is 1 to 32 ASCII letters, digits, '-', '_' or '.', starting with a letter or a digit"), "\(out)")
        #expect(out.contains("/send: not sent: your own 'tasks' line cannot draw this tasks.broken (its builder failed: buttons[0].id: \"do it\" has a space"), "\(out)")
    }

    @Test("a flood of newlines a peer put in a card's field is folded in the terminal as any message's lines are")
    func flood() throws {
        let workspace = try Workspace()
        try workspace.install("FixtureCards", as: "tasks.so")
        try workspace.writeConfig(#"{ "lines": { "tasks": { "enabled": true } }, "routes": [ { "rootCateID": 77, "cateID": "*", "line": "tasks" } ] }"#)
        let flood = String(repeating: "\\n", count: 3000)
        let result = try imhost(["chat", "im://chat?rootCateID=77&peer=u1"], input: """
            /recv tasks.task {"title":"Flooded","due":"a\(flood)b"}
            /recv text {"text":"after the flood"}
            /quit
            """, in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        let last = result.stdout.components(separatedBy: "════════════════════════════════════════════════════════════════════════\n").last ?? ""
        #expect(last.contains("│ ☑️ Flooded") && last.contains("more lines") && last.contains("│ after the flood │"), "\(last)")
        #expect(last.split(separator: "\n").count < 70, "\(last)")
    }

    @Test("a card's rules: ids a person can type, each once, and the path of each mistake")
    func buttonRules() {
        func card(_ ids: String...) -> MessageCard { MessageCard(title: "t", buttons: ids.map { CardButton(id: $0, label: $0.isEmpty ? "x" : $0) }) }
        #expect(card().ruleErrors() == [])
        #expect(card("a", "B-2", "c_d.e", String(repeating: "x", count: 32)).ruleErrors() == [])
        for bad in ["", "-a", ".a", "_a", "a b", "é", "a/b", String(repeating: "x", count: 33), "a\n"] {
            #expect(card("ok", bad).ruleErrors().map(\.path) == ["buttons[1].id"], "\(bad)")
            #expect(card("ok", bad).ruleErrors().map(\.code) == [.notAnID], "\(bad)")
        }
        #expect(card("a", "a").ruleErrors().map(\.code) == [.duplicateID])
        #expect(card("ok", "ok2", "book now").ruleErrors().first?.description.hasPrefix(#"buttons[2].id: "book now" has a space"#) == true)
    }

    @Test("a scenario presses a button with { \"tap\": \"N BUTTON\" }, and says what it expected of one that is not")
    func scenario() throws {
        let workspace = try Workspace.standard()
        let file = workspace.root + "/cards.json"
        try """
            [
              { "open": "\(ChatCommandTests.houseURL)" },
              { "receive": "house.listing", "payload": \(availableListing) },
              { "tap": "1 details" },
              { "expect": { "contains": ["● Available", "[Book a viewing] /tap 1 viewing"], "tap": "opened listing L1 detail: Sunny flat, ¥4200, 2 rooms" } },
              { "tap": " 1   viewing  day=2026-12-05 time=18:30 " },
              { "expect": { "stored": 1, "contains": ["● Viewing booked"], "tap": "booked a viewing of listing L1 (Sunny flat) on 2026-12-05 at 18:30" } }
            ]
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let played = try imhost(["play", file], in: workspace)
        #expect(played.status == 0, "\(played.stdout.suffix(2000)) \(played.stderr)")
        #expect(played.stdout.contains("── 3. /tap 1 details\n   → tap #1 details: opened listing L1"), "\(played.stdout)")
        #expect(played.stdout.hasSuffix("6 steps passed.\n"))

        try #"[ { "tap": "one details" } ]"#.write(toFile: file, atomically: true, encoding: .utf8)
        let bad = try imhost(["play", file], in: workspace)
        #expect(bad.status == 2)
        #expect(bad.stderr == "imhost play: \(file):1:12: step 1.tap: expected a number from 1, or \"N BUTTON\" and perhaps INPUT=VALUE for each input: a number, a space and a button's id\n", "\(bad.stderr)")
    }

    @Test("open --json gives a card as the terminal draws it and as its parts")
    func json() throws {
        let workspace = try Workspace.standard()
        let stored = try imhost(["chat", ChatCommandTests.houseURL], input: "/recv house.listing \(availableListing)\n", in: workspace)
        #expect(stored.status == 0)
        let result = try imhost(["open", ChatCommandTests.houseURL, "--json"], in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        let page = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let message = try #require((page["messages"] as? [[String: Any]])?.first)
        let lines = try #require(message["lines"] as? [String])
        #expect(lines.first == "🏠 Sunny flat" && lines.contains("[Details] /tap 1 details"), "\(lines)")
        let card = try #require(message["card"] as? [String: Any])
        #expect(card["title"] as? String == "🏠 Sunny flat")
        #expect((card["badge"] as? [String: String]) == ["text": "Available", "tone": "positive"])
        #expect((card["buttons"] as? [[String: Any]])?.map { $0["id"] as? String ?? "" } == ["details", "viewing"])
        #expect((card["buttons"] as? [[String: Any]])?.map { $0["submits"] as? Bool } == [nil, true])
        #expect((card["inputs"] as? [[String: Any]])?.map { $0["kind"] as? String ?? "" } == ["date", "time"])
        #expect((card["image"] as? [String: [String: Int]]) == ["photo": ["index": 0]])
    }

    @Test("a page with a card crosses the worker protocol as itself")
    func workerProtocol() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let house = try host.open(houseURL)
        try house.receive(key: "house.listing", payload: MessagePayload(json: listingJSON))
        let message = FromWorker.page(try house.view(width: 72))
        #expect(try JSONDecoder().decode(FromWorker.self, from: Data(try JSONLines.encode(message))) == message)
    }

    /// A message of the page value showing `card`, as number `number`.
    static func shown(_ card: PageView.Card, number: Int, photos: [PhotoSlot] = []) -> PageView.Message {
        PageView.Message(number: number, envelope: MessageEnvelope(id: "m\(number)", conversation: "bob", from: "bob", to: "me", timestamp: 0,
                                                                   key: "house.listing", payload: MessagePayload(json: "{}")),
                         isOutgoing: false, state: .received, body: .card(card), photos: photos)
    }

    @Test("the browser's card: every string escaped, the badge's tone a class, a picture its line did not register a slot saying so, each button a /tap N ID; lines stay preformatted")
    func html() {
        let hostile = "<script>alert('x')</script>&\"'"
        let card = PageView.Card(MessageCard(
            title: hostile, subtitle: hostile, fields: [CardField(hostile, hostile)], image: .picture(hostile),
            badge: CardBadge(hostile, tone: .negative), buttons: [CardButton(id: "ok", label: hostile)]))
        let html = PageHTML.card(card, message: Self.shown(card, number: 3), peer: "bob")
        #expect(!html.contains("<script") && !html.contains("'x'") && !html.contains("&\""), "\(html)")
        #expect(html.contains("<h2 class=\"card-title\" dir=\"auto\"><button type=\"button\" class=\"card-open\" data-do=\"tap\" data-message=\"3\">&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;&#39;</button></h2>"))
        #expect(html.hasPrefix("<section class=\"bubble card\" data-do=\"tap\" data-message=\"3\"><div class=\"card-image not-shown\" role=\"img\" aria-label=\"No picture &quot;&lt;script&gt;"))
        #expect(html.contains("<span class=\"badge negative\">&lt;script&gt;"))
        #expect(html.contains("<dl class=\"card-fields\"><div><dt dir=\"auto\">&lt;script&gt;"))
        #expect(html.contains("<button type=\"button\" data-do=\"tap\" data-message=\"3\" data-button=\"ok\">&lt;script&gt;"))
        let plain = PageView.Card(MessageCard(title: "t"))
        #expect(PageHTML.card(plain, message: Self.shown(plain, number: 1), peer: "bob")
                == "<section class=\"bubble card\" data-do=\"tap\" data-message=\"1\"><header class=\"card-head\"><h2 class=\"card-title\" dir=\"auto\">"
                    + "<button type=\"button\" class=\"card-open\" data-do=\"tap\" data-message=\"1\">t</button></h2></header></section>")
    }
}

import Foundation
import Testing
@testable import IMHost
import IMHostTerminal
@testable import IMHostWeb
@_spi(Host) import IMKit

@Suite("Chat pages")
struct PageTests {
    @Test("each line's mask and the kill switch decide the components, in the platform's order")
    func components() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let house = try host.open(houseURL)
        #expect(house.components.map { type(of: $0).kind } == [.topPost, .quickReplies, .bottomBar, .dropdownMenu, .inputBar])
        let jobs = try host.open(jobsURL)
        #expect(jobs.components.map { type(of: $0).kind } == [.topPost, .bottomBar, .inputBar])
        #expect(jobs.context.component(QuickRepliesComponent.self) == nil)
        #expect(jobs.context.component(DropdownMenuComponent.self) == nil)
        #expect(jobs.component(BottomBarComponent.self)?.items == ["Photo", "Voice", "Video", "Location", "Résumé"])
        #expect(house.component(DropdownMenuComponent.self)?.items == ["Report", "Block", "Clear", "Report a fake listing"])
        #expect(house.component(QuickRepliesComponent.self)?.phrases.suffix(2) == ["Is it still available?", "Can I view it this weekend?"])

        setKillSwitch(host, components: [.bottomBar, .topPost])
        #expect(try host.open(houseURL).components.map { type(of: $0).kind } == [.quickReplies, .dropdownMenu, .inputBar])
        #expect(try host.open(jobsURL).components.map { type(of: $0).kind } == [.inputBar])
        #expect(house.components.count == 5, "pages already open keep their components")
    }

    @Test("a page's title and top post come from its hooks and the jump URL")
    func hooks() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let house = try host.open(houseURL)
        #expect(house.carrier.title == "二手房 Resale · u42")
        #expect(house.component(TopPostComponent.self)?.post == TopPost(title: "📌 阳光两居室 Sunny 2-room flat", detail: "¥4200 · 56 m² · 2 rooms"),
                "the house.listings service knows L1001")
        let unknown = try host.open("im://chat?rootCateID=1&peer=u1&infoID=L77&title=Loft")
        #expect(unknown.component(TopPostComponent.self)?.post == TopPost(title: "📌 Loft", detail: "Listing L77 · tap a card for details"),
                "unknown to the service: the URL's title")
        #expect(house.context.parameters["infoID"] == "L1001")
        #expect(try host.open("im://chat?rootCateID=1&cateID=13&peer=u1").carrier.title == "新房 New homes · u1")
        let noItem = try host.open("im://chat?rootCateID=1&peer=u1")
        #expect(noItem.component(TopPostComponent.self)?.render(width: 40) == [])
        #expect(noItem.component(TopPostComponent.self)?.post == nil)
    }

    @Test("the session bus never crosses pages, calls subscribers in order, and ends with its subscriptions")
    func sessionBus() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let first = try host.open(houseURL)
        let second = try host.open("im://chat?rootCateID=1&cateID=12&peer=u77")

        final class Listener {
            var heard: [String] = []
            var subscription: Subscription?
        }
        struct Ping: ChatEvent { var text: String }
        var order: [String] = []
        let a = Listener(), b = Listener(), other = Listener()
        a.subscription = first.context.bus.subscribe(Ping.self) { [unowned a] ping in a.heard.append(ping.text); order.append("a") }
        b.subscription = first.context.bus.subscribe(Ping.self) { [unowned b] ping in b.heard.append(ping.text); order.append("b") }
        other.subscription = second.context.bus.subscribe(Ping.self) { [unowned other] ping in other.heard.append(ping.text) }

        first.context.bus.publish(Ping(text: "one"))
        #expect(a.heard == ["one"] && b.heard == ["one"])
        #expect(other.heard.isEmpty, "an event on one page never reaches another")
        #expect(order == ["a", "b"])

        var released: Listener? = Listener()
        var calls = 0
        released!.subscription = first.context.bus.subscribe(Ping.self) { _ in calls += 1 }
        #expect(first.context.bus.subscriberCount(for: Ping.self) == 3)
        released = nil
        #expect(first.context.bus.subscriberCount(for: Ping.self) == 2, "a released subscriber's subscription ends with it")
        first.context.bus.publish(Ping(text: "two"))
        #expect(calls == 0)
        #expect(order == ["a", "b", "a", "b"])

        // The platform's own flow: a quick reply on one page sends text there only.
        #expect(first.quickReply(2) == "Is this still available?")
        #expect(try #require(host.store).messages(of: "u42", endingBefore: nil, limit: 10).map(\.message.payload.json) == [#"{"text":"Is this still available?"}"#])
        #expect(try #require(host.store).count(of: "u77") == 0)
    }

    @Test("messages are sent by key through the registry, and refused clearly")
    func sending() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let house = try host.open(houseURL)
        try house.send(key: "house.listing", payload: MessagePayload(json: listingJSON))
        try house.send(key: "location", payload: MessagePayload(json: #"{"latitude":39.9,"longitude":116.4,"name":"望京 Wangjing"}"#))
        #expect(throws: SendError(.unknownKey, "no builder is registered for message key 'house.lisitng'; check the key, or load the line that owns it")) {
            try house.send(key: "house.lisitng", payload: MessagePayload(json: "{}"))
        }
        #expect(throws: SendError(.undecodable, "'house.listing' payload does not decode: missing field 'price'")) {
            try house.send(key: "house.listing", payload: MessagePayload(json: #"{"title":"x"}"#))
        }
        #expect(try #require(host.store).count(of: "u42") == 2)
        setKillSwitch(host, messages: ["location"])
        #expect(throws: SendError(.unavailable, "message key 'location' cannot be sent now: the key is turned off by killSwitch.messages in host.json")) {
            try house.send(key: "location", payload: MessagePayload(json: #"{"latitude":1,"longitude":2,"name":"x"}"#))
        }
        setKillSwitch(host, lines: ["house"])
        let legacy = try host.open(houseURL)
        #expect(throws: SendError(.unavailable, "the legacy page sends built-in messages only; 'house.listing' belongs to line 'house'")) {
            try legacy.send(key: "house.listing", payload: MessagePayload(json: listingJSON))
        }
    }

    @Test("every degrade path shows a placeholder and leaves the stored message as it was")
    func degrade() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let page = try host.open(houseURL)
        try page.receive(key: "cars.offer", payload: MessagePayload(json: #"{"model":"Model 3"}"#))
        try page.receive(key: "house.listing", payload: MessagePayload(json: #"{"title":"no price"}"#))
        try page.receive(key: "house.listing", payload: MessagePayload(json: #"{"area":50,"id":"L9","price":-1,"rooms":1,"title":"bad"}"#))
        try page.receive(key: "house.listing", payload: MessagePayload(json: listingJSON))
        try page.receive(key: "text", payload: MessagePayload(json: "not json at all"))
        let stored = try #require(host.store).messages(of: "u42", endingBefore: nil, limit: 10).map(\.message)

        let presented = try page.presented(width: 72).map(\.message)
        #expect(presented.map(\.degrade) == [
            .unknownKey,
            .undecodable("missing field 'price'"),
            .builderFailed("a listing needs a price of 0 or more, an area above 0 and 0 rooms or more"),
            nil,
            .undecodable("not valid JSON at column 1: unexpected 'n', expected a value"),
        ])
        setKillSwitch(host, messages: ["house.listing"])
        #expect(try page.presented(width: 72).map(\.message.degrade)[3] == .killedKey("killSwitch.messages in host.json"))
        let rendering = try page.render()
        #expect(rendering.components(separatedBy: "Unsupported message type").count - 1 == 5)

        setKillSwitch(host)
        #expect(try page.presented(width: 72).map(\.message.degrade)[3] == nil, "renders again once the cause is gone")
        #expect(try #require(host.store).messages(of: "u42", endingBefore: nil, limit: 10).map(\.message) == stored)
    }

    @Test("a number too large or too small for a Double is named with its field, not called invalid JSON")
    func hugeNumberDiagnosed() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let page = try host.open(houseURL)
        try page.receive(key: "house.listing", payload: MessagePayload(json: #"{"area":50,"id":"L9","price":1e400,"rooms":1,"title":"big"}"#))
        try page.receive(key: "house.listing", payload: MessagePayload(json: #"{"area":1e-400,"id":"L9","price":1,"rooms":1,"title":"tiny"}"#))
        #expect(try page.presented(width: 72).map(\.message.degrade) == [
            .undecodable("field 'price': expected a number, found 1e400, too large for a number"),
            .undecodable("field 'area': expected a number, found 1e-400, too small for a number"),
        ])
    }

    @Test("the legacy page shows built-ins, every line's keys as placeholders, and ignores their taps")
    func legacyPage() throws {
        let (workspace, host) = try pageHost(killSwitch: #"{ "lines": ["house"] }"#)
        defer { withExtendedLifetime(workspace) {} }
        let page = try host.open(houseURL)
        #expect(page.isLegacy)
        #expect(page.decision.reason == .killed)
        try page.receive(key: "house.listing", payload: MessagePayload(json: listingJSON))
        try page.receive(key: "jobs.interview", payload: MessagePayload(json: interviewJSON))
        try page.receive(key: "image", payload: MessagePayload(json: #"{"height":600,"url":"https://img.example/1.jpg","width":800}"#))
        #expect(try page.presented(width: 72).map(\.message.degrade) == [
            .lineUnavailable(line: "house", reason: .killed, why: "line 'house' is in killSwitch.lines"), .legacyPage, nil,
        ])
        #expect(try page.tap(1) == .ignored)
        #expect(try page.tap(3) == .handled("opened image viewer: https://img.example/1.jpg"))
        #expect(try page.tap(9) == nil)
    }

    @Test("taps go to the page's hook, then the message's builder: a card opens its listing on any line's page")
    func taps() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let house = try host.open(houseURL)
        try house.receive(key: "house.listing", payload: MessagePayload(json: listingJSON))
        #expect(try house.tap(1) == .handled("opened listing L1001 detail: 阳光两居室 Sunny 2-room flat, ¥4200, 2 rooms"))

        let jobs = try host.open(jobsURL)
        try jobs.receive(key: "jobs.interview", payload: MessagePayload(json: interviewJSON))
        #expect(try jobs.tap(1) == .handled("accepted interview at 58 Tech, 2026-11-25 10:00"))
        #expect(try #require(host.store).messages(of: "hr_li", endingBefore: nil, limit: 5).last?.message.payload.json
                == #"{"text":"I accept the interview at 58 Tech on 2026-11-25 10:00."}"#)
        #expect(try jobs.tap(1) == .handled("declined interview at 58 Tech, 2026-11-25 10:00"))

        // A listing card received in a jobs chat renders through house's builder; the jobs page
        // ignores its tap, so house's builder opens the listing there too.
        try jobs.receive(key: "house.listing", payload: MessagePayload(json: listingJSON))
        let roamed = try #require(try jobs.presented(width: 72).last)
        #expect(roamed.message.degrade == nil)
        #expect(roamed.message.view?.lines.first == "🏠 阳光两居室 Sunny 2-room flat")
        #expect(try jobs.tap(roamed.number) == .handled("opened listing L1001 detail: 阳光两居室 Sunny 2-room flat, ¥4200, 2 rooms"))

        // A card stored in the first shape of a listing (no id) renders, and its tap says why it
        // cannot open.
        try jobs.receive(key: "house.listing", payload: MessagePayload(json: #"{"area":56,"price":4200,"rooms":2,"title":"Old card"}"#))
        let old = try #require(try jobs.presented(width: 72).last)
        #expect(old.message.view?.lines.first == "🏠 Old card")
        #expect(try jobs.tap(old.number) == .failed("this listing was sent before listings had ids, so its detail cannot be opened"))
    }

    @Test("house and jobs side by side; the kill switch rolls house back to the legacy page and forward again")
    func sideBySideAndRollback() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let house = try host.open(houseURL)
        let jobs = try host.open(jobsURL)
        try house.receive(key: "house.listing", payload: MessagePayload(json: listingJSON))
        try house.send(key: "text", payload: MessagePayload(json: #"{"text":"可以周末看房吗? Can I view it this weekend?"}"#))
        try jobs.receive(key: "jobs.interview", payload: MessagePayload(json: interviewJSON))

        let houseText = try house.render()
        let jobsText = try jobs.render()
        #expect(houseText.contains("[house page]") && houseText.contains("Quick replies:") && houseText.contains("│ 🏠 阳光两居室 Sunny 2-room flat"))
        #expect(jobsText.contains("[jobs page]") && !jobsText.contains("Quick replies:") && !jobsText.contains("Menu ☰"))
        #expect(jobsText.contains("│ 💼 Interview: iOS engineer"))

        setKillSwitch(host, lines: ["house"])
        let rolledBack = try host.open(houseURL)
        let legacyText = try rolledBack.render()
        #expect(legacyText.contains("[legacy page]"))
        #expect(legacyText.contains("Unsupported message type"))
        #expect(!legacyText.contains("🏠"))
        #expect(legacyText.contains("可以周末看房吗?"), "built-in messages still show")
        #expect(try host.open(jobsURL).render().contains("│ 💼 Interview"), "other lines are untouched")

        setKillSwitch(host)
        let back = try host.open(houseURL)
        #expect(back.lineID == "house")
        #expect(try back.render() == houseText, "nothing was lost: the same page renders the same")
    }

    @Test("golden renderings with Chinese text line up at the default width and a narrow one")
    func goldens() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let house = try host.open(houseURL)
        try house.receive(key: "text", payload: MessagePayload(json: #"{"text":"你好!这套房子还在吗?"}"#))
        try house.receive(key: "house.listing", payload: MessagePayload(json: listingJSON))
        try house.send(key: "text", payload: MessagePayload(json: #"{"text":"在的,欢迎周末来看房。The flat is still available; come and see it this weekend."}"#))
        try house.receive(key: "voice", payload: MessagePayload(json: #"{"seconds":12,"url":"v/1.amr"}"#))
        try house.receive(key: "cars.offer", payload: MessagePayload(json: "{}"))
        try expectGolden(try house.render(), "house-72.txt")
        try expectGolden(try house.render(width: 40), "house-40.txt")

        let jobs = try host.open(jobsURL)
        try jobs.receive(key: "jobs.interview", payload: MessagePayload(json: interviewJSON))
        _ = try jobs.tap(1)
        try expectGolden(try jobs.render(), "jobs-72.txt")

        setKillSwitch(host, lines: ["house"])
        try expectGolden(try host.open(houseURL).render(), "legacy-72.txt")
    }

    @Test("colour only when asked: ANSI codes around the title and placeholders")
    func colors() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let page = try host.open(houseURL)
        try page.receive(key: "cars.offer", payload: MessagePayload(json: "{}"))
        #expect(!(try page.render()).contains("\u{1B}["))
        #expect(try page.render(colors: true).contains("\u{1B}[2mUnsupported message type"))
    }
}

@Suite("Widths on screen")
struct ScreenWidthTests {
    @Test("any width from 24 renders every line within it, a 32-character line id and emoji included; 23 is refused")
    func anyWidth() throws {
        let workspace = try Workspace()
        let id = "abcdefghijklmnopqrstuvwxyz012345"
        try workspace.compileC("descriptor_plugin.c", as: "long.so", defines: ["LINE_ID=\"\(id)\""])
        try workspace.writeConfig(#"{ "lines": { "\#(id)": {} }, "routes": [ { "rootCateID": 5, "cateID": "*", "line": "\#(id)" } ] }"#)
        let input = """
            /recv text {"text":"🚗🚀✅⭐ ❤️ 👨‍👩‍👧 🇨🇳 家族 e\\u0301 supercalifragilisticexpialidocious"}
            hello 你好 👍🏽
            /quit
            """
        for width in [24, 25, 30, 33, 40, 72] {
            let result = try imhost(["chat", "im://chat?rootCateID=5&peer=u1", "--width", "\(width)"], input: input, in: workspace)
            #expect(result.status == 0, "width \(width): \(result.stderr)")
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.contains { $0.contains("[abcd") && $0.contains("page]") }, "width \(width)")
            for line in lines {
                #expect(TextWidth.columns(line) <= width, "width \(width): \(line)")
            }
            #expect(result.stdout.contains("👨‍👩‍👧"), "a ZWJ sequence is never split")
        }
        let narrow = try imhost(["chat", "im://chat?rootCateID=5&peer=u1", "--width", "23"], input: "", in: workspace)
        #expect(narrow.status == 2)
        #expect(narrow.stderr == "imhost chat: --width takes a number from 24 to 400, got '23'\n")
    }

    @Test("a line's view with raw control characters is shown escaped, and what escaping widens wraps instead of being cut")
    func escapedViewWraps() throws {
        // A builder that does not use MessageLayout.wrap hands the host raw text.
        let view = MessageView(lines: [String(repeating: "\u{1}", count: 12) + " tail words", "ok"])
        let envelope = MessageEnvelope(id: "m1", conversation: "u1", from: "u1", to: "me", timestamp: 0,
                                       key: "demo.raw", payload: MessagePayload(json: "{}"))
        let rows = PageRenderer(width: 40, colors: false).cell(number: 1, envelope: envelope, view: view, outgoing: false)
        let text = rows.joined(separator: "\n")
        #expect(!text.contains("\u{1}"))
        #expect(text.contains("tail words"), "\(text)")
        #expect(!text.contains("…"))
        for row in rows { #expect(TextWidth.columns(row) <= 40, "\(row)") }
    }

    @Test("a placeholder whose reason quotes a line's error with control characters: the core keeps it as it is, each front end draws it escaped")
    func placeholderReasonEscaped() {
        // What a builder's own error says reaches the reason as it said it.
        let degrade = Degrade.undecodable("bad \u{1B}[2J\u{202E}")
        #expect(degrade.short == "bad \u{1B}[2J\u{202E}" && degrade.description.hasSuffix("bad \u{1B}[2J\u{202E}"))
        let envelope = MessageEnvelope(id: "m1", conversation: "u1", from: "u1", to: "me", timestamp: 0,
                                       key: "demo.raw", payload: MessagePayload(json: "{}"))
        let text = PageRenderer(width: 60, colors: false).cell(number: 1, envelope: envelope, view: nil, outgoing: false, degrade: degrade)
            .joined(separator: "\n")
        #expect(text.contains(#"(bad \x1b[2J\u{202e})"#) && !text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E }, "\(text)")
        let message = PageView.Message(number: 1, envelope: envelope, isOutgoing: false, state: .received, body: .placeholder(degrade))
        // The reason is the developer's view's (a person reads that the message cannot be shown).
        let html = PageHTML.message(message, peer: "u1", dev: true)
        #expect(html.contains(#"bad \x1b[2J\u{202e}"#) && !html.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E }, "\(html)")
        let persons = PageHTML.message(message, peer: "u1")
        #expect(!persons.contains("bad") && persons.contains("cannot show this kind of message"), "\(persons)")
    }
}

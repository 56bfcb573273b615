import Foundation
import Testing
@testable import IMHost
@testable import IMHostRuntime
@testable import IMHostTerminal
@testable import IMHostWeb
import IMKit

/// The rent page of a conversation with `peer` (the URL names its line).
func rentChat(with peer: String) -> String { "im://chat/rent?rootCateID=1&peer=\(peer)" }

/// What `imhost open URL --json` says the peer will see as a placeholder (`peerPlaceholder`).
func peerPlaceholder(_ workspace: Workspace, url: String) throws -> [String: Any]? {
    let result = try imhost(["open", url, "--json"], in: workspace)
    let page = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    return try #require(page, "\(result.stdout)\(result.stderr)")["peerPlaceholder"] as? [String: Any]
}

/// What alice's database holds of bob's host's lines, read from the file by a store opened anew.
func linesKept(_ alice: Workspace, of peer: String = "bob") throws -> Envelope.Draws? {
    try MessageStore(dataFolder: alice.data, user: "alice").peerLines(of: peer)
}

/// Alice (with the rent line) and bob (`more` beside house and jobs) on a broker of their own,
/// after alice said hello and bob's host answered (delivered, then read).
struct AliceHeardFromBob {
    let root: Workspace
    let broker: TestBroker
    let alice: Workspace
    let bob: Workspace

    init(bob more: [(String, String)] = []) throws {
        root = try Workspace()
        broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        (alice, bob) = try broker.aliceWithRent(bob: more)
        try broker.aliceSendsBobReads(alice, bob, ["hello"])
    }
}

/// Issue 43, point 5: the sender knows before sending. Each host says on its receipts which lines
/// it draws; the peer's host keeps it, and its page says when a line's card will be a
/// placeholder there.
@Suite("The sender knows before sending", .heavy(.broker))
struct SenderKnowsTests {
    @Test("bob's receipts say the lines his host draws; alice keeps them in her database across a reopen; her rent page says bob will see a placeholder, her house page says nothing; she may still send")
    func bobLacksRent() throws {
        let people = try AliceHeardFromBob()
        let (broker, alice) = (people.broker, people.alice)
        let kept = try #require(try linesKept(alice), "bob's receipts said nothing alice kept")
        #expect(kept.lines == ["house": "1.0.0", "jobs": "1.0.0"])
        #expect(kept.at <= Clock.now())
        let stored = try run("/usr/bin/sqlite3", [alice.data + "/users/alice/messages.sqlite3", "SELECT lines FROM peer_lines WHERE peer = 'bob'"])
        #expect(stored.stdout == #"{"house":"1.0.0","jobs":"1.0.0"}"# + "\n", "\(stored.stdout)\(stored.stderr)")

        let warning = try #require(try peerPlaceholder(alice, url: rentChat(with: "bob")))
        #expect(warning["code"] as? String == "no-line" && warning["peer"] as? String == "bob" && warning["line"] as? String == "rent", "\(warning)")
        #expect(warning["keys"] as? [String] == ["rent.offer"])
        #expect(try peerPlaceholder(alice, url: houseChat(with: "bob")) == nil, "bob draws house")

        // The terminal says it just above the input bar; the card still goes.
        let chat = try transcript(alice, with: "bob", [rentOffer], url: rentChat(with: "bob"))
        #expect(chat.status == 0, "\(chat.stderr)")
        #expect(chat.stdout.contains(" ! bob's host has no rent line: bob will see a placeholder for\n   rent.offer\n > type a message"), "\(chat.stdout)")
        #expect(try broker.sync(alice, timeout: 2).status == 0)
        #expect(try pageMessages(alice, url: rentChat(with: "bob")).last?["key"] as? String == "rent.offer")
    }

    @Test("a delivered receipt on the wire says the lines bob's host draws, with when it said it: carol, another client by hand, reads it")
    func onTheWire() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        // Carol's persistent session, subscribed to her inbox, then away: her receipt waits there.
        // (Before bob's host makes his session: mosquitto_pub as bob starts one of its own.)
        let subscribed = try broker.subscribe(as: "carol", topic: "imhost/u/carol/#", clientID: "carol", cleanSession: false)
        #expect(try waitSubscribed(subscribed, broker: broker, publisher: "bob", topic: "imhost/u/carol/from/bob"))
        subscribed.signal(SIGKILL)
        _ = subscribed.finish()
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let before = Clock.now()
        let sent = try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [envelope("01JCAROL0000000000000001", seq: 1, payload: #"{"text":"hi"}"#)],
                                      keepSession: true)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let back = try broker.subscribe(as: "carol", topic: "imhost/u/carol/#", clientID: "carol", cleanSession: false)
        #expect(back.waitFor(#""state":"delivered""#), "\(back.stdout)")
        back.signal(SIGKILL)
        let line = try #require(back.finish().stdout.split(separator: "\n").first { $0.contains(#""kind":"receipt""#) })
        let receipt = try #require(try JSONSerialization.jsonObject(with: Data(line.drop { $0 != "{" }.utf8)) as? [String: Any])
        let draws = try #require(receipt["draws"] as? [String: Any], "\(line)")
        #expect(draws["lines"] as? [String: String] == ["house": "1.0.0", "jobs": "1.0.0"], "\(line)")
        let at = try #require(draws["at"] as? Int64)
        #expect(at >= before && at <= Clock.now())
    }

    @Test("bob with his own build of rent: alice keeps its version, and her rent page says nothing")
    func bobHasRent() throws {
        let people = try AliceHeardFromBob(bob: [("FixtureRentNew", "rent.so")])
        let alice = people.alice
        #expect(try linesKept(alice)?.lines == ["house": "1.0.0", "jobs": "1.0.0", "rent": "0.3.0"])
        #expect(try peerPlaceholder(alice, url: rentChat(with: "bob")) == nil)
    }

    @Test("bob's operator kills a line: his next receipt no longer names it, and alice's house page says so")
    func killedIsNotDrawn() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob", config: #", "killSwitch": { "lines": ["house"] }"#)
        #expect(try broker.sync(alice, timeout: 2).status == 0)
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        try broker.aliceSendsBobReads(alice, bob, ["hello"])
        #expect(try linesKept(alice)?.lines == ["jobs": "1.0.0"])
        #expect(try peerPlaceholder(alice, url: houseChat(with: "bob"))?["keys"] as? [String] == ["house.listing"])
    }

    @Test("draws forged as bob with mosquitto_pub: junk, wrong types, too many lines, bad ids and versions are dropped; an older one changes nothing; a time in the future counts as when it came")
    func forged() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice", more: [("FixtureRentOld", "rent.so")])
        #expect(try broker.sync(alice, timeout: 2).status == 0)
        let never = "01JNEVERSENT00000000000000"
        func receipt(_ draws: String, state: String = "delivered") -> String {
            #"{"v":1,"kind":"receipt","state":"\#(state)","ids":["\#(never)"],"draws":\#(draws)}"#
        }
        let tooMany = (0...Envelope.Draws.most).map { #""line\#($0)":"1.0""# }.joined(separator: ",")
        let long = String(repeating: "a", count: 33)
        var published = try broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [
            receipt(#""junk""#),
            receipt(#"{"at":1767603600000,"lines":["house"]}"#),
            receipt(#"{"at":"yesterday","lines":{"house":"1.0.0"}}"#),
            receipt(#"{"lines":{"house":"1.0.0"}}"#),
            receipt(#"{"at":1767603600000,"lines":{\#(tooMany)}}"#),
            receipt(#"{"at":1767603600000,"lines":{"rent":"1.0.0"}}"#, state: "refused"),
        ])
        #expect(published.status == 0, "\(published.stderr)")
        var counters = try broker.syncCounters(alice, timeout: 3).counters
        #expect(counters["refused"] as? [String: Int] == [:] && counters["unknownReceipts"] as? Int == 6, "each taken, none refused: \(counters)")
        #expect(try linesKept(alice) == nil, "nothing kept")
        #expect(try peerPlaceholder(alice, url: rentChat(with: "bob")) == nil, "nothing is known of bob's host: nothing said")

        published = try broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [
            receipt(#"{"at":1767603600000,"lines":{"house":"1.0.0","BAD":"1.0","x/y":"1.0","\#(long)":"1.0","jobs":7,"cars":"<b>1</b>","rent\u0000":"1","pets":""}}"#),
            // Said before the one above: it changes nothing.
            receipt(#"{"at":1767603599999,"lines":{"rent":"0.2.0"}}"#, state: "read"),
        ])
        #expect(published.status == 0, "\(published.stderr)")
        counters = try broker.syncCounters(alice, timeout: 3).counters
        #expect(counters["refused"] as? [String: Int] == [:] && counters["unknownReceipts"] as? Int == 2, "each taken, none refused: \(counters)")
        #expect(try linesKept(alice) == Envelope.Draws(at: 1_767_603_600_000, lines: ["house": "1.0.0", "pets": ""]))
        #expect(try peerPlaceholder(alice, url: rentChat(with: "bob"))?["code"] as? String == "no-line")

        // A time far in the future counts as when it came: a real receipt after it still wins.
        let before = Clock.now()
        published = try broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [receipt(#"{"at":9000000000000000,"lines":{"rent":"0.3.0"}}"#)])
        #expect(published.status == 0, "\(published.stderr)")
        #expect(try broker.sync(alice, timeout: 2).status == 0)
        let future = try #require(try linesKept(alice))
        #expect(future.lines == ["rent": "0.3.0"] && future.at >= before && future.at <= Clock.now(), "\(future)")
        #expect(try peerPlaceholder(alice, url: rentChat(with: "bob")) == nil)
    }

    @Test("the receipt's draws member is written after what it carried before and read back; a host past the most lines says none; read receipts with it still fit any receiver")
    func wire() throws {
        let draws = Envelope.Draws(at: 1_767_603_600_000, lines: ["jobs": "", "house": "1.3.0"])
        let receipt = Envelope.Receipt(state: .delivered, ids: ["01JA"], draws: draws)
        let text = Envelope.receipt(receipt).text
        #expect(text == #"{"v":1,"kind":"receipt","state":"delivered","ids":["01JA"],"features":["recall","react","typing","online","revise"],"draws":{"at":1767603600000,"lines":{"house":"1.3.0","jobs":""}}}"#)
        #expect(try Envelope.read(Array(text.utf8), payloadLimit: 1024) == .receipt(receipt))

        func build(_ line: String, _ version: String) -> LineBuild {
            LineBuild(line: line, version: version, file: "/p/\(line).so", identity: FileIdentity(device: 1, inode: 1, size: 1, modified: 0, changed: 0), opened: false)
        }
        #expect(Envelope.Draws.lines(of: [build("house", "1.3.0"), build("rent", "?")]) == ["house": "1.3.0", "rent": ""], "a version that is not one is said as none")
        #expect(Envelope.Draws.lines(of: (0...Envelope.Draws.most).map { build("line\($0)", "1.0") }) == nil)

        // The most a host says, with a hundred read receipts of the longest reason: envelopes of at most the overhead.
        let most = Envelope.Draws(at: 9_007_199_254_740_991, lines: Dictionary(uniqueKeysWithValues: (0..<Envelope.Draws.most).map {
            ("l" + String(repeating: "x", count: 28) + String(format: "%02d", $0), String(repeating: "9", count: 32))
        }))
        let room = Envelope.overhead - 200 - #","draws":"#.utf8.count - most.json.utf8.count
        let reason = String(repeating: "r", count: Envelope.reasonBytes)
        let queued = (0..<100).map { index in
            MessageStore.QueuedReceipt(row: Int64(index), peer: "alice", globalID: GlobalID.make(at: 1_767_603_600_000 + Int64(index)), state: "read", attempts: 0,
                                       drawn: index % 3 == 0 ? nil : .placeholder("builder-failed", reason: reason))
        }
        for chunk in ReadReceipts.inEnvelopes(queued, room: room) {
            var drawn: [String: Drawn] = [:]
            for receipt in chunk { drawn[receipt.globalID] = receipt.drawn }
            let bytes = Envelope.receipt(Envelope.Receipt(state: .read, ids: chunk.map(\.globalID), confirm: true, drawn: drawn, draws: most)).bytes.count
            #expect(bytes <= Envelope.overhead, "\(bytes) bytes")
        }
    }
}

/// How each front end words it, from the page value.
@Suite("What the page says before a card goes")
struct PeerPlaceholderWordsTests {
    func page(peer: String = "bob") -> PageView {
        var view = PageView(url: rentChat(with: peer), conversation: peer, title: "Rent", lineID: "rent", isLegacy: false,
                            route: .init(reason: "routed", source: nil, explanation: ""), components: [.inputBar], messages: [], total: 0, width: 72)
        view.peerPlaceholder = PageView.PeerPlaceholder(code: .noLine, peer: peer, line: "rent", keys: ["rent.offer"])
        return view
    }

    @Test("the browser: a note above the message box, in English and Chinese, the peer escaped; the keys only for --dev; none without the code")
    func browser() {
        let english = PageHTML.body(page())
        #expect(english.contains(#"<p class="peer-placeholder" role="note">bob's app has no rent line: bob will see its cards as a placeholder.</p><form class="input""#), "\(english)")
        #expect(PageHTML.body(page(), say: .chinese).contains("bob 的应用没有 rent 业务线：bob 只会看到这类卡片的占位消息。"))
        #expect(PageHTML.body(page(), dev: true).contains(#"<small class="dev">(rent.offer)</small>"#))
        let hostile = PageHTML.body(page(peer: "<b>x</b>"))
        #expect(hostile.contains("&lt;b&gt;x&lt;/b&gt;'s app has no rent line") && !hostile.contains("<b>x</b>"))
        var none = page()
        none.peerPlaceholder = nil
        #expect(!PageHTML.body(none).contains("peer-placeholder"))
    }

    @Test("the terminal: a line just above the input bar, escaped")
    func terminal() {
        let drawn = PageRenderer(width: 80, colors: false).render(page())
        #expect(drawn.contains(" ! bob's host has no rent line: bob will see a placeholder for rent.offer\n > type a message\n"), "\(drawn)")
        let narrow = PageRenderer(width: 40, colors: false).render(page())
        #expect(narrow.contains(" ! bob's host has no rent line: bob will\n   see a placeholder for rent.offer\n > type"), "wrapped under its words: \(narrow)")
        let hostile = PageRenderer(width: 72, colors: false).render(page(peer: "\u{1B}[2Jx"))
        #expect(!hostile.unicodeScalars.contains { $0.value == 0x1B }, "nothing raw reaches the terminal")
    }

    @Test("a page whose peer's host lacks the line is drawn whole again when that changes")
    func changes() {
        var without = page()
        without.peerPlaceholder = nil
        #expect(PageChanges.between(page(), without) == .replaced)
    }
}

extension BrowserSuites {
    @Suite("The sender knows before sending, in a browser")
    struct WebSenderKnowsTests {
        @Test("after bob's receipts, alice's rent page in a browser says above the message box that bob will see its cards as a placeholder; her house page says nothing")
        func notice() throws {
            let people = try AliceHeardFromBob()
            let web = try WebServing(people.alice)
            #expect(web.process.waitFor("connected to"), "\(web.process.stdout)\(web.process.stderr)")
            let alice = try Browser()
            try alice.open(chat: rentChat(with: "bob"), on: web)
            #expect(try alice.waitFor("p.peer-placeholder[role=note] + form.input") != nil, "the note is just above the message box")
            #expect(try alice.textContent("p.peer-placeholder") == "bob's app has no rent line: bob will see its cards as a placeholder.")
            try alice.open(chat: houseChat(with: "bob"), on: web)
            #expect(try alice.waitFor("form.input") != nil)
            #expect(try alice.findAll("p.peer-placeholder").isEmpty, "bob draws house")
        }
    }
}

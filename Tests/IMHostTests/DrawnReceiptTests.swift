import Foundation
import Testing
@testable import IMHost
import IMKit

/// A rent offer, the fixture rent line's message (lines, not a card).
let rentOffer = #"/send rent.offer {"price":3200}"#
/// A listing card of the real house line.
let houseListing = #"/send house.listing {"id":"L1","title":"Sunny flat","price":1200,"area":50,"rooms":2}"#

extension TestBroker {
    /// Alice (with the rent line, build 0.2.0, beside house and jobs) and bob (`bobMore` lines
    /// beside house and jobs, `bobTransport` added to his transport), both with sessions on the
    /// broker.
    func aliceWithRent(bob bobMore: [(String, String)] = [], bobTransport: String = "") throws -> (alice: Workspace, bob: Workspace) {
        let alice = try workspace(for: "alice", more: [("FixtureRentOld", "rent.so")])
        let bob = try workspace(for: "bob", transport: bobTransport, more: bobMore)
        #expect(try sync(alice, timeout: 2).status == 0)
        #expect(try sync(bob, timeout: 2).status == 0)
        return (alice, bob)
    }

    /// Alice sends `input` to bob; bob's host takes it, his chat shows it (its read receipts are
    /// queued), and his host sends them; alice's host applies them.
    func aliceSendsBobReads(_ alice: Workspace, _ bob: Workspace, _ input: [String]) throws {
        _ = try transcript(alice, with: "bob", input)
        #expect(try sync(alice, timeout: 2).status == 0)
        #expect(try sync(bob, timeout: 2).status == 0)
        let shown = try transcript(bob, with: "alice")
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(try sync(bob, timeout: 2).status == 0)
        #expect(try sync(alice, timeout: 2).status == 0)
    }
}

/// What alice's `open --json` says of how bob drew message `index` (from 0).
func drawnAtBob(_ alice: Workspace, _ index: Int) throws -> [String: Any]? {
    let messages = try pageMessages(alice, url: houseChat(with: "bob"))
    return index < messages.count ? messages[index]["drawn"] as? [String: Any] : nil
}

@Suite("The sender sees how its card was drawn", .heavy(.broker))
struct DrawnReceiptTests {
    @Test("a card bob cannot draw is shown to alice as a placeholder at bob, with why; one he draws names his line's version; text says nothing; the operator's fleet cards sums how bob drew them")
    func placeholderAtBob() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let (alice, bob) = try broker.aliceWithRent()
        try broker.aliceSendsBobReads(alice, bob, [rentOffer, houseListing, "hello"])

        let messages = try pageMessages(alice, url: houseChat(with: "bob"))
        #expect(messages.map { $0["state"] as? String } == ["read", "read", "read"], "\(messages)")
        let rent = try #require(messages[0]["drawn"] as? [String: Any], "\(messages)")
        #expect(rent["placeholder"] as? String == "not-installed")
        #expect(rent["said"] as? String == "shown as a placeholder at bob: line rent not installed")
        let house = try #require(messages[1]["drawn"] as? [String: Any])
        #expect(house["line"] as? String == "house" && house["version"] as? String == "1.0.0", "\(house)")
        #expect(house["said"] as? String == "drawn by house 1.0.0 at bob")
        #expect(messages[2]["drawn"] == nil, "text is drawn alike everywhere: nothing said")

        // The terminal: under each card, on its own line.
        let page = try imhost(["open", houseChat(with: "bob")], in: alice).stdout
        #expect(page.contains("shown as a placeholder at bob: line rent not installed\n"), "\(page)")
        #expect(page.contains("drawn by house 1.0.0 at bob\n"), "\(page)")

        // Bob's host reported how it drew them with its status; the operator sums the hosts'.
        let op = try operatorWorkspace(broker)
        let cards = try fleet(["cards"], op)
        #expect(cards.status == 0, "\(cards.stderr)")
        #expect(cards.stdout.contains("how lines' messages were drawn, as 1 of 2 hosts report:"), "\(cards.stdout)")
        #expect(cards.stdout.contains("  house  drawn 1 (1.0.0 ×1)\n"), "\(cards.stdout)")
        #expect(cards.stdout.contains("  rent   placeholders 1 (not-installed ×1)\n"), "\(cards.stdout)")
        let json = try JSONSerialization.jsonObject(with: Data(try fleet(["cards", "--json"], op).stdout.utf8)) as? [String: Any]
        let lines = json?["lines"] as? [[String: Any]] ?? []
        #expect(lines.first { $0["line"] as? String == "rent" }?["reasons"] as? [String: Int] == ["not-installed": 1], "\(json ?? [:])")
    }

    @Test("a card bob draws with his own build of the line names that build")
    func drawnByVersion() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let (alice, bob) = try broker.aliceWithRent(bob: [("FixtureRentNew", "rent.so")])
        try broker.aliceSendsBobReads(alice, bob, [rentOffer])
        #expect(try drawnAtBob(alice, 0)?["said"] as? String == "drawn by rent 0.3.0 at bob")
    }

    @Test("bob with read receipts off sends none of it: alice's card stays delivered, and says nothing of how it was drawn")
    func readReceiptsOff() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let (alice, bob) = try broker.aliceWithRent(bobTransport: #", "readReceipts": false"#)
        try broker.aliceSendsBobReads(alice, bob, [rentOffer])
        let messages = try pageMessages(alice, url: houseChat(with: "bob"))
        #expect(messages.first?["state"] as? String == "delivered", "\(messages)")
        #expect(messages.first?["drawn"] == nil)
        #expect(try !imhost(["open", houseChat(with: "bob")], in: alice).stdout.contains("placeholder at bob"))
    }

    @Test("a drawn member forged as bob with mosquitto_pub is inert: junk, another line, unknown ids, a value that is not one and a version that is not one are dropped; control characters are escaped and a long reason cut; a word this host does not know shows by its reason")
    func forged() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice", more: [("FixtureRentOld", "rent.so")])
        #expect(try broker.sync(alice, timeout: 2).status == 0)
        _ = try transcript(alice, with: "bob", Array(repeating: rentOffer, count: 6))
        #expect(try broker.sync(alice, timeout: 2).status == 0)
        let ids = try pageMessages(alice, url: houseChat(with: "bob")).compactMap { $0["globalID"] as? String }
        try #require(ids.count == 6)
        let never = "01JNEVERSENT00000000000000"
        let long = String(repeating: "x", count: 5000)
        func receipt(_ id: String, _ drawn: String, more: String = "") -> String {
            #"{"v":1,"kind":"receipt","state":"read","ids":["\#(id)"\#(more)],"confirm":true,"drawn":\#(drawn)}"#
        }
        let published = try broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [
            receipt(ids[0], #""junk""#),
            receipt(ids[1], #"{"\#(ids[1])":{"line":"house","version":"9.9.9"},"\#(never)":{"line":"rent","version":"1.0.0"}}"#, more: #","\#(never)""#),
            receipt(ids[2], #"{"\#(ids[2])":{"placeholder":"turned-off","reason":"\u001b[31mred\u001b[0m \u202eevil \#(long)"}}"#),
            receipt(ids[3], #"{"\#(never)":{"placeholder":"held","reason":"not this one"},"\#(ids[3])":7}"#),
            receipt(ids[4], #"{"\#(ids[4])":{"placeholder":"from-the-future","reason":"drawn by a newer host"}}"#),
            receipt(ids[5], #"{"\#(ids[5])":{"line":"rent","version":"<b>1.0</b>\n"}}"#),
        ])
        #expect(published.status == 0, "\(published.stderr)")
        let synced = try broker.syncCounters(alice, timeout: 3).counters
        #expect(synced["read"] as? Int == 6, "every receipt was taken: \(synced)")
        #expect(synced["refused"] as? [String: Int] == [:], "nothing refused: \(synced)")

        let messages = try pageMessages(alice, url: houseChat(with: "bob"))
        let drawn = messages.map { $0["drawn"] as? [String: Any] }
        #expect(drawn[0] == nil, "not an object")
        #expect(drawn[1] == nil, "house does not draw a rent offer; the id alice never sent is dropped")
        let cut = try #require(drawn[2]?["reason"] as? String)
        #expect(cut.utf8.count <= Envelope.reasonBytes && cut.hasSuffix("…"), "\(cut.utf8.count)")
        #expect(cut.hasPrefix("\u{1B}[31mred\u{1B}[0m \u{202E}evil xxx"), "kept as it came, cut: \(cut.prefix(40))")
        #expect(drawn[3] == nil, "an entry for another id, and one that is not a value")
        #expect(drawn[4]?["said"] as? String == "shown as a placeholder at bob: drawn by a newer host")
        #expect(drawn[5]?["said"] as? String == "drawn by rent at bob", "a version that is not one is left out")

        let page = try imhost(["open", houseChat(with: "bob")], in: alice).stdout
        #expect(!page.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E }, "nothing raw reaches the terminal")
        #expect(page.contains(#"shown as a placeholder at bob: \x1b[31mred\x1b[0m"#), "\(page)")
    }

    @Test("statuses forged by a user are read leniently: bad names, counts that are not counts and more lines than a status carries are left out")
    func forgedStatus() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["carol"])
        var lines = (0..<100).map { #""line\#($0)":{"versions":{"1.0":1}}"# }
        lines += [#""BAD LINE":{"versions":{"1.0":5}}"#, #""rent":{"versions":{"1.0":-3,"<b>":4,"2.0":1.5,"3.0":1e20},"placeholders":{"NOT A WORD":2,"held":2}}"#]
        let status = #"{"v":1,"kind":"status","state":"running","version":null,"digest":null,"at":1,"lines":[],"keys":[],"drawn":{\#(lines.reversed().joined(separator: ","))}}"#
        #expect(try broker.publish(as: "carol", topic: Topic.fleetStatus(user: "carol").name, [status], retain: true).status == 0)
        let op = try operatorWorkspace(broker)
        let cards = try fleet(["cards", "--json"], op)
        #expect(cards.status == 0, "\(cards.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(cards.stdout.utf8)) as? [String: Any])
        let shown = json["lines"] as? [[String: Any]] ?? []
        #expect(shown.count == DrawnCounts.linesLimit, "\(shown.count)")
        let rent = try #require(shown.first { $0["line"] as? String == "rent" })
        #expect(rent["versions"] as? [String: Int] == [:] && rent["reasons"] as? [String: Int] == ["held": 2], "\(rent)")
        #expect(!shown.contains { $0["line"] as? String == "BAD LINE" })
    }

    @Test("the receipt's drawn member is written in the order of its ids and read back; receipts with drawn entries go in envelopes any receiver takes")
    func wire() throws {
        let receipt = Envelope.Receipt(state: .read, ids: ["01JA", "01JB", "01JC"], confirm: true,
                                       drawn: ["01JB": .placeholder("not-installed", reason: "line rent not installed"), "01JA": .line("house", version: "1.3.0")])
        let text = Envelope.receipt(receipt).text
        #expect(text == #"{"v":1,"kind":"receipt","state":"read","ids":["01JA","01JB","01JC"],"confirm":true,"drawn":{"01JA":{"line":"house","version":"1.3.0"},"01JB":{"placeholder":"not-installed","reason":"line rent not installed"}},"features":["recall","react","typing","online","revise"]}"#)
        #expect(try Envelope.read(Array(text.utf8), payloadLimit: 1024) == .receipt(receipt))
        // A delivered receipt says nothing of drawing, whatever it carries.
        let delivered = #"{"v":1,"kind":"receipt","state":"delivered","ids":["01JA"],"drawn":{"01JA":{"line":"house"}}}"#
        #expect(try Envelope.read(Array(delivered.utf8), payloadLimit: 1024) == .receipt(Envelope.Receipt(state: .delivered, ids: ["01JA"], features: nil)))

        // A hundred receipts, each with the longest reason: envelopes of at most the overhead.
        let reason = String(repeating: "r", count: Envelope.reasonBytes)
        let queued = (0..<250).map { index in
            MessageStore.QueuedReceipt(row: Int64(index), peer: "alice", globalID: GlobalID.make(at: 1_767_603_600_000 + Int64(index)), state: "read", attempts: 0,
                                       drawn: index % 3 == 0 ? nil : .placeholder("builder-failed", reason: reason))
        }
        let chunks = ReadReceipts.inEnvelopes(queued)
        #expect(chunks.flatMap { $0 }.map(\.row) == queued.map(\.row), "every receipt once, in order")
        for chunk in chunks {
            var drawn: [String: Drawn] = [:]
            for receipt in chunk { drawn[receipt.globalID] = receipt.drawn }
            let bytes = Envelope.receipt(Envelope.Receipt(state: .read, ids: chunk.map(\.globalID), confirm: true, drawn: drawn)).bytes.count
            #expect(bytes <= Envelope.overhead && chunk.count <= Envelope.receiptIDs, "\(bytes) bytes, \(chunk.count) ids")
        }
        // Without drawn entries, a hundred ids an envelope, as before.
        #expect(ReadReceipts.inEnvelopes(queued.map { var plain = $0; plain.drawn = nil; return plain }).map(\.count) == [100, 100, 50])
    }
}

extension BrowserSuites {
    @Suite("How a card was drawn, in a browser")
    struct WebDrawnTests {
        @Test("a card bob cannot draw is shown on alice's page as a placeholder at bob, with why")
        func placeholderAtBob() throws {
            let root = try Workspace()
            let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
            let aliceHome = try broker.workspace(for: "alice", more: [("FixtureRentOld", "rent.so")]), bobHome = try broker.workspace(for: "bob")
            let bobWeb = try WebServing(bobHome)
            #expect(bobWeb.process.waitFor("connected to"), "\(bobWeb.process.stdout)\(bobWeb.process.stderr)")
            let bob = try Browser()
            try bob.open(chat: houseChat(with: "alice"), on: bobWeb)
            // A page sends no line's card by a verb (a typed "/send" is text): alice sends the two
            // cards from her terminal, then opens her page, where bob's receipts arrive.
            let sent = try transcript(aliceHome, with: "bob", [rentOffer, houseListing])
            #expect(sent.status == 0, "\(sent.stdout)\(sent.stderr)")
            #expect(try bob.waitFor(".message.received .placeholder", containing: "Unsupported message type"), "bob's page did not show it")
            let aliceWeb = try WebServing(aliceHome, arguments: ["--dev"])
            #expect(aliceWeb.process.waitFor("connected to"), "\(aliceWeb.process.stdout)\(aliceWeb.process.stderr)")
            let alice = try bob.secondSession()
            try alice.open(chat: houseChat(with: "bob"), on: aliceWeb)
            #expect(try alice.waitFor(".message.sent .drawn.placeholder", containing: "shown as a placeholder at bob: line rent not installed"),
                    "alice's page did not say how bob drew it")
            #expect(try alice.textContent(".message.sent .state") == "read ✓✓")
            #expect(try alice.waitFor(".message.sent .drawn:not(.placeholder)", containing: "drawn by house 1.0.0 at bob"))
            let console = try alice.consoleLog()
            #expect(console.filter { $0.level == "SEVERE" }.isEmpty, "\(console)")
        }
    }
}

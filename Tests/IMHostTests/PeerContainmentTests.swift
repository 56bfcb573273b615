import Foundation
import Testing
@testable import IMHost

/// A used-cars offer, as a peer's host would send it; without `dealer` the cars page's tap
/// crashes on it (the bug the demo ships).
func offer(_ id: String, seq: Int, dealer: Bool) -> String {
    let dealerMember = dealer ? #","dealer":{"name":"Zhao Motors","phone":"555-0101"}"# : ""
    return envelope(id, seq: seq, key: "cars.offer",
                    payload: #"{"id":"C\#(seq)","model":"Model \#(seq)","year":2019,"price":86000,"mileage":42000\#(dealerMember)}"#)
}

/// The bomb the crashy line's builder blows up on (IMHOST_CRASHY=builder:...).
func bomb(_ id: String, seq: Int) -> String {
    envelope(id, seq: seq, key: "crashy.bomb", payload: #"{"text":"bomb \#(seq)"}"#)
}

let carsChat = "im://chat?rootCateID=4&cateID=1&peer="

@Suite("What a peer sends costs that peer's messages, never the receiver's line or chat", .heavy(.broker))
struct PeerContainmentTests {
    @Test("a tap that crashes on a peer's message costs that message: the line and everyone else's cards stay; the notice names the peer")
    func tapOnPeerMessage() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol", "dave"])
        let bob = try broker.workspace(for: "bob", more: [("Cars", "cars.so")])
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [offer("01JCAROL000000000000OFFER1", seq: 1, dealer: false)])
        try broker.publish(as: "dave", topic: "imhost/u/bob/from/dave", [offer("01JDAVE0000000000000OFFER1", seq: 1, dealer: true)])
        #expect(try broker.sync(bob, timeout: 3).stdout.hasPrefix("received 2,"))
        let tapped = try imhost(["chat", carsChat + "carol"], input: "/tap 1\n/why 1\n/quit\n", in: bob)
        #expect(tapped.stderr.contains("handling a tap on message m1 (cars.offer); that message from carol is quarantined"), "\(tapped.stderr)")
        #expect(tapped.stdout.contains("🚗") == false || tapped.stdout.contains("this message is quarantined"), "\(tapped.stdout)")
        let log = try String(contentsOfFile: bob.data + "/crashes.log", encoding: .utf8)
        #expect(log.contains(#""quarantined":"message""#) && log.contains(#""what":"tap""#) && !log.contains(#""quarantined":"line""#), "\(log)")
        // Dave's card from the same line still shows, on the cars page, and taps.
        let daves = try imhost(["chat", carsChat + "dave"], input: "/tap 1\n/quit\n", in: bob)
        #expect(daves.stdout.contains("二手车 Used cars") && daves.stdout.contains("🚗 Model 1"), "\(daves.stdout)")
        #expect(daves.stdout.contains("calling Zhao Motors"), "\(daves.stdout)")
        let plugins = try imhost(["plugins"], in: bob)
        #expect(!plugins.stdout.contains("quarantined: line"), "\(plugins.stdout)")
    }

    @Test("the same key crashing on two peers' messages costs the key; a second key of the line then costs the line")
    func twoSenders() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol", "dave"])
        let bob = try broker.workspace(for: "bob", more: [("Cars", "cars.so")])
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [offer("01JCAROL000000000000OFFER1", seq: 1, dealer: false)])
        try broker.publish(as: "dave", topic: "imhost/u/bob/from/dave", [offer("01JDAVE0000000000000OFFER1", seq: 1, dealer: false)])
        #expect(try broker.sync(bob, timeout: 3).stdout.hasPrefix("received 2,"))
        let first = try imhost(["chat", carsChat + "carol"], input: "/tap 1\n/quit\n", in: bob)
        #expect(first.stderr.contains("that message from carol is quarantined"), "\(first.stderr)")
        let second = try imhost(["chat", carsChat + "dave"], input: "/tap 1\n/quit\n", in: bob)
        #expect(second.stderr.contains("message key cars.offer is quarantined"), "\(second.stderr)")
        #expect(second.stdout.contains("二手车 Used cars"), "the line still serves: \(second.stdout)")
    }

    @Test("thirty messages that crash a builder cost three restarts, then their sender's key is held; the chat stays open and what the user types is sent")
    func thirtyCrashers() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        let bob = try broker.workspace(for: "bob", more: [("FixtureCrashy", "crashy.so")])
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol",
                           (1...30).map { bomb("01JCAROL00000000000BOMB\($0 < 10 ? "0" : "")\($0)", seq: $0) })
        #expect(try broker.sync(bob, timeout: 3).stdout.hasPrefix("received 30,"))
        let chat = try broker.chat(bob, with: "carol", url: houseChat(with: "carol"), environment: ["IMHOST_CRASHY": "builder:abort"])
        defer { chat.signal(SIGKILL); _ = chat.finish() }
        #expect(chat.waitFor("crashy.bomb messages from carol are held (3 of them crashed it within ten minutes)"), "\(chat.stderr)")
        chat.send("still here")
        #expect(chat.waitFor("│ still here │"), "\(chat.stdout)")
        chat.send("/why 30")
        #expect(chat.waitFor("crashy.bomb messages from carol are held"))
        chat.send("/quit")
        let end = chat.finish()
        #expect(end.status == 0, "\(end.stderr)")
        #expect(end.stderr.components(separatedBy: "crashed (SIGABRT)").count - 1 == 3, "\(chat.stderr)")
        #expect(!end.stderr.contains("stopping"), "\(end.stderr)")
        let log = try String(contentsOfFile: bob.data + "/crashes.log", encoding: .utf8)
        #expect(log.split(separator: "\n").count == 3 && log.contains(#""quarantined":"sender""#), "\(log)")
    }

    @Test("what the user typed is kept until it is queued: the worker after a crash takes it up, and says what came of it")
    func draftSurvivesCrash() throws {
        let workspace = try crashyWorkspace()
        // Drawing the draft crashes the sender's own builder: the worker dies before it is
        // queued. The next worker takes the draft up; the key is quarantined now, so it is refused
        // in one line that says what was typed, and the chat goes on.
        let result = try crashyChat(workspace, "builder:abort", """
            /send crashy.bomb {"text":"mine"}
            and then this
            """, url: "im://chat?rootCateID=1&cateID=12&peer=carol")
        #expect(result.stderr.contains("line 'crashy' crashed (SIGABRT) building a message (crashy.bomb); message key crashy.bomb is quarantined"), "\(result.stderr)")
        #expect(result.stdout.contains(#"taking up what you typed before the chat restarted: /send crashy.bomb {"text":"mine"}"#), "\(result.stdout)")
        #expect(result.stdout.contains("/send: not sent: message key 'crashy.bomb' cannot be sent now: the key is quarantined"), "\(result.stdout)")
        #expect(result.stdout.contains("│ and then this │"), "\(result.stdout)")
        let store = try MessageStore(dataFolder: workspace.data, user: "me")
        #expect(try store.drafts(of: "carol").isEmpty, "no draft is left behind")
        #expect(try store.count(of: "carol") == 1)
    }

    @Test("a card its sender's own line cannot draw is refused at the sender, in one line, and nothing is sent")
    func senderDrawsFirst() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice")
        let result = try transcript(alice, with: "bob", [#"/send house.listing {"id":"L1","title":"Sunny flat","price":-5,"area":50,"rooms":2}"#])
        #expect(result.stdout.contains("/send: not sent: your own 'house' line cannot draw this house.listing (its builder failed: a listing needs a price of 0 or more"), "\(result.stdout)")
        #expect(try pageMessages(alice, url: houseChat(with: "bob")).isEmpty)
        #expect(try broker.sync(alice, timeout: 2).stdout.contains("sent 0,"))
    }
}

@Suite("A budget per peer", .heavy(.broker))
struct PeerBudgetTests {
    @Test("past its daily budget a peer's messages are refused: the receiver sees one line, the sender's host shows why")
    func messagesPerDay() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        let bob = try broker.workspace(for: "bob", config: #", "limits": { "peerMessagesPerDay": 5 }"#)
        let carol = try broker.workspace(for: "carol")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        _ = try transcript(carol, with: "bob", (1...8).map { "note \($0)" })
        _ = try broker.sync(carol, timeout: 2)
        let refusing = try broker.sync(bob, timeout: 3)
        // Carol's host may have sent some twice (resends): the sixth on are refused each time.
        #expect(refusing.stdout.hasPrefix("received 5,") && !refusing.stdout.contains("refused 0"), "\(refusing.stdout)")
        #expect(refusing.stderr.components(separatedBy: "refusing carol's messages for the rest of the day").count - 1 == 1, "\(refusing.stderr)")
        let failed = try broker.sync(carol, timeout: 3)
        #expect(failed.stdout.contains("delivered 5") && failed.stdout.contains("failed 3"), "\(failed.stdout)")
        #expect(failed.stderr.contains("3 messages to bob failed: bob's host takes no more from you today"), "\(failed.stderr)")
        // Her resends cost nothing more: already stored ones are answered, the rest refused again quietly.
        let shown = try pageMessages(carol, url: houseChat(with: "bob"))
        #expect(shown.filter { $0["state"] as? String == "failed" }.count == 3, "\(shown)")
    }

    @Test("the bytes a peer may send in a day are counted too")
    func bytesPerDay() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        // Each of these costs about 7.5 KB stored (its 900-byte payload, its summary, their
        // search index and its row): two fit.
        let bob = try broker.workspace(for: "bob", config: #", "limits": { "peerBytesPerDay": 16000 }"#)
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let big = String(repeating: "x", count: 900)
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol",
                           (1...3).map { envelope("01JCAROL0000000000000BIG0\($0)", seq: $0, payload: #"{"text":"\#(big)"}"#) })
        let synced = try broker.syncCounters(bob, timeout: 3).counters
        #expect(synced["received"] as? Int == 2 && synced["overBudget"] as? Int == 1, "\(synced)")
    }

    @Test("a peer's daily bytes count what its messages add to the database, not only their payloads: the store grows by at most the budget")
    func storedBytesPerDay() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        let budget = 2_000_000
        let bob = try broker.workspace(for: "bob", config: #", "limits": { "peerBytesPerDay": \#(budget) }"#)
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let database = bob.data + "/users/bob/messages.sqlite3"
        let before = try usedBytes(database)
        // 600 text messages of 2,000 random letters (the search index's worst case): 1.2 MB of
        // payloads, under the budget as payloads; stored, each costs about seven times that.
        var seed: UInt64 = 42
        func letter() -> Character {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ")[Int(seed >> 33) % 63]
        }
        let messages = (1...600).map { number in
            envelope(String(format: "01JCAROL0000000000000B%04d", number), seq: number, payload: #"{"text":"\#(String((0..<2_000).map { _ in letter() }))"}"#)
        }
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", messages)
        let synced = try broker.syncCounters(bob, timeout: 10).counters
        let received = synced["received"] as? Int ?? 0, refused = synced["overBudget"] as? Int ?? 0
        #expect(received > 0 && refused > 0 && received + refused == 600, "\(synced)")
        // The search index catches up after the arrivals' commits (when the holder is idle, or
        // before a search): what the budget counted is all written once it has.
        #expect(try imhost(["search", "nothing-matches-this"], in: bob).status <= 1)
        let grown = try usedBytes(database) - before
        #expect(grown <= budget + budget / 10, "the database grew by \(grown) bytes for \(received) messages, over the budget of \(budget)")
        #expect(grown >= budget / 2, "the count is not far over what is stored either: \(grown) bytes for \(received) messages")
    }

    /// The bytes of the database's pages in use (its log's included), as SQLite counts them.
    func usedBytes(_ path: String) throws -> Int {
        let database = try Database(path: path, mode: .readOnly(immutable: false))
        defer { database.closeLeavingLog() }
        func pragma(_ name: String) throws -> Int {
            let statement = try database.statement("PRAGMA \(name)")
            defer { statement.reset() }
            _ = try statement.step()
            return Int(statement.int(0))
        }
        return try (pragma("page_count") - pragma("freelist_count")) * pragma("page_size")
    }
}

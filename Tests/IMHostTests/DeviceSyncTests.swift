import Foundation
import Testing
@testable import IMHost
import IMKit

/// One person, several devices (issue 31, points 2 to 7): every device gets every message, what
/// one sends shows on all, read and blocked follow the person, a device away too long catches up
/// from a sibling, a new device gets the history, a removed one says so. Real hosts, a real broker.
@Suite("Devices: one person's messages on each of their devices", .heavy(.broker))
struct DeviceSyncTests {
    /// Alice's laptop (her first device) and phone, and bob: each a host of its own.
    struct People {
        let root: Workspace
        let broker: TestBroker
        let laptop: Workspace, phone: Workspace, bob: Workspace

        init(users: [String] = ["alice", "bob"], kind: BrokerKind = .mosquitto) throws {
            root = try Workspace()
            broker = try TestBroker(in: root.root, users: users, kind: kind)
            let login = try broker.addDevice("phone", of: "alice")
            laptop = try broker.workspace(for: "alice")
            phone = try broker.workspace(for: "alice", login: login)
            bob = try broker.workspace(for: "bob")
        }

        /// Chats of the laptop and the phone with `peer`, each having heard from the other.
        func aliceOnBoth(with peer: String = "bob") throws -> (laptop: RunningProcess, phone: RunningProcess) {
            let laptopChat = try broker.chat(laptop, with: peer)
            try #require(laptopChat.waitFor(broker.connected("alice")), "\(laptopChat.stdout)\(laptopChat.stderr)")
            let phoneChat = try broker.chat(phone, with: peer)
            try #require(phoneChat.waitFor(broker.connected("alice~phone")), "\(phoneChat.stdout)\(phoneChat.stderr)")
            // The phone's sync reaches the laptop; the laptop's answer reaches the phone.
            try #require(laptopChat.waitFor("alice~phone is another device of alice's"), "\(laptopChat.stdout)")
            try #require(phoneChat.waitFor("alice is another device of alice's"), "\(phoneChat.stdout)")
            return (laptopChat, phoneChat)
        }
    }

    @Test("what alice sends from one device shows on the other with its delivery state; bob's reach both; bob sees alice's two devices' messages in order, none late", arguments: BrokerKind.allCases)
    func sendsShowOnEveryDevice(_ kind: BrokerKind) throws {
        let people = try People(kind: kind)
        let (laptop, phone) = try people.aliceOnBoth()
        defer { for chat in [laptop, phone] { chat.signal(SIGKILL); _ = chat.finish() } }
        let bob = try people.broker.chat(people.bob, with: "alice")
        defer { bob.signal(SIGKILL); _ = bob.finish() }
        try #require(bob.waitFor(people.broker.connected("bob")))

        phone.send("one from the phone")
        phone.send("two from the phone")
        #expect(bob.waitFor("│ two from the phone │"), "\(bob.stdout)")
        #expect(laptop.waitFor("│ two from the phone │"), "the laptop shows what the phone sent: \(laptop.stdout)")
        // The laptop's first is its seq 1, after the phone's 1 and 2: not late, as it is
        // another device's.
        laptop.send("three from the laptop")
        #expect(phone.waitFor("│ three from the laptop │"), "\(phone.stdout)")
        #expect(bob.waitFor("│ three from the laptop │"), "\(bob.stdout)")
        // Bob's open chat read all three: the read receipts reach both of alice's devices.
        #expect(laptop.waitFor("read ✓✓", occurrences: 3), "\(laptop.stdout)")
        #expect(phone.waitFor("read ✓✓", occurrences: 3), "\(phone.stdout)")
        bob.send("to both of you")
        #expect(laptop.waitFor("│ to both of you │") && phone.waitFor("│ to both of you │"))
        for chat in [laptop, phone, bob] { chat.send("/quit") }
        for chat in [laptop, phone, bob] { #expect(chat.finish().status == 0) }

        // Each device has the four messages once each, in the order they were sent.
        for device in [people.laptop, people.phone] {
            let texts = try pageTexts(device, with: "bob")
            #expect(texts == ["one from the phone", "two from the phone", "three from the laptop", "to both of you"], "\(texts)")
        }
        // Bob orders alice's messages by (device, seq): the laptop's seq 1 after the phone's 2
        // did not arrive "late".
        let bobs = try pageMessages(people.bob, url: houseChat(with: "alice"))
        let fromAlice = bobs.filter { $0["from"] as? String == "alice" }
        #expect(bobs.count == 4 && fromAlice.count == 3 && bobs.allSatisfy { $0["sentBefore"] == nil } && fromAlice.allSatisfy { $0["state"] as? String == "read" },
                "\(bobs)")
    }

    @Test("read on one device, read on the other: the phone's unread count clears when the laptop shows bob's messages", arguments: BrokerKind.allCases)
    func readOnOneReadOnAll(_ kind: BrokerKind) throws {
        let people = try People(users: ["alice", "bob", "carol"], kind: kind)
        // The phone's chat is with carol: bob's messages arrive there unread.
        let laptop = try people.broker.chat(people.laptop, with: "carol")
        defer { laptop.signal(SIGKILL); _ = laptop.finish() }
        try #require(laptop.waitFor(people.broker.connected("alice")))
        let phone = try people.broker.chat(people.phone, with: "carol")
        defer { phone.signal(SIGKILL); _ = phone.finish() }
        try #require(phone.waitFor("alice is another device of alice's"), "\(phone.stdout)")
        try people.broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [envelope("b1", seq: 1, payload: #"{"text":"first"}"#),
                                                                               envelope("b2", seq: 2, payload: #"{"text":"second"}"#)])
        #expect(phone.waitFor("from bob"), "\(phone.stdout)")
        #expect(laptop.waitFor("from bob"), "\(laptop.stdout)")
        #expect(try unread(people.phone, from: "bob") == 2)
        // The laptop opens the conversation with bob: read there, and so on the phone.
        laptop.send("/open \(houseChat(with: "bob"))")
        #expect(laptop.waitFor("│ second │"), "\(laptop.stdout)")
        #expect(waitUntil { (try? unread(people.phone, from: "bob")) == 0 }, "the phone's unread count cleared")
        // One read receipt reached bob (from the laptop, which showed them), not one a device.
        for chat in [laptop, phone] { chat.send("/quit") }
        #expect(laptop.finish().status == 0 && phone.finish().status == 0)
    }

    @Test("blocking a peer on one device blocks it on the other", arguments: BrokerKind.allCases)
    func blockFollows(_ kind: BrokerKind) throws {
        let people = try People(kind: kind)
        let (laptop, phone) = try people.aliceOnBoth()
        defer { for chat in [laptop, phone] { chat.signal(SIGKILL); _ = chat.finish() } }
        laptop.send("/block")
        #expect(laptop.waitFor("blocked bob"), "\(laptop.stdout)")
        let phoneStore = try MessageStore(dataFolder: people.phone.root + "/.imhost", user: "alice")
        #expect(waitUntil { (try? phoneStore.blocked("bob")) == true }, "the phone blocked bob too")
        let bob = try people.broker.chat(people.bob, with: "alice")
        defer { bob.signal(SIGKILL); _ = bob.finish() }
        bob.send("are you there")
        #expect(bob.waitFor("│ are you there │"), "\(bob.stdout)")
        // Answered by the blocking device: it leaves bob's outbox, sent, and he is told nothing.
        let bobStore = try MessageStore(dataFolder: people.bob.root + "/.imhost", user: "bob")
        #expect(waitUntil { (try? bobStore.outboxCounts()) ?? (1, 1) == (0, 0) })
        #expect(try bobStore.stored(of: "alice", endingBefore: nil, limit: 10).map(\.state) == [.sent])
        #expect(!bob.stdout.contains("blocked you"))
        #expect(!phone.stdout.contains("│ are you there │") && !laptop.stdout.contains("│ are you there │"))
    }

    @Test("a device away through a broker that lost its queue catches up from the other, each message once")
    func catchUpFromSibling() throws {
        let people = try People()
        // The phone has a session and knows the laptop; then it is away.
        let (laptop, phone) = try people.aliceOnBoth()
        defer { laptop.signal(SIGKILL); _ = laptop.finish() }
        phone.send("/quit")
        #expect(phone.finish().status == 0)
        for number in 1...5 {
            try people.broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [envelope("away\(number)", seq: number, payload: #"{"text":"while away \#(number)"}"#)])
        }
        #expect(laptop.waitFor("│ while away 5 │"), "\(laptop.stdout)")
        // The broker loses what it kept for the phone.
        try people.broker.loseStateAndRestart()
        #expect(laptop.waitFor("connected again to \(people.broker.url) as alice"), "\(laptop.stdout)")
        let back = try people.broker.chat(people.phone, with: "bob")
        defer { back.signal(SIGKILL); _ = back.finish() }
        #expect(back.waitFor("caught up from alice: 5 messages this device lacked"), "\(back.stdout)\(back.stderr)")
        #expect(back.waitFor("│ while away 5 │"), "\(back.stdout)")
        back.send("/quit")
        #expect(back.finish().status == 0)
        let texts = try pageTexts(people.phone, with: "bob")
        #expect(texts == (1...5).map { "while away \($0)" }, "\(texts)")
    }

    @Test("a device away past what the broker keeps for it catches up from the other: the broker dropped what its laptop took and answered")
    func catchUpPastTheQueueLimit() throws {
        let people = try People()
        // The broker keeps at most 3 messages for a device that is away.
        let config = people.broker.folder + "/mosquitto.conf"
        try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: "max_queued_messages 1000", with: "max_queued_messages 3")
            .write(toFile: config, atomically: true, encoding: .utf8)
        try people.broker.restart()
        let (laptop, phone) = try people.aliceOnBoth()
        defer { laptop.signal(SIGKILL); _ = laptop.finish() }
        phone.send("/quit")
        #expect(phone.finish().status == 0)
        let bob = try people.broker.chat(people.bob, with: "alice")
        defer { bob.signal(SIGKILL); _ = bob.finish() }
        // One at a time, each shown on the laptop before the next: a catch-up answered before
        // the laptop stored the tenth would not carry it, the broker having dropped it for the
        // phone. Bob's page is read as it is drawn (each state drawn again): left unread, his
        // terminal's pipe fills, his chat blocks on writing, and sends nothing more.
        for number in 1...10 {
            bob.send("queued \(number)")
            #expect(bob.waitFor("│ queued \(number) │"), "\(bob.stdout)")
            #expect(laptop.waitFor("│ queued \(number) │"), "\(laptop.stdout)")
        }
        // The laptop stored all ten and said so: bob sends none of them again.
        #expect(bob.waitFor("read ✓✓", occurrences: 10), "\(bob.stdout)")
        let back = try people.broker.chat(people.phone, with: "bob")
        defer { back.signal(SIGKILL); _ = back.finish() }
        #expect(back.waitFor("│ queued 10 │"), "\(back.stdout)\(back.stderr)")
        // The broker kept at most 3 (of bob's ten and the laptop's notes that it read them).
        #expect(back.waitFor("caught up from alice: "), "\(back.stdout)")
        back.send("/quit")
        #expect(back.finish().status == 0)
        let texts = try pageTexts(people.phone, with: "bob")
        #expect(texts.count == 10 && Set(texts) == Set((1...10).map { "queued \($0)" }), "each once: \(texts)")
    }

    @Test("a new device gets the history from one that is online, photos included, and says how far it got")
    func newDeviceGetsHistory() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let laptop = try broker.workspace(for: "alice"), bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let laptopChat = try broker.chat(laptop, with: "bob")
        defer { laptopChat.signal(SIGKILL); _ = laptopChat.finish() }
        try #require(laptopChat.waitFor("connected to \(broker.url) as alice"))
        let photo = PhotoFixtures.path("flat.png")
        laptopChat.send("before the tablet")
        laptopChat.send("/photo \(photo)")
        try broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [envelope("fromBob", seq: 1, payload: #"{"text":"bob wrote"}"#)])
        #expect(laptopChat.waitFor("│ bob wrote │"))
        #expect(laptopChat.waitFor("sent", occurrences: 1))

        let login = try broker.addDevice("tablet", of: "alice")
        let tablet = try broker.workspace(for: "alice", login: login)
        let tabletChat = try broker.chat(tablet, with: "bob")
        defer { tabletChat.signal(SIGKILL); _ = tabletChat.finish() }
        #expect(tabletChat.waitFor("catching up from alice: comparing its 3 messages"), "\(tabletChat.stdout)\(tabletChat.stderr)")
        #expect(tabletChat.waitFor("caught up from alice: 3 messages this device lacked"), "\(tabletChat.stdout)")
        #expect(tabletChat.waitFor("[Photo 640×400]"), "\(tabletChat.stdout)")
        tabletChat.send("/quit")
        #expect(tabletChat.finish().status == 0)
        // The tablet has the laptop's conversation as the laptop has it, in its order.
        func summary(_ device: Workspace) throws -> [String] {
            try pageMessages(device, url: houseChat(with: "bob")).map { "\($0["from"] ?? "?"): \($0["key"] ?? "?") \(($0["photos"] as? [Any])?.count ?? 0)" }
        }
        let atTablet = try summary(tablet), atLaptop = try summary(laptop)
        #expect(atTablet.sorted() == ["alice: photo 1", "alice: text 0", "bob: text 0"] && atTablet == atLaptop, "\(atTablet) \(atLaptop)")
        #expect(try pageTexts(tablet, with: "bob").sorted() == ["before the tablet", "bob wrote"])
    }

    @Test("what only a person's own devices say to each other is refused from anyone else: bob cannot block carol for alice, nor slip a message from carol into her devices", arguments: BrokerKind.allCases)
    func onlyOwnDevices(_ kind: BrokerKind) throws {
        let people = try People(users: ["alice", "bob", "carol"], kind: kind)
        let (laptop, phone) = try people.aliceOnBoth()
        defer { for chat in [laptop, phone] { chat.signal(SIGKILL); _ = chat.finish() } }
        // Both devices take what comes to alice from bob already (on the cluster a device's
        // consumer can be made a moment after its chat says it is connected).
        try people.broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [envelope("01JBOBREADY0000000000000001", seq: 1, payload: #"{"text":"bob is here"}"#)])
        for chat in [laptop, phone] { try #require(chat.waitFor("│ bob is here │"), "\(chat.stdout)") }
        let forgedCopy = #"{"v":1,"kind":"copy","by":"alice","peer":"carol","out":false,"state":"received","id":"forged1","seq":1,"key":"text","payload":{"text":"from carol, says bob"},"sentAt":1}"#
        try people.broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [#"{"v":1,"kind":"block","by":"alice","peer":"carol","blocked":true}"#, forgedCopy])
        // Bob cannot write to alice's own topics at all.
        let own = try people.broker.publish(as: "bob", topic: "imhost/u/alice/from/alice", [forgedCopy])
        // (mosquitto refuses it in the PUBACK; NATS acknowledges and drops it: 3.1.1 has no reasons.)
        if kind == .mosquitto { #expect(own.stderr.contains("Not authorized"), "\(own.stderr)") }
        for chat in [laptop, phone] {
            #expect(chat.waitFor("refused a block, which only the user's own devices say to each other, from bob"), "\(chat.stdout)")
            #expect(chat.waitFor("refused a copy, which only the user's own devices say to each other, from bob"), "\(chat.stdout)")
        }
        for device in [people.laptop, people.phone] {
            let store = try MessageStore(dataFolder: device.root + "/.imhost", user: "alice")
            #expect(try !store.blocked("carol"))
            #expect(try store.conversations().allSatisfy { $0.peer != "carol" })
        }
    }

    @Test("a device removed while it chats ends at once and says, in one line, that it was removed from alice's devices")
    func removedDeviceSaysSo() throws {
        let people = try People()
        let phone = try people.broker.chat(people.phone, with: "bob")
        defer { phone.signal(SIGKILL); _ = phone.finish() }
        try #require(phone.waitFor(people.broker.connected("alice~phone")))
        let removed = try imhost(["broker", "remove-device", people.broker.folder, "alice", "phone"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(phone.waitFor("this device was removed from alice's devices"), "\(phone.stdout)\(phone.stderr)")
        let line = (phone.stdout + phone.stderr).split(separator: "\n").first { $0.contains("was removed from alice's devices") } ?? ""
        #expect(line.contains("no longer takes alice~phone") && line.contains("imhost broker add-device DIR alice phone") && !line.contains("passwordFile"), "\(line)")
        try people.broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [envelope("late", seq: 1, payload: #"{"text":"after removal"}"#)])
        phone.send("/quit")
        _ = phone.finish()
        #expect(!phone.stdout.contains("after removal"))
    }
}

/// The texts of the conversation with `peer` at `workspace`, as `imhost open --json` gives them.
func pageTexts(_ workspace: Workspace, with peer: String) throws -> [String] {
    try pageMessages(workspace, url: houseChat(with: peer)).filter { $0["key"] as? String == "text" }.map { ($0["lines"] as? [String] ?? []).joined(separator: " ") }
}

/// Bob's unread count at alice's device `workspace`, as `imhost chats --json` says it.
func unread(_ workspace: Workspace, from peer: String) throws -> Int? {
    let listed = try imhost(["chats", "--json"], in: workspace)
    let rows = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
    return rows.first { $0["peer"] as? String == peer }?["unread"] as? Int
}

@Suite("Devices: what a device's store gives another and takes from it", .heavy(.broker))
struct SiblingStoreTests {
    typealias SiblingItem = MessageStore.SiblingItem
    @Test("a new device is given the newest messages, takes those it lacks once each, in the order they were stored, and its point moves on")
    func indexAndCopies() throws {
        let folder = try Workspace()
        let laptop = try MessageStore(dataFolder: folder.root + "/laptop", user: "alice")
        let tablet = try MessageStore(dataFolder: folder.root + "/tablet", user: "alice")
        try laptop.storeOutgoing(to: "bob", key: "text", payload: MessagePayload(json: #"{"text":"one"}"#), at: 1_000)
        _ = try laptop.storeIncoming([IncomingMessage(from: "bob", globalID: "fromBob", seq: 1, key: "text", payload: MessagePayload(json: #"{"text":"two"}"#),
                                                      sentAt: 2_000, arrived: true)])
        try laptop.storeLocal(from: "carol", key: "text", payload: MessagePayload(json: #"{"text":"a scenario's"}"#), at: 3_000)
        let index = try laptop.siblingIndex(after: nil, limit: 10, photoBytes: 1 << 20)
        #expect(index.map(\.item.peer) == ["bob", "bob"] && index.map(\.item.outgoing) == [true, false], "\(index)")
        let lacking = try tablet.lacking(index.map(\.item))
        #expect(lacking.count == 2)
        let answer = try laptop.copies(of: lacking + [SiblingItem(peer: "bob", id: "neverSent", outgoing: true)], by: "alice", device: nil)
        #expect(answer.missing.map(\.id) == ["neverSent"] && answer.later.isEmpty)
        let copies = answer.copies
        // A byte budget smaller than one message still gives one, and leaves the rest for later.
        let first = try laptop.copies(of: lacking, by: "alice", device: nil, byteBudget: 1)
        #expect(first.copies.count == 1 && first.later == Array(lacking.dropFirst()))
        #expect(try tablet.storeCopies(copies, device: "tablet") == ["bob"])
        #expect(try tablet.conversations().first?.unread == 1, "bob's message is unread at the tablet as at the laptop")
        #expect(try tablet.storeCopies(copies, device: "tablet").isEmpty, "stored once")
        #expect(try tablet.lacking(index.map(\.item)).isEmpty)
        #expect(try laptop.siblingIndex(after: index.last!.row, limit: 10, photoBytes: 1 << 20).isEmpty)
        #expect(try laptop.siblingIndex(after: nil, limit: 1, photoBytes: 1 << 20).map(\.item.id) == ["fromBob"], "the newest, when the limit is 1")
        #expect(try laptop.siblingIndex(after: nil, limit: 0, photoBytes: 1 << 20).isEmpty)

        // A catch-up that stalls twice on one chunk moves past it; once, it does not.
        try tablet.sawSibling("alice", now: 1)
        #expect(try !tablet.siblingStalled("alice", at: 7))
        #expect(try tablet.siblingPoints(limit: 64).isEmpty)
        #expect(try tablet.siblingStalled("alice", at: 7))
        #expect(try tablet.siblingPoints(limit: 64) == ["alice": 7])
    }
}

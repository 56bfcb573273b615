import Foundation
import IMKit
import Testing
@testable import IMHost

/// One side of an in-process exchange: the user's real store in a scratch folder, its
/// connection lock, and a courier whose client is a ``FakeBroker``'s, on a clock the test moves.
final class FakeSide {
    let store: MessageStore
    let courier: Courier
    private let lock: ConnectionLock
    /// What its courier said and did, in order.
    private(set) var events: [Courier.Event] = []

    /// `addresses` and `makeClient`: a list of brokers (``FakeNodes``) in place of `broker`.
    init(_ user: String, broker: FakeBroker, in workspace: Workspace, clock: TestClock, folder: String? = nil,
         giveUpHours: Double = 72, addresses: [HostConfig.Transport.Address]? = nil, makeClient: MakeBrokerClient? = nil) throws {
        let data = workspace.root + "/" + (folder ?? user)
        store = try MessageStore(dataFolder: data, user: user)
        guard case .taken(let lock) = ConnectionLock.take(for: store, command: "test") else { throw Workspace.Failure("cannot take \(user)'s lock") }
        self.lock = lock
        let passwordFile = data + "/password"
        try #require(FileManager.default.createFile(atPath: passwordFile, contents: Data("secret\n".utf8), attributes: [.posixPermissions: 0o600]))
        var settings = HostConfig.Transport(address: .unix(path: "/fake/broker.sock"), passwordFile: passwordFile, giveUpHours: giveUpHours)
        if let addresses { settings.addresses = addresses }
        courier = Courier(settings: settings, user: user, store: store, payloadLimit: 64 * 1024, lock: lock, clock: { clock.now },
                          makeClient: makeClient ?? broker.makeClient)
    }

    func service() { events += courier.service() }

    var notices: [ConnectionNotice] { events.compactMap { if case .notice(let notice) = $0 { notice } else { nil } } }

    /// Queues a text to `peer`, as a chat's send does (and wakes the courier, as its sender does).
    @discardableResult
    func send(_ text: String, to peer: String, clock: TestClock) throws -> StoredMessage {
        defer { WakeSocket.poke(store) }
        return try store.storeOutgoing(to: peer, key: "text", payload: MessagePayload(json: #"{"text":"\#(text)"}"#), at: clock.now)
    }

    func texts(from peer: String) throws -> [String] {
        try store.stored(of: peer, endingBefore: nil, limit: 10_000).filter { !$0.isOutgoing }.map(\.envelope.payload.json)
    }
}

/// Time as the test says it is.
final class TestClock {
    var now: Int64 = 1_767_603_600_000
}

/// Services every side, round after round, until `done` (moving the clock `step` ms a round).
/// Returns whether it came to that within `rounds`.
@discardableResult
func exchange(_ sides: [FakeSide], clock: TestClock, step: Int64 = 0, rounds: Int = 500, until done: () throws -> Bool) rethrows -> Bool {
    for _ in 0..<rounds {
        for side in sides { side.service() }
        if try done() { return true }
        clock.now += step
    }
    return false
}

@Suite("Delivery and the inbox, in process (a fake broker that behaves as mosquitto)")
struct CourierInProcessTests {
    let workspace: Workspace
    let broker = FakeBroker()
    let clock = TestClock()

    init() throws { workspace = try Workspace() }

    func connected(_ users: String...) throws -> [FakeSide] {
        let sides = try users.map { try FakeSide($0, broker: broker, in: workspace, clock: clock) }
        try #require(exchange(sides, clock: clock) { sides.allSatisfy(\.courier.inboxConfirmed) })
        return sides
    }

    /// Another client of the broker, connected as `user`: a peer that writes what a test says.
    func another(_ user: String) -> FakeBrokerClient {
        let client = FakeBrokerClient(broker: broker, settings: BrokerClientSettings(address: .unix(path: "/fake"), user: user, password: "", maximumPacket: 70_000))
        client.connect()
        return client
    }

    @Test("a message goes A → B once: stored at B, delivered at A, said connected on both")
    func oneMessage() throws {
        let sides = try connected("alice", "bob")
        let (alice, bob) = (sides[0], sides[1])
        try alice.send("hello", to: "bob", clock: clock)
        #expect(try exchange(sides, clock: clock) { try alice.store.outboxCounts() == (0, 0) })
        #expect(try bob.texts(from: "alice") == [#"{"text":"hello"}"#])
        #expect(broker.taken(from: "alice", to: "imhost/u/bob/from/alice") == 1)
        #expect(alice.courier.counters.delivered == 1 && bob.courier.counters.received == 1)
        #expect(alice.notices.first == .connected(address: .unix(path: "/fake/broker.sock"), user: "alice", again: false))
        #expect(bob.events.contains { if case .arrived("alice", let messages) = $0 { messages.count == 1 } else { false } })
        // Its words reach the search index once nothing else is going on, on both sides.
        #expect(try exchange(sides, clock: clock, rounds: 5) {
            try sides.allSatisfy { side in let progress = try side.store.indexProgress(); return progress.indexed == progress.newest }
        })
    }

    @Test("a broker that answers nothing, its connection open: after 5 s the host drops it, says so, connects again (waiting out a frozen CONNECT too) and sends what waited, once")
    func brokerAnswersNothing() throws {
        let sides = try connected("alice", "bob")
        let (alice, bob) = (sides[0], sides[1])
        broker.frozen = true
        try alice.send("while it sleeps", to: "bob", clock: clock)
        // Four seconds: still waiting. Past five: the connection goes.
        _ = exchange(sides, clock: clock, step: 100, rounds: 40) { false }
        #expect(!alice.notices.contains { if case .outage = $0 { true } else { false } })
        #expect(exchange(sides, clock: clock, step: 100, rounds: 40) {
            alice.notices.contains(.outage(.lost("the broker at unix:/fake/broker.sock answered nothing for 5 s")))
        }, "\(alice.notices)")
        // Its next CONNECT is not answered either: that attempt is given up after 5 s too.
        let attempts = alice.notices.count
        _ = exchange(sides, clock: clock, step: 200, rounds: 60) { false }
        #expect(alice.courier.status != .online && alice.notices.count >= attempts, "\(alice.notices)")
        broker.frozen = false
        #expect(try exchange(sides, clock: clock, step: 500, rounds: 200) { try alice.store.outboxCounts() == (0, 0) }, "\(alice.notices)")
        #expect(try bob.texts(from: "alice") == [#"{"text":"while it sleeps"}"#])
        #expect(alice.notices.contains { if case .connected(_, _, true) = $0 { true } else { false } })
    }

    @Test("a message another process of the user queued goes at the next service when it wakes the courier (the user's wake socket); unwoken, within a minute (the outbox is not read every second)")
    func wokenByAnotherProcess() throws {
        let sides = try connected("alice", "bob")
        let bob = sides[1]
        // Another process of alice's: its own connection to her database.
        let other = try MessageStore(dataFolder: workspace.root + "/alice", user: "alice")
        func queue(_ text: String) throws {
            _ = try other.storeOutgoing(to: "bob", key: "text", payload: MessagePayload(json: #"{"text":"\#(text)"}"#), at: clock.now)
        }
        try queue("unannounced")
        #expect(try !exchange(sides, clock: clock, rounds: 20) { try !bob.texts(from: "alice").isEmpty }, "the clock stands still: nothing looked")
        clock.now += 1000
        #expect(try !exchange(sides, clock: clock, rounds: 20) { try !bob.texts(from: "alice").isEmpty }, "a second on: still not looked")
        clock.now += Courier.quietReread
        #expect(try exchange(sides, clock: clock) { try bob.texts(from: "alice").count == 1 })
        try queue("woken")
        WakeSocket.poke(other)
        #expect(try exchange(sides, clock: clock) { try bob.texts(from: "alice").count == 2 })
        #expect(try bob.texts(from: "alice") == [#"{"text":"unannounced"}"#, #"{"text":"woken"}"#])
    }

    @Test("a read receipt a chat queued goes at the next service when the courier is told (sendSoon); the sender's message is read")
    func readReceiptSoon() throws {
        let sides = try connected("alice", "bob")
        let (alice, bob) = (sides[0], sides[1])
        try alice.send("read me", to: "bob", clock: clock)
        #expect(try exchange(sides, clock: clock) { try alice.store.outboxCounts() == (0, 0) })
        func state() throws -> MessageState? { try alice.store.stored(of: "bob", endingBefore: nil, limit: 1).first?.state }
        #expect(try state() == .delivered)
        #expect(try bob.store.markRead("alice", before: 1, receipts: true).count == 1)
        #expect(try !exchange(sides, clock: clock, rounds: 20) { try state() == .read }, "not told, and the clock stands still")
        bob.courier.sendSoon()
        #expect(try exchange(sides, clock: clock) { try state() == .read })
    }

    @Test("a PUBACK is not delivery: a message the broker took and lost goes again after 2 s, and arrives once")
    func lostAfterPuback() throws {
        let sides = try connected("alice", "bob")
        let (alice, bob) = (sides[0], sides[1])
        broker.loseNext = 1
        try alice.send("lost once", to: "bob", clock: clock)
        // Taken by the broker: sent, and waiting for bob's receipt, which does not come.
        #expect(try exchange(sides, clock: clock) { try alice.store.outboxCounts() == (0, 1) })
        #expect(try !exchange(sides, clock: clock, rounds: 50) { try !bob.texts(from: "alice").isEmpty })
        #expect(broker.taken(from: "alice", to: "imhost/u/bob/from/alice") == 1)
        clock.now += 2_001
        #expect(try exchange(sides, clock: clock) { try alice.store.outboxCounts() == (0, 0) })
        #expect(try bob.texts(from: "alice") == [#"{"text":"lost once"}"#])
        #expect(broker.taken(from: "alice", to: "imhost/u/bob/from/alice") == 2)
        #expect(alice.courier.counters.published == 1, "a resend counts once")
    }

    @Test("at most 64 messages per peer wait for a receipt; receipts let the rest go, in order")
    func window() throws {
        let sides = try connected("alice", "bob")
        let (alice, bob) = (sides[0], sides[1])
        for number in 0..<100 { try alice.send("m\(number)", to: "bob", clock: clock) }
        // Bob's courier does not run: no receipt comes back.
        exchange([alice], clock: clock, rounds: 50) { false }
        #expect(broker.taken(from: "alice", to: "imhost/u/bob/from/alice") == Courier.window)
        #expect(try exchange(sides, clock: clock) { try alice.store.outboxCounts() == (0, 0) })
        #expect(try bob.texts(from: "alice") == (0..<100).map { #"{"text":"m\#($0)"}"# })
        #expect(broker.taken(from: "alice", to: "imhost/u/bob/from/alice") == 100, "none went twice")
    }

    @Test("a message that comes twice is stored once and answered delivered both times")
    func duplicate() throws {
        let sides = try connected("bob")
        let bob = sides[0]
        let carol = another("carol")
        _ = carol.subscribe("imhost/u/carol/from/+", retained: false)
        let message = Array(envelope("01JCAROL00000000000000000A", seq: 1, payload: #"{"text":"twice"}"#).utf8)
        _ = carol.service()
        // Sent again (its sender saw no receipt in time): the second comes after the first was stored.
        for _ in 0..<2 {
            _ = carol.publish(topic: "imhost/u/bob/from/carol", payload: message, retain: false)
            exchange(sides, clock: clock, rounds: 2) { false }
        }
        #expect(try bob.texts(from: "carol") == [#"{"text":"twice"}"#])
        #expect(bob.courier.counters.received == 1 && bob.courier.counters.duplicates == 1)
        let receipts = carol.service().compactMap { event -> Envelope.Receipt? in
            guard case .message(_, let payload, _) = event, case .receipt(let receipt)? = try? Envelope.read(payload, payloadLimit: 1024, sender: "bob") else { return nil }
            return receipt
        }
        #expect(receipts.count == 2 && receipts.allSatisfy { $0.state == .delivered && $0.ids == ["01JCAROL00000000000000000A"] })
    }

    @Test("refused envelopes: ten said a minute, the rest summed up in one line when it ends; every one counted")
    func refusalLimit() throws {
        let sides = try connected("bob")
        let bob = sides[0]
        let carol = another("carol")
        for number in 0..<25 { _ = carol.publish(topic: "imhost/u/bob/from/carol", payload: Array("junk \(number)".utf8), retain: false) }
        exchange(sides, clock: clock, rounds: 5) { false }
        let refused = bob.notices.filter { if case .refused(let refusal, "carol") = $0 { refusal.kind == .notJSON } else { false } }
        #expect(refused.count == 10)
        #expect(bob.courier.counters.refused == ["not-json": 25])
        #expect(!bob.notices.contains { if case .refusalsSummed = $0 { true } else { false } })
        clock.now += 60_000
        exchange(sides, clock: clock, rounds: 2) { false }
        #expect(bob.notices.last == .refusalsSummed(15))
    }

    @Test("a presence record cleared (an empty publish on the user's own topic, or a device's below it) is no envelope: a host that gets it (here at its next connect, kept in its session) refuses nothing")
    func presenceCleared() throws {
        let bob = try connected("bob")[0]
        bob.courier.setOnline(false)
        // The host's own clearing, sent back as it said goodbye and not read before it left; a
        // device's, as it leaves.
        for topic in [Topic.inbox(to: "bob", from: "bob"), Topic.device(user: "bob", device: "phone")] {
            broker.keepUnacknowledged(topic.name, [], for: "bob")
        }
        bob.courier.setOnline(true)
        #expect(exchange([bob], clock: clock, step: 250) { bob.courier.inboxConfirmed })
        #expect(broker.connections == 2)
        #expect(bob.courier.counters.refused.isEmpty, "\(bob.courier.counters.refused)")
        #expect(!bob.notices.contains { if case .refused = $0 { true } else { false } }, "\(bob.notices)")
    }

    @Test("a second host of the user takes the session; the first, told only that its connection was lost, says connected elsewhere and stays offline; nothing is lost")
    func takeOver() throws {
        let sides = try connected("alice", "bob")
        let (laptop, bob) = (sides[0], sides[1])
        let phone = try FakeSide("alice", broker: broker, in: workspace, clock: clock, folder: "phone")
        let all = [laptop, phone, bob]
        // The laptop reconnects on its backoff, reads the phone's presence record, and leaves.
        #expect(exchange(all, clock: clock, step: 250) { laptop.courier.status == .offline(.connectedElsewhere(user: "alice")) && phone.courier.inboxConfirmed })
        #expect(laptop.notices.contains(.outage(.lost("session taken over"))), "mosquitto says nothing of why: the connection is lost")
        #expect(laptop.notices.filter { $0 == .connectedElsewhere(user: "alice") }.count == 1)
        #expect(!laptop.courier.wantsOnline)
        try bob.send("for alice", to: "alice", clock: clock)
        #expect(try exchange(all, clock: clock, step: 250) { try phone.texts(from: "bob") == [#"{"text":"for alice"}"#] })
        #expect(try laptop.texts(from: "bob").isEmpty, "the host that left stores nothing")
        #expect(laptop.courier.status == .offline(.connectedElsewhere(user: "alice")), "it stays offline: no fight for the session")
    }

    @Test("a message nobody receives is given up after giveUpHours, said once with the count")
    func giveUp() throws {
        let alice = try FakeSide("alice", broker: broker, in: workspace, clock: clock, giveUpHours: 1)
        try #require(exchange([alice], clock: clock) { alice.courier.inboxConfirmed })
        // Nobody named dave ever connected: the broker takes the message and keeps it nowhere.
        try alice.send("into the void", to: "dave", clock: clock)
        #expect(try exchange([alice], clock: clock, step: 60_000, rounds: 200) { try alice.store.outboxCounts() == (0, 0) })
        let sent = try alice.store.stored(of: "dave", endingBefore: nil, limit: 10)
        #expect(sent.map(\.state) == [.givenUp] && sent.first?.failure == .notDelivered(hours: 1))
        #expect(alice.notices.filter { if case .givenUp = $0 { true } else { false } } == [.givenUp(count: 1, hours: 1)])
    }

    @Test("a receiver that blocked the sender answers so the message goes no more; the sender is not told: it stays sent, and nothing is said")
    func refusedByPeer() throws {
        let sides = try connected("alice", "bob")
        let (alice, bob) = (sides[0], sides[1])
        try bob.store.setBlocked("alice", true)
        try alice.send("let me in", to: "bob", clock: clock)
        #expect(try exchange(sides, clock: clock) { try alice.store.outboxCounts() == (0, 0) })
        #expect(!alice.notices.contains { if case .peerRefused = $0 { true } else { false } }, "\(alice.notices)")
        let sent = try alice.store.stored(of: "bob", endingBefore: nil, limit: 10)
        #expect(sent.map(\.state) == [.sent] && sent.first?.failure == nil)
        #expect(alice.courier.counters.failed == 0)
        #expect(try bob.texts(from: "alice").isEmpty && bob.courier.counters.blocked == 1)
    }

    @Test("a message larger than the broker takes fails at the sender, never handed over, whether the broker said its limit at connect or the client refused the publish; /retry sends it once the limit is raised", arguments: [true, false])
    func tooLargeForBroker(_ said: Bool) throws {
        broker.packetLimit = 2000
        broker.saysPacketLimit = said
        let sides = try connected("alice", "bob")
        let (alice, bob) = (sides[0], sides[1])
        let message = try alice.send(String(repeating: "x", count: 3000), to: "bob", clock: clock)
        func refused() -> BrokerTooLarge? {
            alice.notices.lazy.compactMap { if case .tooLargeForBroker(let refusal) = $0 { refusal } else { nil } }.first
        }
        #expect(exchange(sides, clock: clock) { refused() != nil })
        let refusal = try #require(refused())
        #expect(refusal.peer == "bob" && refusal.bytes > 3000 && refusal.limit == (said ? 2000 : nil), "\(refusal)")
        let stored = try alice.store.stored(of: "bob", endingBefore: nil, limit: 10)
        #expect(stored.map(\.state) == [.failed] && stored.first?.failure == .tooLargeForBroker(refusal), "\(stored)")
        #expect(try alice.store.outboxCounts() == (0, 0) && broker.taken(from: "alice", to: "imhost/u/bob/from/alice") == 0, "never handed over")
        #expect(alice.courier.counters.failed == 1 && alice.courier.status == .online, "the connection stays")
        // The operator raises the limit and restarts the broker; /retry sends it.
        broker.packetLimit = nil
        broker.dropConnections()
        #expect(try alice.store.retry("bob", number: message.number, at: clock.now))
        #expect(try exchange(sides, clock: clock, step: 100) { try alice.store.outboxCounts() == (0, 0) && bob.texts(from: "alice").count == 1 })
        #expect(try alice.store.stored(of: "bob", endingBefore: nil, limit: 10).map(\.state) == [.delivered])
    }
}

import Foundation
import Testing
@testable import IMHost
import IMKit

/// Read on one device, read on the others, also when they were away (issue 39, point 4): real
/// hosts, a real broker, each device by its own `imhost` commands.
@Suite("Devices: what was read on one device is read on the others that were away", .heavy(.broker))
struct DeviceReadTests {
    @Test("bob writes; alice's phone syncs and shows the chat; her laptop, away meanwhile, syncs: bob's message is read there too (the phone's seen came with the message, before the laptop stored it)",
          arguments: BrokerKind.allCases)
    func readWhileAway(_ kind: BrokerKind) throws {
        let people = try DeviceSyncTests.People(kind: kind)
        // Both devices were used before: each knows the other.
        let (laptop, phone) = try people.aliceOnBoth()
        for chat in [laptop, phone] {
            chat.send("/quit")
            #expect(chat.finish().status == 0)
        }
        try people.broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [envelope("b1", seq: 1, payload: #"{"text":"while the laptop is shut"}"#)])
        try phoneReads(people, "while the laptop is shut")

        for _ in 1...3 { #expect(try people.broker.sync(people.laptop).status == 0) }
        #expect(try pageTexts(people.laptop, with: "bob") == ["while the laptop is shut"])
        #expect(try unread(people.laptop, from: "bob") == 0, "read on the phone, read on the laptop")
    }

    @Test("the phone read bob's message before it knew the laptop (it told nobody): the laptop's next catch-up with the phone brings it read",
          arguments: BrokerKind.allCases)
    func readBeforeKnowing(_ kind: BrokerKind) throws {
        let people = try DeviceSyncTests.People(kind: kind)
        // Each device has a session, and neither has heard from the other.
        #expect(try people.broker.sync(people.laptop).status == 0)
        #expect(try people.broker.sync(people.phone).status == 0)
        try people.broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [envelope("b1", seq: 1, payload: #"{"text":"read on the phone first"}"#)])
        try phoneReads(people, "read on the phone first")
        // The laptop stores it unread and hears of the phone; the phone, back, hears of the
        // laptop and answers its catch-up; the laptop, back, takes the answer.
        #expect(try people.broker.sync(people.laptop).status == 0)
        #expect(try unread(people.laptop, from: "bob") == 1)
        #expect(try people.broker.sync(people.phone).status == 0)
        // Each sync takes what has come and ends: on a busy cluster the laptop's question may
        // reach the phone's queue only after the phone's sync ended, so both go on syncing, as
        // devices do, until the laptop has the answer.
        #expect(waitUntil(timeout: 90) {
            if (try? people.broker.sync(people.laptop).status) == 0, (try? unread(people.laptop, from: "bob")) == 0 { return true }
            _ = try? people.broker.sync(people.phone)
            return false
        }, "read on the phone, read on the laptop")
        #expect(try pageTexts(people.laptop, with: "bob") == ["read on the phone first"])
    }

    /// Alice's phone syncs, shows bob's chat until `text` is on it, and quits.
    private func phoneReads(_ people: DeviceSyncTests.People, _ text: String) throws {
        #expect(try people.broker.sync(people.phone).status == 0)
        #expect(try unread(people.phone, from: "bob") == 1)
        let reading = try people.broker.chat(people.phone, with: "bob")
        defer { reading.signal(SIGKILL); _ = reading.finish() }
        #expect(reading.waitFor("│ \(text) │"), "\(reading.stdout)\(reading.stderr)")
        // The page shows what is stored before the connection is up; a phone that quits before
        // it is connected says its seen at its next connect, and nobody could know it meanwhile.
        #expect(reading.waitFor(people.broker.connected("alice~phone")), "\(reading.stdout)\(reading.stderr)")
        reading.send("/quit")
        #expect(reading.finish().status == 0)
        #expect(try unread(people.phone, from: "bob") == 0)
    }
}

@Suite("Devices: what a device's store keeps of what was read on another", .heavy(.broker))
struct SiblingSeenStoreTests {
    @Test("a seen naming a message not here yet is kept (the last said a conversation, across a restart) and applied when the message arrives, from the broker or as a copy; then dropped")
    func keptUntilItComes() throws {
        let folder = try Workspace()
        let path = folder.root + "/laptop"
        func bob(_ id: String, seq: Int) -> IncomingMessage {
            IncomingMessage(from: "bob", globalID: id, seq: seq, key: "text", payload: MessagePayload(json: #"{"text":"\#(id)"}"#), sentAt: 1_000 + Int64(seq), arrived: true)
        }
        do {
            let laptop = try MessageStore(dataFolder: path, user: "alice")
            _ = try laptop.storeIncoming([bob("b1", seq: 1)])
            #expect(try laptop.siblingSaw("bob", upTo: "b2") == .kept)
            #expect(try laptop.siblingSaw("bob", upTo: "b3") == .kept, "the newer replaces it")
            #expect(try laptop.siblingSaw("carol", upTo: "c1") == .kept)
            try laptop.setBlocked("mallory", true)
            #expect(try laptop.siblingSaw("mallory", upTo: "m1") == .unchanged, "a blocked peer's message never comes: nothing kept")
            #expect(try laptop.siblingSawKept() == ([], true))
        }
        // Kept in the database: a restart keeps it.
        let laptop = try MessageStore(dataFolder: path, user: "alice")
        _ = try laptop.storeIncoming([bob("b2", seq: 2), bob("b3", seq: 3), bob("b4", seq: 4)])
        #expect(try laptop.conversations().first { $0.peer == "bob" }?.unread == 4)
        let applied = try laptop.siblingSawKept()
        #expect(applied.changed == ["bob"] && applied.stillKept, "carol's is still kept")
        #expect(try laptop.conversations().first { $0.peer == "bob" }?.unread == 1, "read up to b3, b4 not")
        #expect(try laptop.siblingSawKept() == ([], true), "applied once")
        // Carol's comes as a copy from another device.
        let copy = Envelope.Sibling.Copy(by: "alice~phone", peer: "carol", outgoing: false, state: "received",
                                         message: Envelope.Message(id: "c1", seq: 1, key: "text", payload: MessagePayload(json: #"{"text":"c1"}"#), sentAt: 5))
        #expect(try laptop.storeCopies([copy], device: nil) == ["carol"])
        #expect(try laptop.siblingSawKept() == (["carol"], false))
        #expect(try laptop.conversations().allSatisfy { $0.peer == "bob" ? $0.unread == 1 : $0.unread == 0 })
        #expect(try laptop.siblingSaw("bob", upTo: "b4") == .read)
        #expect(try laptop.siblingSaw("bob", upTo: "b4") == .unchanged)
    }

    @Test("a catch-up's read points: the conversations unread here, at most as many as asked; how far each is read, by the newest message that came over the transport")
    func readPoints() throws {
        let folder = try Workspace()
        let phone = try MessageStore(dataFolder: folder.root + "/phone", user: "alice")
        _ = try phone.storeIncoming([IncomingMessage(from: "bob", globalID: "b1", seq: 1, key: "text", payload: MessagePayload(json: #"{"text":"one"}"#), sentAt: 1_000, arrived: true),
                                     IncomingMessage(from: "carol", globalID: "c1", seq: 1, key: "text", payload: MessagePayload(json: #"{"text":"two"}"#), sentAt: 2_000, arrived: true)])
        try phone.storeLocal(from: "bob", key: "text", payload: MessagePayload(json: #"{"text":"a scenario's"}"#), at: 3_000)
        #expect(try Set(phone.unreadPeers(limit: 10)) == ["bob", "carol"])
        #expect(try phone.unreadPeers(limit: 1).count == 1)
        #expect(try phone.readPoints(of: ["bob", "carol", "dave"]).isEmpty)
        #expect(try phone.markRead("bob", before: 2).count == 2)
        #expect(try phone.readPoints(of: ["bob", "carol", "dave"]) == ["bob": "b1"], "the scenario's message is the phone's alone")
        #expect(try phone.unreadPeers(limit: 10) == ["carol"])
    }
}

@Suite("Devices: the read state's additions to the envelopes", .heavy(.broker))
struct SiblingReadWireTests {
    @Test("sync's unread and index's read go and come back; without them (an older host's) they read as none; what is not a peer or an id is left out, never refused")
    func additions() throws {
        func read(_ text: String) throws -> Envelope { try Envelope.read(Array(text.utf8), payloadLimit: 65536, sender: "alice") }
        let sync = Envelope.sibling(.sync(by: "alice~phone", since: ["alice": 7], limit: 10_000, unread: ["bob", "carol"]))
        #expect(sync.text.contains(#","unread":["bob","carol"]"#))
        #expect(try read(sync.text) == sync)
        let index = Envelope.sibling(.index(.init(by: "alice", to: "alice~phone", items: [], from: 3, through: 3, last: true, total: 0, read: ["bob": "b1"])))
        #expect(try read(index.text) == index)
        // As a host from before them writes them, and with a member no host knows yet.
        #expect(try read(#"{"v":1,"kind":"sync","by":"alice","since":{},"limit":10,"later":1}"#) == .sibling(.sync(by: "alice", since: [:], limit: 10)))
        #expect(try read(#"{"v":1,"kind":"index","by":"alice","to":"alice~phone","items":[],"start":0,"through":0,"last":true,"total":0}"#)
                == .sibling(.index(.init(by: "alice", to: "alice~phone", items: [], from: 0, through: 0, last: true, total: 0))))
        let odd = try read(#"{"v":1,"kind":"index","by":"alice","to":"alice~phone","items":[],"start":0,"through":0,"last":true,"total":0,"read":{"bob":"b 1","carol":"c1","":"x","dave":7}}"#)
        #expect(odd == .sibling(.index(.init(by: "alice", to: "alice~phone", items: [], from: 0, through: 0, last: true, total: 0, read: ["carol": "c1"]))))
        let many = (1...100).map { "\"p\($0)\"" }.joined(separator: ",")
        guard case .sibling(.sync(_, _, _, let unread)) = try read(#"{"v":1,"kind":"sync","by":"alice","since":{},"limit":10,"unread":[\#(many),7]}"#) else {
            Issue.record("not a sync")
            return
        }
        #expect(unread == (1...64).map { "p\($0)" })
    }
}

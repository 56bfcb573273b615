import Foundation
import Testing
@testable import IMHost
import IMKit

/// Read on one device, read on the others, also when they were away (issue 39, point 4): real
/// hosts, a real broker, each device by its own `imhost` commands.
@Suite("Devices: what was read on one device is read on the others that were away")
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

    /// Alice's phone syncs, shows bob's chat until `text` is on it, and quits.
    private func phoneReads(_ people: DeviceSyncTests.People, _ text: String) throws {
        #expect(try people.broker.sync(people.phone).status == 0)
        #expect(try unread(people.phone, from: "bob") == 1)
        let reading = try people.broker.chat(people.phone, with: "bob")
        defer { reading.signal(SIGKILL); _ = reading.finish() }
        #expect(reading.waitFor("│ \(text) │"), "\(reading.stdout)\(reading.stderr)")
        reading.send("/quit")
        #expect(reading.finish().status == 0)
        #expect(try unread(people.phone, from: "bob") == 0)
    }
}

@Suite("Devices: what a device's store keeps of what was read on another")
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
}

import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

@Suite("Two brokers bridged: alice on one, bob on the other", .heavy(.broker))
struct BridgeTests {
    /// Broker A (alice's) and broker B (bob's), B bridged to A with a bridge user made on A.
    static func brokers(_ a: Workspace, _ b: Workspace, maxQueuedOnB: Int? = nil) throws -> (TestBroker, TestBroker) {
        let brokerA = try TestBroker(in: a.root, users: ["alice"], options: ["--port", "\(BrokerFolder.freeLoopbackPort())"])
        let added = try imhost(["broker", "add-user", brokerA.folder, "bridge-b", "--bridge"])
        #expect(added.status == 0 && added.stdout.contains("the running broker took it at once"), "\(added.stderr)")
        let port = try #require(brokerA.port)
        let brokerB = try TestBroker(in: b.root, users: ["bob"], options: ["--bridge-to", "mqtt://127.0.0.1:\(port)", "--bridge-user", "bridge-b",
                                                                          "--bridge-password-file", brokerA.passwordFile("bridge-b")],
                                     maxQueued: maxQueuedOnB)
        return (brokerA, brokerB)
    }

    /// Syncs `sender` then `receiver` until the receiver has received `count` (the bridge comes
    /// up on its own time; the sender's resends cover what went before it).
    static func exchange(_ sender: (TestBroker, Workspace), _ receiver: (TestBroker, Workspace), count: Int) throws -> Bool {
        var received = 0
        for _ in 0..<20 where received < count {
            _ = try sender.0.sync(sender.1, timeout: 2)
            let (_, counters) = try receiver.0.syncCounters(receiver.1, timeout: 2)
            received += counters["received"] as? Int ?? 0
        }
        return received == count
    }

    @Test("messages and receipts cross the bridge both ways, and an offline receiver gets what was sent when it returns")
    func bothWays() throws {
        let a = try Workspace(), b = try Workspace()
        let (brokerA, brokerB) = try Self.brokers(a, b)
        let config = try String(contentsOfFile: brokerB.folder + "/mosquitto.conf", encoding: .utf8)
        #expect(config.contains("\nconnection imhost-bridge\n") && config.contains("\ntopic imhost/# both 1\n") && config.contains("bypasses this broker's ACL"))
        var info = stat()
        #expect(stat(brokerB.folder + "/mosquitto.conf", &info) == 0 && info.st_mode & 0o077 == 0, "the bridge's password is its owner's only")
        let alice = try brokerA.workspace(for: "alice"), bob = try brokerB.workspace(for: "bob")
        #expect(try brokerB.sync(bob, timeout: 2).status == 0 && brokerA.sync(alice, timeout: 2).status == 0)

        _ = try transcript(alice, with: "bob", ["over the bridge"])
        #expect(try Self.exchange((brokerA, alice), (brokerB, bob), count: 1))
        _ = try transcript(bob, with: "alice", ["and back"])
        #expect(try Self.exchange((brokerB, bob), (brokerA, alice), count: 1))
        // Receipts crossed too: each side sees its message delivered, then read.
        _ = try brokerA.sync(alice, timeout: 3)
        #expect(try transcript(alice, with: "bob").stdout.contains("read ✓✓"))

        // Bob is away (his session on B waits); alice sends; bob comes back.
        _ = try transcript(alice, with: "bob", ["while you were away"])
        _ = try brokerA.sync(alice, timeout: 3)
        #expect(try Self.exchange((brokerA, alice), (brokerB, bob), count: 1))
        #expect(try transcript(bob, with: "alice").stdout.contains("│ while you were away │"))
    }

    @Test("past the receiving broker's queue limit, the sender's resends bring every message across the bridge once, in order")
    func queueLimit() throws {
        let a = try Workspace(), b = try Workspace()
        // Broker B keeps at most 20 messages for bob while he is away.
        let (brokerA, brokerB) = try Self.brokers(a, b, maxQueuedOnB: 20)
        let alice = try brokerA.workspace(for: "alice"), bob = try brokerB.workspace(for: "bob")
        #expect(try brokerB.sync(bob, timeout: 2).status == 0 && brokerA.sync(alice, timeout: 2).status == 0)
        let count = 100
        _ = try transcript(alice, with: "bob", (1...count).map { "m\($0)." })
        _ = try brokerA.sync(alice, timeout: 3)
        #expect(try Self.exchange((brokerA, alice), (brokerB, bob), count: count), "all \(count) at bob")
        let log = try String(contentsOfFile: brokerB.folder + "/mosquitto.log", encoding: .utf8)
        #expect(log.contains("Outgoing messages are being dropped for client bob"), "broker B's limit was reached")
        let received = try transcript(bob, with: "alice", ["/more \(count)"])
        #expect(numbered(received.stdout, count: count) == Array(1...count), "every message once, in the order sent")
        _ = try brokerA.sync(alice, timeout: 3)
        let sent = try transcript(alice, with: "bob", ["/more \(count)"])
        #expect(sent.stdout.components(separatedBy: "read ✓✓").count - 1 + sent.stdout.components(separatedBy: "delivered ✓").count - 1 >= count)
    }
}

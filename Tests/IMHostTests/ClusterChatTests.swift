import Foundation
import Testing
@testable import IMHost

/// Real hosts on a real 3-node NATS cluster: each user's host.json lists every node, starting at
/// a node of its own (alice at n1, bob at n2, carol at n3), with no `protocol` (the host finds
/// 3.1.1 by itself). What a node's death, a node that answers nothing, and another user who
/// knows a login cost the people chatting.
@Suite("Hosts on a NATS cluster: a node's death, a node that answers nothing, a session nobody takes", .heavy(.cluster))
struct ClusterChatTests {
    @Test("two people on different nodes chat as through mosquitto: the host finds MQTT 3.1.1 by itself, an offline receiver's queue waits on another node, receipts come back")
    func chat() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"], kind: .cluster)
        let alice = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob")
        #expect(!(try String(contentsOfFile: alice.configPath, encoding: .utf8)).contains("protocol"))
        // Bob has connected once (to n2): the cluster keeps his session while he is away.
        #expect(try broker.sync(bob, timeout: 10).status == 0)
        _ = try transcript(alice, with: "bob", ["one", "two", #"/send house.listing {"id":"L1","title":"Sunny flat","price":1200,"area":50,"rooms":2}"#])
        let sent = try broker.sync(alice, timeout: 10)
        #expect(sent.status == 0 && sent.stdout.contains("nothing is queued"), "\(sent.stdout)\(sent.stderr)")
        let received = try broker.sync(bob, timeout: 10)
        #expect(received.stdout.hasPrefix("received 3,"), "\(received.stdout)\(received.stderr)")
        #expect(try broker.sync(alice, timeout: 10).stdout.contains("delivered 3"))

        let bobChat = try broker.chat(bob, with: "alice")
        try #require(bobChat.waitFor(broker.connected("bob")), "\(bobChat.stdout)\(bobChat.stderr)")
        #expect(bobChat.waitFor("│ 🏠 Sunny flat "))
        let aliceChat = try broker.chat(alice, with: "bob")
        try #require(aliceChat.waitFor(broker.connected("alice")), "\(aliceChat.stdout)\(aliceChat.stderr)")
        #expect(aliceChat.waitFor("read ✓✓", occurrences: 3), "bob's chat showed all three: \(aliceChat.stdout)")
        bobChat.send("live from n2")
        #expect(aliceChat.waitFor("│ live from n2 │"))
        #expect(bobChat.waitFor("read ✓✓"))
        for chat in [aliceChat, bobChat] { chat.send("/quit") }
        for chat in [aliceChat, bobChat] {
            let done = chat.finish()
            #expect(done.status == 0)
            #expect(!done.stdout.contains("refused") && !done.stdout.contains("lost"), "\(done.stdout)")
        }
    }

    /// Alice (on n1) and bob (on n2) chatting with each other on a cluster. The first workspace
    /// holds the cluster's folder: keep it as long as the cluster. Alice's and bob's hold their
    /// data folders: keep each as long as its chat runs (a workspace let go, even as `_`, deletes
    /// its folder, and the chat ends on its store's missing file).
    static func chatting() throws -> (Workspace, TestBroker, Workspace, Workspace, RunningProcess, RunningProcess) {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"], kind: .cluster)
        let alice = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob")
        let bobChat = try broker.chat(bob, with: "alice")
        try #require(bobChat.waitFor(broker.connected("bob")))
        let aliceChat = try broker.chat(alice, with: "bob")
        try #require(aliceChat.waitFor(broker.connected("alice")))
        return (root, broker, alice, bob, aliceChat, bobChat)
    }

    @Test("kill -9 of the sender's node while it sends: the host moves to another node and sends again; every message once, in order, delivered")
    func nodeDies() throws {
        let (root, broker, alice, bob, aliceChat, bobChat) = try Self.chatting()
        let cluster = try #require(broker.cluster)
        _ = root  // holds the cluster's folder for the whole test
        for number in 1...10 { aliceChat.send("m\(number).") }
        try #require(bobChat.waitFor("│ m1. │"))
        // Alice's node dies under her while she goes on typing.
        cluster.killNode(1)
        for number in 11...20 { aliceChat.send("m\(number).") }
        #expect(aliceChat.waitFor("connected again to"), "\(aliceChat.stdout)")
        #expect(bobChat.waitFor("│ m20. │", timeout: 90), "\(bobChat.stdout)")
        #expect(aliceChat.waitFor("read ✓✓", occurrences: 20, timeout: 60))
        for chat in [aliceChat, bobChat] { chat.send("/quit") }
        for chat in [aliceChat, bobChat] { #expect(chat.finish().status == 0) }
        let texts = try pageTexts(bob, with: "alice")
        #expect(texts == (1...20).map { "m\($0)." }, "every message once, in order: \(texts)")
        // The node comes back, and takes part again: alice, sent to it first, chats through it.
        try cluster.startNode(1)
        let sent = try transcript(alice, with: "bob", ["after n1 came back"])
        // A chat that quits before its connection is up leaves what it queued to the next
        // connection (said in its transcript): a sync sends it.
        let pushed = try broker.sync(alice, timeout: 5)
        let received = try broker.sync(bob, timeout: 30)
        #expect(received.stdout.hasPrefix("received 1,"), "\(sent.stdout)\(sent.stderr)\(pushed.stdout)\(pushed.stderr)\(received.stdout)\(received.stderr)")
    }

    @Test("a node that answers nothing (stopped, its connections open): the host moves on after 5 s and sends again what waited, until the cluster, waiting for that node, takes it")
    func nodeAnswersNothing() throws {
        let (root, broker, alice, bob, aliceChat, bobChat) = try Self.chatting()
        let cluster = try #require(broker.cluster)
        // They hold the cluster's folder and alice's data folder (her chat's store) for the whole test.
        _ = (root, alice)
        let pid = try #require(cluster.nodePID(1))
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        aliceChat.send("while n1 sleeps")
        // Within the 10 s the host promises (5 s without an answer, then the next node).
        #expect(aliceChat.waitFor("answered nothing for 5 s", timeout: 10), "\(aliceChat.stdout)\(aliceChat.stderr)")
        #expect(aliceChat.waitFor("connected again to"), "\(aliceChat.stdout)")
        #expect(bobChat.waitFor("│ while n1 sleeps │", timeout: 90), "\(bobChat.stdout)")
        #expect(aliceChat.waitFor("read ✓✓", timeout: 60))
        kill(pid, SIGCONT)
        for chat in [aliceChat, bobChat] { chat.send("/quit") }
        for chat in [aliceChat, bobChat] { #expect(chat.finish().status == 0) }
        #expect(try pageTexts(bob, with: "alice") == ["while n1 sleeps"])
    }

    @Test("every node stopped at once and started again (a power cut of the whole cluster): what waited for bob, who was away, reaches him once, in order, delivered, through the cluster's store or alice's host sending it again at her next connect")
    func everyNodeRestarted() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"], kind: .cluster)
        let cluster = try #require(broker.cluster)
        let alice = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 10).status == 0)
        _ = try transcript(alice, with: "bob", ["one", "two", "three"])
        let sent = try broker.sync(alice, timeout: 10)
        #expect(sent.stdout.contains("3 sent, not yet delivered"), "\(sent.stdout)\(sent.stderr)")
        #expect(cluster.stop().status == 0)
        try cluster.startAll()
        // Bob comes back first, then alice (her host sends again what was not delivered), then
        // bob, then alice.
        var said = ""
        for workspace in [bob, alice, bob, alice] { said += try broker.sync(workspace, timeout: 10).stdout }
        #expect(try pageTexts(bob, with: "alice") == ["one", "two", "three"], "\(said)")
        let delivered = said.split(separator: "\n").compactMap { line in
            line.firstRange(of: "delivered ").flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) }
        }.reduce(0, +)
        #expect(delivered == 3, "\(said)")
    }

    @Test("another user who knows alice's login cannot take her session on the cluster: not by her login as client id, with a clean session or not; what waits for her stays, her live chat stays")
    func nobodyTakesTheSession() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob", "mallory"], kind: .cluster)
        let cluster = try #require(broker.cluster)
        let alice = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(alice, timeout: 10).status == 0)
        _ = try transcript(bob, with: "alice", ["queued one", "queued two"])
        #expect(try broker.sync(bob, timeout: 10).stdout.contains("nothing is queued"))
        // Mallory, with mosquitto's own client, tries the ids a person would guess, with a clean
        // session (which, under alice's id, would wipe her session and its queue), on every node.
        for node in 1...3 {
            for id in ["alice", "imhost-alice", "alice~phone"] {
                let taken = try cluster.publish(as: "mallory", topic: "imhost/u/mallory/from/mallory", ["x"], node: node, clientID: id)
                #expect(taken.status == 0, "\(taken.stderr)")
            }
        }
        let received = try broker.sync(alice, timeout: 10)
        #expect(received.stdout.hasPrefix("received 2,"), "both still queued for alice: \(received.stdout)\(received.stderr)")
        // Alice chats; mallory's guesses do not throw her off.
        let aliceChat = try broker.chat(alice, with: "bob")
        try #require(aliceChat.waitFor(broker.connected("alice")))
        for id in ["alice", "imhost-alice"] {
            _ = try cluster.publish(as: "mallory", topic: "imhost/u/mallory/from/mallory", ["x"], node: 1, clientID: id)
        }
        _ = try transcript(bob, with: "alice", ["after mallory tried"])
        #expect(aliceChat.waitFor("│ after mallory tried │"))
        aliceChat.send("/quit")
        let done = aliceChat.finish()
        #expect(done.status == 0 && !done.stdout.contains("took the session") && !done.stdout.contains("lost"), "\(done.stdout)")
        // Mallory reads nothing of alice's: her subscription to alice's inbox is refused.
        let sub = try cluster.subscribe(as: "mallory", topic: "imhost/u/alice/#", node: 2)
        #expect(sub.waitFor("received SUBACK"))
        #expect(sub.waitFor("Subscribed (mid: 1): 128"), "\(sub.stdout)")
        sub.signal(SIGKILL)
        _ = sub.finish()
    }
}

import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// Each `transport` object in host.json is refused by `imhost sync` in one line, at host.json's
/// first line, containing its `expected` words (exit 2).
func expectTransportRefused(_ cases: [(transport: String, expected: String)], in workspace: Workspace) throws {
    for (transport, expected) in cases {
        try workspace.writeConfig(#"{ "user": "alice", "lines": {}, "transport": \#(transport) }"#)
        let result = try imhost(["sync"], in: workspace)
        #expect(result.status == 2 && result.stderr.hasPrefix("imhost: host.json:1:") && result.stderr.contains(expected), "\(transport): \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }
}

/// MQTT 3.1.1 beside 5, a list of broker addresses, and a client id nobody can guess: what lets
/// the same hosts run on a clustered broker (docs/reference/mqtt.md), shown here on mosquitto,
/// which speaks both.
@Suite("MQTT 3.1.1, broker lists and client ids", .heavy(.broker))
struct ProtocolTests {
    @Test("a host speaking MQTT 3.1.1 chats with one speaking 5: text and a card both ways, an offline receiver's queue kept, receipts back, nothing refused")
    func mixedVersions() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice", transport: #", "protocol": "3.1.1""#)
        let bob = try broker.workspace(for: "bob")
        // Both have connected once: the broker keeps their sessions (3.1.1: clean session off).
        #expect(try broker.sync(alice, timeout: 2).status == 0)
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        _ = try transcript(alice, with: "bob", ["hello from 3.1.1", #"/send house.listing {"id":"L1","title":"Sunny flat","price":1200,"area":50,"rooms":2}"#])
        let received = try broker.sync(bob)
        #expect(received.stdout.hasPrefix("received 2,"), "\(received.stdout)\(received.stderr)")
        // Bob answers while alice is away: her 3.1.1 session keeps it.
        _ = try transcript(bob, with: "alice", ["hello from 5"])
        let back = try broker.sync(alice)
        #expect(back.stdout.hasPrefix("received 1,") && back.stdout.contains("delivered 2"), "\(back.stdout)\(back.stderr)")
        let shown = try transcript(alice, with: "bob")
        #expect(shown.stdout.contains("│ hello from 5 │") && shown.stdout.contains("│ 🏠 Sunny flat "), "\(shown.stdout)")
        #expect(!shown.stdout.contains("refused") && !shown.stderr.contains("refused"), "\(shown.stdout)\(shown.stderr)")
        let counters = try broker.syncCounters(alice).counters
        #expect((counters["refused"] as? [String: Any] ?? [:]).isEmpty, "\(counters)")
    }

    @Test("a live chat over 3.1.1: presence and probe work without MQTT 5's retain handling, and nothing retained is taken for a message")
    func liveChat311() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice", transport: #", "protocol": "3.1.1""#)
        let bob = try broker.workspace(for: "bob", transport: #", "protocol": "3.1.1""#)
        let bobChat = try broker.chat(bob, with: "alice")
        try #require(bobChat.waitFor("connected to \(broker.url) as bob"), "\(bobChat.stdout)\(bobChat.stderr)")
        let aliceChat = try broker.chat(alice, with: "bob")
        try #require(aliceChat.waitFor("connected to \(broker.url) as alice"))
        aliceChat.send("hi bob")
        #expect(bobChat.waitFor("│ hi bob │"))
        #expect(aliceChat.waitFor("read ✓✓"), "\(aliceChat.stdout)")
        bobChat.send("/quit")
        aliceChat.send("/quit")
        #expect(bobChat.finish().status == 0)
        let aliceDone = aliceChat.finish()
        #expect(aliceDone.status == 0)
        // Neither the probe nor the presence record (retained, on the inbox's own topic) was
        // taken for a message or refused.
        #expect(!aliceDone.stdout.contains("refused") && !aliceDone.stdout.contains("probe"), "\(aliceDone.stdout)")
    }

    @Test("a retained message planted in a 3.1.1 inbox (on a broker without imhost's retain rule, which refuses it) is stored once, then counted, unsaid, at each connect (3.1.1 cannot refuse it at subscription)")
    func retained311() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"], configure: TestBroker.withoutRetainRule)
        let bob = try broker.workspace(for: "bob", transport: #", "protocol": "3.1.1""#)
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [envelope("01JCAROL000000000000RETAIN", seq: 1, payload: #"{"text":"again and again"}"#)], retain: true)
        #expect(try broker.sync(bob, timeout: 2).stdout.hasPrefix("received 1,"))
        for _ in 0..<2 {
            let result = try broker.sync(bob, json: true, timeout: 2)
            let counters = (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["counters"] as? [String: Any] ?? [:]
            #expect(counters["received"] as? Int == 0 && counters["refused"] as? [String: Int] == ["retained": 1], "\(counters)")
            #expect(!result.stderr.contains("refused"), "\(result.stderr)")
        }
        #expect(try transcript(bob, with: "carol").stdout.components(separatedBy: "again and again").count == 2, "shown once")
    }

    @Test("a list of broker addresses: the first dead, the host connects to the next and says which; imhost fleet does too")
    func addressList() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let dead = "mqtt://127.0.0.1:\(BrokerFolder.freeLoopbackPort())"
        func transport(_ user: String) -> String {
            #"{ "url": ["\#(dead)", "\#(broker.url)"], "passwordFile": "\#(broker.passwordFile(user))" }"#
        }
        let alice = try broker.workspace(for: "alice")
        try alice.writeConfig(try String(contentsOfFile: alice.configPath, encoding: .utf8)
            .replacingOccurrences(of: broker.transport(for: "alice"), with: transport("alice")))
        let bob = try broker.workspace(for: "bob")
        let bobChat = try broker.chat(bob, with: "alice")
        try #require(bobChat.waitFor("connected to \(broker.url) as bob"))
        let aliceChat = try broker.chat(alice, with: "bob")
        #expect(aliceChat.waitFor("connected to \(broker.url) as alice"), "\(aliceChat.stdout)")
        aliceChat.send("through the second address")
        #expect(bobChat.waitFor("│ through the second address │"))
        #expect(aliceChat.waitFor("read ✓✓"))
        bobChat.send("/quit")
        aliceChat.send("/quit")
        #expect(bobChat.finish().status == 0)
        #expect(aliceChat.finish().status == 0)
        // Every address dead: one line naming each.
        let other = "mqtt://127.0.0.1:\(BrokerFolder.freeLoopbackPort())"
        try alice.writeConfig(try String(contentsOfFile: alice.configPath, encoding: .utf8)
            .replacingOccurrences(of: #""\#(broker.url)""#, with: #""\#(other)""#))
        let synced = try broker.sync(alice, timeout: 5)
        #expect(synced.status != 0 && synced.stderr.contains("cannot reach the broker at"), "\(synced.stdout)\(synced.stderr)")
        #expect(!synced.stderr.contains(broker.url) && synced.stderr.split(separator: "\n").count == 1, "\(synced.stderr)")
        // The operator's commands move along the list too.
        let op = try Workspace()
        try op.writeConfig(#"{ "user": "operator", "lines": {}, "transport": \#(transport("operator")) }"#)
        let status = try fleet(["status"], op)
        #expect(status.status == 0 && status.stdout.contains("alice"), "\(status.stdout)\(status.stderr)")
    }

    @Test("broker lists and protocols that cannot work are refused where host.json writes them")
    func configuration() throws {
        let workspace = try Workspace.standard()
        try "pw\n".write(toFile: workspace.root + "/pw", atomically: true, encoding: .utf8)
        chmod(workspace.root + "/pw", 0o600)
        try "ca".write(toFile: workspace.root + "/ca.pem", atomically: true, encoding: .utf8)
        let cases: [(String, String)] = [
            (#"{ "url": [], "passwordFile": "pw" }"#, "transport.url: expected 1 to 16 broker URLs, found 0"),
            (#"{ "url": ["mqtt://a:1", "mqtt://a:1"], "passwordFile": "pw" }"#, "transport.url: mqtt://a:1 is listed twice"),
            (#"{ "url": ["mqtt://a:1", 7], "passwordFile": "pw" }"#, "transport.url: expected a string"),
            (#"{ "url": ["mqtt://a:1", "http://b"], "passwordFile": "pw" }"#, "expected mqtt://host:port"),
            (#"{ "url": ["mqtts://a:1", "mqtt://b:1"], "passwordFile": "pw", "caFile": "ca.pem" }"#, "mixes mqtts:// with other URLs"),
            (#"{ "url": "mqtt://a:1", "passwordFile": "pw", "protocol": "4" }"#, #"transport.protocol: expected "5", "3.1.1" or "auto""#),
            (#"{ "url": "mqtt://a:1", "passwordFile": "pw", "protocol": 5 }"#, "transport.protocol: expected a string"),
        ]
        try expectTransportRefused(cases, in: workspace)
        let seventeen = (1...17).map { #""mqtt://a:\#($0)""# }.joined(separator: ",")
        try workspace.writeConfig(#"{ "user": "alice", "lines": {}, "transport": { "url": [\#(seventeen)], "passwordFile": "pw" } }"#)
        let tooMany = try imhost(["sync"], in: workspace)
        #expect(tooMany.status == 2 && tooMany.stderr.contains("expected 1 to 16 broker URLs, found 17"), "\(tooMany.stderr)")
    }

    @Test("the client id is the same at every connect of a login, and nobody without its password can make it")
    func clientID() {
        let alice = BrokerClientSettings.clientID(login: "alice", password: "secret-one")
        #expect(alice == BrokerClientSettings.clientID(login: "alice", password: "secret-one"))
        #expect(alice != BrokerClientSettings.clientID(login: "alice", password: "secret-two"))
        #expect(alice != BrokerClientSettings.clientID(login: "alice~phone", password: "secret-one"))
        #expect(alice != BrokerClientSettings.clientID(login: "bob", password: "secret-one"))
        #expect(alice.hasPrefix("imhost-") && alice.count == 39 && !alice.contains("alice"), "\(alice)")
        // Login and password are kept apart: moving a character from one to the other changes it.
        #expect(BrokerClientSettings.clientID(login: "ab", password: "c") != BrokerClientSettings.clientID(login: "a", password: "bc"))
        #expect(alice.dropFirst(7).allSatisfy { $0.isHexDigit && !$0.isUppercase })
    }
}

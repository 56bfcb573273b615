import Foundation
import Testing
@testable import IMHost

/// The messages `imhost open URL --json` prints for a conversation, as a script reads them.
func pageMessages(_ workspace: Workspace, url: String, config: String? = nil) throws -> [[String: Any]] {
    let result = try imhost(["open", url, "--json"] + (config.map { ["--config", $0] } ?? []), in: workspace)
    let page = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    return page?["messages"] as? [[String: Any]] ?? []
}

/// Syncs `workspace` through `broker` until its page of `url` shows a message (at most 60 s),
/// and returns the page's messages then (none when none came).
func syncUntilShown(_ workspace: Workspace, through broker: TestBroker, url: String) -> [[String: Any]] {
    var shown: [[String: Any]] = []
    _ = waitUntil(timeout: 60) {
        _ = try? broker.sync(workspace, timeout: 3)
        shown = (try? pageMessages(workspace, url: url)) ?? []
        return !shown.isEmpty
    }
    return shown
}

extension Workspace {
    /// A second host.json beside this one, the same but with no transport: what is typed there
    /// is stored and queued, and nothing is sent.
    func offlineConfig() throws -> String {
        let text = try String(contentsOfFile: configPath, encoding: .utf8)
        guard let start = text.range(of: #""transport": {"#), let end = text[start.upperBound...].range(of: "}") else {
            throw Failure("no transport in \(configPath)")
        }
        let path = root + "/offline.json"
        try (String(text[..<start.lowerBound]) + #""plugins": "Plugins""# + String(text[end.upperBound...])).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

@Suite("The rule for changing the wire", .heavy(.broker))
struct WireRuleTests {
    @Test("members a host does not know are ignored: the message is stored and shown")
    func unknownMembers() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let newer = #"{"v":1,"kind":"message","id":"01JCAROL0000000000000NEW01","seq":1,"key":"text","payload":{"text":"from a newer host"},"sentAt":1767603600000,"photo":{"w":800},"thread":"t1"}"#
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [newer])
        let synced = try broker.sync(bob, timeout: 3)
        #expect(synced.stdout.hasPrefix("received 1,") && synced.stdout.contains("refused 0"), "\(synced.stdout)\(synced.stderr)")
        #expect(try transcript(bob, with: "carol").stdout.contains("│ from a newer host │"))
    }

    @Test("a kind a host does not know gets a typed refusal: the sender's host shows why, and never sends it again")
    func unknownKind() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob")
        // Both have sessions on the broker, so what comes while they are away waits for them.
        #expect(try broker.sync(alice, timeout: 2).status == 0)
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        // Alice queues a message without connecting; a newer imhost would send it as a kind
        // bob's host does not know: here mosquitto_pub, as alice, sends it so.
        let offline = try alice.offlineConfig()
        _ = try imhost(["chat", houseChat(with: "bob"), "--config", offline], input: "a sticker\n/quit\n", in: alice)
        let queued = try pageMessages(alice, url: houseChat(with: "bob"), config: offline)
        let id = try #require(queued.first?["globalID"] as? String)
        #expect(queued.first?["state"] as? String == "queued")
        let published = try broker.publish(as: "alice", topic: "imhost/u/bob/from/alice",
                                           [#"{"v":1,"kind":"sticker","id":"\#(id)","pack":"cats","sentAt":1767603600000}"#], keepSession: true)
        #expect(published.status == 0, "\(published.stderr)")
        let refusing = try broker.syncCounters(bob, timeout: 3)
        #expect(refusing.counters["refused"] as? [String: Int] == ["kind": 1], "\(refusing.counters)")
        // Alice's host reads the refusal before it sends anything: the message fails with the
        // reason its code gives, and is not sent again.
        let failed = try broker.sync(alice, timeout: 3)
        #expect(failed.stdout.contains("failed 1") && failed.stdout.contains("nothing is queued"), "\(failed.stdout)\(failed.stderr)")
        #expect(failed.stderr.contains("1 message to bob failed: bob's imhost is older than this one and cannot take it"), "\(failed.stderr)")
        let shown = try pageMessages(alice, url: houseChat(with: "bob"))
        #expect(shown.first?["state"] as? String == "failed")
        let failure = try #require(shown.first?["failure"] as? [String: String], "\(shown)")
        #expect(failure == ["code": "refused-by-peer", "peer": "bob", "refusal": "kind", "said": failure["said"] ?? ""] && failure["said"]?.isEmpty == false,
                "the code and its data, never a sentence: \(failure)")
        // The terminal words it, with the number that sends it again.
        let why = try transcript(alice, with: "bob", ["/why 1"])
        #expect(why.stdout.contains("state: failed: bob's imhost is older than this one and cannot take it") && why.stdout.contains("/retry 1 once bob has updated"),
                "\(why.stdout)")
        // Bob got nothing stored; nothing comes again.
        let again = try broker.sync(bob, timeout: 2)
        #expect(again.stdout.hasPrefix("received 0,") && again.stdout.contains("refused 0"), "\(again.stdout)")
    }

    @Test("a receipt or a confirmation is never answered, so two hosts never refuse each other's refusals")
    func refusalsAreNotAnswered() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol", "dave"])
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [
            #"{"v":1,"kind":"receipt","state":"refused","ids":["01JNEVERSENT00000000000000"],"code":"from-the-future","reason":"x"}"#,
            #"{"v":1,"kind":"receipt","state":"refused","ids":["01JNEVERSENT00000000000000"],"code":"NOT A CODE"}"#,
            #"{"v":1,"kind":"confirm","ids":["01JNEVERSENT00000000000000"]}"#,
            #"{"v":1,"kind":"stamp","id":"01JCAROL00000000000STAMP1"}"#,
        ])
        // Carol listens from now on (a publish as carol would take her session over); dave
        // publishes what shows she is subscribed.
        let carolInbox = try broker.subscribe(as: "carol", topic: "imhost/u/carol/#")
        defer { carolInbox.signal(SIGKILL); _ = carolInbox.finish() }
        #expect(try waitSubscribed(carolInbox, broker: broker, publisher: "dave", topic: "imhost/u/carol/from/dave"))
        let synced = try broker.syncCounters(bob, timeout: 3)
        #expect(synced.counters["refused"] as? [String: Int] == ["receipt": 1, "kind": 1], "\(synced.counters)")
        // Only the stamp (a kind with an id) is answered; it came last, so the answers to what
        // came before it would have come before its own.
        #expect(carolInbox.waitFor(#""code":"kind""#))
        #expect(carolInbox.stdout.components(separatedBy: "imhost/u/carol/from/bob ").count - 1 == 1, "\(carolInbox.stdout)")
    }
}

@Suite("Read receipts survive the broker", .heavy(.broker))
struct ReceiptConfirmationTests {
    @Test("a read receipt the broker lost is sent again until the sender confirms it: the sender ends at read ✓✓")
    func lostReadReceipt() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(alice, timeout: 2).status == 0)
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        _ = try transcript(alice, with: "bob", ["did you read this?"])
        // Bob's chat shows it: a read receipt goes to alice, who is away; the broker keeps it.
        let shown = try transcript(bob, with: "alice")
        #expect(shown.stdout.contains("│ did you read this? │"), "\(shown.stdout)")
        let waiting = try broker.syncCounters(bob, timeout: 2).report
        #expect(waiting["unconfirmedReceipts"] as? Int == 1, "\(waiting)")
        // The broker loses everything it kept, alice's receipts with it.
        try broker.loseStateAndRestart()
        let lost = try broker.syncCounters(alice, timeout: 2).counters
        #expect(lost["read"] as? Int == 0, "\(lost)")
        // Bob's host sends it again at its next connection; alice's host applies it and confirms.
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let read = try broker.syncCounters(alice, timeout: 3).counters
        #expect(read["read"] as? Int == 1, "\(read)")
        #expect(try pageMessages(alice, url: houseChat(with: "bob")).first?["state"] as? String == "read")
        let confirmed = try broker.syncCounters(bob, timeout: 3)
        #expect(confirmed.counters["confirmed"] as? Int == 1, "\(confirmed.counters)")
        #expect(confirmed.report["unconfirmedReceipts"] as? Int == 0, "\(confirmed.report)")
    }
}

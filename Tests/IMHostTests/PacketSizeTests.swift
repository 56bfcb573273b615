import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// The sizing paragraph of mosquitto.conf as `imhost broker init` wrote it before photos (the
/// default payload limit): a broker folder made then.
func sizedBeforePhotos(_ config: String) -> String {
    var lines = config.components(separatedBy: "\n")
    guard let start = lines.firstIndex(where: { $0.hasPrefix("# The largest packet:") }),
          let end = lines[start...].firstIndex(where: { $0.hasPrefix("max_queued_bytes ") }) else { return config }
    lines.replaceSubrange(start...end, with: """
        # The largest packet: the largest payload host.json allows (65536 bytes) and
        # the envelope and topic around it. Larger ones are refused before they cost memory.
        max_packet_size 70656
        # What the broker keeps for one slow or offline client: at most this many messages and
        # bytes (past them it drops messages, and imhost's resends bring them later).
        max_queued_messages 1000
        max_queued_bytes 18087936
        """.components(separatedBy: "\n"))
    return lines.joined(separator: "\n")
}

@Suite("The broker's packet limit: sized for photos, said at connect, kept at the sender", .heavy(.broker))
struct PacketSizeTests {
    @Test("a message larger than a broker made before photos takes fails at its sender in one line, never shown sent; imhost broker upgrade, a restart, and /retry deliver it")
    func oldBrokerFolder() throws {
        let root = try Workspace()
        // On TCP: mosquitto 2.0.11 restarted on a unix socket cannot tie an absent user's saved
        // session to its listener ("Failed to associate persisted user ... with ACLs"), and drops
        // what comes for them until they connect again (the sender's resend brings it later).
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"], options: ["--port", "\(BrokerFolder.freeLoopbackPort())"],
                                    configure: sizedBeforePhotos)
        let limits = #", "limits": { "payloadBytes": 200000 }"#
        let alice = try broker.workspace(for: "alice", config: limits)
        let bob = try broker.workspace(for: "bob", config: limits)
        #expect(try broker.sync(bob, timeout: 2).status == 0)

        let text = "big " + String(repeating: "x", count: 100_000)
        let typed = try transcript(alice, with: "bob", [text])
        let sent = try broker.sync(alice, timeout: 3)
        // Whichever of them had the connection (the chat, or the sync after it) says it, once.
        let said = typed.stdout + typed.stderr + sent.stdout + sent.stderr
        let line = "a message to bob failed: the broker takes messages up to 70 KB; this one is 100 KB: not sent. The broker's operator runs imhost broker upgrade DIR and restarts it; then /retry N sends it again"
        #expect(said.components(separatedBy: line).count == 2, "said once, in one line: \(typed.stderr)\(sent.stdout)\(sent.stderr)")
        #expect(sent.stdout.contains("nothing is queued"), "failed, not waiting to go again: \(sent.stdout)")
        let shown = try transcript(alice, with: "bob", ["/why 1"])
        #expect(shown.stdout.contains("me · ") && shown.stdout.contains("· failed (/why)") && !shown.stdout.contains("· sent"), "\(shown.stdout)")
        #expect(shown.stdout.contains("state: failed: the broker takes messages up to 70 KB; this one is 100 KB"), "\(shown.stdout)")
        // The connection was never lost over it (the broker would have ended it).
        #expect(!said.contains("connection to the broker was lost"), "\(said)")

        // The operator upgrades the folder: the sizing lines change, nothing else does.
        let before = try String(contentsOfFile: broker.folder + "/mosquitto.conf", encoding: .utf8)
        let upgraded = try imhost(["broker", "upgrade", broker.folder])
        #expect(upgraded.status == 0 && upgraded.stdout.split(separator: "\n").count == 1, "one line: \(upgraded.stdout)\(upgraded.stderr)")
        #expect(upgraded.stdout.contains("upgraded \(broker.folder)/mosquitto.conf: max_packet_size 70656 → 14051672, max_queued_bytes 18087936 → 42155016"), "\(upgraded.stdout)")
        #expect(upgraded.stdout.contains("its broker (pid \(broker.pid ?? 0)) runs with the old sizes until it is restarted"), "\(upgraded.stdout)")
        let after = try String(contentsOfFile: broker.folder + "/mosquitto.conf", encoding: .utf8)
        let kept = { (config: String) in config.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("max_") } }
        #expect(kept(before) == kept(after), "every other line stays")
        // Run again: up to date, and the broker still needs its restart.
        let again = try imhost(["broker", "upgrade", broker.folder])
        #expect(again.stdout.hasPrefix("\(broker.folder)/mosquitto.conf is up to date: max_packet_size 14051672") && again.stdout.contains("until it is restarted"), "\(again.stdout)")
        #expect(try String(contentsOfFile: broker.folder + "/mosquitto.conf", encoding: .utf8) == after)
        try broker.restart()
        let restarted = try imhost(["broker", "upgrade", broker.folder, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(restarted.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(report["changed"] as? Bool == false && report["restartNeeded"] as? Bool == false, "\(restarted.stdout)")
        #expect((report["maxPacketSize"] as? [String: Any])?["after"] as? Int == 14_051_672, "\(restarted.stdout)")

        // /retry sends it again, and bob gets it.
        let retried = try transcript(alice, with: "bob", ["/retry 1"])
        #expect(retried.stdout.contains("queued"), "\(retried.stdout)")
        _ = try broker.sync(alice, timeout: 3)
        let received = try broker.sync(bob)
        #expect(received.stdout.hasPrefix("received 1,"), "\(received.stdout)\(received.stderr)")
        let delivered = try broker.sync(alice)
        #expect(delivered.stdout.contains("delivered 1"), "\(delivered.stdout)\(delivered.stderr)")
    }

    @Test("a host asks the broker for no packet larger than its own largest envelope: a peer's larger one never reaches it, the next one does")
    func hostMaximumAtConnect() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        // Bob takes payloads of 64 KiB, photos and files of 1 KiB: his largest envelope is about 70 KB.
        let bob = try broker.workspace(for: "bob", config: #", "limits": { "photoBytes": 1024, "fileBytes": 1024 }"#)
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        // Carol publishes with mosquitto's own client: 100 KB, which the broker takes (it takes 14 MB).
        let big = envelope("01JCAROL00000000000000BIG1", seq: 1, payload: #"{"text":"\#(String(repeating: "x", count: 100_000))"}"#)
        let published = try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [big, envelope("01JCAROL00000000000000SMAL", seq: 2, payload: #"{"text":"small"}"#)])
        #expect(published.status == 0, "\(published.stderr)")
        let result = try broker.sync(bob, timeout: 3)
        // Bob sees the small one alone: the broker dropped the large one rather than send it.
        #expect(result.stdout.hasPrefix("received 1,") && result.stdout.contains("refused 0"), "\(result.stdout)\(result.stderr)")
        let shown = try transcript(bob, with: "carol")
        #expect(shown.stdout.contains("│ small │") && !shown.stdout.contains("xxxxxxxx"), "\(shown.stdout)")
        let log = try String(contentsOfFile: broker.folder + "/mosquitto.log", encoding: .utf8)
        #expect(log.contains("Dropping too large outgoing PUBLISH for bob"), "the broker says why in its log")
    }

    @Test("imhost broker upgrade refuses a folder that is not a broker folder, or a configuration it did not write, in one line")
    func upgradeRefuses() throws {
        let workspace = try Workspace()
        let empty = try imhost(["broker", "upgrade", workspace.root])
        #expect(empty.status == 1 && empty.stderr.split(separator: "\n").count == 1
                && empty.stderr.contains("\(workspace.root) is not a broker folder (no mosquitto.conf); make it with imhost broker init"), "\(empty.stderr)")
        try "listener 1883\n".write(toFile: workspace.root + "/mosquitto.conf", atomically: true, encoding: .utf8)
        let foreign = try imhost(["broker", "upgrade", workspace.root])
        #expect(foreign.status == 1 && foreign.stderr.split(separator: "\n").count == 1
                && foreign.stderr.contains("was not written by imhost broker init, so imhost does not rewrite it: set max_packet_size 14051672 in it by hand"), "\(foreign.stderr)")
        #expect(try String(contentsOfFile: workspace.root + "/mosquitto.conf", encoding: .utf8) == "listener 1883\n")
        // A folder made with other limits keeps its payload limit; photos and files follow --photo-bytes and --file-bytes.
        let folder = workspace.root + "/b"
        #expect(try imhost(["broker", "init", folder, "--users", "alice", "--payload-bytes", "200000", "--photo-bytes", "0", "--file-bytes", "0"]).status == 0)
        let up = try imhost(["broker", "upgrade", folder])
        #expect(up.stdout.contains("max_packet_size 205120 → 14186136") && up.stdout.contains("the broker takes them when it starts"), "\(up.stdout)")
    }
}

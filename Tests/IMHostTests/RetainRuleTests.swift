import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

extension TestBroker {
    /// mosquitto.conf as imhost wrote it before the retain rule: without its paragraph (and the
    /// blank line after it).
    static func withoutRetainRule(_ config: String) -> String {
        var lines = config.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix(BrokerFolder.retainRuleStart) }),
              let end = lines[start...].firstIndex(where: { $0.hasPrefix("plugin_opt_max_retained_bytes ") }) else { return config }
        lines.removeSubrange(start...(end + 1))
        return lines.joined(separator: "\n")
    }

    /// `mosquitto_pub` as `login`: one message (`payload`, read whole from its input; empty: a
    /// zero-length one, which clears a retained message) at QoS 1. Returns the reason code of the
    /// broker's PUBACK (135: Not authorized; 16: no subscriber; under 3.1.1 always 0), `nil` when
    /// none came.
    func publishCode(as login: String, topic: String, _ payload: String, retain: Bool, version: String = "mqttv5") throws -> Int? {
        var arguments = ["--unix", socket, "-u", login, "-P", password(login), "-t", topic, "-q", "1", "-V", version, "-d"]
        if retain { arguments.append("-r") }
        arguments.append(payload.isEmpty ? "-n" : "-s")
        let result = try IMHostTests.run(BrokerFolder.tool("mosquitto_pub"), arguments, input: payload)
        // As -d says it: "Client alice received PUBACK (Mid: 1, RC:135)".
        guard let said = result.stdout.range(of: "received PUBACK (Mid: 1, RC:") else { return nil }
        return Int(result.stdout[said.upperBound...].prefix(while: \.isNumber))
    }

    /// What the broker retains under `filter` that `reader` may read, topic by topic: the
    /// messages `mosquitto_sub` gets flagged retained when it subscribes. They come before
    /// anything published after the subscription: an unretained message from `operator` to
    /// bob's inbox marks their end.
    func retained(as reader: String, _ filter: String) throws -> [String: String] {
        let subscriber = try RunningProcess(BrokerFolder.tool("mosquitto_sub"), ["--unix", socket, "-u", reader, "-P", password(reader), "-t", filter,
                                                                                 "-q", "1", "-V", "mqttv5", "-F", "%r %t %p"], in: root)
        defer {
            subscriber.signal(SIGKILL)
            _ = subscriber.finish()
        }
        var ended = false
        for attempt in 0..<50 where !ended {
            try publish(as: "operator", topic: "imhost/u/bob/from/operator", ["end-\(attempt)"])
            ended = subscriber.waitFor("end-\(attempt)", timeout: 0.2)
        }
        guard ended else { throw Failure(description: "mosquitto_sub as \(reader) got nothing: \(subscriber.stdout)\(subscriber.stderr)") }
        var found: [String: String] = [:]
        for line in subscriber.stdout.split(separator: "\n") where line.hasPrefix("1 ") {
            let parts = line.dropFirst(2).split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            found[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return found
    }

    /// Everything the broker retains under imhost/, read by a bridge's login (which reads all of
    /// it), made the first time.
    func retainedEverywhere() throws -> [String: String] {
        if !FileManager.default.fileExists(atPath: passwordFile("spy")) {
            let made = try imhost(["broker", "add-user", folder, "spy", "--bridge"])
            guard made.status == 0 else { throw Failure(description: "add-user spy --bridge: \(made.stderr)") }
        }
        return try retained(as: "spy", "imhost/#")
    }
}

@Suite("imhost's retain rule: the broker keeps only the retained messages imhost retains by design", .heavy(.broker))
struct RetainRuleTests {
    @Test("retained junk is refused and none of it kept: on a peer's inbox, on made-up topics a user may write, on another device's session record, longer than imhost retains; under 3.1.1 acknowledged and dropped, and the log says so. Unretained, dynamic security judges as before")
    func junkRefused() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let phone = try broker.addDevice("phone", of: "alice")
        // 3.1.1 has no refusal to send: an ordinary PUBACK, nothing kept, and a line in the log.
        #expect(try broker.publishCode(as: "alice", topic: "imhost/u/bob/from/alice", "junk 3.1.1", retain: true, version: "mqttv311") == 0)
        let log = try String(contentsOfFile: broker.folder + "/mosquitto.log", encoding: .utf8)
        #expect(log.contains("imhost retain rule: refused a retained message of 10 bytes from alice on imhost/u/bob/from/alice"), "\(log)")
        let junk: [(login: String, topic: String, payload: String)] = [
            ("alice", "imhost/u/bob/from/alice", "junk"),
            ("alice", "imhost/u/nobody/from/alice", "junk"),
            ("alice", "imhost/u/alice/from/alice/made-up", "junk"),
            ("alice", "imhost/u/alice/from/alice/phone", "junk"),
            (phone, "imhost/u/alice/from/alice", "junk"),
            (phone, "imhost/u/alice/from/alice/phone/deeper", "junk"),
            ("alice", "imhost/fleet/status/alice", String(repeating: "x", count: BrokerFolder.retainedBytes + 1)),
            // Topics retained by design that dynamic security keeps from alice: the rule answered
            // "no opinion", not "allowed".
            ("alice", "imhost/fleet/config", "junk"),
            ("alice", "imhost/fleet/status/bob", "junk"),
            ("alice", "imhost/u/bob/from/bob", "junk"),
        ]
        for (login, topic, payload) in junk {
            #expect(try broker.publishCode(as: login, topic: topic, payload, retain: true) == 135, "\(login) retaining on \(topic)")
        }
        #expect(try broker.retainedEverywhere() == [:], "nothing retained is kept")
        // Unretained: alice still writes to bob's inbox, and still nowhere dynamic security refuses.
        let bob = try broker.subscribe(as: "bob", topic: "imhost/u/bob/#")
        #expect(try waitSubscribed(bob, broker: broker, publisher: "alice", topic: "imhost/u/bob/from/alice"))
        #expect(try broker.publishCode(as: "alice", topic: "imhost/u/bob/from/alice", "hello", retain: false) == 0)
        #expect(bob.waitFor("imhost/u/bob/from/alice hello"))
        bob.signal(SIGKILL)
        _ = bob.finish()
        #expect(try broker.publishCode(as: "alice", topic: "imhost/u/bob/from/bob", "forged", retain: false) == 135)
        #expect(try broker.publishCode(as: "alice", topic: "imhost/fleet/config", "forged", retain: false) == 135)
    }

    @Test("what imhost retains by design is kept: the operator's fleet configuration (up to the largest), a user's status, each device's own session record, and a real host's record and status; an empty payload clears one")
    func byDesignKept() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let phone = try broker.addDevice("phone", of: "alice")
        let config = String(repeating: "c", count: BrokerFolder.retainedBytes)
        let kept: [(login: String, topic: String, payload: String)] = [
            ("operator", FleetConfig.topic, config),
            ("bob", Topic.fleetStatus(user: "bob").name, "bob's status"),
            ("bob", "imhost/u/bob/from/bob", "bob's record"),
            (phone, "imhost/u/alice/from/alice/phone", "the phone's record"),
        ]
        for (login, topic, payload) in kept {
            #expect(try [0, 16].contains(broker.publishCode(as: login, topic: topic, payload, retain: true)), "\(login) retaining on \(topic)")
        }
        #expect(try broker.retainedEverywhere() == Dictionary(uniqueKeysWithValues: kept.map { ($0.topic, $0.payload) }))
        // Cleared by an empty payload: bob's record, and the phone's by alice's first device.
        #expect(try broker.publishCode(as: "bob", topic: "imhost/u/bob/from/bob", "", retain: true) == 16)
        #expect(try broker.publishCode(as: "alice", topic: "imhost/u/alice/from/alice/phone", "", retain: true) == 16)
        let cleared = try broker.retainedEverywhere()
        #expect(Set(cleared.keys) == [FleetConfig.topic, Topic.fleetStatus(user: "bob").name], "\(cleared.keys)")
        // A real host: its session record and status are retained while it runs, its record
        // cleared when it leaves.
        let alice = try broker.workspace(for: "alice")
        let chat = try broker.chat(alice, with: "bob")
        #expect(chat.waitFor(broker.connected("alice")))
        var held: [String: String] = [:]
        for _ in 0..<50 where held["imhost/u/alice/from/alice"] == nil || held[Topic.fleetStatus(user: "alice").name] == nil {
            held = try broker.retainedEverywhere()
        }
        #expect(held["imhost/u/alice/from/alice"]?.contains(#""kind":"presence""#) == true, "\(held)")
        #expect(held[Topic.fleetStatus(user: "alice").name]?.contains(#""state":"running""#) == true, "\(held)")
        chat.send("/quit")
        #expect(chat.finish().status == 0)
        for _ in 0..<50 where held["imhost/u/alice/from/alice"] != nil { held = try broker.retainedEverywhere() }
        #expect(held["imhost/u/alice/from/alice"] == nil && held[Topic.fleetStatus(user: "alice").name] != nil, "\(held)")
    }

    @Test("imhost broker upgrade adds the retain rule to a folder made before it, and to one made before devices: junk kept before, refused after a restart, what was retained by design still kept", arguments: [false, true])
    func upgrade(legacy: Bool) throws {
        let root = try Workspace()
        // Made before devices, or since but before the retain rule.
        let before: ((String) -> String)? = legacy ? nil : { TestBroker.withoutRetainRule($0) }
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"], legacy: legacy, configure: before)
        try? FileManager.default.removeItem(atPath: broker.folder + "/imhost-retain-rule.so")
        #expect(try [0, 16].contains(broker.publishCode(as: "alice", topic: "imhost/u/bob/from/alice", "old junk", retain: true)))
        #expect(try [0, 16].contains(broker.publishCode(as: "bob", topic: "imhost/u/bob/from/bob", "bob's record", retain: true)))
        #expect(try broker.retained(as: "bob", "imhost/u/bob/#") == ["imhost/u/bob/from/alice": "old junk", "imhost/u/bob/from/bob": "bob's record"],
                "without the rule, the broker keeps junk")
        let upgraded = try imhost(["broker", "upgrade", broker.folder, "--json"])
        #expect(upgraded.status == 0, "\(upgraded.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(upgraded.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(report["retainRule"] as? Bool == true && report["devices"] as? Bool == legacy && report["restartNeeded"] as? Bool == true, "\(report)")
        let copy = try FileManager.default.attributesOfItem(atPath: broker.folder + "/imhost-retain-rule.so")
        #expect(copy[FileAttributeKey.posixPermissions] as? Int == 0o644)
        try broker.restart()
        // What was retained before stays until cleared; its publisher may clear it.
        #expect(try broker.publishCode(as: "alice", topic: "imhost/u/bob/from/alice", "", retain: true) == 16)
        #expect(try broker.publishCode(as: "alice", topic: "imhost/u/bob/from/alice", "new junk", retain: true) == 135)
        #expect(try broker.retained(as: "bob", "imhost/u/bob/#") == ["imhost/u/bob/from/bob": "bob's record"])
        let again = try imhost(["broker", "upgrade", broker.folder, "--json"])
        let second = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(second["changed"] as? Bool == false && second["retainRule"] as? Bool == false && second["restartNeeded"] as? Bool == false, "\(second)")
    }

    @Test("started as root for a folder another user owns, init makes the plugin's copy that user's (mode 0644), and the broker, running as that user, loads it (one it cannot read stops it before it accepts connections)",
          .enabled(if: geteuid() == 0 && getpwnam("nobody") != nil))
    func ownedLikeTheFolder() throws {
        let root = try Workspace()
        chmod(root.root, 0o755)
        let folder = root.root + "/broker"
        let nobody = try #require(getpwnam("nobody")).pointee
        #expect(mkdir(folder, 0o755) == 0 && chown(folder, nobody.pw_uid, nobody.pw_gid) == 0)
        let made = try imhost(["broker", "init", folder, "--users", "alice,bob"])
        #expect(made.status == 0, "\(made.stderr)")
        var copy = stat()
        #expect(stat(folder + "/imhost-retain-rule.so", &copy) == 0 && copy.st_uid == nobody.pw_uid && copy.st_mode & 0o777 == 0o644)
        let broker = try RunningProcess(BuildProducts.imhost, ["broker", "run", folder], in: root.root)
        #expect(broker.waitFor("accepting connections"), "\(broker.stderr)")
        broker.signal(SIGINT)
        #expect(broker.finish().status == 0)
    }

    /// Whether a built retain rule is installed where `broker init` looks after its own folder.
    static let installedRule = ["/usr/local/lib/imhost", "/usr/lib/imhost"].contains {
        FileManager.default.fileExists(atPath: $0 + "/" + BrokerFolder.retainRuleLibrary)
    }

    @Test("imhost broker init refuses in one line, and makes no broker, when imhost's retain rule is neither beside it nor installed", .enabled(if: !installedRule))
    func initWithoutRule() throws {
        let root = try Workspace()
        // imhost alone in a folder of its own, with the one library it needs to start.
        let bin = root.root + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        for name in ["imhost", "libIMKit.so"] {
            let built = BuildProducts.folder + "/" + name
            do { try FileManager.default.linkItem(atPath: built, toPath: bin + "/" + name) } catch { try FileManager.default.copyItem(atPath: built, toPath: bin + "/" + name) }
        }
        let made = try run(bin + "/imhost", ["broker", "init", root.root + "/broker", "--users", "alice"])
        #expect(made.status == 1 && made.stderr.split(separator: "\n").count == 1, "\(made.stderr)")
        #expect(made.stderr.contains(BrokerFolder.retainRuleLibrary) && made.stderr.contains(bin), "\(made.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root.root + "/broker/mosquitto.conf"))
    }
}

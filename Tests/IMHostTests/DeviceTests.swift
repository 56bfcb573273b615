import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// One person, several devices (issue 31, point 1): each device its own login and session at the
/// broker, which still enforces who the user is.
@Suite("Devices: a login and a session each", .heavy(.broker))
struct DeviceTests {
    @Test("add-device prints the device's host.json members; two devices of alice, real hosts, are connected at once, each with its own session, and neither throws the other off")
    func twoDevicesAtOnce() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let added = try imhost(["broker", "add-device", broker.folder, "alice", "phone"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains(#""transport": { "url": "\#(broker.url)", "login": "alice~phone", "passwordFile": "\#(broker.folder)/passwords/alice~phone" }"#), "\(added.stdout)")
        var info = stat()
        #expect(stat(broker.passwordFile("alice~phone"), &info) == 0 && info.st_mode & 0o777 == 0o600)
        let again = try imhost(["broker", "add-device", broker.folder, "alice", "phone"])
        #expect(again.status == 1 && again.stderr.split(separator: "\n").count == 1 && again.stderr.contains("alice has a device phone already"), "\(again.stderr)")

        let laptop = try broker.workspace(for: "alice"), phone = try broker.workspace(for: "alice", login: "alice~phone"), bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let first = try broker.chat(laptop, with: "bob")
        defer { first.signal(SIGKILL); _ = first.finish() }
        try #require(first.waitFor("connected to \(broker.url) as alice"), "\(first.stdout)\(first.stderr)")
        let second = try broker.chat(phone, with: "bob")
        defer { second.signal(SIGKILL); _ = second.finish() }
        try #require(second.waitFor("connected to \(broker.url) as alice~phone"), "\(second.stdout)\(second.stderr)")
        // Bob writes: the broker holds a session for each device, and each gets it.
        let bobChat = try broker.chat(bob, with: "alice")
        defer { bobChat.signal(SIGKILL); _ = bobChat.finish() }
        try #require(bobChat.waitFor("connected to \(broker.url) as bob"))
        bobChat.send("to both")
        #expect(first.waitFor("│ to both │"), "\(first.stdout)")
        #expect(second.waitFor("│ to both │"), "\(second.stdout)")
        // The phone's own sends go out as alice.
        second.send("from the phone")
        #expect(bobChat.waitFor("│ from the phone │"), "\(bobChat.stdout)")
        for chat in [first, second] {
            #expect(!chat.stdout.contains("connected elsewhere") && !chat.stdout.contains("the connection to the broker was lost"), "\(chat.stdout)")
        }
        for chat in [first, second, bobChat] { chat.send("/quit") }
        #expect(first.finish().status == 0 && second.finish().status == 0)
    }

    @Test("a device of alice publishes only as alice and reads only alice's inbox; a host.json naming another user's device is refused in one line")
    func deviceIsItsUser() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob", "carol"])
        let login = try broker.addDevice("phone", of: "alice")
        let forged = try broker.publish(as: login, topic: "imhost/u/bob/from/carol", ["forged by alice's phone"])
        #expect(forged.stderr.contains("Not authorized"), "\(forged.stderr)")
        let asBob = try broker.publish(as: login, topic: "imhost/u/bob/from/alice~phone", ["not a user"])
        #expect(asBob.stderr.contains("Not authorized"), "\(asBob.stderr)")
        let own = try broker.publish(as: login, topic: "imhost/u/bob/from/alice", ["as alice"])
        #expect(own.status == 0 && !own.stderr.contains("Not authorized"), "\(own.stderr)")
        // It subscribes to bob's inbox and its own: only alice's messages come.
        let reader = try broker.subscribe(as: login, topics: ["imhost/u/bob/#", "imhost/u/alice/#"])
        defer { reader.signal(SIGKILL); _ = reader.finish() }
        #expect(try waitSubscribed(reader, broker: broker, publisher: "carol", topic: "imhost/u/alice/from/carol"))
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", ["secret for bob"])
        try broker.publish(as: "carol", topic: "imhost/u/alice/from/carol", ["for alice"])
        #expect(reader.waitFor("imhost/u/alice/from/carol for alice"))
        #expect(!reader.stdout.contains("secret for bob"), "\(reader.stdout)")

        // Nor does it change the broker: $CONTROL is the admin login's alone.
        let control = #"{"commands":[{"command":"createClient","username":"alice~evil","password":"evil","roles":[{"rolename":"user:bob"}]}]}"#
        #expect(try broker.publish(as: login, topic: "$CONTROL/dynamic-security/v1", [control]).stderr.contains("Not authorized"))
        #expect(try broker.publish(as: "alice~evil", password: "evil", topic: "imhost/u/alice/from/bob", ["x"]).status != 0)
        let stolen = try broker.workspace(for: "bob", login: login)
        let refused = try imhost(["sync"], in: stolen)
        #expect(refused.status != 0 && refused.stderr.contains("transport.login") && refused.stderr.contains("is not one of bob's devices"), "\(refused.stderr)")
    }

    @Test("mallory cannot take alice's device session: not with its login without its password, not with its client id, and cannot read alice's inbox")
    func malloryGetsNothing() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob", "mallory"])
        let login = try broker.addDevice("phone", of: "alice")
        // The phone's session, kept while it is away.
        let phone = try broker.subscribe(as: login, topic: "imhost/u/alice/#", clientID: login, cleanSession: false)
        #expect(try waitSubscribed(phone, broker: broker, publisher: "bob", topic: "imhost/u/alice/from/bob"))
        // Its login with a wrong password: refused.
        let guessed = try broker.publish(as: login, password: "guessed-password", topic: "imhost/u/alice/from/alice", ["x"])
        #expect(guessed.status != 0, "\(guessed.stderr)")
        // Mallory's own login with the phone's client id: the broker makes the client id mallory.
        let thief = try broker.subscribe(as: "mallory", topics: ["imhost/u/alice/#"], clientID: login, cleanSession: false)
        defer { thief.signal(SIGKILL); _ = thief.finish() }
        let mallorySays = try broker.publish(as: "mallory", topic: "imhost/u/mallory/from/mallory", ["mallory is here"], clientID: login)
        #expect(mallorySays.status == 0)
        try broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", ["for alice's phone"])
        #expect(phone.waitFor("imhost/u/alice/from/bob for alice's phone"), "the phone keeps its session: \(phone.stdout)\(phone.stderr)")
        #expect(phone.isRunning, "nobody threw the phone off")
        #expect(!thief.stdout.contains("for alice's phone"), "\(thief.stdout)")
        phone.signal(SIGKILL)
        _ = phone.finish()
    }

    @Test("remove-device ends a connected device's session at once, and it cannot come back; devices lists them; it needs a running broker")
    func removeDevice() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let login = try broker.addDevice("phone", of: "alice")
        _ = try broker.addDevice("tablet", of: "alice")
        let listed = try imhost(["broker", "devices", broker.folder])
        #expect(listed.status == 0, "\(listed.stderr)")
        let rows = listed.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows == [["alice", "(first)", "alice"], ["alice", "phone", "alice~phone"], ["alice", "tablet", "alice~tablet"],
                         ["bob", "(first)", "bob"], ["operator", "(first)", "operator"]], "\(listed.stdout)")
        let bobs = try imhost(["broker", "devices", broker.folder, "bob", "--json"])
        #expect(bobs.stdout.contains(#""login" : "bob""#) && !bobs.stdout.contains("alice"), "\(bobs.stdout)")

        let password = broker.password(login)
        // A persistent session, as a host keeps.
        let phone = try RunningProcess(BrokerFolder.tool("mosquitto_sub"), ["--unix", broker.socket, "-u", login, "-P", password, "-i", login, "-c", "-x", "3600", "-t", "imhost/u/alice/#",
                                                                            "-q", "1", "-V", "mqttv5", "-v", "-d"], in: root.root)
        defer { phone.signal(SIGKILL); _ = phone.finish() }
        #expect(try waitSubscribed(phone, broker: broker, publisher: "bob", topic: "imhost/u/alice/from/bob"))
        let removed = try imhost(["broker", "remove-device", broker.folder, "alice", "phone"])
        #expect(removed.status == 0 && removed.stdout.contains("removed alice's device phone (alice~phone): its connection ended"), "\(removed.stdout)\(removed.stderr)")
        // Thrown off at once (its session taken and ended), and mosquitto_sub ends.
        #expect(phone.waitFor("Received DISCONNECT", timeout: 10), "\(phone.stdout)\(phone.stderr)")
        _ = phone.waitFor("\u{0}never\u{0}", timeout: 10)
        #expect(!phone.isRunning)
        let back = try broker.publish(as: login, password: password, topic: "imhost/u/bob/from/alice", ["back?"])
        #expect(back.status != 0, "\(back.stderr)")
        #expect(!FileManager.default.fileExists(atPath: broker.passwordFile(login)))
        let after = try imhost(["broker", "devices", broker.folder, "alice"])
        #expect(!after.stdout.contains("phone") && after.stdout.contains("alice~tablet"), "\(after.stdout)")
        // Nothing is kept for it: a phone added again, away with a message queued for its session,
        // removed, and added once more starts with an empty session.
        func phoneSession() throws -> RunningProcess {
            try RunningProcess(BrokerFolder.tool("mosquitto_sub"), ["--unix", broker.socket, "-u", login, "-P", broker.password(login), "-i", login, "-c", "-x", "3600",
                                                                    "-t", "imhost/u/alice/#", "-q", "1", "-V", "mqttv5", "-v"], in: root.root)
        }
        #expect(try broker.addDevice("phone", of: "alice") == login)
        let away = try phoneSession()
        #expect(try waitSubscribed(away, broker: broker, publisher: "bob", topic: "imhost/u/alice/from/bob"))
        away.signal(SIGKILL)
        _ = away.finish()
        try broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", ["queued for the phone"])
        #expect(try imhost(["broker", "remove-device", broker.folder, "alice", "phone"]).status == 0)
        try broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", ["while the phone was gone"])
        #expect(try broker.addDevice("phone", of: "alice") == login)
        let fresh = try phoneSession()
        defer { fresh.signal(SIGKILL); _ = fresh.finish() }
        // (What a session kept comes before anything sent after the connection.)
        #expect(try waitSubscribed(fresh, broker: broker, publisher: "bob", topic: "imhost/u/alice/from/bob"))
        #expect(!fresh.stdout.contains("queued for the phone") && !fresh.stdout.contains("while the phone was gone"), "\(fresh.stdout)")
        _ = try imhost(["broker", "remove-device", broker.folder, "alice", "phone"])
        let unknown = try imhost(["broker", "remove-device", broker.folder, "alice", "phone"])
        #expect(unknown.status == 1 && unknown.stderr.contains("alice has no device phone"), "\(unknown.stderr)")
        let bad = try imhost(["broker", "add-device", broker.folder, "alice", "a/b"])
        #expect(bad.status == 1 && bad.stderr.split(separator: "\n").count == 1 && bad.stderr.contains("the device name \"a/b\""), "\(bad.stderr)")

        // Stopped, the broker cannot be changed: one line saying what to do.
        broker.stop()
        let stopped = try imhost(["broker", "add-device", broker.folder, "bob", "phone"])
        #expect(stopped.status == 1 && stopped.stderr.split(separator: "\n").count == 1
                && stopped.stderr.contains("is not running") && stopped.stderr.contains("imhost broker run \(broker.folder)"), "\(stopped.stderr)")
    }

    @Test("add-device run eight times at once makes eight devices: the commands take turns")
    func devicesAtOnce() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice"])
        let running = try (1...8).map { try RunningProcess(BuildProducts.imhost, ["broker", "add-device", broker.folder, "alice", "d\($0)"], in: root.root) }
        for process in running {
            let result = process.finish()
            #expect(result.status == 0, "\(result.stderr)")
        }
        let listed = try imhost(["broker", "devices", broker.folder, "alice"])
        #expect(listed.stdout.split(separator: "\n").count == 9, "\(listed.stdout)")
        #expect((1...8).allSatisfy { FileManager.default.fileExists(atPath: broker.passwordFile("alice~d\($0)")) })
    }

    @Test("upgrade moves a folder made before devices to the plugin: every password and session kept, a message queued for bob arrives, and devices can be added")
    func upgradeKeepsSessions() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"], legacy: true)
        // Bob's session, kept; then he goes away, and alice writes to him.
        let away = try broker.subscribe(as: "bob", topic: "imhost/u/bob/#", clientID: "bob", cleanSession: false)
        #expect(try waitSubscribed(away, broker: broker, publisher: "alice", topic: "imhost/u/bob/from/alice"))
        away.signal(SIGKILL)
        _ = away.finish()
        try broker.publish(as: "alice", topic: "imhost/u/bob/from/alice", ["queued for bob"])
        let early = try imhost(["broker", "add-device", broker.folder, "alice", "phone"])
        #expect(early.status == 1 && early.stderr.contains("imhost broker upgrade \(broker.folder)"), "\(early.stderr)")

        let upgraded = try imhost(["broker", "upgrade", broker.folder])
        #expect(upgraded.status == 0 && upgraded.stdout.split(separator: "\n").count == 1, "\(upgraded.stdout)\(upgraded.stderr)")
        #expect(upgraded.stdout.contains("moved \(broker.folder) to mosquitto's dynamic-security plugin") && upgraded.stdout.contains("runs as before until it is restarted"), "\(upgraded.stdout)")
        let config = try String(contentsOfFile: broker.folder + "/mosquitto.conf", encoding: .utf8)
        #expect(config.contains("\nper_listener_settings false\n") && !config.contains("password_file") && !config.contains("acl_file"), "\(config)")
        try broker.restart()

        let back = try broker.subscribe(as: "bob", topic: "imhost/u/bob/#", clientID: "bob", cleanSession: false)
        defer { back.signal(SIGKILL); _ = back.finish() }
        #expect(back.waitFor("imhost/u/bob/from/alice queued for bob", timeout: 10), "\(back.stdout)\(back.stderr)")
        // The ACL's rules hold as roles.
        #expect(try broker.publish(as: "alice", topic: "imhost/u/bob/from/carol", ["forged"]).stderr.contains("Not authorized"))
        let again = try imhost(["broker", "upgrade", broker.folder])
        #expect(again.stdout.contains("is up to date"), "\(again.stdout)")
        #expect(try broker.addDevice("phone", of: "alice") == "alice~phone")
        #expect(try broker.publish(as: "alice~phone", topic: "imhost/u/bob/from/alice", ["from the phone"]).status == 0)
        #expect(back.waitFor("imhost/u/bob/from/alice from the phone"))
    }

    @Test("upgrade of a folder with a TLS listener made before devices: the TLS listener takes the same logins, a device connects through it, and nobody anonymous does")
    func upgradeWithTLS() throws {
        let root = try Workspace()
        let certificates = try TestCertificates(in: root.root)
        let certificate = try certificates.broker("broker", names: ["localhost"])
        let port = BrokerFolder.freeLoopbackPort()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"], options: ["--listen", "127.0.0.1:\(port)", "--tls-cert", certificate.0, "--tls-key", certificate.1],
                                    legacy: true)
        let old = try String(contentsOfFile: broker.folder + "/mosquitto.conf", encoding: .utf8)
        #expect(old.components(separatedBy: "password_file ").count == 3 && old.contains("# This listener's own authentication"), "\(old)")
        let upgraded = try imhost(["broker", "upgrade", broker.folder])
        #expect(upgraded.status == 0, "\(upgraded.stderr)")
        let config = try String(contentsOfFile: broker.folder + "/mosquitto.conf", encoding: .utf8)
        #expect(!config.contains("password_file") && !config.contains("own authentication") && config.components(separatedBy: "use_username_as_clientid true").count == 3, "\(config)")
        try broker.restart()
        let login = try broker.addDevice("phone", of: "alice")
        func overTLS(_ user: String, _ password: String?, topic: String) throws -> ProcessResult {
            try run(BrokerFolder.tool("mosquitto_pub"), ["-h", "localhost", "-p", "\(port)", "--cafile", certificates.folder + "/ca.pem"]
                    + (password.map { ["-u", user, "-P", $0] } ?? []) + ["-t", topic, "-q", "1", "-V", "mqttv5", "-m", "over TLS"])
        }
        let reader = try broker.subscribe(as: "bob", topic: "imhost/u/bob/#")
        defer { reader.signal(SIGKILL); _ = reader.finish() }
        #expect(try waitSubscribed(reader, broker: broker, publisher: "alice", topic: "imhost/u/bob/from/alice"))
        #expect(try overTLS(login, broker.password(login), topic: "imhost/u/bob/from/alice").status == 0)
        #expect(reader.waitFor("imhost/u/bob/from/alice over TLS"), "\(reader.stdout)")
        #expect(try overTLS(login, broker.password(login), topic: "imhost/u/bob/from/carol").stderr.contains("Not authorized"))
        #expect(try overTLS("anyone", nil, topic: "imhost/u/bob/from/anyone").status != 0)
    }
}

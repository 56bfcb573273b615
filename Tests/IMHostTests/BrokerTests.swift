import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// Waits until `subscriber` receives what `user` publishes to `topic`: publishes numbered
/// sentinels until one shows (the subscription is live from then on).
func waitSubscribed(_ subscriber: RunningProcess, broker: TestBroker, publisher user: String, topic: String) throws -> Bool {
    for attempt in 0..<50 {
        try broker.publish(as: user, topic: topic, ["ready-\(attempt)"])
        if subscriber.waitFor("ready-\(attempt)", timeout: 0.2) { return true }
    }
    return false
}

@Suite("imhost broker: a broker set up right", .heavy(.broker))
struct BrokerTests {
    @Test("init writes the configuration, the ACL, and a private password file per user; an existing folder needs --force")
    func initFolder() throws {
        let workspace = try Workspace()
        let folder = workspace.root + "/b"
        let made = try imhost(["broker", "init", folder, "--users", "alice,bob"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains(#""transport": { "url": "unix:\#(folder)/mosquitto.sock", "passwordFile": "\#(folder)/passwords/alice" }"#), "\(made.stdout)")
        for user in ["alice", "bob", "operator", "~admin"] {
            var info = stat()
            #expect(stat(folder + "/passwords/" + user, &info) == 0 && info.st_mode & 0o777 == 0o600, "\(user)")
            let password = try String(contentsOfFile: folder + "/passwords/" + user, encoding: .utf8)
            #expect(password.count == 25 && password.hasSuffix("\n"))
        }
        let config = try String(contentsOfFile: folder + "/mosquitto.conf", encoding: .utf8)
        for line in ["per_listener_settings false", "plugin_opt_config_file \(folder)/dynamic-security.json", "allow_anonymous false", "use_username_as_clientid true", "persistence true",
                     "autosave_interval 1", "max_packet_size 14051672", "max_queued_bytes 42155016", "listener 0 \(folder)/mosquitto.sock"] {
            #expect(config.contains("\n" + line + "\n"), "\(line)")
        }
        // Every setting is in a paragraph that starts with a comment saying why.
        for paragraph in config.components(separatedBy: "\n\n") where paragraph.contains(where: { $0.isLetter }) {
            #expect(paragraph.hasPrefix("#"), "no comment says why: \(paragraph)")
        }
        let again = try imhost(["broker", "init", folder, "--users", "carol"])
        #expect(again.status == 1 && again.stderr.contains("exists: this folder has a broker already; add users with imhost broker add-user, or pass --force"), "\(again.stderr)")
        #expect(try imhost(["broker", "init", folder, "--users", "carol", "--force"]).status == 0)
    }

    @Test("broker init --force on a folder whose broker runs is refused, passwords untouched; --while-running writes it and says the running broker keeps the old ones")
    func forceWhileRunning() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice"])
        let before = broker.password("alice")
        let refused = try imhost(["broker", "init", broker.folder, "--users", "alice", "--force"])
        #expect(refused.status == 1 && refused.stderr.split(separator: "\n").count == 1
                && refused.stderr.contains("the broker of \(broker.folder) is running (pid \(broker.pid ?? 0))")
                && refused.stderr.contains("add --while-running to write it anyway"), "\(refused.stderr)")
        #expect(broker.password("alice") == before, "nothing was written")
        // A host keeps connecting with the password it has.
        let alice = try broker.workspace(for: "alice")
        #expect(try broker.sync(alice, timeout: 2).status == 0)

        let told = try imhost(["broker", "init", broker.folder, "--users", "alice", "--force", "--while-running"])
        #expect(told.status == 0 && told.stdout.contains("with new passwords for all of them")
                && told.stdout.contains("is running (pid \(broker.pid ?? 0)) and keeps the old passwords and settings until it is restarted"), "\(told.stdout)")
        #expect(broker.password("alice") != before)
    }

    @Test("ids that would break topics or the password file are refused, and operator is reserved", arguments: ["a/b", "a+b", "#", "a:b", "", "operator", ".", "..", String(repeating: "x", count: 65)])
    func badUsers(_ id: String) throws {
        let workspace = try Workspace()
        let result = try imhost(["broker", "init", workspace.root + "/b", "--users", "alice," + id])
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/b/mosquitto.conf"))
    }

    @Test("a user publishes only under its own name: a forged sender never reaches the inbox")
    func noForgedSender() throws {
        let workspace = try Workspace()
        let broker = try TestBroker(in: workspace.root, users: ["alice", "bob", "carol"])
        let bob = try broker.subscribe(as: "bob", topic: "imhost/u/bob/#")
        #expect(try waitSubscribed(bob, broker: broker, publisher: "carol", topic: "imhost/u/bob/from/carol"))
        let forged = try broker.publish(as: "carol", topic: "imhost/u/bob/from/alice", ["forged by carol"])
        #expect(forged.stderr.contains("Not authorized"), "the publisher hears its publish was refused: \(forged.stderr)")
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", ["sentinel"])
        #expect(bob.waitFor("imhost/u/bob/from/carol sentinel"))
        bob.signal(SIGKILL)
        #expect(!bob.finish().stdout.contains("forged by carol"))
    }

    @Test("a user reads only its own inbox: a subscription to another's is granted and carries nothing")
    func noReadingOthers() throws {
        let workspace = try Workspace()
        let broker = try TestBroker(in: workspace.root, users: ["alice", "bob", "carol"])
        let carol = try broker.subscribe(as: "carol", topics: ["imhost/u/bob/#", "imhost/u/carol/#"])
        #expect(try waitSubscribed(carol, broker: broker, publisher: "alice", topic: "imhost/u/carol/from/alice"))
        try broker.publish(as: "alice", topic: "imhost/u/bob/from/alice", ["for bob only"])
        try broker.publish(as: "alice", topic: "imhost/u/carol/from/alice", ["sentinel"])
        #expect(carol.waitFor("sentinel"))
        carol.signal(SIGKILL)
        #expect(!carol.finish().stdout.contains("for bob only"))
    }

    @Test("nobody takes over another's session by its client id: what waits for bob stays bob's")
    func noSessionTakeover() throws {
        let workspace = try Workspace()
        let broker = try TestBroker(in: workspace.root, users: ["alice", "bob", "carol"])
        // Bob's persistent session, then bob goes away.
        let bob = try broker.subscribe(as: "bob", topic: "imhost/u/bob/#", clientID: "bob", cleanSession: false)
        #expect(try waitSubscribed(bob, broker: broker, publisher: "alice", topic: "imhost/u/bob/from/alice"))
        bob.signal(SIGKILL)
        _ = bob.finish()
        try broker.publish(as: "alice", topic: "imhost/u/bob/from/alice", ["waiting for bob"])
        // Carol connects with bob's client id, asking for the session that holds it.
        // (Its own inbox, and bob's: the broker refuses that subscription, as any no role grants.)
        let carol = try broker.subscribe(as: "carol", topics: ["imhost/u/carol/#", "imhost/u/bob/#"], clientID: "bob", cleanSession: false)
        #expect(try waitSubscribed(carol, broker: broker, publisher: "alice", topic: "imhost/u/carol/from/alice"))
        carol.signal(SIGKILL)
        #expect(!carol.finish().stdout.contains("waiting for bob"))
        let back = try broker.subscribe(as: "bob", topic: "imhost/u/bob/#", clientID: "bob", cleanSession: false)
        #expect(back.waitFor("waiting for bob"), "bob's session kept it for him")
        back.signal(SIGKILL)
        _ = back.finish()
    }

    @Test("only operator writes the fleet configuration; each host writes only its own status")
    func fleetTopics() throws {
        let workspace = try Workspace()
        let broker = try TestBroker(in: workspace.root, users: ["alice", "bob"])
        let alice = try broker.subscribe(as: "alice", topic: "imhost/fleet/config")
        #expect(try waitSubscribed(alice, broker: broker, publisher: "operator", topic: "imhost/fleet/config"))
        #expect(try broker.publish(as: "bob", topic: "imhost/fleet/config", ["bob's config"]).stderr.contains("Not authorized"))
        try broker.publish(as: "operator", topic: "imhost/fleet/config", ["operator's config"])
        #expect(alice.waitFor("operator's config"))
        alice.signal(SIGKILL)
        #expect(!alice.finish().stdout.contains("bob's config"))
        let status = try broker.subscribe(as: "operator", topic: "imhost/fleet/status/#")
        #expect(try waitSubscribed(status, broker: broker, publisher: "alice", topic: "imhost/fleet/status/alice"))
        #expect(try broker.publish(as: "alice", topic: "imhost/fleet/status/bob", ["alice posing as bob"]).stderr.contains("Not authorized"))
        try broker.publish(as: "bob", topic: "imhost/fleet/status/bob", ["bob's status"])
        #expect(status.waitFor("bob's status"))
        status.signal(SIGKILL)
        #expect(!status.finish().stdout.contains("alice posing as bob"))
    }

    @Test("a wrong password is refused; add-user and remove-user reach the running broker")
    func users() throws {
        let workspace = try Workspace()
        let broker = try TestBroker(in: workspace.root, users: ["alice"])
        let wrong = try broker.publish(as: "alice", password: "not-the-password", topic: "imhost/u/alice/from/alice", ["x"])
        #expect(wrong.status != 0 && wrong.stderr.contains("Connection error"), "\(wrong.stderr)")
        let added = try imhost(["broker", "add-user", broker.folder, "carol"])
        #expect(added.status == 0 && added.stdout.contains("the running broker took it at once"), "\(added.stdout)\(added.stderr)")
        #expect(try broker.publish(as: "carol", topic: "imhost/u/alice/from/carol", ["hi"]).status == 0)
        let password = broker.password("carol")
        let removed = try imhost(["broker", "remove-user", broker.folder, "carol"])
        #expect(removed.status == 0 && removed.stdout.contains("the running broker ended their connections"))
        #expect(try broker.publish(as: "carol", password: password, topic: "imhost/u/alice/from/carol", ["hi"]).status != 0)
        #expect(try imhost(["broker", "remove-user", broker.folder, "operator"]).status == 1)
    }

    @Test("a second broker run on a folder whose broker runs is refused; a folder mosquitto.conf cannot name is refused at init")
    func oneBrokerAFolder() throws {
        let workspace = try Workspace()
        let broker = try TestBroker(in: workspace.root, users: ["alice"])
        let second = try imhost(["broker", "run", broker.folder])
        #expect(second.status == 1 && second.stderr.contains("a broker already runs for \(broker.folder) (mosquitto, process "), "\(second.stderr)")
        #expect(try broker.sync(try broker.workspace(for: "alice"), timeout: 3).status == 0, "the first one still serves")
        let spaced = try imhost(["broker", "init", workspace.root + "/b sp", "--users", "alice"])
        #expect(spaced.status == 1 && spaced.stderr.contains("holds a space or a control character"), "\(spaced.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/b sp"))
    }

    @Test("every signal that ends broker run stops mosquitto, sent as soon as mosquitto is there; the next broker run on the folder serves",
          arguments: [SIGHUP, SIGTERM, SIGINT, SIGKILL])
    func brokerStopsWithItsCommand(_ signal: Int32) throws {
        let workspace = try Workspace()
        let folder = workspace.root + "/broker"
        #expect(try imhost(["broker", "init", folder, "--users", "alice"]).status == 0)
        let first = try RunningProcess(BuildProducts.imhost, ["broker", "run", folder], in: workspace.root)
        // At once when mosquitto has written its pid file, most often before it accepts connections.
        var started: Int32?
        try #require(waitUntil { started = BrokerFolder(path: folder).runningPID(); return started != nil }, "\(first.finish())")
        let mosquitto = try #require(started)
        first.signal(signal)
        // Bounded, so a broker run that goes on after the signal fails here instead of hanging.
        if !waitUntil(timeout: 10, { kill(first.pid, 0) != 0 || processState(first.pid) == "Z" }) {
            Issue.record("broker run went on after signal \(signal)")
            first.signal(SIGKILL)
        }
        let ended = first.finish()
        #expect(ended.status == (signal == SIGKILL ? 128 + SIGKILL : 0), "\(ended)")
        // Gone: no such process, or a zombie waiting for whoever adopted it to reap it.
        let gone = waitUntil(timeout: 10) { kill(mosquitto, 0) != 0 || processState(mosquitto) == "Z" }
        #expect(gone, "mosquitto \(mosquitto) outlived broker run")
        if !gone { kill(mosquitto, SIGKILL) }

        let second = try RunningProcess(BuildProducts.imhost, ["broker", "run", folder], in: workspace.root)
        #expect(second.waitFor("accepting connections"), "\(second.stdout)\(second.stderr)")
        let password = try String(contentsOfFile: folder + "/passwords/alice", encoding: .utf8).trimmingCharacters(in: .newlines)
        let published = try run(BrokerFolder.tool("mosquitto_pub"), ["--unix", folder + "/mosquitto.sock", "-u", "alice", "-P", password,
                                                                     "-t", "imhost/u/alice/from/alice", "-m", "hello", "-q", "1", "-V", "mqttv5"])
        #expect(published.status == 0, "\(published.stderr)")
        second.signal(SIGINT)
        #expect(second.finish().status == 0)
    }

    @Test("init prints host.json's user and transport members for each user, add-user for its user: pasted as printed, each connects")
    func printedMembers() throws {
        let workspace = try Workspace()
        let folder = workspace.root + "/broker"
        let made = try imhost(["broker", "init", folder, "--users", "alice,bob,carol"])
        #expect(made.status == 0, "\(made.stderr)")
        let added = try imhost(["broker", "add-user", folder, "dave"])
        #expect(added.status == 0, "\(added.stderr)")
        /// The two lines printed for `user`, once.
        func members(_ user: String, in printed: String) -> String? {
            let lines = printed.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let starts = lines.indices.filter { lines[$0] == #"  "user": "\#(user)","# }
            guard starts.count == 1, starts[0] + 1 < lines.count else { return nil }
            let transport = lines[starts[0] + 1]
            guard transport == #"  "transport": { "url": "unix:\#(folder)/mosquitto.sock", "passwordFile": "\#(folder)/passwords/\#(user)" }"#,
                  printed.components(separatedBy: transport).count == 2 else { return nil }
            return lines[starts[0]] + "\n" + transport
        }
        let printed = ["alice", "bob", "carol"].map { ($0, members($0, in: made.stdout)) } + [("dave", members("dave", in: added.stdout))]
        for (user, lines) in printed { #expect(lines != nil, "\(user)'s members, once: \(made.stdout)\(added.stdout)") }

        let broker = try RunningProcess(BuildProducts.imhost, ["broker", "run", folder], in: workspace.root)
        try #require(broker.waitFor("accepting connections"), "\(broker.stdout)\(broker.stderr)")
        for (user, lines) in printed {
            let host = try Workspace()
            try host.writeConfig("{\n" + (lines ?? "") + "\n}\n")
            let synced = try imhost(["sync", "--timeout", "5"], in: host)
            #expect(synced.status == 0 && synced.stdout.hasPrefix("received 0,"), "\(user): \(synced.stdout)\(synced.stderr)")
        }
        broker.signal(SIGINT)
        #expect(broker.finish().status == 0)
    }

    @Test("--port listens on loopback only")
    func loopbackPort() throws {
        let workspace = try Workspace()
        let port = BrokerFolder.freeLoopbackPort()
        let broker = try TestBroker(in: workspace.root, users: ["alice"], options: ["--port", "\(port)"])
        let config = try String(contentsOfFile: broker.folder + "/mosquitto.conf", encoding: .utf8)
        #expect(config.contains("\nlistener \(port) 127.0.0.1\n") && config.contains("\nset_tcp_nodelay true\n"))
        let listening = ListeningSockets.all().filter { $0.port == port }
        #expect(!listening.isEmpty && listening.allSatisfy { $0.address == "127.0.0.1" }, "\(listening)")
    }
}

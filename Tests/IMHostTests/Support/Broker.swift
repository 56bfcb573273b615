import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// Which broker a test runs on: the transport's end-to-end tests run on both.
enum BrokerKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// One mosquitto (`imhost broker init`), MQTT 5.
    case mosquitto
    /// A 3-node NATS cluster (`imhost broker init --cluster 3`), MQTT 3.1.1.
    case cluster

    var testDescription: String { self == .mosquitto ? "mosquitto" : "a 3-node NATS cluster" }
}

/// A private broker for a test, made and run as a person would: `imhost broker init`, then
/// `imhost broker run`, waited for until it says it accepts connections. Stopped when released.
/// On a cluster (``BrokerKind/cluster``), each user's host.json lists every node starting at one
/// of its own (the users in turn: alice n1, bob n2, ...), with no `protocol`: the host finds 3.1.1.
final class TestBroker {
    let root: String
    let folder: String
    let kind: BrokerKind
    /// mosquitto's `imhost broker run`.
    private var process: RunningProcess?
    /// The cluster, on ``BrokerKind/cluster``.
    let cluster: TestCluster?
    let users: [String]

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `maxQueued` lowers how many messages the broker keeps for an absent client (1000 as made);
    /// `configure` changes its mosquitto.conf before it runs (as an older imhost wrote it).
    /// `legacy`: the folder as an imhost before devices made it (a password file and an ACL,
    /// a listener each), for `imhost broker upgrade`.
    init(in root: String, users: [String], kind: BrokerKind = .mosquitto, options: [String] = [], maxQueued: Int? = nil, legacy: Bool = false,
         configure: ((String) -> String)? = nil) throws {
        Heavy.require(.broker)
        self.root = root
        self.users = users
        self.kind = kind
        guard kind == .mosquitto else {
            precondition(maxQueued == nil && !legacy && configure == nil, "a cluster has no per-client queue limit, legacy folder or mosquitto.conf")
            let cluster = try TestCluster(in: root, users: users, options: options)
            self.cluster = cluster
            folder = cluster.folder
            return
        }
        cluster = nil
        folder = root + "/broker"
        let made = try imhost(["broker", "init", folder, "--users", users.joined(separator: ",")] + options)
        guard made.status == 0 else { throw Failure(description: "imhost broker init failed: \(made.stderr)") }
        if let maxQueued {
            let path = folder + "/mosquitto.conf"
            let config = try String(contentsOfFile: path, encoding: .utf8)
            guard config.contains("\nmax_queued_messages 1000\n") else { throw Failure(description: "no max_queued_messages in \(path)") }
            try config.replacingOccurrences(of: "\nmax_queued_messages 1000\n", with: "\nmax_queued_messages \(maxQueued)\n").write(toFile: path, atomically: true, encoding: .utf8)
        }
        if legacy { try Self.makeLegacy(folder) }
        if let configure {
            let path = folder + "/mosquitto.conf"
            try configure(try String(contentsOfFile: path, encoding: .utf8)).write(toFile: path, atomically: true, encoding: .utf8)
        }
        process = try Self.run(folder, in: root)
    }

    private static func run(_ folder: String, in root: String) throws -> RunningProcess {
        let process = try RunningProcess(BuildProducts.imhost, ["broker", "run", folder], in: root)
        // Until it says so or ends: it gives up by itself on a broker that does not start.
        guard process.waitFor("accepting connections", timeout: 600) else {
            throw Failure(description: "imhost broker run did not start: \(process.stdout)\(process.stderr)")
        }
        return process
    }

    deinit {
        process?.signal(SIGINT)
        _ = process?.finish()
    }

    var socket: String { folder + "/mosquitto.sock" }

    /// The URLs `user`'s host.json lists: mosquitto's one, or every node of the cluster starting
    /// at the user's own.
    func urls(for user: String) -> [String] {
        guard let cluster else { return [url] }
        let nodes = cluster.urls
        let first = (users.firstIndex(of: DynamicSecurity.parse(login: user)?.user ?? user) ?? 0) % nodes.count
        return Array(nodes[first...] + nodes[..<first])
    }

    /// What `login`'s chat says when it connects the first time.
    func connected(_ login: String) -> String { "connected to \(urls(for: login)[0]) as \(login)" }
    /// The TCP port, when the broker listens on one (`--port`).
    var port: Int? {
        guard case .port(let port)? = try? BrokerFolder(path: folder).listener() else { return nil }
        return port
    }
    var url: String {
        if let cluster { return cluster.urls.first ?? "" }
        return (try? BrokerFolder(path: folder).url()) ?? "unix:" + socket
    }
    func passwordFile(_ user: String) -> String { folder + "/passwords/" + user }
    func password(_ user: String) -> String {
        ((try? String(contentsOfFile: passwordFile(user), encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
    }

    /// Stops the broker as its operator would (Ctrl-C to `imhost broker run`), for good.
    func stop() {
        if let cluster {
            cluster.stop()
            return
        }
        process?.signal(SIGINT)
        _ = process?.finish()
    }

    /// The running mosquitto's process id (the cluster's first node's).
    var pid: Int32? { cluster?.nodePID(1) ?? BrokerFolder(path: folder).runningPID() }

    /// Stops the broker as its operator would (Ctrl-C to `imhost broker run`), then starts it again.
    func restart() throws {
        precondition(cluster == nil, "a cluster's nodes are restarted one at a time: killAndRestart")
        process?.signal(SIGINT)
        _ = process?.finish()
        process = try Self.run(folder, in: root)
    }

    /// Kills mosquitto outright (as a crash would), then starts it again from its folder. On a
    /// cluster: its first node (alice's), started again alone.
    func killAndRestart() throws {
        if let cluster {
            cluster.killNode(1)
            try cluster.startNode(1)
            return
        }
        if let pid { kill(pid, SIGKILL) }
        _ = process?.finish()
        process = try Self.run(folder, in: root)
    }

    /// Kills mosquitto outright and starts it again with nothing it had saved: every session,
    /// queued and retained message is gone (a disk lost, a broker restored from nothing).
    func loseStateAndRestart() throws {
        precondition(cluster == nil, "a cluster keeps three copies of what it holds")
        if let pid { kill(pid, SIGKILL) }
        _ = process?.finish()
        let data = folder + "/data"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: data)) ?? [] {
            try FileManager.default.removeItem(atPath: data + "/" + name)
        }
        process = try Self.run(folder, in: root)
    }

    /// The transport section of a host.json for `user` (its device's `login`, when not the first).
    func transport(for user: String, login: String? = nil, extra: String = "") -> String {
        if cluster != nil {
            let list = urls(for: login ?? user).map { "\"\($0)\"" }.joined(separator: ", ")
            return #"{ "url": [\#(list)], \#(login.map { #""login": "\#($0)", "# } ?? "")"passwordFile": "\#(passwordFile(login ?? user))"\#(extra) }"#
        }
        return #"{ "url": "\#(url)", \#(login.map { #""login": "\#($0)", "# } ?? "")"passwordFile": "\#(passwordFile(login ?? user))"\#(extra) }"#
    }

    /// `imhost broker add-device` on this broker: the device's login.
    func addDevice(_ device: String, of user: String) throws -> String {
        if let cluster { return try cluster.addDevice(device, of: user) }
        let added = try imhost(["broker", "add-device", folder, user, device])
        guard added.status == 0 else { throw Failure(description: "imhost broker add-device failed: \(added.stderr)") }
        return user + "~" + device
    }

    /// Changes the dynamic-security plugin's file (the broker reads it when it starts).
    func editSecurity(_ change: (inout [String: Any]) -> Void) throws {
        let path = folder + "/dynamic-security.json"
        var document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any] ?? [:]
        change(&document)
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: path))
    }

    /// Takes an ACL entry (`acltype` on `topic`) out of role `role`.
    func removeACL(_ acltype: String, _ topic: String, from role: String) throws {
        try editSecurity { document in
            var roles = document["roles"] as? [[String: Any]] ?? []
            for index in roles.indices where roles[index]["rolename"] as? String == role {
                roles[index]["acls"] = (roles[index]["acls"] as? [[String: Any]] ?? []).filter { !($0["acltype"] as? String == acltype && $0["topic"] as? String == topic) }
            }
            document["roles"] = roles
        }
    }

    /// Turns a folder init made into one as an imhost before devices made it: the logins'
    /// hashes in a password file, the ACL, and each listener's own authentication.
    static func makeLegacy(_ folder: String) throws {
        let passwords = folder + "/passwords"
        let logins = try FileManager.default.contentsOfDirectory(atPath: passwords).filter { !$0.hasPrefix("~") }.sorted()
        let plain = try logins.map { "\($0):" + (try String(contentsOfFile: passwords + "/" + $0, encoding: .utf8)).trimmingCharacters(in: .newlines) + "\n" }.joined()
        try plain.write(toFile: folder + "/passwd", atomically: true, encoding: .utf8)
        let hashed = try IMHostTests.run(BrokerFolder.tool("mosquitto_passwd"), ["-U", folder + "/passwd"], input: "")
        guard hashed.status == 0 else { throw Failure(description: "mosquitto_passwd -U: \(hashed.stderr)") }
        try legacyACL.write(toFile: folder + "/acl", atomically: true, encoding: .utf8)
        for file in ["/dynamic-security.json", "/passwords/~admin", "/imhost-retain-rule.so"] { try? FileManager.default.removeItem(atPath: folder + file) }
        var config = try String(contentsOfFile: folder + "/mosquitto.conf", encoding: .utf8)
        let lines = config.components(separatedBy: "\n")
        // From the retain rule's paragraph, which comes before the authentication's and came later.
        guard let start = lines.firstIndex(where: { $0.hasPrefix(BrokerFolder.retainRuleStart) }),
              let end = lines.firstIndex(where: { $0.hasPrefix("plugin_opt_config_file ") }) else { throw Failure(description: "no authentication paragraph") }
        config = (lines[..<start] + legacyPerListener.components(separatedBy: "\n") + lines[(end + 1)...]).joined(separator: "\n")
        // A TLS listener's said it was its own, as every listener's.
        config = config.replacingOccurrences(of: "keyfile \(folder)/tls/broker.key\n" + BrokerFolder.clientIDParagraph,
                                             with: "keyfile \(folder)/tls/broker.key\n# This listener's own authentication, as every listener's:\n" + legacyOwnAuth(folder))
        config = config.replacingOccurrences(of: BrokerFolder.clientIDParagraph, with: legacyOwnAuth(folder))
        try config.write(toFile: folder + "/mosquitto.conf", atomically: true, encoding: .utf8)
    }

    static let legacyPerListener = """
        # Every listener has its own authentication: none can be left anonymous by mistake
        # (listeners share one topic tree, so one anonymous listener would let anyone write
        # into anyone's inbox).
        per_listener_settings true
        """

    static func legacyOwnAuth(_ folder: String) -> String {
        """
        # Nobody connects without a user name and password ...
        allow_anonymous false
        # ... checked against these hashes (mosquitto_passwd; imhost broker add-user adds more).
        password_file \(folder)/passwd
        # What each user may publish and read: see the file.
        acl_file \(folder)/acl
        # The client id is the user name: one session per user, so nobody takes over another
        # user's session (and its queued messages) by connecting with its client id. One
        # device per user at a time: a second connection of a user takes the session over.
        use_username_as_clientid true
        """
    }

    /// The ACL imhost broker init wrote before devices.
    static let legacyACL = """
        # Written by imhost broker init.
        pattern write imhost/u/+/from/%u
        pattern read imhost/u/%u/#
        pattern write imhost/fleet/status/%u
        pattern read imhost/fleet/config

        user operator
        topic readwrite imhost/fleet/#

        """

    /// A workspace for `user`: house and jobs (and `more` products) installed, a host.json with
    /// this broker as its transport; `config` adds members to host.json.
    func workspace(for user: String, login: String? = nil, config: String = "", transport extra: String = "", more: [(String, String)] = []) throws -> Workspace {
        let workspace = try Workspace()
        try workspace.installLines()
        for (product, name) in more { try workspace.install(product, as: name) }
        try workspace.writeConfig("""
            {
              "user": "\(user)",
              "lines": { "house": { "enabled": true }, "jobs": { "enabled": true }\(more.isEmpty ? "" : ", " + more.map { "\"\($0.1.dropLast(3))\": { \"enabled\": true }" }.joined(separator: ", ")) },
              "routes": [
                { "rootCateID": 1, "cateID": "*", "line": "house" },
                { "rootCateID": 9, "cateID": [12, 13], "line": "jobs" }\(more.contains { $0.1 == "crashy.so" } ? #", { "rootCateID": 66, "cateID": "*", "line": "crashy" }"# : "")\(more.contains { $0.1 == "cars.so" } ? #", { "rootCateID": 4, "cateID": "*", "line": "cars" }"# : "")
              ],
              "transport": \(transport(for: user, login: login, extra: extra))\(config)
            }
            """)
        return workspace
    }

    // MARK: Mosquitto's own clients, as another user or an attacker

    /// `mosquitto_pub` as `user`: publishes `messages` (one each) to `topic` at QoS 1, MQTT 5.
    /// It connects as `user`'s session (the broker makes the client id the user name): with a
    /// clean start, as mosquitto_pub does, that session and what it queued are gone after;
    /// `keepSession` connects without one, so they stay.
    @discardableResult
    func publish(as user: String, password: String? = nil, topic: String, _ messages: [String], clientID: String? = nil, retain: Bool = false,
                 keepSession: Bool = false) throws -> ProcessResult {
        if let cluster {
            precondition(!keepSession, "mosquitto_pub keeps no session on the cluster here")
            return try cluster.publish(as: user, password: password, topic: topic, messages, node: 1, clientID: clientID, retain: retain)
        }
        var arguments = ["--unix", socket, "-u", user, "-P", password ?? self.password(user), "-t", topic, "-q", "1", "-V", "mqttv5", "-l"]
        if let clientID { arguments += ["-i", clientID] }
        if retain { arguments.append("-r") }
        // mosquitto_pub wants a client id with -c; the broker makes it the user name anyway.
        if keepSession { arguments += ["-c", "-x", "604800"] + (clientID == nil ? ["-i", user] : []) }
        return try IMHostTests.run(BrokerFolder.tool("mosquitto_pub"), arguments, input: messages.joined(separator: "\n") + "\n")
    }

    /// `mosquitto_sub` as `user`, running: waits for what it prints (`topic payload` lines).
    /// Stop it with SIGKILL: it inherits the test runner's blocked SIGTERM and SIGINT.
    func subscribe(as user: String, topic: String, clientID: String? = nil, cleanSession: Bool = true) throws -> RunningProcess {
        try subscribe(as: user, topics: [topic], clientID: clientID, cleanSession: cleanSession)
    }

    /// The same, to several topics at once.
    func subscribe(as user: String, topics: [String], clientID: String? = nil, cleanSession: Bool = true) throws -> RunningProcess {
        if let cluster { return try cluster.subscribe(as: user, topics: topics, node: 1, clientID: clientID, cleanSession: cleanSession) }
        var arguments = ["--unix", socket, "-u", user, "-P", password(user)] + topics.flatMap { ["-t", $0] } + ["-q", "1", "-V", "mqttv5", "-v"]
        if let clientID { arguments += ["-i", clientID] }
        if !cleanSession { arguments += ["-c", "-x", "3600"] }
        let process = try RunningProcess(BrokerFolder.tool("mosquitto_sub"), arguments, in: root)
        return process
    }
}

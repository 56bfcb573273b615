import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// A private NATS cluster for a test, made and run as a person would: `imhost broker init
/// --cluster N`, then `imhost broker run`, waited for until it says it accepts connections
/// (every node serves MQTT). A node is killed with ``killNode(_:)`` and started again alone with
/// ``startNode(_:)`` (`imhost broker run DIR --node N`). Everything stops when it is released.
///
/// Nodes are numbered from 1, as `--node` takes them. Mosquitto's own clients speak MQTT 3.1.1
/// to it (all NATS speaks), each with a random client id unless one is given.
final class TestCluster {
    let root: String
    let folder: String
    let users: [String]
    /// `imhost broker run DIR`: every node it started.
    private(set) var process: RunningProcess
    /// `imhost broker run DIR --node N` for the nodes started again alone.
    private var alone: [Int: RunningProcess] = [:]

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `options` go to `imhost broker init` (`--payload-bytes N`, `--photo-bytes N`).
    init(in root: String, users: [String], nodes: Int = 3, options: [String] = []) throws {
        Heavy.require(.broker)
        ClusterSlots.take()
        self.root = root
        self.users = users
        folder = root + "/cluster"
        do {
            let made = try imhost(["broker", "init", "--cluster", "\(nodes)", folder, "--users", users.joined(separator: ",")] + options)
            guard made.status == 0 else { throw Failure(description: "imhost broker init --cluster failed: \(made.stderr)") }
            process = try Self.run(folder, [], in: root)
        } catch {
            ClusterSlots.give()
            throw error
        }
    }

    private static func run(_ folder: String, _ more: [String], in root: String) throws -> RunningProcess {
        let process = try RunningProcess(BuildProducts.imhost, ["broker", "run", folder] + more, in: root)
        // Until it says so or ends: `broker run` waits as long as the nodes get on, and gives up
        // by itself when they do not (a guess here would fail a cluster a busy machine starts slowly).
        guard process.waitFor("accepting connections", timeout: 900) else {
            process.signal(SIGKILL)
            let ended = process.finish()
            throw Failure(description: "imhost broker run \(more.joined(separator: " ")) did not start: \(ended.stdout)\(ended.stderr)")
        }
        return process
    }

    deinit { stop() }

    /// Stops every `imhost broker run` of it with `signal` (Ctrl-C's SIGINT, a service manager's
    /// SIGTERM, a closed terminal's SIGHUP), waits for each to end, and returns what the one that
    /// ran every node said. Once.
    @discardableResult
    func stop(_ signal: Int32 = SIGINT) -> ProcessResult {
        if let stopped { return stopped }
        let runs = [process] + alone.values
        for run in runs { run.signal(signal) }
        let said = runs.map { $0.finish() }[0]
        alone = [:]
        stopped = said
        ClusterSlots.give()
        return said
    }

    /// What ``stop(_:)`` returned, once it has run.
    private var stopped: ProcessResult?

    /// Runs every node again after ``stop(_:)`` (`imhost broker run DIR`), as after all of them
    /// went down at once, and waits until it accepts connections.
    func startAll() throws {
        precondition(stopped != nil, "startAll() runs the nodes again after stop()")
        ClusterSlots.take()
        do {
            process = try Self.run(folder, [], in: root)
        } catch {
            ClusterSlots.give()
            throw error
        }
        stopped = nil
    }

    var cluster: BrokerCluster { BrokerCluster(path: folder) }

    /// Each node's MQTT URL, in order: what host.json's `transport.url` lists.
    var urls: [String] { (try? cluster.urls()) ?? [] }

    /// Node `node`'s ports (its MQTT one is what mosquitto's clients connect to).
    func node(_ node: Int) -> BrokerCluster.Node {
        // A test that names a node the cluster does not have is wrong: say so at once.
        guard let found = try? cluster.node(node) else { fatalError("the cluster in \(folder) has no node \(node)") }
        return found
    }

    func passwordFile(_ login: String) -> String { folder + "/passwords/" + login }
    func password(_ login: String) -> String {
        ((try? String(contentsOfFile: passwordFile(login), encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
    }

    /// The transport section of a host.json for `user` (its device's `login`, when not the
    /// first): every node's URL, MQTT 3.1.1.
    func transport(for user: String, login: String? = nil, extra: String = "") -> String {
        let list = urls.map { "\"\($0)\"" }.joined(separator: ", ")
        return #"{ "url": [\#(list)], "protocol": "3.1.1", \#(login.map { #""login": "\#($0)", "# } ?? "")"passwordFile": "\#(passwordFile(login ?? user))"\#(extra) }"#
    }

    /// `imhost broker add-device` on this cluster: the device's login.
    func addDevice(_ device: String, of user: String) throws -> String {
        let added = try imhost(["broker", "add-device", folder, user, device])
        guard added.status == 0 else { throw Failure(description: "imhost broker add-device failed: \(added.stderr)") }
        return user + "~" + device
    }

    // MARK: Nodes

    /// Node `node`'s process id while it runs.
    func nodePID(_ node: Int) -> Int32? { cluster.runningPID(of: self.node(node)) }

    /// Kills node `node` outright (kill -9, as a crash would), and waits until the command that
    /// ran it has seen it die: `broker run` says so in a line and goes on with the others; a
    /// `broker run --node` ends.
    func killNode(_ node: Int) {
        guard let pid = nodePID(node) else { return }
        kill(pid, SIGKILL)
        if let run = alone.removeValue(forKey: node) {
            _ = run.finish()
        } else {
            process.waitFor("node n\(node) ended")
        }
    }

    /// Starts node `node` again from its folder, alone (`imhost broker run DIR --node N`), and
    /// waits until it serves MQTT. Returns what its command said.
    @discardableResult
    func startNode(_ node: Int) throws -> String {
        let run = try Self.run(folder, ["--node", "\(node)"], in: root)
        alone[node] = run
        return run.stdout
    }

    // MARK: Mosquitto's own clients, MQTT 3.1.1

    /// A client id no other test's client has.
    static func randomID() -> String { "test-" + UUID().uuidString.prefix(13).lowercased() }

    /// `mosquitto_pub` as `login` on node `node`: publishes `messages` (one each) to `topic` at
    /// QoS 1 with a clean session, and ends once each is acknowledged (at most 60 s: a node
    /// that lost a peer a moment ago may take seconds to answer).
    @discardableResult
    func publish(as login: String, password: String? = nil, topic: String, _ messages: [String], node: Int = 1, clientID: String? = nil,
                 retain: Bool = false) throws -> ProcessResult {
        var arguments = ["60", BrokerFolder.tool("mosquitto_pub"), "-V", "mqttv311", "-h", "127.0.0.1", "-p", "\(self.node(node).mqttPort)",
                         "-u", login, "-P", password ?? self.password(login), "-i", clientID ?? Self.randomID(), "-t", topic, "-q", "1", "-l"]
        if retain { arguments.append("-r") }
        return try IMHostTests.run("/usr/bin/timeout", arguments, input: messages.joined(separator: "\n") + "\n")
    }

    /// `mosquitto_sub` as `login` on node `node`, running: waits for what it prints (`topic
    /// payload` lines, and its packets: `received SUBACK`, `Subscribed (mid: 1): 128`).
    /// `cleanSession` false keeps the session (and what is queued for it) under `clientID` after
    /// it ends. Stop it with SIGKILL: it inherits the test runner's blocked SIGTERM and SIGINT.
    func subscribe(as login: String, topic: String, node: Int = 1, clientID: String? = nil, cleanSession: Bool = true) throws -> RunningProcess {
        try subscribe(as: login, topics: [topic], node: node, clientID: clientID, cleanSession: cleanSession)
    }

    /// The same, to several topics at once.
    func subscribe(as login: String, topics: [String], node: Int = 1, clientID: String? = nil, cleanSession: Bool = true) throws -> RunningProcess {
        // Through stdbuf: its packet lines (printf) would wait in a pipe's buffer until it ends.
        var arguments = ["-oL", BrokerFolder.tool("mosquitto_sub"), "-V", "mqttv311", "-h", "127.0.0.1", "-p", "\(self.node(node).mqttPort)", "-u", login,
                         "-P", password(login), "-i", clientID ?? Self.randomID()] + topics.flatMap { ["-t", $0] } + ["-q", "1", "-v", "-d"]
        if !cleanSession { arguments.append("-c") }
        return try RunningProcess("/usr/bin/stdbuf", arguments, in: root)
    }

    /// Waits until `subscriber`'s subscription is made (its SUBACK: NATS answers once every
    /// JetStream consumer of it is, and a session killed before then may keep only part of it)
    /// and receives what `login` publishes to `topic` on node `node`: publishes numbered
    /// sentinels until one shows. A new session's first subscription takes about a second.
    func waitSubscribed(_ subscriber: RunningProcess, publisher login: String, topic: String, node: Int = 1) throws -> Bool {
        guard subscriber.waitFor("received SUBACK", timeout: 30) else { return false }
        for attempt in 0..<100 {
            try publish(as: login, topic: topic, ["ready-\(attempt)"], node: node)
            if subscriber.waitFor("ready-\(attempt)", timeout: 0.3) { return true }
        }
        return false
    }
}

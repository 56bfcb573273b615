import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// The nodes of a ``BrokerCluster`` run as children of this process: started, waited for until
/// each serves MQTT, watched, and stopped. `imhost broker run DIR` runs all of them;
/// `imhost broker run DIR --node N` one (a node killed, started again on its own, as a test or
/// the soak does; or one machine's node of a cluster spread over several).
///
/// A node is ready when its log says so ("Server is ready", written after the offset the log
/// had when it started) and an MQTT 3.1.1 connect as operator is accepted on its MQTT port: a
/// node listens before JetStream has a leader, and until then refuses MQTT connects.
public final class ClusterProcess {
    public let cluster: BrokerCluster
    /// The nodes this process runs, with their children.
    private var children: [(node: BrokerCluster.Node, child: ChildProcess)] = []
    /// Those that ended on their own, already reported by ``ended()``.
    private var reported = Set<String>()

    public typealias Failure = BrokerProcess.Failure

    /// Starts the nodes (`only`: that node, counted from 1) and waits until each serves MQTT, as
    /// long as they get on: the wait ends in failure only when `seconds` pass in which no node
    /// that is still waiting wrote to its log or answered a connect differently (a busy machine
    /// starts a cluster slowly, but it starts), or a node ends. When `stopping` says so meanwhile
    /// (a signal came), stops them and throws. No
    /// node outlives this process: each gets SIGTERM when it dies, however it dies. Start them
    /// from the thread that lives as long as they should (the main thread): the kernel ties
    /// that signal to the thread.
    public init(cluster: BrokerCluster, only: Int? = nil, seconds: Double = 60, stopping: () -> Bool = { false }) throws(Failure) {
        self.cluster = cluster
        let description: BrokerCluster.Description, password: String, found: String?
        do throws(BrokerCluster.Failure) {
            description = try cluster.description()
            if let only { _ = try cluster.node(only) }
            // The program recorded, still the release the nodes were written for.
            found = try cluster.program(for: description)
        } catch {
            throw Failure(.folder(error))
        }
        guard let program = found else { throw Failure(.natsMissing) }
        password = (try? HostConfig.Transport.password(in: cluster.passwordFile(of: TransportID.operatorID))) ?? ""
        guard !password.isEmpty else {
            throw Failure(.operatorPasswordMissing(file: cluster.passwordFile(of: TransportID.operatorID)))
        }
        let nodes = only.map { [description.nodes[$0 - 1]] } ?? description.nodes
        if let running = nodes.first(where: { cluster.runningPID(of: $0) != nil }) {
            throw Failure(.nodeRuns(node: running.name, folder: cluster.path, pid: cluster.runningPID(of: running) ?? 0, alone: only != nil))
        }
        // A cluster made by an older imhost: its accounts get this version's permissions
        // (reports) before the nodes read them (NATS acknowledges a publish it denies).
        _ = try? cluster.upgradePermissions()
        var waiting: [(node: BrokerCluster.Node, offset: Int, logReady: Bool)] = []
        for node in nodes {
            let offset = BrokerCluster.size(of: cluster.logPath(of: node))
            do throws(FileSystem.Failure) {
                let child = try ChildProcess(executable: program, arguments: ["-c", cluster.configPath(of: node)], stdin: .null, stdout: .null, stderr: .pipe,
                                             boundToParent: true)
                children.append((node, child))
            } catch {
                stop()
                throw Failure(.cannotStart(program: program, node: node.name, error))
            }
            waiting.append((node, offset, false))
        }
        let quiet = UInt64(seconds * 1e9)
        var deadline = Clock.monotonic() + quiet
        // A node that logs the same complaint forever gets on nowhere: ten quiet spells at most.
        let limit = Clock.monotonic() + 10 * quiet
        var last: [String: String] = [:]
        var logSizes: [String: Int] = [:]
        var probedAt: [String: UInt64] = [:], readySince: [String: UInt64] = [:]
        while !waiting.isEmpty {
            // What a node still waiting did since the last look puts the deadline off.
            for (node, _, _) in waiting {
                let size = BrokerCluster.size(of: cluster.logPath(of: node))
                if logSizes[node.name] != size {
                    logSizes[node.name] = size
                    deadline = Clock.monotonic() + quiet
                }
            }
            for index in waiting.indices.reversed() {
                let (node, offset, _) = waiting[index]
                if let child = children.first(where: { $0.node == node })?.child, let ended = child.poll() {
                    let words = BrokerProcess.lastWords(of: child) ?? Self.lastError(in: BrokerCluster.text(of: cluster.logPath(of: node), from: offset))
                    stop()
                    throw Failure(.nodeEndedEarly(node: node.name, how: ended.description, said: words, log: cluster.logPath(of: node)))
                }
                if !waiting[index].logReady {
                    let log = BrokerCluster.text(of: cluster.logPath(of: node), from: offset)
                    waiting[index].logReady = Self.saysReady(log)
                    // A node that rejoins may never log a leader (it learns one without an
                    // election): 10 s after it listens, a connect is tried every 5 s all the same.
                    let now = Clock.monotonic()
                    if readySince[node.name] == nil, log.contains("Server is ready") { readySince[node.name] = now }
                    let tryAnyway = readySince[node.name].map { now >= $0 + 10_000_000_000 } == true
                        && now >= (probedAt[node.name] ?? 0) + 5_000_000_000
                    if !waiting[index].logReady && !tryAnyway { continue }
                }
                probedAt[node.name] = Clock.monotonic()
                // A connect the node cannot answer yet, it answers when its JetStream request
                // times out (4 s): waited for, not left behind for another.
                let answer = MQTTProbe.connect(host: node.host, port: node.mqttPort, login: TransportID.operatorID, password: password, seconds: 6)
                if answer == .accepted {
                    waiting.remove(at: index)
                    deadline = Clock.monotonic() + quiet
                } else {
                    if last[node.name] != answer.description { deadline = Clock.monotonic() + quiet }
                    last[node.name] = answer.description
                }
            }
            if waiting.isEmpty { break }
            guard !stopping() else {
                stop()
                throw Failure(.stopped(cluster: true))
            }
            guard Clock.monotonic() < min(deadline, limit) else {
                let nodes = waiting.map { Failure.Waiting(node: $0.node.name, connect: $0.logReady ? last[$0.node.name] ?? "not tried" : nil) }
                stop()
                throw Failure(.clusterNotServing(waiting: nodes, seconds: Int(seconds), atMost: Clock.monotonic() >= limit, alone: only != nil, logs: cluster.nodesFolder + "/*.log"))
            }
            _ = poll(nil, 0, 20)
        }
    }

    deinit { stop() }

    /// The nodes this process runs (those that have not ended), with their process ids.
    public var running: [(node: BrokerCluster.Node, pid: Int32)] {
        children.filter { $0.child.poll() == nil }.map { ($0.node, $0.child.pid) }
    }

    /// How many nodes this process started.
    public var count: Int { children.count }

    /// The nodes that ended on their own since the last call, and how (`SIGKILL`, `exit 1`).
    public func ended() -> [(node: BrokerCluster.Node, how: String)] {
        var found: [(BrokerCluster.Node, String)] = []
        for (node, child) in children where !reported.contains(node.name) {
            guard let ended = child.poll() else { continue }
            reported.insert(node.name)
            found.append((node, ended.description))
        }
        return found
    }

    /// The descriptors to wait on: readable when a node ends.
    public var endings: [Int32] { children.compactMap { $0.child.poll() == nil ? $0.child.ending : nil }.filter { $0 >= 0 } }

    /// Waits up to `milliseconds` for a node to end (or nothing, when none can).
    public func wait(milliseconds: Int32) {
        _ = waitReadable(endings, milliseconds: milliseconds)
    }

    /// Stops every node (SIGTERM: it closes its store and exits), killing those still running
    /// after 5 s.
    public func stop() {
        for (_, child) in children where child.poll() == nil { child.signal(SIGTERM) }
        for (_, child) in children where child.wait(milliseconds: 5000) == nil {
            child.signal(SIGKILL)
            _ = child.wait()
        }
    }

    /// Whether a node's log (since it started) says it is ready: it listens ("Server is ready")
    /// and knows JetStream's leader, without which it cannot answer an MQTT connect (measured: a
    /// connect before that waits 4 s for a JetStream request that times out, and is refused).
    static func saysReady(_ log: String) -> Bool {
        log.contains("Server is ready")
            && (log.contains("JetStream cluster new metadata leader") || log.contains("Self is new JetStream cluster metadata leader"))
    }

    /// The last error a log says (`[ERR]` or `[FTL]`), without its time stamp.
    static func lastError(in log: String) -> String? {
        log.split(separator: "\n").last(where: { $0.contains("[ERR]") || $0.contains("[FTL]") }).map { line in
            line.ranges(of: "] ").last.map { String(line[$0.upperBound...]) } ?? String(line)
        }
    }
}

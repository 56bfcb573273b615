import Foundation
import IMHost
import IMHostBroker

/// How each broker grows with the host sessions it holds: one mosquitto and a 3-node NATS
/// cluster (as `imhost broker init` writes them), each taking sessions in steps (1,000, then
/// 5,000, then 10,000), each session persistent and subscribed as a host's connection is. At
/// each step: the memory and the CPU a new session took, the CPU a message at a steady 1,000
/// messages a second into the sessions' inboxes, and how long a reconnect storm of all of them
/// takes (every connection dropped at once, until every session is subscribed again). mosquitto
/// is each row's baseline. The sessions live in child processes (``Swarm``) of 2,500 each.
///
/// `imhost-bench scale` runs the first step; `imhost-bench scale-large` (`make bench-scale`)
/// all three, a run of its own (about half an hour on two cores), not part of `make bench`.
enum GrowthBenchmark {
    typealias Broker = ClusterBenchmark.Broker
    struct Failure: Error, CustomStringConvertible { var description: String }

    static let perSwarm = 2_500
    static let steadyRate = 1_000
    static let steadySeconds = 10

    /// What one broker gave at one step; `stopped` says why a step was not reached.
    struct Figures {
        var sessions = 0
        var bytesPerSession = 0.0, cpuPerSession = 0.0, cpuPerMessage = 0.0, rate = 0.0, storm = 0.0
        /// The brokers' CPU with every session connected and nothing said but keep-alives (cores).
        var idleCores = 0.0
        /// Connections and subscriptions refused on the way (and made again), connecting and in the storm.
        var refused = 0, refusedInStorm = 0
        var stopped: String?
    }

    static func run(folder: String, sizes: [Int]) throws -> [Row] {
        let most = sizes.max() ?? 0
        let users = (0..<most).map { "u\($0)" } + ["sender"]
        progress("scale: \(most) users on mosquitto")
        let port = BrokerFolder.freeLoopbackPort()
        let single = try BrokerFolder.initialize(at: folder + "/mosquitto", users: users, listener: .port(port))
        let onMosquitto: [Figures]
        do {
            let mosquitto = try BrokerProcess(folder: single)
            defer { mosquitto.stop() }
            let broker = Broker(addresses: [.tcp(host: "127.0.0.1", port: port)], pids: { single.runningPID().map { [$0] } ?? [] },
                                passwordFile: { single.passwordFile(of: $0) }, version: .v5)
            onMosquitto = grow(broker, sizes: sizes, passwords: single.path + "/passwords", folder: folder)
        }
        progress("scale: \(most) users on 3 NATS nodes")
        let clusterFolder = try BrokerCluster.initialize(at: folder + "/cluster", nodes: 3, users: users)
        let onCluster: [Figures]
        do {
            let cluster = try ClusterProcess(cluster: clusterFolder)
            defer { cluster.stop() }
            let nodes = try clusterFolder.description().nodes
            let broker = Broker(addresses: nodes.map { .tcp(host: $0.host, port: $0.mqttPort) }, pids: { cluster.running.map(\.pid) },
                                passwordFile: { clusterFolder.passwordFile(of: $0) }, version: .v311)
            onCluster = grow(broker, sizes: sizes, passwords: clusterFolder.path + "/passwords", folder: folder)
        }
        return rows(mosquitto: onMosquitto, cluster: onCluster)
    }

    /// The table: per step, the cluster's figure against mosquitto's; where a step stopped on
    /// either, what it measured before, and why it stopped.
    static func rows(mosquitto: [Figures], cluster: [Figures]) -> [Row] {
        var rows: [Row] = []
        func ratio(_ a: Double, _ b: Double) -> String { b > 0 && a > 0 ? "\(format(a / b, 1))x" : "-" }
        for (index, m) in mosquitto.enumerated() {
            let c = index < cluster.count ? cluster[index] : Figures(sessions: m.sessions, stopped: "an earlier step stopped")
            let what = "\(m.sessions) host sessions, 3 NATS nodes"
            func row(_ measure: String, _ figure: (Figures) -> Double, _ text: (Double) -> String) {
                let (cf, mf) = (figure(c), figure(m))
                guard cf > 0 || mf > 0 else { return }
                rows.append(Row(what: what, measure: measure, figure: cf > 0 ? text(cf) : "-", baseline: "mosquitto: " + (mf > 0 ? text(mf) : "-"),
                                ratio: ratio(cf, mf), target: "reported", met: nil))
            }
            row("memory a session (all nodes' RSS)", \.bytesPerSession) { "\(format($0 / 1024, 1)) KiB" }
            row("CPU to connect and subscribe a session (\(c.refused) refused, made again; holding those before included)", \.cpuPerSession) { "\(format($0 * 1e3, 2)) ms" }
            row("CPU held by the sessions, idle (cores busy)", \.idleCores) { format($0, 3) }
            row("CPU a message asked at \(steadyRate) msg/s (holding the sessions meanwhile included)", \.cpuPerMessage) { "\(format($0 * 1e6, 0)) µs" }
            row("the rate they arrived at", \.rate) { "\(format($0, 0)) msg/s" }
            row("every connection dropped: all back and subscribed (\(c.refusedInStorm) refused)", \.storm) { "\(format($0, 1)) s" }
            for (name, figures) in [("3 NATS nodes", c), ("mosquitto", m)] {
                if let stopped = figures.stopped {
                    rows.append(Row(what: what, measure: "stopped on \(name)", figure: "-", baseline: "", ratio: "", target: stopped, met: nil))
                }
            }
        }
        return rows
    }

    /// Takes `broker` through `sizes`; a step that fails ends the growth there, said in its figures.
    static func grow(_ broker: Broker, sizes: [Int], passwords: String, folder: String) -> [Figures] {
        var swarms: [Watched] = []
        var results: [Figures] = []
        defer { for swarm in swarms { swarm.stop() } }
        let addresses = broker.addresses.map { address -> String in
            if case .tcp(let host, let port) = address { return "\(host):\(port)" }
            return ""
        }.joined(separator: ",")
        var connected = 0
        for size in sizes {
            var figures = Figures(sessions: size)
            do {
                let memoryBefore = broker.kiB, cpuBefore = broker.cpu
                var added: [Watched] = []
                var from = connected
                while from < size {
                    let to = min(from + perSwarm, size)
                    added.append(try Watched(CommandLine.arguments[0], ["__swarm", broker.version == .v311 ? "3.1.1" : "5", passwords, addresses, "\(from)", "\(to)"], in: folder))
                    from = to
                }
                swarms += added
                for swarm in added { swarm.say("connect") }
                for swarm in added { figures.refused += try answer(swarm, "ready") }
                progress("scale: \(size) sessions subscribed")
                figures.cpuPerSession = (broker.cpu - cpuBefore) / Double(size - connected)
                figures.bytesPerSession = Double(broker.kiB - memoryBefore) * 1024 / Double(size - connected)
                connected = size
                // Ten seconds of nothing: what holding the sessions costs (keep-alives, and on a
                // cluster the heartbeats of every consumer's replicas).
                let idleCPU = broker.cpu, idleStart = now()
                while now() - idleStart < 10_000_000_000 {
                    for swarm in swarms { _ = swarm.said }
                    _ = poll(nil, 0, 200)
                }
                figures.idleCores = (broker.cpu - idleCPU) / (Double(now() - idleStart) / 1e9)
                (figures.cpuPerMessage, figures.rate) = try steady(broker, swarms: swarms, sessions: size)
                let stormStart = now()
                for swarm in swarms { swarm.say("storm") }
                for swarm in swarms { figures.refusedInStorm += try answer(swarm, "back") }
                figures.storm = Double(now() - stormStart) / 1e9
                progress("scale: \(size) sessions back after a storm in \(format(figures.storm, 1)) s")
            } catch {
                figures.stopped = "\(error)"
                results.append(figures)
                break
            }
            results.append(figures)
        }
        return results
    }

    /// Waits for a swarm's `word` (at most 30 minutes: a cluster takes thousands of sessions
    /// slowly, and the wait is the measure); a swarm that failed says why. How many connections
    /// and subscriptions were refused on the way.
    static func answer(_ swarm: Watched, _ word: String) throws -> Int {
        let line = try swarm.line(seconds: 1800)
        let words = line.split(separator: " ")
        guard words.first.map(String.init) == word, words.count == 4, let refused = Int(words[3]) else {
            throw Failure(description: "a swarm said '\(line)' where '\(word)' was awaited")
        }
        return refused
    }

    /// `steadyRate` messages a second for `steadySeconds` from one sender into the sessions'
    /// inboxes in turn, at most 1,000 unanswered: the brokers' CPU a message until every one
    /// arrived, and the rate they arrived at.
    static func steady(_ broker: Broker, swarms: [Watched], sessions: Int) throws -> (Double, Double) {
        func received() throws -> Int {
            var total = 0
            for swarm in swarms {
                swarm.say("count")
                let line = try swarm.line(seconds: 60)
                guard line.hasPrefix("received "), let count = Int(line.dropFirst(9)) else { throw Failure(description: "a swarm said '\(line)'") }
                total += count
            }
            return total
        }
        let password = try String(contentsOfFile: broker.passwordFile("sender"), encoding: .utf8).trimmingCharacters(in: .newlines)
        var settings = MQTTClient.Settings(address: broker.addresses[0], user: "sender", password: password, maximumPacket: 1 << 20)
        settings.version = broker.version
        let sender = try MQTTClient(settings)
        sender.connect()
        defer { sender.disconnect() }
        var up = false
        try ScaleBenchmark.pump([sender], { _, event in if case .connected = event { up = true } }, until: { up })
        let before = try received()
        let total = steadyRate * steadySeconds
        var published = 0, acknowledged = 0
        let cpuBefore = broker.cpu, start = now()
        // A broker that takes fewer than asked takes longer: up to 10 minutes, the rate says how many it took.
        var lost: String?
        do {
            try ScaleBenchmark.pump([sender], seconds: 600, { _, event in
                switch event {
                case .published: acknowledged += 1
                case .disconnected(let why): lost = "\(why)"
                default: break
                }
            }, until: {
                guard lost == nil else { return true }
                let due = min(total, Int(Double(now() - start) / 1e9 * Double(steadyRate)))
                while published < due, published - acknowledged < 1_000 {
                    guard case .success = sender.publish(topic: Topic.inbox(to: "u\(published % sessions)", from: "sender").name, payload: ScaleBenchmark.payload) else { break }
                    published += 1
                }
                return acknowledged == total
            })
        } catch {
            let seconds = Double(now() - start) / 1e9
            throw Failure(description: "of \(total) messages sent at \(steadyRate) msg/s, the broker acknowledged \(acknowledged) in \(format(seconds, 0)) s (\(format(Double(acknowledged) / seconds, 0)) msg/s; \(format((broker.cpu - cpuBefore) / seconds, 2)) cores busy): \(error)")
        }
        if let lost { throw Failure(description: "the sender's connection was lost after \(acknowledged) of \(total) messages: \(lost)") }
        // Until every message is at its session (asked every 100 ms, at most 5 minutes).
        let deadline = now() + 300_000_000_000
        while try received() - before < total {
            guard now() < deadline else { throw Failure(description: "\(total - (try received() - before)) of \(total) messages never arrived") }
            _ = poll(nil, 0, 100)
        }
        let seconds = Double(now() - start) / 1e9
        return ((broker.cpu - cpuBefore) / Double(total), Double(total) / seconds)
    }
}

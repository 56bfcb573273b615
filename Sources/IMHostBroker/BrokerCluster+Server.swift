import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// The nats-server a cluster runs, found again by `imhost broker upgrade`: the nodes'
/// configuration written for the release found, everything else kept (ports and the routes'
/// password, the logins and their passwords, JetStream's stores).
extension BrokerCluster {
    /// What ``upgradeServer(_:)`` did.
    public struct ServerUpgrade: Sendable, Equatable {
        /// What cluster.json recorded before (`nil`: a folder made before imhost recorded it).
        public var before: NATSServer?
        /// What it records now.
        public var after: NATSServer
        /// The nodes whose configuration was written again.
        public var rewritten: [String] = []
        /// Those of them whose file was not what init writes (edited by hand, or by another
        /// imhost): the file it replaced is kept beside it (``keptPath(of:)``).
        public var kept: [String] = []
    }

    /// Where ``upgradeServer(_:)`` keeps a node's file it replaced that init had not written so.
    public func keptPath(of node: Node) -> String { configPath(of: node) + ".before-upgrade" }

    /// Finds the program again: `given` (absolute) when there is one, else the one cluster.json
    /// records while it is there, else the first nats-server on the PATH; and writes every
    /// node's configuration for its release, with the ports and the routes' password they have
    /// (read from the nodes' files). Refused while a node runs, when a node's configuration or
    /// the record would change: a running node reads its file again at its next reload, which a
    /// node of another release may refuse, and is known as running by the program recorded.
    public func upgradeServer(_ given: String?) throws(Failure) -> ServerUpgrade {
        try locked { () throws(Failure) -> ServerUpgrade in
            let before = try description()
            let recorded = before.natsServer.flatMap { access($0.path, F_OK) == 0 ? $0.path : nil }
            let server = try NATSServer.find(given ?? recorded)
            var after = before
            after.natsServer = server
            let password = try routePassword(before)
            var done = ServerUpgrade(before: before.natsServer, after: server)
            var changes: [(node: Node, text: String, old: String?)] = []
            for node in after.nodes {
                let text = nodeConfiguration(node, in: after, routePassword: password)
                let old = try? FileSystem.readText(configPath(of: node))
                if old != text { changes.append((node, text, old)) }
            }
            // Nor is the record changed under running nodes: they are known as running by the
            // program it names.
            if !changes.isEmpty || after.natsServer != before.natsServer, let running = before.nodes.lazy.compactMap({ node in self.runningPID(of: node).map { (node, $0) } }).first {
                throw Failure(.nodeRunningWhileUpgrading(node: running.0.name, folder: path, pid: running.1, version: server.version))
            }
            for (node, text, old) in changes {
                if let old, old != nodeConfiguration(node, in: before, routePassword: password) {
                    try files.write(old, to: keptPath(of: node), mode: 0o600)
                    done.kept.append(node.name)
                }
                try files.write(text, to: configPath(of: node), mode: 0o600)
                done.rewritten.append(node.name)
            }
            if after != before { try write(after) }
            return done
        }
    }

    /// The routes' password, as the first node's file that has one says it
    /// (`authorization { user: "route", password: "…" }`, as init writes it).
    func routePassword(_ description: Description) throws(Failure) -> String {
        let marker = #"authorization { user: "route", password: ""#
        for node in description.nodes {
            guard let text = try? FileSystem.readText(configPath(of: node)) else { continue }
            for line in text.split(separator: "\n") where !line.trimmingPrefix(while: { $0 == " " }).hasPrefix("#") {
                guard let start = line.ranges(of: marker).first?.upperBound, let end = line[start...].firstIndex(of: "\""), start < end else { continue }
                return String(line[start..<end])
            }
        }
        throw Failure(.routePasswordUnread(file: description.nodes.first.map(configPath(of:)) ?? nodesFolder))
    }
}

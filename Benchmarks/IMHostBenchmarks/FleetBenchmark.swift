import Foundation
import IMHost
import IMHostBroker

/// Fleet control: a configuration published once reaching 50 connected hosts; a host started
/// with the broker down opening on its cached configuration; what the cache costs `imhost route`.
enum FleetBenchmark {
    static let hosts = 50
    static let rounds = 20
    /// How long `imhost fleet` waits for hosts' reports by default (its --wait).
    static let commandWait = 3

    static func run(folder: String) throws -> [Row] {
        try routeCost(folder: folder + "/route") + cachedStart(folder: folder + "/start") + fanOut(folder: folder + "/fanout")
    }

    /// A cached configuration that turns something off, as a host would have.
    static func cache(in dataFolder: String) throws {
        try FileManager.default.createDirectory(atPath: dataFolder, withIntermediateDirectories: true)
        let config = FleetConfig(version: Clock.now(), madeAt: Clock.now(), killSwitch: .init(lines: ["cars"], messages: ["jobs.offer"]),
                                 rollouts: ["jobs": 5_000])
        try FleetCache(dataFolder: dataFolder).save(config)
    }

    /// Two folders with house and jobs installed, the second with a cached fleet configuration.
    static func folders(in folder: String) throws -> (plain: String, fleet: String) {
        let plain = folder + "/plain", fleet = folder + "/fleet"
        try StartupBenchmark.install(count: 2, into: plain)
        try StartupBenchmark.install(count: 2, into: fleet)
        try cache(in: fleet + "/.imhost")
        return (plain, fleet)
    }

    /// Median milliseconds of `imhost ARGUMENTS` in each folder, `runs` times each, interleaved.
    static func medians(_ arguments: [String], _ plain: String, _ fleet: String, runs: Int) throws -> (without: Double, with: Double) {
        var without: [Double] = [], with: [Double] = []
        for _ in 0..<runs {
            without.append(Double(try StartupBenchmark.time(arguments, in: plain)) / 1e6)
            with.append(Double(try StartupBenchmark.time(arguments, in: fleet)) / 1e6)
        }
        return (median(without), median(with))
    }

    /// `imhost route` with and without a cached fleet configuration.
    static func routeCost(folder: String) throws -> [Row] {
        let (plain, fleet) = try folders(in: folder)
        let (without, with) = try medians(["route", StartupBenchmark.houseURL], plain, fleet, runs: 41)
        let ratio = with / without
        return [Row(what: "fleet", measure: "imhost route with a cached fleet configuration", figure: "\(format(with, 2)) ms",
                    baseline: "without: \(format(without, 2)) ms", ratio: "\(format(ratio, 2))x", target: "<= 1.1x", met: ratio <= 1.1)]
    }

    /// `imhost chat` to its first page (then the end of its input) with the broker down and a
    /// cached configuration, against a host without a transport (no fleet control at all).
    static func cachedStart(folder: String) throws -> [Row] {
        let (plain, down) = try folders(in: folder)
        try "pw\n".write(toFile: down + "/password", atomically: true, encoding: .utf8)
        chmod(down + "/password", 0o600)
        let config = try String(contentsOfFile: down + "/host.json", encoding: .utf8)
        let transport = #", "user": "u1", "transport": { "url": "unix:\#(down)/no-broker.sock", "passwordFile": "password" } }"#
        try (String(config.trimmingCharacters(in: .whitespacesAndNewlines).dropLast()) + transport).write(toFile: down + "/host.json", atomically: true, encoding: .utf8)
        let (without, with) = try medians(["chat", StartupBenchmark.houseURL], plain, down, runs: 11)
        let ratio = with / without
        return [Row(what: "fleet", measure: "chat to first page, broker down, cached configuration", figure: "\(format(with, 1)) ms",
                    baseline: "no fleet control: \(format(without, 1)) ms", ratio: "\(format(ratio, 2))x", target: "reported", met: nil)]
    }

    /// 50 hosts connected to one broker, each a `ChatHost` holding its user's connection, in
    /// this process; the operator publishes a new configuration 20 times. Each host's latency is
    /// from the publish to the moment it applied it (cached, lines re-examined). The hosts are
    /// serviced one after another on one thread, so the last of 50 waits for the other 49's
    /// work: real hosts, each on its own machine, apply in parallel.
    static func fanOut(folder: String) throws -> [Row] {
        let users = (0..<hosts).map { "h\($0)" }
        let brokerFolder = try BrokerFolder.initialize(at: folder + "/broker", users: users, listener: .socket(folder + "/broker/mosquitto.sock"))
        let broker = try BrokerProcess(folder: brokerFolder)
        defer { broker.stop() }
        try FileManager.default.createDirectory(atPath: folder + "/Plugins", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let made: [ChatHost] = try users.map { user in
            let text = """
                { "user": "\(user)", "plugins": "\(folder)/Plugins", "data": "\(folder)/\(user)", "lines": {},
                  "transport": { "url": "unix:\(broker.folder.path)/mosquitto.sock", "passwordFile": "\(brokerFolder.passwordFile(of: user))" } }
                """
            let config = try HostConfig.parse(text, file: folder + "/\(user).json")
            let host = ChatHost(config: config, options: ChatHost.Options(scanner: products + "/imhost", breadcrumbs: .none, connection: "bench"))
            try host.signIn()
            return host
        }
        var applied: [Int: Int64] = [:]
        var latencies: [Double] = []
        var started: UInt64 = 0, target: Int64 = 0
        func pump(until done: () -> Bool) throws {
            let deadline = now() + 60_000_000_000
            while !done() {
                for (index, host) in made.enumerated() {
                    for event in host.serviceConnection() {
                        guard case .fleetApplied(let version, _) = event else { continue }
                        applied[index] = version
                        if version == target { latencies.append(Double(now() - started) / 1e6) }
                    }
                }
                guard now() < deadline else { throw BenchmarkFailure("the fleet benchmark made no progress for 60 s") }
                MQTTClient.wait(on: made.compactMap(\.courier).flatMap(\.descriptors), milliseconds: 10)
            }
        }
        try pump { made.allSatisfy { $0.courier?.inboxConfirmed == true && $0.courier?.fleetSettled == true } }

        // The operator: one connection, publishing retained as `imhost fleet` does.
        let password = try String(contentsOfFile: brokerFolder.passwordFile(of: TransportID.operatorID), encoding: .utf8).trimmingCharacters(in: .newlines)
        let operatorClient = try MQTTClient(MQTTClient.Settings(address: .unix(path: broker.folder.path + "/mosquitto.sock"), user: TransportID.operatorID,
                                                                password: password, maximumPacket: 70_000))
        operatorClient.connect()
        var up = false
        let deadline = now() + 10_000_000_000
        while !up, now() < deadline {
            for event in operatorClient.service() { if case .connected = event { up = true } }
            MQTTClient.wait(on: operatorClient.descriptors, milliseconds: 10)
        }
        guard up else { throw BenchmarkFailure("the operator could not connect") }
        let base = Clock.now()
        for round in 0..<rounds {
            target = base + Int64(round) + 1
            let config = FleetConfig(version: target, madeAt: target, killSwitch: .init(lines: round % 2 == 0 ? ["house"] : []))
            started = now()
            _ = operatorClient.publish(topic: FleetConfig.topic, payload: config.bytes, retain: true)
            try pump { applied.count == hosts && applied.values.allSatisfy { $0 == target } }
        }
        operatorClient.disconnect()
        let p50 = TransportBenchmark.percentile(latencies, 0.5), p99 = TransportBenchmark.percentile(latencies, 0.99)
        let (command, said) = try operatorCommand(folder: folder, brokerFolder: brokerFolder, socket: broker.folder.path + "/mosquitto.sock") {
            try pump(until: $0)
        }
        return [
            Row(what: "fleet", measure: "publish → applied on \(hosts) connected hosts, p50", figure: "\(format(p50, 1)) ms",
                baseline: "\(latencies.count) applications", ratio: "-", target: "reported", met: nil),
            Row(what: "fleet", measure: "publish → applied on \(hosts) connected hosts, p99", figure: "\(format(p99, 1)) ms",
                baseline: "all \(hosts) serviced on one thread", ratio: "-", target: "<= 200 ms", met: p99 <= 200),
            Row(what: "fleet", measure: "imhost fleet kill-component until \"\(said)\"", figure: "\(format(command, 0)) ms",
                baseline: "its --wait: \(commandWait) s", ratio: "-", target: "< --wait", met: command < Double(commandWait) * 1000),
        ]
    }

    /// `imhost fleet kill-component quickReplies`, run as the operator would while `pump` services
    /// the hosts: milliseconds until it ended, and the line it said of the hosts' reports. Its
    /// wait for reports should end when the last host reports, long before `--wait` runs out.
    static func operatorCommand(folder: String, brokerFolder: BrokerFolder, socket: String,
                                pump: (() -> Bool) throws -> Void) throws -> (Double, String) {
        let config = folder + "/operator.json"
        try """
            { "user": "operator", "lines": {}, "transport": { "url": "unix:\(socket)", "passwordFile": "\(brokerFolder.passwordFile(of: TransportID.operatorID))" } }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: products + "/imhost")
        process.arguments = ["fleet", "kill-component", "quickReplies", "--config", config]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let started = now()
        try process.run()
        try pump { !process.isRunning }
        let elapsed = Double(now() - started) / 1e6
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0, let said = text.split(separator: "\n").first(where: { $0.hasPrefix("Applied by") }) else {
            throw BenchmarkFailure("imhost fleet kill-component ended \(process.terminationStatus): \(text)")
        }
        return (elapsed, String(said))
    }
}

import Foundation
import IMHost
import IMHostBroker

/// What one broker holds for its users, measured on the broker `imhost broker init` writes: the
/// memory of a connected session, of a message queued for an absent user, and the disk its
/// persistence takes for one. The figures behind docs/SCALE.md.
enum ScaleBenchmark {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static let sessions = 1_000
    static let queuedEach = 20
    /// A text message's envelope, as a host sends it.
    static let payload = Array(#"{"v":1,"kind":"message","id":"01JSENDER0000000000000000A","seq":1,"key":"text","payload":\#(TransportBenchmark.text),"sentAt":1767603600000}"#.utf8)

    /// The broker's resident memory in KiB (VmRSS of /proc/PID/status).
    static func brokerKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Services `clients` until `done` holds (or `seconds` pass), waiting on their sockets.
    static func pump(_ clients: [MQTTClient], seconds: UInt64 = 60, _ handle: (Int, MQTTClient.Event) -> Void, until done: () -> Bool) throws {
        let deadline = now() + seconds * 1_000_000_000
        while !done() {
            for (index, client) in clients.enumerated() {
                for event in client.service() { handle(index, event) }
            }
            guard now() < deadline else { throw Failure(description: "the scale benchmark's clients were not done within \(seconds) s") }
            MQTTClient.wait(on: clients.flatMap(\.descriptors), milliseconds: 10)
        }
    }

    static func run(folder: String) throws -> [Row] {
        let port = BrokerFolder.freeLoopbackPort()
        let users = (0..<sessions).map { "u\($0)" }
        let brokerFolder = try BrokerFolder.initialize(at: folder + "/broker", users: users + ["sender"], listener: .port(port))
        let broker = try BrokerProcess(folder: brokerFolder)
        defer { broker.stop() }
        guard let pid = brokerFolder.runningPID() else { throw Failure(description: "the broker wrote no pid file") }
        func client(_ user: String, keepAlive: Int32 = 30) throws -> MQTTClient {
            let password = try String(contentsOfFile: brokerFolder.passwordFile(of: user), encoding: .utf8).trimmingCharacters(in: .newlines)
            var settings = MQTTClient.Settings(address: .tcp(host: "127.0.0.1", port: port), user: user, password: password, maximumPacket: 70_000)
            settings.keepAlive = keepAlive
            let made = try MQTTClient(settings)
            made.connect()
            return made
        }
        let idle = brokerKiB(pid)

        // Every user connects (a persistent session) and subscribes to its inbox, as a host does;
        // they ping every 5 s (the shortest keep-alive libmosquitto takes) for the ping row.
        let cpuBefore = TransportBenchmark.cpuSeconds(of: pid)
        let clients = try users.map { try client($0, keepAlive: 5) }
        var subscribed = 0
        func handle(_ index: Int, _ event: MQTTClient.Event) {
            switch event {
            case .connected: _ = clients[index].subscribe("imhost/u/\(users[index])/from/+")
            case .subscribed: subscribed += 1
            default: break
            }
        }
        try pump(clients, handle, until: { subscribed == sessions })
        let connectCPU = TransportBenchmark.cpuSeconds(of: pid) - cpuBefore
        let connected = brokerKiB(pid)
        // 21 s of nothing but keep-alive pings: about four from each session.
        let pingCPUBefore = TransportBenchmark.cpuSeconds(of: pid), idleUntil = now() + 21_000_000_000
        try pump(clients, handle, until: { now() >= idleUntil })
        let pingCPU = TransportBenchmark.cpuSeconds(of: pid) - pingCPUBefore
        let pings = Double(sessions) * 21 / 5
        for client in clients { client.disconnect() }
        var gone = 0
        try pump(clients, { _, event in if case .disconnected = event { gone += 1 } }, until: { gone == sessions })
        let away = brokerKiB(pid)
        // Persistence: the broker rewrites its whole file every second; two saves after the
        // sessions went away hold them.
        let database = brokerFolder.path + "/data/mosquitto.db"
        func size() -> Int { (try? FileManager.default.attributesOfItem(atPath: database)[.size] as? Int) ?? 0 }
        func modified() -> Date? { try? FileManager.default.attributesOfItem(atPath: database)[.modificationDate] as? Date }
        for _ in 0..<2 {
            let before = modified(), deadline = now() + 10_000_000_000
            while modified() == before, now() < deadline { _ = poll(nil, 0, 50) }
        }
        let sessionsOnDisk = size()

        // A sender writes `queuedEach` messages into each absent user's inbox; the broker keeps them.
        let sender = try client("sender")
        var up = false
        try pump([sender], { _, event in if case .connected = event { up = true } }, until: { up })
        let total = sessions * queuedEach
        var acknowledged = 0, published = 0
        try pump([sender], { _, event in if case .published = event { acknowledged += 1 } }, until: {
            // At most 200 in flight: the broker's in-flight window for one client.
            while published < total, published - acknowledged < 200 {
                _ = sender.publish(topic: "imhost/u/\(users[published % sessions])/from/sender", payload: payload)
                published += 1
            }
            return acknowledged == total
        })
        let queued = brokerKiB(pid)
        // Wait until the file holds the messages.
        let saveDeadline = now() + 30_000_000_000
        while size() < sessionsOnDisk + total * payload.count, now() < saveDeadline { _ = poll(nil, 0, 100) }
        let disk = size()
        sender.disconnect()

        let perSession = Double(connected - idle) * 1024 / Double(sessions)
        let perAway = Double(away - idle) * 1024 / Double(sessions)
        let perQueued = Double(queued - away) * 1024 / Double(total)
        let perSaved = Double(disk - sessionsOnDisk) / Double(total)
        let tick = 1 / Double(sysconf(Int32(_SC_CLK_TCK)))
        return [
            Row(what: "broker CPU, \(sessions) users connecting", measure: "CPU a connect and subscribe (password check included)",
                figure: "\(format(connectCPU / Double(sessions) * 1e6, 0)) µs", baseline: "", ratio: "", target: "reported", met: nil),
            Row(what: "broker CPU, \(sessions) idle sessions pinging every 5 s", measure: "CPU a keep-alive ping",
                figure: "\(format(pingCPU / pings * 1e6, 1)) µs", baseline: "± \(format(tick / pings * 1e6, 1)) µs (clock tick)", ratio: "",
                target: "reported", met: nil),
            Row(what: "broker memory, \(sessions) connected sessions", measure: "bytes a session (RSS)", figure: format(perSession, 0),
                baseline: "idle broker \(idle) KiB", ratio: "", target: "reported", met: nil),
            Row(what: "broker memory, the same \(sessions) sessions away", measure: "bytes a session kept", figure: format(perAway, 0),
                baseline: "idle broker \(idle) KiB", ratio: "", target: "reported", met: nil),
            Row(what: "broker persistence, the same sessions", measure: "bytes on disk a session", figure: format(Double(sessionsOnDisk) / Double(sessions), 0),
                baseline: "", ratio: "", target: "reported", met: nil),
            Row(what: "broker memory, \(total) messages queued for absent users", measure: "bytes a message (payload \(payload.count) B)",
                figure: format(perQueued, 0), baseline: "\(away) KiB before", ratio: format(perQueued / Double(payload.count), 2) + "x payload",
                target: "reported", met: nil),
            Row(what: "broker persistence, the same messages", measure: "bytes on disk a message", figure: format(perSaved, 0),
                baseline: "payload \(payload.count) B", ratio: format(perSaved / Double(payload.count), 2) + "x payload",
                target: "reported", met: nil),
        ]
    }
}

import Foundation
import IMHost
import IMHostBroker
import IMKit
import Synchronization

/// Two people through a private mosquitto on loopback TCP: one message's trip against the floor
/// under it (a bare libmosquitto publish → receive plus the two durable commits a message
/// costs), a burst, an offline receiver behind a small broker queue, and memory while receiving.
enum TransportBenchmark {
    /// One side: its store and its connection, as `imhost chat` holds them.
    final class Side {
        let store: MessageStore
        let courier: Courier
        let lock: ConnectionLock

        convenience init(_ user: String, login: String? = nil, folder: String, broker: BrokerFolder, address: HostConfig.Transport.Address, caFile: String? = nil,
                         clock: @escaping @Sendable () -> Int64 = { IMHost.Clock.now() }) throws {
            var settings = HostConfig.Transport(address: address, passwordFile: broker.passwordFile(of: login ?? user))
            settings.caFile = caFile
            settings.login = login
            try self.init(user, folder: folder, settings: settings, clock: clock)
        }

        /// A side with these transport settings (a cluster's list of nodes).
        init(_ user: String, folder: String, settings: HostConfig.Transport, clock: @escaping @Sendable () -> Int64 = { IMHost.Clock.now() }) throws {
            store = try MessageStore(dataFolder: folder, user: user)
            guard case .taken(let lock) = ConnectionLock.take(for: store, command: "bench") else {
                throw Failure(description: "cannot take \(user)'s connection lock")
            }
            self.lock = lock
            // A budget above what any row sends a peer in a day (the burst and the 100,000 received
            // are 110,000 from carol): the rows measure the transport, not the budget's refusals.
            courier = Courier(settings: settings, user: user, store: store, payloadLimit: 64 * 1024,
                              budget: MessageStore.PeerBudget(messages: 1_000_000, bytes: 1_000_000_000), lock: lock, clock: clock)
        }

        /// Queues a text to `peer` as a chat in this process does: stored, and the courier told.
        func send(_ text: String, to peer: String, at time: Int64 = IMHost.Clock.now()) throws {
            _ = try store.storeOutgoing(to: peer, key: "text", payload: MessagePayload(json: text), at: time)
            courier.sendSoon()
        }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    static let text = #"{"text":"Is the flat still available? I could come on Saturday."}"#

    /// Services both sides until `done` says so (or 60 s pass), waiting on their sockets (at
    /// most `longestWait` ms at a time). Returns every arrival at `sides[1]`, in order.
    @discardableResult
    static func pump(_ sides: [Side], longestWait: Int32 = 50, until done: ([StoredMessage]) -> Bool) throws -> [StoredMessage] {
        var arrived: [StoredMessage] = []
        let deadline = now() + 60_000_000_000
        while !done(arrived) {
            for (index, side) in sides.enumerated() {
                for event in side.courier.service() where index == 1 {
                    if case .arrived(_, let messages) = event { arrived += messages }
                }
            }
            if done(arrived) { break }
            guard now() < deadline else { throw Failure(description: "the transport benchmark made no progress for 60 s") }
            let wait = sides.map { $0.courier.wakeAfter() }.min() ?? 10
            MQTTClient.wait(on: sides.flatMap(\.courier.descriptors), milliseconds: min(wait, longestWait))
        }
        return arrived
    }

    static func connected(_ sides: [Side]) throws {
        try pump(sides) { _ in sides.allSatisfy(\.courier.inboxConfirmed) }
    }

    static func delivered(_ side: Side) -> Bool {
        (try? side.store.outboxCounts()) .map { $0.queued == 0 && $0.sent == 0 } ?? false
    }

    static func run(folder: String) throws -> [Row] {
        let port = BrokerFolder.freeLoopbackPort()
        let brokerFolder = try BrokerFolder.initialize(at: folder + "/broker", users: ["alice", "bob", "carol", "dave"], listener: .port(port))
        // The offline row: a broker that keeps only 100 messages for an absent client.
        let config = try String(contentsOfFile: brokerFolder.configPath, encoding: .utf8)
        try config.replacingOccurrences(of: "max_queued_messages 1000", with: "max_queued_messages 100")
            .write(toFile: brokerFolder.configPath, atomically: true, encoding: .utf8)
        let broker = try BrokerProcess(folder: brokerFolder)
        defer { broker.stop() }
        let address = HostConfig.Transport.Address.tcp(host: "127.0.0.1", port: port)
        var rows: [Row] = []

        progress("transport: one message at a time")
        // One message at a time, A → B, each delivered before the next. Between two, the floor's
        // parts, so all three see the machine at the same moments: a bare libmosquitto publish →
        // receive, and a durable commit (a message costs two: the send, and its arrival).
        // Alice's clock can be moved on, for the typing row (a signal goes at most every 3 s).
        let shift = Mutex<Int64>(0)
        let alice = try Side("alice", folder: folder + "/a", broker: brokerFolder, address: address, clock: { IMHost.Clock.now() + shift.withLock { $0 } })
        let bob = try Side("bob", folder: folder + "/b", broker: brokerFolder, address: address)
        try connected([alice, bob])
        let bare = try BarePair(broker: brokerFolder, port: port)
        let commitStore = try MessageStore(dataFolder: folder + "/commits", user: "x")
        var bareTrips: [Double] = [], commits: [Double] = []
        let trips = try oneAtATime(alice, bob, to: "bob") {
            bareTrips.append(try bare.trip())
            let start = now()
            _ = try commitStore.storeOutgoing(to: "y", key: "text", payload: MessagePayload(json: text), at: IMHost.Clock.now())
            commits.append(Double(now() - start))
        }
        bare.close()
        let floor = percentile(bareTrips, 0.5) + 2 * percentile(commits, 0.5)
        let floorText = "\(format(floor / 1e6, 2)) ms floor (trip \(format(percentile(bareTrips, 0.5) / 1e6, 2)) + 2 commits of \(format(percentile(commits, 0.5) / 1e6, 2)))"
        let p50 = percentile(trips, 0.5), p99 = percentile(trips, 0.99)
        rows.append(Row(what: "one message A → B (broker on loopback)", measure: "p50, send to stored at B",
                        figure: "\(format(p50 / 1e6, 2)) ms", baseline: floorText,
                        ratio: "\(format(p50 / floor, 2))x", target: "<= 1.5x", met: p50 <= 1.5 * floor))
        rows.append(Row(what: "one message A → B (broker on loopback)", measure: "p99",
                        figure: "\(format(p99 / 1e6, 2)) ms", baseline: floorText,
                        ratio: "\(format(p99 / floor, 2))x", target: "reported", met: nil))
        let woken = percentile(try fromAnotherProcess(alice, bob, dataFolder: folder + "/a"), 0.5)
        rows.append(Row(what: "one message A → B sent by another process of A", measure: "p50, woken by A's wake socket",
                        figure: "\(format(woken / 1e6, 2)) ms", baseline: "sent in the holder's process: \(format(p50 / 1e6, 2)) ms",
                        ratio: "\(format(woken / p50, 2))x", target: "<= 1.5x", met: woken <= 1.5 * p50))

        progress("transport: typing and recall")
        rows += try ChatFeaturesBenchmark.typingAndRecall(alice, bob, clockShift: shift, path: p50)
        progress("transport: a card's inputs to its revision on the peer's page")
        rows.append(try ChatFeaturesBenchmark.revision(alice, bob, folder: folder + "/revision", path: p50))
        progress("transport: a 60 s voice message")
        rows += try ChatFeaturesBenchmark.voice(folder: folder + "/voice")

        progress("transport: TLS and a bridge")
        rows += try deployment(folder: folder, plain: p50)

        progress("transport: a burst of 10,000")
        // A burst: 10,000 queued, then A connects; the rate is measured at B.
        let carol = try Side("carol", folder: folder + "/c", broker: brokerFolder, address: address)
        let dave = try Side("dave", folder: folder + "/d", broker: brokerFolder, address: address)
        try connected([dave])
        // Carol connects when first serviced: after the burst is queued.
        let burst = 10_000
        for round in 0..<burst {
            try carol.send(#"{"text":"burst \#(round)"}"#, to: "dave")
        }
        var first: UInt64 = 0
        let heapBefore = heapInUse()
        let brokerCPUBefore = cpuSeconds(of: broker.pid)
        let burstStart = now()
        let received = try pump([carol, dave]) { arrived in
            if first == 0, !arrived.isEmpty { first = now() }
            return arrived.count >= burst
        }
        let burstSeconds = Double(now() - first) / 1e9
        let inOrder = received.map(\.envelope.payload.json) == (0..<burst).map { #"{"text":"burst \#($0)"}"# }
        let rate = Double(burst - 1) / max(burstSeconds, 1e-9)
        rows.append(Row(what: "10,000 messages A → B in a burst", measure: "stored at B, once and in order: \(inOrder ? "yes" : "NO")",
                        figure: "\(Int(rate)) msg/s", baseline: "-", ratio: "-", target: ">= 10,000 msg/s", met: rate >= 10_000 && inOrder))
        // What the broker spent on them: each message in and out, its PUBACKs, and the receipts
        // coming back (one per up to 100 messages).
        let brokerCPU = cpuSeconds(of: broker.pid) - brokerCPUBefore
        let wall = Double(now() - burstStart) / 1e9
        rows.append(Row(what: "the broker during that burst", measure: "CPU per message (mosquitto's user + system time)",
                        figure: "\(format(brokerCPU / Double(burst) * 1e6, 1)) µs", baseline: "\(format(brokerCPU / wall * 100, 0))% of one core",
                        ratio: "-", target: "reported", met: nil))
        try pump([carol, dave]) { _ in delivered(carol) }

        progress("transport: receiving 100,000")
        // Memory while receiving: 100,000 more, heap in use measured every 10,000 at B's side.
        var samples: [Int] = []
        for batch in 0..<10 {
            // Queued while nobody services the connection, then sent as one burst.
            for round in 0..<10_000 {
                try carol.send(#"{"text":"m \#(batch) \#(round)"}"#, to: "dave")
            }
            try pump([carol, dave]) { $0.count >= 10_000 }
            try pump([carol, dave]) { _ in delivered(carol) }
            samples.append(heapInUse())
        }
        let growth = Double(samples[9] - samples[0]) / 90_000
        rows.append(Row(what: "memory of a side that received 100,000 messages", measure: "heap growth per message (after the first 10,000)",
                        figure: "\(format(growth, 1)) bytes", baseline: "\(heapBefore / 1024) KiB heap at start", ratio: "-",
                        target: "flat (reported)", met: nil))

        progress("transport: 5,000 for a receiver offline")
        // B offline while A, connected, sends 5,000; the broker keeps 100 for B.
        alice.courier.setOnline(true)
        bob.courier.setOnline(false)
        try pump([alice, bob]) { _ in bob.courier.status != .online && alice.courier.status == .online }
        let offline = 5000
        for round in 0..<offline {
            try alice.send(#"{"text":"while away \#(round)"}"#, to: "bob", at: IMHost.Clock.now() + Int64(round))
            if round % 64 == 0 { _ = alice.courier.service() }
        }
        try pump([alice]) { _ in ((try? alice.store.outboxCounts().queued) ?? 1) <= offline - 64 }
        let back = now()
        bob.courier.setOnline(true)
        let away = try pump([alice, bob]) { $0.count >= offline }
        let returnSeconds = Double(now() - back) / 1e9
        let allThere = Set(away.map(\.envelope.payload.json)).count == offline
        rows.append(Row(what: "B offline while A sends 5,000 (broker keeps 100)", measure: "all at B after its return, once each: \(allThere ? "yes" : "NO")",
                        figure: "\(format(returnSeconds, 2)) s", baseline: "-", ratio: "-", target: "<= 5 s", met: returnSeconds <= 5 && allThere))
        return rows
    }

    /// One message at a time from `a` to `b`, each delivered before the next (then `between`
    /// runs): the time from the send to its arrival at `b`, for each.
    static func oneAtATime(_ a: Side, _ b: Side, to peer: String, count: Int = 300, between: () throws -> Void = {}) throws -> [Double] {
        var trips: [Double] = []
        for _ in 0..<count {
            try between()
            let start = now()
            try a.send(text, to: peer)
            try pump([a, b]) { !$0.isEmpty }
            trips.append(Double(now() - start))
            try pump([a, b]) { _ in delivered(a) }
        }
        return trips
    }

    /// What another process of `a` does when `a`'s chat holds the connection (`imhost chat`
    /// piped in, `sync`): stores one message at a time through its own connection to the store
    /// and pokes the wake socket, while this thread waits on both sides' descriptors as a chat
    /// does (up to ``Courier/wakeAfter()``, a second at most). The time from the send to its
    /// arrival at `b`, for each.
    static func fromAnotherProcess(_ a: Side, _ b: Side, dataFolder: String, count: Int = 300) throws -> [Double] {
        let turn = DispatchSemaphore(value: 0)
        let sentAt = Mutex<UInt64>(0)
        let user = a.courier.user, peer = b.courier.user
        Thread.detachNewThread {
            // Its own connection to the database, as another process has.
            guard let store = try? MessageStore(dataFolder: dataFolder, user: user) else { return }
            for _ in 0..<count {
                turn.wait()
                sentAt.withLock { $0 = now() }
                _ = try? store.storeOutgoing(to: peer, key: "text", payload: MessagePayload(json: text), at: IMHost.Clock.now())
                WakeSocket.poke(store)
            }
        }
        var trips: [Double] = []
        for _ in 0..<count {
            turn.signal()
            try pump([a, b], longestWait: 1000) { !$0.isEmpty }
            trips.append(Double(now() - sentAt.withLock { $0 }))
            try pump([a, b], longestWait: 1000) { _ in delivered(a) }
        }
        return trips
    }

    /// TLS and a bridge, each against the plain single-broker trip of the same run.
    static func deployment(folder: String, plain p50: Double) throws -> [Row] {
        var rows: [Row] = []
        // TLS: a CA and a broker certificate for localhost, made by openssl.
        let tlsFolder = folder + "/tls"
        try FileManager.default.createDirectory(atPath: tlsFolder, withIntermediateDirectories: true)
        func openssl(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: tlsFolder)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw Failure(description: "openssl \(arguments.first ?? "") failed") }
        }
        try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=bench CA"])
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "broker.key", "-out", "broker.csr", "-subj", "/CN=localhost"])
        try "subjectAltName=DNS:localhost\n".write(toFile: tlsFolder + "/san.ext", atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", "broker.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "broker.pem",
                     "-days", "2", "-extfile", "san.ext"])
        let tlsPort = BrokerFolder.freeLoopbackPort()
        let tlsBroker = try BrokerFolder.initialize(at: folder + "/tls-broker", users: ["alice", "bob"], listener: .port(BrokerFolder.freeLoopbackPort()),
                                                    tls: .init(host: "127.0.0.1", port: tlsPort, certificate: tlsFolder + "/broker.pem", key: tlsFolder + "/broker.key"))
        let tlsProcess = try BrokerProcess(folder: tlsBroker)
        defer { tlsProcess.stop() }
        let address = HostConfig.Transport.Address.tls(host: "localhost", port: tlsPort)
        let tlsAlice = try Side("alice", folder: folder + "/tls-a", broker: tlsBroker, address: address, caFile: tlsFolder + "/ca.pem")
        let tlsBob = try Side("bob", folder: folder + "/tls-b", broker: tlsBroker, address: address, caFile: tlsFolder + "/ca.pem")
        try connected([tlsAlice, tlsBob])
        let tls = percentile(try oneAtATime(tlsAlice, tlsBob, to: "bob"), 0.5)
        rows.append(Row(what: "one message A → B over mqtts:// (TLS)", measure: "p50", figure: "\(format(tls / 1e6, 2)) ms",
                        baseline: "mqtt:// \(format(p50 / 1e6, 2)) ms", ratio: "\(format(tls / p50, 2))x", target: "<= 1.5x", met: tls <= 1.5 * p50))

        // A bridge: alice on one broker, bob on another.
        let portA = BrokerFolder.freeLoopbackPort()
        let brokerA = try BrokerFolder.initialize(at: folder + "/bridge-a", users: ["alice"], listener: .port(portA))
        try brokerA.addUser("bridge-b", bridge: true)
        let bridgePassword = try String(contentsOfFile: brokerA.passwordFile(of: "bridge-b"), encoding: .utf8).trimmingCharacters(in: .newlines)
        let portB = BrokerFolder.freeLoopbackPort()
        let brokerB = try BrokerFolder.initialize(at: folder + "/bridge-b", users: ["bob"], listener: .port(portB),
                                                  bridge: .init(host: "127.0.0.1", port: portA, user: "bridge-b", password: bridgePassword))
        let processA = try BrokerProcess(folder: brokerA), processB = try BrokerProcess(folder: brokerB)
        defer { processB.stop(); processA.stop() }
        let bridgedAlice = try Side("alice", folder: folder + "/br-a", broker: brokerA, address: .tcp(host: "127.0.0.1", port: portA))
        let bridgedBob = try Side("bob", folder: folder + "/br-b", broker: brokerB, address: .tcp(host: "127.0.0.1", port: portB))
        try connected([bridgedAlice, bridgedBob])
        // The bridge comes up on its own time: the first message (resent if need be) waits for it.
        _ = try oneAtATime(bridgedAlice, bridgedBob, to: "bob", count: 1)
        let bridged = try oneAtATime(bridgedAlice, bridgedBob, to: "bob")
        let bridged50 = percentile(bridged, 0.5), bridged99 = percentile(bridged, 0.99)
        rows.append(Row(what: "one message A → B through two bridged brokers", measure: "p50", figure: "\(format(bridged50 / 1e6, 2)) ms",
                        baseline: "one broker \(format(p50 / 1e6, 2)) ms", ratio: "\(format(bridged50 / p50, 2))x", target: "reported", met: nil))
        rows.append(Row(what: "one message A → B through two bridged brokers", measure: "p99", figure: "\(format(bridged99 / 1e6, 2)) ms",
                        baseline: "one broker \(format(p50 / 1e6, 2)) ms p50", ratio: "\(format(bridged99 / p50, 2))x", target: "reported", met: nil))
        return rows
    }

    /// Bare libmosquitto: carol publishes an envelope-sized message, dave's client receives it;
    /// nothing stored, nothing answered.
    final class BarePair {
        let publisher: MQTTClient, subscriber: MQTTClient
        private var received = 0

        init(broker: BrokerFolder, port: Int) throws {
            func client(_ user: String) throws -> MQTTClient {
                let password = try String(contentsOfFile: broker.passwordFile(of: user), encoding: .utf8).trimmingCharacters(in: .newlines)
                let made = try MQTTClient(MQTTClient.Settings(address: .tcp(host: "127.0.0.1", port: port), user: user, password: password,
                                                              maximumPacket: 70_000))
                made.connect()
                return made
            }
            // carol and dave: the burst's users, not yet connected as hosts.
            publisher = try client("carol")
            subscriber = try client("dave")
            var subscribed = false, connected = (false, false)
            try wait {
                for event in publisher.service() { if case .connected = event { connected.0 = true } }
                for event in subscriber.service() {
                    switch event {
                    case .connected: connected.1 = true; _ = subscriber.subscribe("imhost/u/dave/#", retained: false)
                    case .subscribed: subscribed = true
                    default: break
                    }
                }
                return connected.0 && connected.1 && subscribed
            }
        }

        /// One publish → receive, in nanoseconds.
        func trip() throws -> Double {
            let payload = Array(#"{"v":1,"kind":"message","id":"01JCAROL00000000000000000A","seq":1,"key":"text","payload":\#(text),"sentAt":1767603600000}"#.utf8)
            let start = now(), before = received
            _ = publisher.publish(topic: "imhost/u/dave/from/carol", payload: payload)
            try wait {
                _ = publisher.service()
                for event in subscriber.service() { if case .message = event { received += 1 } }
                return received > before
            }
            return Double(now() - start)
        }

        func close() {
            publisher.disconnect()
            subscriber.disconnect()
        }

        /// Runs `step` until it says done (30 s at most), without sleeping: what the sockets have
        /// is read at once.
        private func wait(_ step: () -> Bool) throws {
            let deadline = now() + 30_000_000_000
            while !step() {
                guard now() < deadline else { throw Failure(description: "the bare clients made no progress") }
                MQTTClient.wait(on: publisher.descriptors + subscriber.descriptors, milliseconds: 0)
            }
        }
    }

    /// User and system CPU time a process has used, in seconds (/proc/PID/stat).
    static func cpuSeconds(of pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14 and stime 15 (1-based, counting pid and name).
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}

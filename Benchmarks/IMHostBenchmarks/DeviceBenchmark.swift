import Foundation
import IMHost
import IMHostBroker
import IMKit
import Synchronization

/// One person on several devices: what fan-out costs a message's trip (the broker copies it to
/// each device's session; the sender's work does not change), and how long a new device takes
/// to be given the history by one that is online.
enum DeviceBenchmark {
    typealias Side = TransportBenchmark.Side

    static func run(folder: String) throws -> [Row] {
        let port = BrokerFolder.freeLoopbackPort()
        let brokerFolder = try BrokerFolder.initialize(at: folder + "/broker", users: ["alice", "bob", "carol"], listener: .port(port))
        let broker = try BrokerProcess(folder: brokerFolder)
        defer { broker.stop() }
        let address = HostConfig.Transport.Address.tcp(host: "127.0.0.1", port: port)
        for (device, user) in [("phone", "bob"), ("tablet", "bob"), ("tablet", "carol")] { _ = try brokerFolder.addDevice(device, of: user) }
        var rows: [Row] = []

        progress("devices: A → B, B on one device, then on three")
        let alice = try Side("alice", folder: folder + "/a", broker: brokerFolder, address: address)
        let bob = try Side("bob", folder: folder + "/b", broker: brokerFolder, address: address)
        try TransportBenchmark.connected([alice, bob])
        let single = TransportBenchmark.percentile(try TransportBenchmark.oneAtATime(alice, bob, to: "bob"), 0.5)
        // Bob's other two devices, each a host of its own on a thread of its own (as on another
        // machine), storing what comes while the trip to his first device is timed.
        let stop = Atomic<Bool>(false), ready = Atomic<Int>(0)
        var threads: [Thread] = []
        for device in ["phone", "tablet"] {
            let thread = Thread {
                guard let side = try? Side("bob", login: "bob~\(device)", folder: folder + "/b-\(device)", broker: brokerFolder, address: address) else { return }
                var counted = false
                while !stop.load(ordering: .relaxed) {
                    _ = side.courier.service()
                    if !counted, side.courier.inboxConfirmed { counted = true; ready.add(1, ordering: .relaxed) }
                    side.courier.wait(milliseconds: min(side.courier.wakeAfter(), 50))
                }
            }
            thread.start()
            threads.append(thread)
        }
        let deadline = Date().addingTimeInterval(30)
        while ready.load(ordering: .relaxed) < 2 {
            guard Date() < deadline else { throw TransportBenchmark.Failure(description: "bob's other devices did not connect in 30 s") }
            try TransportBenchmark.pump([alice, bob], longestWait: 20) { _ in true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let three = TransportBenchmark.percentile(try TransportBenchmark.oneAtATime(alice, bob, to: "bob"), 0.5)
        stop.store(true, ordering: .relaxed)
        rows.append(Row(what: "one message A → B, B on 3 devices", measure: "p50, send to stored at B's first device",
                        figure: "\(format(three / 1e6, 2)) ms", baseline: "B on one device: \(format(single / 1e6, 2)) ms",
                        ratio: "\(format(three / single, 2))x", target: "<= 1.3x", met: three <= 1.3 * single))

        progress("devices: a new device given 10,000 messages")
        // Carol's first device has 10,000 messages (half hers, half from alice), stored in
        // batches as arrivals are; her tablet is new.
        let carolStore = try MessageStore(dataFolder: folder + "/c", user: "carol")
        for batch in 0..<10 {
            let messages = (0..<1000).map { index in
                IncomingMessage(from: batch % 2 == 0 ? "alice" : "dave", globalID: "h\(batch)x\(index)", seq: batch * 1000 + index + 1, key: "text",
                                payload: MessagePayload(json: TransportBenchmark.text), sentAt: Int64(batch * 1000 + index), arrived: true)
            }
            _ = try carolStore.storeIncoming(messages)
        }
        let carol = try Side("carol", folder: folder + "/c", broker: brokerFolder, address: address)
        try TransportBenchmark.connected([carol])
        let start = now()
        let tablet = try Side("carol", login: "carol~tablet", folder: folder + "/c-tablet", broker: brokerFolder, address: address)
        try TransportBenchmark.pump([carol, tablet], longestWait: 20) { _ in
            ((try? tablet.store.conversations(limit: 10)) ?? []).reduce(0) { $0 + $1.messages } >= 10_000
        }
        let seconds = Double(now() - start) / 1e9
        rows.append(Row(what: "a new device's history", measure: "10,000 messages from a device online, link to stored",
                        figure: "\(format(seconds, 2)) s", baseline: "target 10 s", ratio: "\(format(seconds / 10, 2))x",
                        target: "<= 1.0x", met: seconds <= 10))
        return rows
    }
}

import Foundation
import IMHost
import IMKit
import Synchronization

/// What people expect of a chat, timed against the A → B message path measured in the same run
/// (``TransportBenchmark``): a typing signal until the peer's courier says so, a recall until
/// the peer's store has it recalled; and a 60-second voice message stored durably against a bare
/// write and fsync of its bytes, and decoded whole.
enum ChatFeaturesBenchmark {
    /// Services both sides until one of `b`'s events passes `done` (or 60 s pass).
    static func until(_ a: TransportBenchmark.Side, _ b: TransportBenchmark.Side, _ done: (Courier.Event) -> Bool) throws {
        let deadline = now() + 60_000_000_000
        while true {
            _ = a.courier.service()
            if b.courier.service().contains(where: done) { return }
            guard now() < deadline else { throw TransportBenchmark.Failure(description: "the chat features benchmark made no progress for 60 s") }
            let wait = [a, b].map { $0.courier.wakeAfter() }.min() ?? 10
            MQTTClient.wait(on: [a, b].flatMap(\.courier.descriptors), milliseconds: min(wait, 50))
        }
    }

    /// Typing and recall rows, for `alice` and `bob` connected, who have exchanged messages (so
    /// each knows what the other's host takes); `clockShift` moves alice's clock on (a typing
    /// signal goes at most every 3 s); `path` is the A → B p50 of the same run, in ns.
    static func typingAndRecall(_ alice: TransportBenchmark.Side, _ bob: TransportBenchmark.Side, clockShift: borrowing Mutex<Int64>,
                                path: Double, count: Int = 100) throws -> [Row] {
        var typing: [Double] = [], recalls: [Double] = []
        for _ in 0..<count {
            clockShift.withLock { $0 += Envelope.Feature.typingEvery + 1 }
            let start = now()
            alice.courier.typing(to: "bob")
            try until(alice, bob) { if case .typing("alice") = $0 { true } else { false } }
            typing.append(Double(now() - start))
        }
        for _ in 0..<count {
            try alice.send(TransportBenchmark.text, to: "bob")
            try TransportBenchmark.pump([alice, bob]) { !$0.isEmpty }
            try TransportBenchmark.pump([alice, bob]) { _ in TransportBenchmark.delivered(alice) }
            let number = try alice.store.count(of: "bob")
            let start = now()
            guard case .recalled = try alice.store.recall("bob", number: number, at: IMHost.Clock.now(), limit: 120_000) else {
                throw TransportBenchmark.Failure(description: "message #\(number) could not be recalled")
            }
            alice.courier.sendSoon()
            try until(alice, bob) { if case .changed(let peers) = $0 { peers.contains("alice") } else { false } }
            recalls.append(Double(now() - start))
            let last = try bob.store.stored(of: "alice", endingBefore: nil, limit: 1).first
            precondition(last?.recalledAt != nil, "the recall did not reach bob's store")
        }
        let (typed, recalled) = (TransportBenchmark.percentile(typing, 0.5), TransportBenchmark.percentile(recalls, 0.5))
        let pathText = "one message A → B: \(format(path / 1e6, 2)) ms"
        return [
            Row(what: "typing signal A → B", measure: "p50, said by A to shown at B (QoS 0)", figure: "\(format(typed / 1e6, 2)) ms",
                baseline: pathText, ratio: "\(format(typed / path, 2))x", target: "<= 1x", met: typed <= path),
            Row(what: "recall A → B", measure: "p50, recalled at A to gone from B's store", figure: "\(format(recalled / 1e6, 2)) ms",
                baseline: pathText, ratio: "\(format(recalled / path, 2))x", target: "<= 2x", met: recalled <= 2 * path),
        ]
    }

    /// A 60-second voice message (Tests/Fixtures/Voice/sixty.ogg) stored as a send stores it,
    /// durably, against writing and fsyncing its bytes to a file; and decoded whole.
    static func voice(folder: String) throws -> [Row] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Tests/Fixtures/Voice/sixty.ogg")))
        let decoder = PhotoDecoder(executable: products + "/imhost")
        let voice = try decoder.checkVoice(bytes)
        let store = try MessageStore(dataFolder: folder, user: "alice")
        let payload = MessagePayload(json: #"{"url":"","seconds":60,"milliseconds":\#(voice.milliseconds)}"#)
        var stored: [UInt64] = [], written: [UInt64] = [], decoded: [UInt64] = []
        for round in 0..<60 {
            let before = now()
            _ = try store.storeOutgoing(to: "bob", key: "voice", payload: payload, at: IMHost.Clock.now(), voice: .voice(voice, bytes: bytes))
            let middle = now()
            let file = open(folder + "/bare-\(round % 2)", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
            fsync(file)
            close(file)
            let after = now()
            blackHole(try decoder.checkVoice(bytes))
            let end = now()
            if round >= 6 {
                stored.append(middle - before)
                written.append(after - middle)
                decoded.append(end - after)
            }
        }
        let (store50, write50, decode50) = (StoreBenchmark.percentile(stored, 0.5), StoreBenchmark.percentile(written, 0.5),
                                            StoreBenchmark.percentile(decoded, 0.5))
        let size = "\(bytes.count / 1024) KiB, \(voice.shown)"
        return [
            Row(what: "a 60 s voice message", measure: "stored durably with its message and outbox row (\(size)), p50",
                figure: "\(format(store50 / 1000, 2)) ms", baseline: "a bare write + fsync of its bytes: \(format(write50 / 1000, 2)) ms",
                ratio: "\(format(store50 / write50, 2))x", target: "<= 2.5x", met: store50 <= 2.5 * write50),
            Row(what: "a 60 s voice message", measure: "decoded whole in the decoder child (every Opus packet), p50",
                figure: "\(format(decode50 / 1000, 1)) ms", baseline: "-", ratio: "-", target: "<= 150 ms", met: decode50 <= 150_000),
        ]
    }
}

extension ChatFeaturesBenchmark {
    /// A host of `user` over `data` (the same store a side's courier holds), with the release
    /// house line from `plugins`: the pages a person taps and the peer looks at.
    static func pageHost(_ user: String, data: String, plugins: String) throws -> ChatHost {
        let text = #"{ "user": "\#(user)", "data": "\#(data)", "plugins": "\#(plugins)", "lines": { "house": {} }, "routes": [ { "rootCateID": 1, "cateID": "*", "line": "house" } ] }"#
        let config = try HostConfig.parse(text, file: data + "-host.json")
        return ChatHost(config: config, options: ChatHost.Options(scanner: products + "/imhost", breadcrumbs: .none))
    }

    /// A tap with inputs until the revised card is drawn on the peer's page: alice sends a
    /// listing, which both pages draw; bob's page presses Book a viewing with a day and a time
    /// (checked by his host, then the house line revises the card); timed until alice's page
    /// draws the card booked. The conversation grows by one listing a round, to 50.
    /// Against `path`, the A → B p50 of the same run, in ns.
    static func revision(_ alice: TransportBenchmark.Side, _ bob: TransportBenchmark.Side, folder: String, path: Double, count: Int = 50) throws -> Row {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try StartupBenchmark.install(count: 2, into: folder)
        let aliceHost = try pageHost("alice", data: folder + "/../a", plugins: folder + "/Plugins")
        let bobHost = try pageHost("bob", data: folder + "/../b", plugins: folder + "/Plugins")
        let alicePage = try aliceHost.open("im://chat?rootCateID=1&cateID=12&peer=bob")
        let bobPage = try bobHost.open("im://chat?rootCateID=1&cateID=12&peer=alice")
        let listing = #"{"id":"L1","title":"Sunny flat","price":4200,"area":56,"rooms":2,"status":"available"}"#
        var taps: [Double] = [], parts: [[Double]] = [[], [], []]
        for round in 0..<count {
            _ = try alice.store.storeOutgoing(to: "bob", key: "house.listing", payload: MessagePayload(json: listing), at: IMHost.Clock.now())
            alice.courier.sendSoon()
            try TransportBenchmark.pump([alice, bob]) { !$0.isEmpty }
            try TransportBenchmark.pump([alice, bob]) { _ in TransportBenchmark.delivered(alice) }
            // Both pages show the listing before bob taps it, as they do for the two people.
            _ = try alicePage.view(width: 72)
            _ = try bobPage.view(width: 72)
            let number = try bobPage.messageCount()
            let start = now()
            guard case .success(.handled)? = try bobPage.tapButton(number, "viewing", values: ["day": ["2026-12-05"], "time": ["10:00"]]) else {
                throw TransportBenchmark.Failure(description: "bob's page could not book a viewing on round \(round)")
            }
            let tappedAt = now()
            bob.courier.sendSoon()
            try until(bob, alice) { if case .changed(let peers) = $0 { peers.contains("bob") } else { false } }
            let arrivedAt = now()
            let drawn = try alicePage.view(width: 72).messages.last?.body.card?.badge?.text
            taps.append(Double(now() - start))
            parts[0].append(Double(tappedAt - start))
            parts[1].append(Double(arrivedAt - tappedAt))
            parts[2].append(Double(now() - arrivedAt))
            guard drawn == "Viewing booked" else { throw TransportBenchmark.Failure(description: "alice's page drew \(drawn ?? "no card") after bob booked") }
        }
        let tapped = TransportBenchmark.percentile(taps, 0.5)
        let part = parts.map { format(TransportBenchmark.percentile($0, 0.5) / 1e6, 2) }
        progress("transport: a card's revision, p50 by part: bob's tap (checked, the line revises, stored) \(part[0]) ms, to alice's store \(part[1]) ms, alice's page drawn \(part[2]) ms")
        return Row(what: "a card's inputs sent → revised card on the peer's page", measure: "p50, bob's tap with a day and time (checked, the line revises) to alice's page drawing it",
                   figure: "\(format(tapped / 1e6, 2)) ms", baseline: "one message A → B: \(format(path / 1e6, 2)) ms",
                   ratio: "\(format(tapped / path, 2))x", target: "<= 2x", met: tapped <= 2 * path)
    }
}

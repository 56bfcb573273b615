import Foundation
import IMHost
import IMKit

/// Photos: sending one is a durable write of its bytes, close to a bare write and fsync of the
/// same bytes; and a page reads what its photos are without their bytes, so a page of large
/// photos costs what a page of small ones does.
enum PhotoBenchmark {
    static func run(folder: String) throws -> [Row] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return try send(folder: folder + "/send") + page(folder: folder + "/page")
    }

    /// `size` bytes that stand for a photo's (the store does not look inside them).
    static func photo(_ size: Int) -> AttachedPhoto {
        var generator = SystemRandomNumberGenerator()
        return .photo(Photo(kind: .jpeg, width: 1600, height: 1200, size: size), bytes: (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// A message with a photo of 512 KiB, stored and queued durably, against `write` + `fsync` of
    /// the same bytes, alternated. SQLite in WAL mode writes the bytes twice (to the log, then,
    /// at a checkpoint, to the database), so the floor's twice is what it can come to.
    static func send(folder: String) throws -> [Row] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = try MessageStore(dataFolder: folder, user: "me")
        let attached = photo(512 * 1024)
        let file = open(folder + "/bare", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        defer { close(file) }
        var sends: [UInt64] = [], bare: [UInt64] = []
        for round in 0..<120 {
            let start = now()
            try store.storeOutgoing(to: "u42", key: "photo", payload: MessagePayload(json: "{}"), at: 1_767_603_600_000 + Int64(round), photos: [attached])
            let sent = now()
            _ = attached.bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
            fsync(file)
            let flushed = now()
            if round >= 20 {
                sends.append(sent - start)
                bare.append(flushed - sent)
            }
        }
        let (p50, floor50) = (StoreBenchmark.percentile(sends, 0.5), StoreBenchmark.percentile(bare, 0.5))
        return [Row(what: "photos", measure: "send a message with a 512 KiB photo durably, p50", figure: "\(format(p50 / 1000, 2)) ms",
                    baseline: "write + fsync of 512 KiB: \(format(floor50 / 1000, 2)) ms", ratio: "\(format(p50 / floor50, 2))x",
                    target: "<= 2.5x at p50 (written twice)", met: p50 / floor50 <= 2.5)]
    }

    /// What a page of 20 messages says of their photos (``MessageStore/photoSlots(peer:positions:)``),
    /// each 512 KiB, against the same page whose photos are 1 KiB each.
    static func page(folder: String) throws -> [Row] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = try MessageStore(dataFolder: folder, user: "me")
        for (peer, size) in [("large", 512 * 1024), ("small", 1024)] {
            let attached = photo(size)
            for round in 0..<20 {
                try store.storeOutgoing(to: peer, key: "photo", payload: MessagePayload(json: "{}"), at: 1_767_603_600_000 + Int64(round), photos: [attached])
            }
        }
        var large: [UInt64] = [], small: [UInt64] = []
        for round in 0..<400 {
            let start = now()
            let a = try store.photoSlots(peer: "large", positions: 0...19)
            let middle = now()
            let b = try store.photoSlots(peer: "small", positions: 0...19)
            let end = now()
            precondition(a.count == 20 && b.count == 20)
            if round >= 50 {
                large.append(middle - start)
                small.append(end - middle)
            }
        }
        let (p50, floor50) = (StoreBenchmark.percentile(large, 0.5), StoreBenchmark.percentile(small, 0.5))
        return [Row(what: "photos", measure: "what a page of 20 messages with 512 KiB photos says of them, p50", figure: "\(format(p50)) µs",
                    baseline: "the same with 1 KiB photos: \(format(floor50)) µs", ratio: "\(format(p50 / floor50, 2))x",
                    target: "<= 1.2x (their bytes are not read)", met: p50 / floor50 <= 1.2)]
    }
}

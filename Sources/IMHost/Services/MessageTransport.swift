#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import IMKit

/// The host's connection (`host.transport`): delivers what the user sends while online; while
/// offline, keeps sent messages pending in an outbox on disk and delivers them, in order, when
/// the user is back online, even after a restart. Each message is delivered once: a delivery
/// is recorded before the next one starts.
final class MessageTransport: Service {
    static let id = HostServices.transport

    private let outbox: Outbox
    private(set) var isOnline = false
    /// Messages delivered by the last `online()`, in order.
    private(set) var lastDelivered: [Outbox.Entry] = []
    /// Why the outbox could not be written, if it could not.
    private(set) var lastError: String?
    private let deliver: (Outbox.Entry) -> Void

    required init() {
        outbox = Outbox(memory: ())
        deliver = { _ in }
    }

    /// A transport whose outbox is kept at `path` (nil: in memory), calling `deliver` for each
    /// message it delivers.
    init(outbox: Outbox, deliver: @escaping (Outbox.Entry) -> Void = { _ in }) {
        self.outbox = outbox
        self.deliver = deliver
    }

    /// Hands a sent message to the connection: delivered now when online, else kept pending.
    func submit(_ message: MessageEnvelope) throws {
        let entry = Outbox.Entry(conversation: message.conversation, id: message.id)
        if isOnline {
            deliver(entry)
        } else {
            try outbox.add(entry)
        }
    }

    /// Whether a sent message is still waiting for the connection.
    func isPending(_ message: MessageEnvelope) -> Bool {
        outbox.isPending(Outbox.Entry(conversation: message.conversation, id: message.id))
    }

    var pendingCount: Int { outbox.pending.count }

    func online() {
        isOnline = true
        lastDelivered = []
        for entry in outbox.pending {
            deliver(entry)
            do {
                try outbox.markDelivered(entry)
            } catch {
                lastError = "\(error)"
                return
            }
            lastDelivered.append(entry)
        }
    }

    func offline() {
        isOnline = false
    }
}

/// Sent messages waiting for the connection: an append-only log of `pending` and `delivered`
/// records, flushed to disk with each record.
final class Outbox {
    struct Entry: Hashable, Codable {
        var conversation: String
        var id: String
    }

    private struct Record: Codable {
        var state: String
        var conversation: String
        var id: String
    }

    private let path: String?
    private(set) var pending: [Entry] = []
    private var pendingSet: Set<Entry> = []

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(memory: ()) { path = nil }

    /// Opens the outbox at `path`, replaying its records; a torn last record is ignored.
    init(path: String) throws(Failure) {
        self.path = path
        guard let text = try? FileSystem.readText(path) else { return }
        if let last = text.last, last != "\n" {
            // A record cut short by a crash: end its line so the next record starts clean.
            let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
            if fd >= 0 {
                _ = Glibc.write(fd, "\n", 1)
                close(fd)
            }
        }
        let decoder = JSONDecoder()
        for line in text.split(separator: "\n") {
            guard let record = try? decoder.decode(Record.self, from: Data(line.utf8)) else { continue }
            let entry = Entry(conversation: record.conversation, id: record.id)
            if record.state == "pending" {
                if pendingSet.insert(entry).inserted { pending.append(entry) }
            } else if pendingSet.remove(entry) != nil {
                pending.removeAll { $0 == entry }
            }
        }
    }

    func isPending(_ entry: Entry) -> Bool { pendingSet.contains(entry) }

    func add(_ entry: Entry) throws(Failure) {
        try write(Record(state: "pending", conversation: entry.conversation, id: entry.id))
        if pendingSet.insert(entry).inserted { pending.append(entry) }
    }

    func markDelivered(_ entry: Entry) throws(Failure) {
        try write(Record(state: "delivered", conversation: entry.conversation, id: entry.id))
        pendingSet.remove(entry)
        pending.removeAll { $0 == entry }
    }

    private func write(_ record: Record) throws(Failure) {
        guard let path else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard var bytes = try? Array(encoder.encode(record)) else { throw Failure(description: "cannot encode an outbox record") }
        bytes.append(UInt8(ascii: "\n"))
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}

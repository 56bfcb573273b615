#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sent messages waiting for the connection: an append-only log of `pending`, `delivered` and
/// `dropped` records, each written whole and flushed to disk (a failed write is cut back).
final class Outbox {
    private struct Record: Codable {
        var state: String
        var conversation: String
        var id: String
    }

    private let path: String?
    private(set) var pending: [QueuedMessage] = []
    private var pendingSet: Set<QueuedMessage> = []

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(memory: ()) { path = nil }

    /// Opens the outbox at `path`, replaying its records; a torn last record is ignored (the
    /// next record starts on a line of its own).
    init(path: String) throws(Failure) {
        self.path = path
        for record in JSONLines.read(Record.self, from: path) {
            let entry = QueuedMessage(conversation: record.conversation, id: record.id)
            if record.state == "pending" { remember(entry) } else { forget(entry) }
        }
    }

    func isPending(_ entry: QueuedMessage) -> Bool { pendingSet.contains(entry) }

    func add(_ entry: QueuedMessage) throws(Failure) {
        try write(Record(state: "pending", conversation: entry.conversation, id: entry.id))
        remember(entry)
    }

    func markDelivered(_ entry: QueuedMessage) throws(Failure) {
        try write(Record(state: "delivered", conversation: entry.conversation, id: entry.id))
        forget(entry)
    }

    /// Records that a queued message was never stored, so it is never delivered.
    func drop(_ entry: QueuedMessage) throws(Failure) {
        try write(Record(state: "dropped", conversation: entry.conversation, id: entry.id))
        forget(entry)
    }

    private func remember(_ entry: QueuedMessage) {
        if pendingSet.insert(entry).inserted { pending.append(entry) }
    }

    private func forget(_ entry: QueuedMessage) {
        guard pendingSet.remove(entry) != nil else { return }
        pending.removeAll { $0 == entry }
    }

    private func write(_ record: Record) throws(Failure) {
        guard let path else { return }
        guard let bytes = try? JSONLines.encode(record) else { throw Failure(description: "cannot encode an outbox record") }
        do throws(FileSystem.Failure) {
            try FileSystem.appendLine(bytes, to: path)
        } catch {
            throw Failure(description: "cannot write \(path): \(error.call): \(error)")
        }
    }
}

/// A message in the outbox: which conversation, which message.
struct QueuedMessage: Hashable, Codable {
    var conversation: String
    var id: String
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMKit

/// The host's connection (`host.transport`): every message the user sends is queued in an outbox
/// on disk before it is stored, delivered at once when online, and delivered in order when the
/// user is back online otherwise, even after a restart. Each message is delivered once: a
/// delivery is recorded before the next one starts.
///
/// The outbox and the conversation logs are kept in step: a message is queued before it is
/// stored, so none is stored unqueued; one queued but never stored (the process died between
/// the two writes, or storing failed) is found at sign-in, when the outbox is reconciled with
/// the logs, and dropped.
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

    /// A transport over `outbox`, calling `deliver` for each message it delivers.
    init(outbox: Outbox, deliver: @escaping (Outbox.Entry) -> Void = { _ in }) {
        self.outbox = outbox
        self.deliver = deliver
    }

    /// Queues a message about to be stored. Throws when the outbox cannot be written: then the
    /// message is not stored either.
    func queue(_ message: MessageEnvelope) throws {
        try outbox.add(Outbox.Entry(conversation: message.conversation, id: message.id))
    }

    /// Delivers a stored, queued message now if the connection is up; else it waits in the outbox.
    func deliverIfOnline(_ message: MessageEnvelope) {
        guard isOnline else { return }
        _ = deliverQueued(Outbox.Entry(conversation: message.conversation, id: message.id))
    }

    /// Delivers a queued message and records it delivered; false when that cannot be written.
    private func deliverQueued(_ entry: Outbox.Entry) -> Bool {
        deliver(entry)
        do {
            try outbox.markDelivered(entry)
            return true
        } catch {
            lastError = "\(error)"
            return false
        }
    }

    /// Drops queued messages that were never stored: `isStored` says whether one is in its log.
    /// Called at sign-in, before the connection comes up.
    func reconcile(isStored: (Outbox.Entry) -> Bool) {
        for entry in outbox.pending where !isStored(entry) {
            do {
                try outbox.drop(entry)
            } catch {
                lastError = "\(error)"
            }
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
            guard deliverQueued(entry) else { return }
            lastDelivered.append(entry)
        }
    }

    func offline() {
        isOnline = false
    }
}

/// Sent messages waiting for the connection: an append-only log of `pending`, `delivered` and
/// `dropped` records, each written whole and flushed to disk (a failed write is cut back).
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

    /// Opens the outbox at `path`, replaying its records; a torn last record is ignored (the
    /// next record starts on a line of its own).
    init(path: String) throws(Failure) {
        self.path = path
        for record in JSONLines.read(Record.self, from: path) {
            let entry = Entry(conversation: record.conversation, id: record.id)
            if record.state == "pending" { remember(entry) } else { forget(entry) }
        }
    }

    func isPending(_ entry: Entry) -> Bool { pendingSet.contains(entry) }

    func add(_ entry: Entry) throws(Failure) {
        try write(Record(state: "pending", conversation: entry.conversation, id: entry.id))
        remember(entry)
    }

    func markDelivered(_ entry: Entry) throws(Failure) {
        try write(Record(state: "delivered", conversation: entry.conversation, id: entry.id))
        forget(entry)
    }

    /// Records that a queued message was never stored, so it is never delivered.
    func drop(_ entry: Entry) throws(Failure) {
        try write(Record(state: "dropped", conversation: entry.conversation, id: entry.id))
        forget(entry)
    }

    private func remember(_ entry: Entry) {
        if pendingSet.insert(entry).inserted { pending.append(entry) }
    }

    private func forget(_ entry: Entry) {
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

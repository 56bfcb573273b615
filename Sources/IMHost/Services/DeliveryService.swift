#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMKit

/// The host's delivery service (`host.transport`): every message the user sends is queued in an outbox
/// on disk before it is stored, delivered at once when online, and delivered in order when the
/// user is back online otherwise, even after a restart. Each message is delivered once: a
/// delivery is recorded before the next one starts.
///
/// The outbox and the conversation logs are kept in step: a message is queued before it is
/// stored, so none is stored unqueued; one queued but never stored (the process died between
/// the two writes, or storing failed) is found at sign-in, when the outbox is reconciled with
/// the logs, and dropped.
final class DeliveryService: Service {
    static let id = HostServices.transport

    private let outbox: Outbox
    private(set) var isOnline = false
    /// Messages delivered by the last `online()`, in order.
    private(set) var lastDelivered: [QueuedMessage] = []
    /// Why the outbox could not be written, if it could not.
    private(set) var lastError: String?
    private let deliver: (QueuedMessage) -> Void

    required init() {
        outbox = Outbox(memory: ())
        deliver = { _ in }
    }

    /// A transport over `outbox`, calling `deliver` for each message it delivers.
    init(outbox: Outbox, deliver: @escaping (QueuedMessage) -> Void = { _ in }) {
        self.outbox = outbox
        self.deliver = deliver
    }

    /// Queues a message about to be stored. Throws when the outbox cannot be written: then the
    /// message is not stored either.
    func queue(_ message: MessageEnvelope) throws {
        try outbox.add(QueuedMessage(conversation: message.conversation, id: message.id))
    }

    /// Delivers a stored, queued message now if the connection is up; else it waits in the outbox.
    func deliverIfOnline(_ message: MessageEnvelope) {
        guard isOnline else { return }
        _ = deliverQueued(QueuedMessage(conversation: message.conversation, id: message.id))
    }

    /// Delivers a queued message and records it delivered; false when that cannot be written.
    private func deliverQueued(_ entry: QueuedMessage) -> Bool {
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
    func reconcile(isStored: (QueuedMessage) -> Bool) {
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
        outbox.isPending(QueuedMessage(conversation: message.conversation, id: message.id))
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


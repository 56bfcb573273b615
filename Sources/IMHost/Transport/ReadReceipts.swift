/// The user's read receipts, one of the ``Courier``'s parts: what chats queued (a message shown)
/// goes to its sender, asking it to confirm; a broker may lose it (past its queue, or its saved
/// state lost) and nothing else would say it again, so it goes again, on a backoff and after
/// every reconnect, until the peer answers `confirm`, or `giveUpHours` pass.
final class ReadReceipts {
    private let store: MessageStore
    private let connection: BrokerConnection
    private let ledger: CourierLedger
    /// host.json's `transport.readReceipts`: when off, queued receipts are dropped, not sent.
    private let enabled: Bool
    private let giveUpHours: Double
    /// Receipts handed to the broker and not answered yet: not handed over twice.
    private var inFlight: Set<Int64> = []
    /// When the queue is read again: at once when a chat queued a receipt (``queuedChanged()``)
    /// or the connection was made anew, when one this host sent falls due again, and at least
    /// every second (another process may queue without waking this one). Between, a service
    /// costs nothing here.
    private(set) var readAgainAt: Int64 = 0
    /// The longest the queue goes unread when nothing says it changed (``Delivery/rereadMilliseconds``).
    var rereadMilliseconds: Int64 = 1000

    init(store: MessageStore, connection: BrokerConnection, ledger: CourierLedger, enabled: Bool, giveUpHours: Double) {
        self.store = store
        self.connection = connection
        self.ledger = ledger
        self.enabled = enabled
        self.giveUpHours = giveUpHours
    }

    /// The connection went or was made anew: nothing is in flight on it.
    func reset() {
        inFlight = []
        queuedChanged()
    }

    /// A chat queued a receipt: the queue is read at the next ``send(now:)``.
    func queuedChanged() { readAgainAt = 0 }

    /// Sends the receipts queued and those due again, at most ``Envelope/receiptIDs`` ids an
    /// envelope, each with how this host drew the message when it is a line's, in envelopes of
    /// at most ``Envelope/overhead`` bytes (what any receiver takes, whatever its payload limit);
    /// or drops them, when host.json turns them off.
    func send(now: Int64) {
        guard now >= readAgainAt else { return }
        readAgainAt = now + rereadMilliseconds
        guard let queued = try? store.dueReceipts(now: now, limit: 500), !queued.isEmpty else { return }
        guard enabled else {
            try? store.dropQueuedReceipts()
            return
        }
        var byPeer: [String: [MessageStore.QueuedReceipt]] = [:]
        for receipt in queued where !inFlight.contains(receipt.row) { byPeer[receipt.peer, default: []].append(receipt) }
        // Each says which lines this host draws now (a resend too: what it says is current).
        let draws = connection.draws
        let room = Envelope.overhead - 200 - (draws.map { #","draws":"#.utf8.count + $0.json.utf8.count } ?? 0)
        for (peer, receipts) in byPeer {
            for chunk in Self.inEnvelopes(receipts, room: room) {
                var drawn: [String: Drawn] = [:]
                for receipt in chunk { drawn[receipt.globalID] = receipt.drawn }
                let envelope = Envelope.receipt(Envelope.Receipt(state: .read, ids: chunk.map(\.globalID), confirm: true, drawn: drawn, draws: draws))
                if connection.publish(topic: Topic.inbox(to: peer, from: connection.user).name, payload: envelope.bytes, as: .receipts(Array(chunk))) {
                    inFlight.formUnion(chunk.map(\.row))
                }
            }
        }
    }

    /// `receipts` in envelopes' worth, in order: at most ``Envelope/receiptIDs`` each, and what
    /// they take (ids and drawn entries) within `room` bytes: ``Envelope/overhead`` with room to
    /// spare, less what the envelope says besides (its `draws`).
    static func inEnvelopes(_ receipts: [MessageStore.QueuedReceipt], room: Int = Envelope.overhead - 200) -> [ArraySlice<MessageStore.QueuedReceipt>] {
        var chunks: [ArraySlice<MessageStore.QueuedReceipt>] = []
        var start = 0, used = 0
        for (index, receipt) in receipts.enumerated() {
            // The id in "ids", and with its drawn entry ("ID":{...}), each with a comma.
            let id = receipt.globalID.utf8.count + 3
            let cost = id + (receipt.drawn.map { id + 1 + $0.json.utf8.count } ?? 0)
            if index > start, index - start == Envelope.receiptIDs || used + cost > room {
                chunks.append(receipts[start..<index])
                start = index
                used = 0
            }
            used += cost
        }
        if start < receipts.count { chunks.append(receipts[start...]) }
        return chunks
    }

    /// The broker answered the publish of `receipts`: taken, or refused (then tried again much
    /// later, not at once); either way sent again unless the peer confirms them first.
    func answered(_ receipts: [MessageStore.QueuedReceipt], _ answer: BrokerAnswer, now: Int64) {
        for receipt in receipts { inFlight.remove(receipt.row) }
        let base = answer == .taken ? 2000 : Delivery.resendCap
        let retryAt = { (receipt: MessageStore.QueuedReceipt) in now + min(Delivery.resendCap, base << min(receipt.attempts, 12)) }
        try? store.receiptsSent(receipts, retryAt: retryAt)
        if let soonest = receipts.map(retryAt).min() { readAgainAt = min(readAgainAt, soonest) }
    }

    /// `peer` has the read receipts for these ids of its messages: they are not sent again.
    func confirmed(by peer: String, ids: [String]) {
        if let confirmed = try? store.receiptsConfirmed(by: peer, ids: ids) { ledger.counters.confirmed += confirmed }
    }

    /// Receipts a peer never confirmed within `giveUpHours` (its imhost is older than
    /// confirmations) stop.
    func giveUp(now: Int64) {
        _ = try? store.dropReceipts(queuedBefore: now - Int64(giveUpHours * 3_600_000))
    }
}

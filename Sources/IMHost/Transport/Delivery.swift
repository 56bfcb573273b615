/// The user's messages on their way, one of the ``Courier``'s parts. Delivery is end to end,
/// because a broker's PUBACK is not delivery (it drops messages past its queue limits):
/// - a send is stored and queued in one transaction (``MessageStore/storeOutgoing``); here it is
///   claimed, published at QoS 1 to `imhost/u/<peer>/from/<user>`, and marked `sent` when the
///   broker takes it;
/// - the receiver stores it once (by sender and id) and answers `delivered`; only that receipt
///   takes it out of the outbox. At most ``Courier/window`` messages per peer wait for a receipt;
///   one arriving lets the next go at once;
/// - what is not delivered goes again, oldest first: after a reconnect, a restart, and on a
///   backoff doubling to at most five minutes while connected; after `giveUpHours` it fails;
/// - an envelope the receiver will never take is answered `refused`, and fails here with the
///   receiver's reason;
/// - an envelope larger than the broker takes (its Maximum Packet Size, said at connect) is never
///   handed over: it fails here at once (``BrokerTooLarge``), and a retry sends it again.
final class Delivery {
    /// The longest wait between resends of an undelivered message.
    static let resendCap: Int64 = 5 * 60 * 1000
    /// How long a claim lasts (a process killed with claims leaves them to expire).
    static let leaseMilliseconds: Int64 = 60 * 1000

    private let store: MessageStore
    private let connection: BrokerConnection
    private let ledger: CourierLedger
    private let siblings: Siblings
    private let giveUpHours: Double
    /// Messages published in this connection and not yet delivered: by peer, their rows by
    /// global id (a receipt naming them needs no look-up).
    private var inFlight: [String: [String: Int64]] = [:]
    /// The broker's answers to messages, gathered during one service and committed at once.
    private var accepted: [QueuedSend] = []
    /// When the outbox is read again for what is due: at once when something changed it (a send,
    /// a receipt that frees the window, a new connection, another process's wake), at the next
    /// resend this host set, and at least every ``rereadMilliseconds``. Between, a pump costs
    /// nothing, however long the outbox.
    private(set) var readAgainAt: Int64 = 0
    /// The longest the outbox goes unread when nothing says it changed: a minute when other
    /// processes wake this one as they queue (the user's wake socket), else a second.
    var rereadMilliseconds: Int64 = 1000
    /// Peers whose window a receipt freed since the last pump: only their messages are looked
    /// at, not the whole outbox.
    private var freed: [String] = []

    init(store: MessageStore, connection: BrokerConnection, ledger: CourierLedger, siblings: Siblings, giveUpHours: Double) {
        self.siblings = siblings
        self.store = store
        self.connection = connection
        self.ledger = ledger
        self.giveUpHours = giveUpHours
    }

    /// The connection went or was made anew: nothing is in flight on it.
    func reset() {
        inFlight = [:]
        notesDue = true
        outboxChanged()
    }

    /// Something was queued, or made due: the outbox is read at the next pump.
    func outboxChanged() { readAgainAt = 0 }

    private func readAgain(at time: Int64) { readAgainAt = min(readAgainAt, time) }

    /// Publishes what is due, at most ``Courier/window`` per peer waiting for a receipt: every
    /// peer's when the outbox is read again, else the peers whose window a receipt freed.
    func pump(now: Int64) {
        guard connection.canSend else { return }
        var peers: [String]
        if now >= readAgainAt {
            readAgainAt = now + rereadMilliseconds
            do throws(StoreError) { peers = try store.duePeers(now: now).map(\.peer) } catch { return }
        } else {
            peers = freed
        }
        freed = []
        for peer in peers {
            let flying = Set((inFlight[peer] ?? [:]).values)
            let candidates: [Int64]
            do throws(StoreError) {
                candidates = try store.dueRows(for: peer, now: now, limit: Courier.window + flying.count)
            } catch { continue }
            // Resends of messages already waiting for a receipt, and new ones while there is room.
            var room = Courier.window - flying.count
            let chosen = candidates.filter { row in
                if flying.contains(row) { return true }
                guard room > 0 else { return false }
                room -= 1
                return true
            }
            let sends: [QueuedSend]
            do throws(StoreError) {
                sends = try store.claim(rows: chosen, now: now, leaseMilliseconds: Self.leaseMilliseconds)
            } catch { continue }
            // Each device numbers its own sends: the envelope says which device wrote it.
            let device = connection.device
            for send in sends {
                var message = Envelope.Message(id: send.globalID, seq: send.seq ?? 0, key: send.key, payload: send.payload,
                                               sentAt: send.sentAt, jump: send.jump, photos: send.photos, voice: send.voice, file: send.file, device: device,
                                               reply: send.reply)
                // The peer learns what this host takes from its messages too, not only its
                // receipts: it may react to one before it ever sent this user anything.
                message.features = Envelope.Feature.announced
                switch connection.send(topic: Topic.inbox(to: send.peer, from: connection.user).name, payload: Envelope.message(message).bytes, as: .message(send)) {
                case .queued:
                    inFlight[send.peer, default: [:]][send.globalID] = send.row
                    // The user's other devices show it too.
                    if send.attempts == 0 { siblings.copyOut(send, message) }
                case .notNow:
                    try? store.release([send], retryAt: now + 1000)
                    readAgain(at: now + 1000)
                case .tooLarge(let bytes, let limit):
                    tooLarge(send, BrokerTooLarge(peer: send.peer, bytes: bytes, limit: limit))
                }
            }
        }
    }

    /// `send` is larger than the broker takes: it fails, with the sizes, and is not sent again
    /// until the user retries it.
    private func tooLarge(_ send: QueuedSend, _ refusal: BrokerTooLarge) {
        inFlight[send.peer]?[send.globalID] = nil
        guard let changed = try? store.fail(to: send.peer, ids: [send.globalID], because: .tooLargeForBroker(refusal)), changed > 0 else { return }
        ledger.counters.failed += changed
        ledger.say(.tooLargeForBroker(refusal))
        ledger.record(.changed(peers: [send.peer]))
    }

    /// The broker answered the publish of `send`.
    func answered(_ send: QueuedSend, _ answer: BrokerAnswer, now: Int64) {
        switch answer {
        case .taken:
            accepted.append(send)
        case .refused(let reason):
            inFlight[send.peer]?[send.globalID] = nil
            try? store.release([send], retryAt: now + Self.resendCap)
            readAgain(at: now + Self.resendCap)
            ledger.say(.acl(.publishRefused(user: connection.user, topic: Topic.inbox(to: send.peer, from: connection.user).name, reason: reason)))
        }
    }

    /// The broker took the messages answered since the last call: `sent`, and each sent again if
    /// no receipt comes, after 2 s, doubling to at most 5 minutes. One transaction for all.
    func markAccepted(now: Int64) {
        guard !accepted.isEmpty else { return }
        let sends = accepted
        accepted = []
        let retryAt = { (send: QueuedSend) in now + min(Self.resendCap, 2000 << min(send.attempts, 12)) }
        if let changed = try? store.markSent(sends, retryAt: retryAt) {
            ledger.counters.published += changed
        }
        if let soonest = sends.map(retryAt).min() { readAgain(at: soonest) }
        ledger.record(.changed(peers: Set(sends.map(\.peer))))
    }

    /// Applies a receipt from `peer` to the user's messages to `peer` (ids of messages sent to
    /// anyone else change nothing, and are counted), and confirms it when it asks.
    func apply(_ receipt: Envelope.Receipt, from peer: String, now: Int64) {
        // What the peer's host takes, as every receipt says it: remembered when it changes.
        heard(features: receipt.features, from: peer, now: now)
        if let draws = receipt.draws { heard(draws, from: peer, now: now) }
        switch receipt.state {
        case .recalled:
            _ = try? store.notesAnswered(by: peer, kind: .recall, ids: receipt.ids)
            return
        case .reacted:
            _ = try? store.notesAnswered(by: peer, kind: .react, ids: receipt.ids, at: receipt.at)
            return
        case .revised:
            _ = try? store.notesAnswered(by: peer, kind: .revise, ids: receipt.ids, at: receipt.at)
            return
        case .delivered, .read, .refused:
            break
        }
        do throws(StoreError) {
            let changed: Int
            switch receipt.state {
            case .delivered, .read:
                changed = try store.receipt(from: peer, ids: receipt.ids, state: receipt.state == .read ? .read : .delivered, at: now,
                                            drawn: receipt.drawn)
                if receipt.state == .read { ledger.counters.read += changed } else { ledger.counters.delivered += changed }
            case .refused where receipt.code == .blocked:
                // A person is not told they were blocked: the message stays sent, and goes no more.
                changed = try store.settleBlocked(to: peer, ids: receipt.ids)
            case .refused:
                let refusal = PeerRefusal(peer: peer, code: receipt.code, reason: receipt.reason)
                changed = try store.fail(to: peer, ids: receipt.ids, because: .refusedByPeer(refusal))
                ledger.counters.failed += changed
                if changed > 0 { ledger.say(.peerRefused(refusal, count: changed)) }
            case .recalled, .reacted, .revised:
                changed = 0
            }
            // Ids that name no message of the user's to this peer (never sent, or sent to
            // someone else) changed nothing, and are counted. Those in flight are known to be.
            let flying = inFlight[peer] ?? [:]
            let others = receipt.ids.filter { flying[$0] == nil }
            var own = Set(receipt.ids.filter { flying[$0] != nil })
            if !others.isEmpty { own.formUnion(try store.ownRows(others, to: peer).keys) }
            ledger.counters.unknownReceipts += receipt.ids.count - own.count
            for id in own { inFlight[peer]?[id] = nil }
            if !own.isEmpty {
                // The window has room again.
                if !freed.contains(peer) { freed.append(peer) }
                ledger.record(.changed(peers: [peer]))
            }
            // Applied: the peer may stop sending it. (Ids of no message of ours too: it would
            // send them until it gives up, for nothing.)
            if receipt.confirm {
                connection.publish(topic: Topic.inbox(to: peer, from: connection.user).name, payload: Envelope.confirm(ids: receipt.ids).bytes, as: .answer)
            }
        } catch {
            ledger.say(.receiptNotApplied(peer: peer, error))
        }
    }

    /// What each peer's host said it takes in its last receipt or message on this connection.
    private var peerFeatures: [String: [String]] = [:]

    /// What `peer`'s host says it takes (on a receipt or a message): remembered when it changed.
    /// Returns whether it changed.
    @discardableResult
    func heard(features said: [String]?, from peer: String, now: Int64) -> Bool {
        let features = said ?? []
        guard peerFeatures[peer] != features else { return false }
        peerFeatures[peer] = features
        try? store.rememberFeatures(of: peer, said, at: now)
        if !features.isEmpty { notesDue = true }
        return true
    }
    /// What each peer's host said it draws in its newest receipt on this connection.
    private var peerDraws: [String: Envelope.Draws] = [:]

    /// The lines `peer`'s host says it draws, at a time no later than `now`: kept when no later
    /// receipt said them (the newest by its time wins, whichever of the peer's devices said it),
    /// written when they changed, and the peer's pages drawn again.
    private func heard(_ said: Envelope.Draws, from peer: String, now: Int64) {
        var draws = said
        draws.at = min(draws.at, now)
        let known = peerDraws[peer]
        if let known, draws.at < known.at { return }
        if known?.lines == draws.lines {
            peerDraws[peer] = draws
            return
        }
        // Not written (the store failed): tried again with the next receipt.
        guard let written = try? store.rememberLines(of: peer, draws) else { return }
        peerDraws[peer] = draws
        if written { ledger.record(.changed(peers: [peer])) }
    }

    /// Whether notes (recalls, reactions) may be due: at each connect, after one was queued,
    /// when a peer said it takes them.
    private var notesDue = true
    /// When the notes are read again at the latest.
    private var notesAt: Int64 = 0

    /// How long a note waits for its answer before it goes again, in milliseconds (doubling
    /// with each try, at most five minutes).
    static let noteRetry: Int64 = 30_000

    /// Publishes the user's notes that are due (``PeerNote``) to peers whose hosts take them.
    func sendNotes(now: Int64) {
        guard connection.canSend, notesDue || now >= notesAt else { return }
        notesDue = false
        notesAt = now + Self.noteRetry
        guard let due = try? store.notesDue(now: now, limit: 100), !due.isEmpty else { return }
        var sent: [(note: PeerNote, retryAt: Int64)] = []
        // What went is recorded once, whichever way the loop ends.
        defer { try? store.notesSent(sent) }
        for note in due {
            guard let envelope = note.envelope else {
                _ = try? store.notesAnswered(by: note.peer, kind: note.kind, ids: [note.id])
                continue
            }
            guard connection.publish(topic: Topic.inbox(to: note.peer, from: connection.user).name, payload: envelope.bytes, as: .answer) else {
                notesDue = true
                return
            }
            // Doubling: a peer away for a week is not sent one every 30 s, queued by the broker.
            sent.append((note, now + min(Self.noteRetry << min(note.attempts, 4), 300_000)))
        }
    }

    /// A note was queued in this process or another: it goes at the next service.
    func notesQueued() { notesDue = true }

    /// Fails what was not delivered within `giveUpHours`.
    func giveUp(now: Int64) {
        guard let failed = try? store.failOlder(than: now - Int64(giveUpHours * 3_600_000), because: .notDelivered(hours: giveUpHours)),
              !failed.isEmpty else { return }
        ledger.counters.failed += failed.count
        for (peer, _) in failed { inFlight[peer] = nil }
        outboxChanged()
        ledger.record(.changed(peers: Set(failed.map(\.peer))))
        ledger.say(.givenUp(count: failed.count, hours: giveUpHours))
    }
}

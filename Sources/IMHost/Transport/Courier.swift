import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// The user's connection to the broker and everything that crosses it, for the one process that
/// holds the user's ``ConnectionLock``. It is driven by its owner's loop: wait on ``readable``
/// and ``writable`` (or at most ``wakeAfter()`` milliseconds), then call ``service()``.
///
/// It composes four parts, each with a job of its own:
/// - ``BrokerConnection``: connecting, the subscriptions, the probe, who holds the session, the
///   host's fleet status, goodbye;
/// - ``Delivery``: the user's messages on their way (the window, resends, giving up, the
///   receivers' receipts);
/// - ``Inbox``: what arrives (read with limits, refused, stored once, answered);
/// - ``ReadReceipts``: the user's read receipts, until confirmed.
///
/// A send queued in any process of the user wakes it at once through the user's ``WakeSocket``.
public final class Courier {
    /// What happened, for whoever shows the chat.
    public enum Event: Sendable, Equatable {
        /// Something for a person: the connection came or went, something was refused.
        case notice(ConnectionNotice)
        /// Messages from `peer` were stored.
        case arrived(peer: String, [StoredMessage])
        /// The state of the user's messages to these peers changed.
        case changed(peers: Set<String>)
        /// A fleet configuration came (retained, or as the operator published it): its bytes,
        /// unread. The host decides whether it applies (``ChatHost/serviceConnection()``).
        case fleet([UInt8])
        /// The host applied a fleet configuration: open chats reopen on the page it picks.
        case fleetApplied(version: Int64, summary: String)
        /// `peer` is typing (shown for ``Envelope/Feature/typingShown`` after the last).
        case typing(peer: String)
        /// Whether `peer` is online changed (``seen(_:)`` says how it stands).
        case seen(peer: String)
    }

    /// What crossed the connection, for `imhost sync --json`.
    public struct Counters: Sendable, Equatable, Codable {
        /// Messages stored as they arrived.
        public var received = 0
        /// Messages that arrived again (already stored: answered, not stored twice).
        public var duplicates = 0
        /// The user's messages the broker took from this host (each once, however often sent).
        public var published = 0
        /// The user's messages the receiver said it stored.
        public var delivered = 0
        /// The user's messages the receiver said it showed.
        public var read = 0
        /// The user's messages that failed: refused by the receiver, or not delivered in time.
        public var failed = 0
        /// Messages from blocked peers, refused.
        public var blocked = 0
        /// Messages refused because their sender was past the day's budget.
        public var overBudget = 0
        /// Envelopes refused, by why (not-json, too-large, version, kind, id, key, payload,
        /// receipt, sender, topic).
        public var refused: [String: Int] = [:]
        /// Receipt ids that named no message of this user's to that peer.
        public var unknownReceipts = 0
        /// Read receipts this host sent that their peer confirmed having.
        public var confirmed = 0
    }

    /// Where the connection stands.
    public enum Status: Equatable, Sendable {
        case offline(OfflineReason)
        case connecting
        case online
    }

    /// Why an attempt to connect failed.
    public struct AttemptFailure: Equatable, Sendable {
        /// What failed.
        public var reason: OfflineReason
        /// Whether the same attempt may succeed later as it is (the broker was down or out of
        /// reach), rather than only once someone changes something (a refused password).
        public var transient: Bool
    }

    /// At most this many messages per peer wait for a receipt.
    public static let window = 64
    /// The longest a connecting host waits for the retained fleet configuration after subscribing.
    public static let fleetWait = BrokerConnection.fleetWait

    public var settings: HostConfig.Transport { connection.settings }
    public var user: String { connection.user }
    private let store: MessageStore
    private let clock: () -> Int64
    private let lock: ConnectionLock
    private let ledger = CourierLedger()
    private let connection: BrokerConnection
    private let delivery: Delivery
    private let inbox: Inbox
    private let receipts: ReadReceipts
    private let siblings: Siblings
    private let reports: ReportSender
    private let signals: PeerSignals
    private let wake: WakeSocket?
    private var lastGiveUp: Int64 = 0

    package init(settings: HostConfig.Transport, user: String, store: MessageStore, payloadLimit: Int, photoLimit: Int = HostConfig.Limits().photoBytes, fileLimit: Int = HostConfig.Limits().fileBytes,
                 budget: MessageStore.PeerBudget = MessageStore.PeerBudget(HostConfig.Limits()), lock: ConnectionLock,
                 clock: @escaping () -> Int64, makeClient: @escaping MakeBrokerClient = { settings throws(BrokerClientFailure) in try MQTTClient(settings) }) {
        self.store = store
        self.lock = lock
        self.clock = clock
        connection = BrokerConnection(settings: settings, user: user, payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit, clock: clock, makeClient: makeClient, notices: ledger,
                                      host: store.hostID)
        siblings = Siblings(store: store, connection: connection, ledger: ledger)
        reports = ReportSender(store: store, connection: connection, ledger: ledger)
        signals = PeerSignals(store: store, connection: connection, ledger: ledger)
        delivery = Delivery(store: store, connection: connection, ledger: ledger, siblings: siblings, giveUpHours: settings.giveUpHours)
        inbox = Inbox(store: store, connection: connection, ledger: ledger, payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit,
                      budget: budget)
        receipts = ReadReceipts(store: store, connection: connection, ledger: ledger, enabled: settings.readReceipts, giveUpHours: settings.giveUpHours)
        wake = store.folder.flatMap(WakeSocket.init(folder:))
        // Woken by every process that queues, the courier does not read the outbox every second.
        if wake != nil {
            delivery.rereadMilliseconds = Self.quietReread
            receipts.rereadMilliseconds = Self.quietReread
        }
        connection.knownLogin = store.hasConnected(as: connection.login)
        connection.onReset = { [delivery, inbox, receipts, siblings, reports, signals] in
            reports.reset()
            signals.reset()
            delivery.reset()
            inbox.reset()
            receipts.reset()
            siblings.reset()
        }
    }

    deinit { goodbye() }

    // MARK: What it knows

    public var status: Status { connection.status }
    /// Whether the user wants to be online (`/online`, `/offline`).
    public var wantsOnline: Bool { connection.wantsOnline }
    /// Whether a failed attempt to connect is said and tried again later (a chat), or ends
    /// the connection unsaid, left in ``failedAttempt`` for a caller that tries once
    /// (`imhost sync`) to say once.
    public var retries: Bool {
        get { connection.link.persistence == .always }
        set { connection.link.persistence = newValue ? .always : .oneRound }
    }
    /// The last attempt to connect that failed, until one succeeds.
    public var failedAttempt: AttemptFailure? { connection.failedAttempt }
    /// Whether another host of the user took the session from this one, and it stays offline
    /// until the user says `/online`.
    public var connectedElsewhere: Bool { connection.connectedElsewhere }
    /// Whether this host's presence record stays when it leaves (`imhost sync --take`): the host
    /// it took the session from stays offline until its own `/online`. Otherwise a host that
    /// leaves clears its record.
    public var keepsPresence: Bool {
        get { connection.keepsPresence }
        set { connection.keepsPresence = newValue }
    }
    /// The first connection takes the session only if no other host of the user holds it; when
    /// one does, this one leaves at once (``connectedElsewhere``). For `imhost sync`: a one-shot
    /// command must not throw a running chat off for good.
    public func connectUnlessHeld() { connection.connectUnlessHeld() }
    /// Starts where a worker that was thrown off left it (a chat's worker started again):
    /// offline, connected elsewhere, until `/online` takes the session back.
    public func resumeElsewhere() { connection.resumeElsewhere() }
    /// The probe came back through the inbox since the connection was made: the broker has
    /// delivered everything that waited for this user before it.
    public var inboxConfirmed: Bool { connection.inboxConfirmed }
    /// Whether what the broker retains of the fleet configuration has come, or will not. A chat
    /// opens its page once this is true (``fleetWait``).
    public var fleetSettled: Bool { connection.fleetSettled }
    /// What this host reports on its status topic (and in its will): the fleet configuration it
    /// applies, and its lines and message keys. The host sets it; a change is reported at once.
    /// How the host drew lines' messages is the store's to say: the courier keeps it current
    /// (``drawnEvery``), whatever the host sets.
    public var fleetReport: FleetReport {
        get { connection.fleetReport }
        set {
            var report = newValue
            report.drawn = connection.fleetReport.drawn
            connection.fleetReport = report
        }
    }

    /// The lines this host draws now, by id with their versions (``Envelope/Draws/lines(of:)``):
    /// its `delivered` and `read` receipts say them, so each peer's page knows which of this
    /// host's user will see a line's card as a placeholder. `nil`: they say none. The host sets it.
    public var drawnLines: [String: String]? {
        get { connection.drawnLines }
        set { connection.drawnLines = newValue }
    }

    /// How often the store's counts of how lines' messages were drawn are read again, in
    /// milliseconds: a change is reported with the next read, so at most this often.
    static let drawnEvery: Int64 = 10_000
    private var drawnReadAt: Int64?
    /// Publishes the broker has not answered yet.
    public var unanswered: Int { connection.unanswered }
    public var counters: Counters { ledger.counters }

    // MARK: The loop

    /// Descriptors to wait on for reading: the connection's, and the wake socket.
    public var readable: [Int32] { connection.readable + (wake.map { [$0.fd] } ?? []) }
    /// Descriptors to wait on for writing.
    public var writable: [Int32] { connection.writable }
    /// Both, as poll(2) entries.
    public var descriptors: [pollfd] {
        readable.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) } + writable.map { pollfd(fd: $0, events: Int16(POLLOUT), revents: 0) }
    }

    /// Waits until the connection has something to do, or `milliseconds` pass.
    public func wait(milliseconds: Int32) { MQTTClient.wait(on: descriptors, milliseconds: milliseconds) }

    /// The longest the owner may wait before calling ``service()`` again, in milliseconds: at
    /// most a second, less when a reconnect, a probe, a resend or a receipt falls due sooner.
    public func wakeAfter() -> Int32 {
        let now = clock()
        var next = connection.nextWake(now: now)
        if connection.canSend { next = min(next, max(delivery.readAgainAt, now)) }
        if connection.isOnline { next = min(next, max(receipts.readAgainAt, now)) }
        return Int32(max(0, min(next - now, 1000)))
    }

    /// A message or a read receipt was queued in this process: it goes at the next
    /// ``service()``. (Another process wakes this one through the user's ``WakeSocket``.)
    public func sendSoon() {
        reports.queuedChanged()
        delivery.outboxChanged()
        delivery.notesQueued()
        receipts.queuedChanged()
    }

    /// Does what is ready: connects, reads, writes, publishes what is due, answers and applies
    /// receipts. Never blocks (connecting runs on a thread of its own). Returns what happened.
    public func service() -> [Event] {
        let now = clock()
        // What this service publishes and answers goes out together, when it is done.
        connection.holdWrites()
        if let drained = wake?.drain() {
            if drained.woken { sendSoon() }
            for peer in drained.typing { signals.typing(to: peer, now: now) }
        }
        var arrivals: [Inbox.Arrival] = []
        // Receipts are applied after what came with them is stored: a receipt for a copy of
        // this user's message that came in the same service finds it.
        var receiptsCame: [(Envelope.Receipt, String)] = []
        let happenings = connection.service(now: now)
        for happening in happenings {
            switch happening {
            case .connected:
                // What was sent and not delivered goes again, oldest first; so do recalls.
                try? store.makeAllDue()
                try? store.makeNotesDue()
                if !connection.knownLogin { connection.knownLogin = store.connected(as: connection.login) }
            case .message(let topic, let payload, let retained):
                let inbound = inbox.read(topic: topic, payload: payload, retained: retained, now: now)
                // Last seen: a signal says now; a message when it was sent (a backlog the broker
                // kept says when, not that it came now); a receipt may be a backlog's too.
                switch inbound {
                case .typing(let peer)?, .online(_, let peer)?: signals.heardFrom(peer, at: now)
                case .message(let arrival)? where arrival.sender != user: signals.heardFrom(arrival.sender, at: min(now, arrival.message.sentAt))
                default: break
                }
                switch inbound {
                case .message(let arrival)?:
                    // Messages and another device's copies are stored in the order they came.
                    if siblings.holdsCopies { siblings.flush(now: now) }
                    arrivals.append(arrival)
                    // A peer newly known to take online signals is told at once.
                    if delivery.heard(features: arrival.message.features, from: arrival.sender, now: now),
                       arrival.message.features?.contains(Envelope.Feature.online) == true {
                        signals.announceSoon()
                    }
                case .receipt(let receipt, let peer)?: receiptsCame.append((receipt, peer))
                case .confirm(let ids, let peer)?: receipts.confirmed(by: peer, ids: ids)
                case .recall(let ids, let at, let peer)?:
                    // What came before it in this service is stored first: a recall of a message
                    // that came with it finds it.
                    inbox.take(arrivals, now: now)
                    arrivals = []
                    inbox.recall(ids, at: at, from: peer)
                case .typing(let peer)?: signals.typingCame(from: peer, now: now)
                case .online(let online, let peer)?: signals.onlineCame(from: peer, online, now: now)
                case .react(let reaction, let peer)?:
                    inbox.take(arrivals, now: now)
                    arrivals = []
                    inbox.react(reaction, from: peer)
                case .revise(let revision, let peer)?:
                    // A revision of a message that came with it finds it.
                    inbox.take(arrivals, now: now)
                    arrivals = []
                    inbox.revise(revision, from: peer)
                case .probe(let id)?: connection.probeCame(id)
                case .presence(let id)?: connection.sawPresence(id)
                case .sibling(let sibling)?:
                    if case .copy = sibling, !arrivals.isEmpty {
                        inbox.take(arrivals, now: now)
                        arrivals = []
                    }
                    siblings.take(sibling, now: now)
                case nil: break
                }
            case .answered(let what, let answer):
                answered(what, answer, now: now)
            case .fleet(let bytes):
                ledger.record(.fleet(bytes))
            }
        }
        inbox.take(arrivals, now: now)
        siblings.flush(now: now)
        for (receipt, peer) in receiptsCame { delivery.apply(receipt, from: peer, now: now) }
        delivery.markAccepted(now: now)
        // Read before the first status goes (the connection's first service) and every
        // drawnEvery after: a change is reported then (BrokerConnection.fleetReport).
        if drawnReadAt.map({ now - $0 >= Self.drawnEvery }) ?? true {
            drawnReadAt = now
            if let counts = try? store.drawnCounts() { connection.fleetReport.drawn = counts }
        }
        if connection.isOnline {
            receipts.send(now: now)
            delivery.pump(now: now)
            delivery.sendNotes(now: now)
            siblings.service(now: now)
            reports.send(now: now)
            signals.service(now: now)
            connection.checkTimers(now: now)
            if now - lastGiveUp > 60_000 {
                lastGiveUp = now
                receipts.giveUp(now: now)
                delivery.giveUp(now: now)
            }
            inbox.sumRefusalsIfDue(now: now)
        }
        connection.releaseWrites()
        // Nothing came and nothing waits for the broker: the words of what was stored reach the
        // search index now, kept out of the commits a send and an arrival wait for.
        if happenings.isEmpty, connection.unanswered == 0 {
            _ = try? store.catchUpSearchIndex(limit: Self.indexedAtOnce)
            // A recall's words leave the files (the index rewritten, the log cut) once no reader holds them.
            store.scrubFilesIfDue(now: now)
        }
        return ledger.takeEvents()
    }

    /// How long the outbox and the receipts' queue go unread when nothing woke the courier
    /// (with a wake socket): a safety net, not the way sends are found.
    static let quietReread: Int64 = 60_000

    /// At most this many messages' words are indexed in one service.
    static let indexedAtOnce = 500

    private func answered(_ what: BrokerLink.Publish, _ answer: BrokerAnswer, now: Int64) {
        switch what {
        case .message(let send): delivery.answered(send, answer, now: now)
        case .receipts(let sent): receipts.answered(sent, answer, now: now)
        case .report(let id): reports.answered(id, answer, now: now)
        case .answer, .probe, .call: break
        }
    }

    // MARK: Signals

    /// Whether the person lets peers see when they are online (`privacy.onlineStatus`).
    public var showsOnline: Bool {
        get { signals.showsOnline }
        set { signals.showsOnline = newValue }
    }

    /// Tells `peer` the user is typing (QoS 0, at most once every 3 s), when its host takes it.
    public func typing(to peer: String) { signals.typing(to: peer, now: clock()) }

    /// Where `peer` stands: online, and when it was last heard from (nothing, when the person
    /// shows no one's).
    public func seen(_ peer: String) -> (online: Bool, lastSeen: Int64?) {
        let seen = signals.seen(peer, now: clock())
        return (seen.online, seen.lastSeen)
    }

    /// Connects (`online`) or disconnects, keeping the session on the broker.
    public func setOnline(_ online: Bool) {
        if !online { goodbye() }
        connection.setOnline(online)
    }

    /// Reports this host gone and disconnects; what the broker answers meanwhile is applied as
    /// usual (a message it took is not sent again).
    private func goodbye() {
        // What the person did just before leaving (read a chat: its receipts, and the note for
        // the user's other devices) goes with this connection, not at the next one: another
        // device may come while this one is away.
        if connection.isOnline {
            if wake?.drain().woken == true { sendSoon() }
            receipts.queuedChanged()
            receipts.send(now: clock())
            siblings.tellBeforeLeaving()
            reports.queuedChanged()
            reports.send(now: clock())
            signals.goodbye()
        }
        connection.goodbye { batch in
            let now = clock()
            for (what, answer) in batch { answered(what, answer, now: now) }
            delivery.markAccepted(now: now)
        }
    }
}

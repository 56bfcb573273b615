import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// The user's connection to the broker and everything that crosses it, for the one process that
/// holds the user's ``ConnectionLock``: it publishes what the outbox holds, stores what arrives,
/// and answers and applies receipts. It is driven by its owner's loop: wait on ``readable`` and
/// ``writable`` (or at most ``wakeAfter()`` milliseconds), then call ``service()``.
///
/// Delivery is end to end, because a broker's PUBACK is not delivery (it drops messages past its
/// queue limits):
/// - a send is stored and queued in one transaction (``MessageStore/storeOutgoing``); here it is
///   claimed, published at QoS 1 to `imhost/u/<peer>/from/<user>`, and marked `sent` when the
///   broker takes it;
/// - the receiver stores it once (by sender and id) and answers `delivered`; only that receipt
///   takes it out of the outbox. At most ``window`` messages per peer wait for a receipt; one
///   arriving lets the next go at once;
/// - what is not delivered goes again, oldest first: after a reconnect, a restart, and on a
///   backoff doubling to at most five minutes while connected; after `giveUpHours` it fails;
/// - an envelope the receiver will never take is answered `refused`, and fails here with the
///   receiver's reason.
public final class Courier {
    /// What happened, for whoever shows the chat.
    public enum Event: Sendable, Equatable {
        /// One line for a person: the connection came or went, something was refused.
        case notice(String)
        /// Messages from `peer` were stored.
        case arrived(peer: String, [StoredMessage])
        /// The state of the user's messages to these peers changed.
        case changed(peers: Set<String>)
        /// A fleet configuration came (retained, or as the operator published it): its bytes,
        /// unread. The host decides whether it applies (``ChatHost/serviceConnection()``).
        case fleet([UInt8])
        /// The host applied a fleet configuration: open chats reopen on the page it picks.
        case fleetApplied(version: Int64, summary: String)
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
        case offline(String)
        case connecting
        case online
    }

    /// Why an attempt to connect failed.
    public struct AttemptFailure: Equatable, Sendable, Codable {
        /// What failed and what to do, in one line.
        public var reason: String
        /// Whether the same attempt may succeed later as it is (the broker was down or out of
        /// reach), rather than only once someone changes something (a refused password).
        public var transient: Bool
    }

    /// At most this many messages per peer wait for a receipt.
    public static let window = 64
    /// The longest wait between resends of an undelivered message, and between reconnects.
    static let resendCap: Int64 = 5 * 60 * 1000
    static let reconnectCap: Int64 = 30 * 1000
    /// Seconds a connecting host waits for its probe to come back through its own inbox.
    static let probeMilliseconds: Int64 = 2000
    /// How long a claim lasts (a process killed with claims leaves them to expire).
    static let leaseMilliseconds: Int64 = 60 * 1000

    public let settings: HostConfig.Transport
    public let user: String
    private let store: MessageStore
    private let payloadLimit: Int
    /// What one peer's messages may add to the store in a day.
    private let budget: MessageStore.PeerBudget
    private let clock: () -> Int64
    private let lock: ConnectionLock

    private var client: MQTTClient?
    public private(set) var status = Status.offline("not connected yet")
    /// Whether the user wants to be online (`/online`, `/offline`).
    public private(set) var wantsOnline = true
    /// Whether a failed attempt to connect is said and tried again later (a chat), or ends
    /// the connection unsaid, left in ``failedAttempt`` for a caller that tries once
    /// (`imhost sync`) to say once.
    public var retries = true
    /// The last attempt to connect that failed, until one succeeds.
    public private(set) var failedAttempt: AttemptFailure?
    private var reconnectAt: Int64 = 0
    private var reconnectDelay: Int64 = 1000
    /// What was said of the last outage, so a reconnect loop says it once.
    private var saidOutage: String?
    /// Rows published in this connection and not yet delivered, by peer.
    private var inFlight: [String: Set<Int64>] = [:]
    /// What each publish the broker has yet to answer was.
    private var publishing: [Int32: Publish] = [:]
    private var probe: (id: String, deadline: Int64)?
    private var subscribed = false
    /// The probe came back through the inbox since the connection was made: the broker has
    /// delivered everything that waited for this user before it.
    public private(set) var inboxConfirmed = false
    /// The fleet subscription's message id, and when the broker took it.
    private var fleetSubscription: (id: Int32, at: Int64?)?
    /// Whether what the broker retains of the fleet configuration has come, or will not: it
    /// came, the probe came back after it would have, 1 s passed after subscribing, or the
    /// connection failed. A chat opens its page once this is true (``fleetWait``).
    public private(set) var fleetSettled = false
    /// The longest a connecting host waits for the retained fleet configuration after subscribing.
    public static let fleetWait: Int64 = 1000
    /// What this host reports on its status topic (and in its will): the fleet configuration it
    /// applies, and its lines and message keys. The host sets it; a change is reported at once.
    public var fleetReport = FleetReport() {
        didSet { if fleetReport != oldValue, status == .online { reportFleetStatus() } }
    }
    /// Publishes the broker has not answered yet.
    public var unanswered: Int { publishing.count }
    private var lastGiveUp: Int64 = 0
    /// Whether this host holds the user's session, or another host of the user took it.
    private lazy var claim = SessionClaim(connectionID: "c" + GlobalID.make(at: Clock.now()), host: store.hostID)
    /// Whether another host of the user took the session from this one, and it stays offline
    /// until the user says `/online`.
    public private(set) var connectedElsewhere = false
    /// The subscription to the user's own topic that brings the retained presence record.
    private var presenceSubscription: Int32?
    /// Messages that arrived before this connection knew it holds the session: stored once it
    /// does, dropped (unanswered, so sent again) when another host holds it.
    private var heldArrivals: [(sender: String, message: Envelope.Message)] = []
    public private(set) var counters = Counters()
    /// The user's messages the broker took in this run (a resend counts once).
    /// The broker's answers to messages, gathered during one ``service()`` and committed at once.
    private var accepted: [QueuedSend] = []
    private var events: [Event] = []

    private enum Publish {
        case message(QueuedSend)
        case receipts([MessageStore.QueuedReceipt])
        case answer
        case probe
    }

    /// The topic a message from `from` to `to` is published to.
    public static func topic(to: String, from: String) -> String { "imhost/u/\(to)/from/\(from)" }

    package init(settings: HostConfig.Transport, user: String, store: MessageStore, payloadLimit: Int,
                 budget: MessageStore.PeerBudget = MessageStore.PeerBudget(HostConfig.Limits()), lock: ConnectionLock,
         clock: @escaping () -> Int64) {
        self.settings = settings
        self.user = user
        self.store = store
        self.payloadLimit = payloadLimit
        self.budget = budget
        self.lock = lock
        self.clock = clock
    }

    deinit { goodbye() }

    // MARK: The loop

    /// Descriptors to wait on for reading.
    public var readable: [Int32] { client?.readable ?? [] }
    /// Descriptors to wait on for writing.
    public var writable: [Int32] { client?.writable ?? [] }
    /// Both, as poll(2) entries.
    public var descriptors: [pollfd] { client?.descriptors ?? [] }

    /// Waits until the connection has something to do, or `milliseconds` pass.
    public func wait(milliseconds: Int32) { MQTTClient.wait(on: descriptors, milliseconds: milliseconds) }

    /// The longest the owner may wait before calling ``service()`` again, in milliseconds.
    public func wakeAfter() -> Int32 {
        let now = clock()
        var next = now + 1000
        if client == nil, wantsOnline { next = min(next, reconnectAt) }
        if let probe { next = min(next, probe.deadline) }
        if !fleetSettled, let at = fleetSubscription?.at { next = min(next, at + Self.fleetWait) }
        if status == .online, let due = try? store.nextDue(now: now) { next = min(next, max(due, now)) }
        return Int32(max(0, min(next - now, 1000)))
    }

    /// Does what is ready: connects, reads, writes, publishes what is due, answers and applies
    /// receipts. Never blocks (connecting runs on a thread of its own). Returns what happened.
    public func service() -> [Event] {
        let now = clock()
        if client == nil, wantsOnline, now >= reconnectAt { connect(now: now) }
        if let client {
            var arrivals: [(sender: String, message: Envelope.Message)] = []
            for event in client.service() { handle(event, now: now, arrivals: &arrivals) }
            if !claim.settled {
                heldArrivals += arrivals
            } else {
                arrivals = heldArrivals + arrivals
                heldArrivals = []
                if !arrivals.isEmpty { store(arrivals, now: now) }
            }
            if !accepted.isEmpty { markAccepted(now: now) }
        }
        if status == .online {
            sendQueuedReceipts(now: now)
            pump(now: now)
            if let probe, now > probe.deadline {
                self.probe = nil
                if claim.noRecordCame() { publishPresence() }
                say("connected, but this host's own messages do not come back through its inbox: check the broker's ACL (pattern read imhost/u/%u/# and pattern write imhost/u/+/from/%u)")
            }
            if now - lastGiveUp > 60_000 { giveUp(now: now) }
            if !fleetSettled, let at = fleetSubscription?.at, now >= at + Self.fleetWait { fleetSettled = true }
            if refusalWindow.unsaid > 0, now - refusalWindow.start >= Self.refusalWindowMilliseconds { flushRefusals(now: now) }
        }
        defer { events = [] }
        return events
    }

    /// Connects (`online`) or disconnects, keeping the session on the broker.
    public func setOnline(_ online: Bool) {
        wantsOnline = online
        if online {
            reconnectAt = 0
            reconnectDelay = 1000
            // Asked for: this host takes the session, from another host of the user if need be.
            claim.claimNext()
            connectedElsewhere = false
        } else {
            goodbye()
            client = nil
            lostConnection()
            status = .offline("offline, as asked")
        }
    }

    // MARK: Connecting

    private func connect(now: Int64) {
        let password: String
        do throws(FileSystem.Failure) {
            password = try settings.password()
        } catch {
            attemptFailed(.init(reason: "cannot read the password in \(settings.passwordFile) (\(error)); fix transport.passwordFile in host.json", transient: false),
                          now: now, delay: Self.reconnectCap)
            return
        }
        do throws(MQTTClient.Failure) {
            var clientSettings = MQTTClient.Settings(address: settings.address, user: user, password: password,
                                                     maximumPacket: UInt32(max(BrokerFolder.maxPacketSize(payloadLimit: payloadLimit),
                                                                             FleetConfig.byteLimit + 1024)))
            if let ca = settings.caFile { clientSettings.tls = .init(ca: ca, cert: settings.certFile, key: settings.keyFile) }
            // A host that goes without a goodbye is marked gone on its status topic.
            clientSettings.will = (FleetConfig.statusTopic(of: user), fleetStatus(state: "gone"))
            let made = try MQTTClient(clientSettings)
            client = made
            status = .connecting
            made.connect()
        } catch {
            attemptFailed(.init(reason: "cannot make a connection: \(error)", transient: false), now: now, delay: Self.reconnectCap)
        }
    }

    /// An attempt to connect failed: kept for the caller, and an outage (said, and tried again
    /// later; "retrying" when that may work as it is) unless this connection does not retry.
    private func attemptFailed(_ failure: AttemptFailure, now: Int64, delay: Int64? = nil) {
        failedAttempt = failure
        if !retries { wantsOnline = false }
        outage(retries && failure.transient ? failure.reason + "; retrying" : failure.reason, now: now, delay: delay, aloud: retries)
    }

    /// The connection failed or was lost: said once for the outage (when `aloud`), and tried
    /// again later.
    private func outage(_ why: String, now: Int64, delay: Int64? = nil, aloud: Bool = true) {
        client = nil
        lostConnection()
        status = .offline(why)
        if aloud, saidOutage != why {
            saidOutage = why
            say(why)
        }
        // The broker cannot be reached: the cached fleet configuration is what applies.
        fleetSettled = true
        let wait = delay ?? reconnectDelay
        reconnectAt = now + wait + Int64.random(in: 0...(wait / 4))
        reconnectDelay = min(Self.reconnectCap, reconnectDelay * 2)
    }

    private func lostConnection() {
        heldArrivals = []
        inFlight = [:]
        receiptsInFlight = []
        publishing = [:]
        probe = nil
        subscribed = false
        inboxConfirmed = false
        fleetSubscription = nil
    }

    private func handle(_ event: MQTTClient.Event, now: Int64, arrivals: inout [(sender: String, message: Envelope.Message)]) {
        switch event {
        case .connected:
            status = .online
            failedAttempt = nil
            reconnectDelay = 1000
            if saidOutage != nil { say("connected again to \(settings.address) as \(user)") } else { say("connected to \(settings.address) as \(user)") }
            saidOutage = nil
            lostConnection()
            if claim.connected() { publishPresence() }
            // What was sent and not delivered goes again, oldest first.
            try? store.makeAllDue()
            if case .failure(let failure)? = client?.subscribe(Self.topic(to: user, from: "+")) {
                say("cannot subscribe to this host's inbox: \(failure)")
            }
            // The presence record the broker retains there (the inbox's subscription takes no
            // retained message): before the probe, whose SUBACK comes later.
            if case .success(let id)? = client?.subscribe(Self.topic(to: user, from: user), retained: true) { presenceSubscription = id }
            // The fleet configuration, with what the broker retains of it. Subscribed after the
            // inbox, so the probe (sent when the inbox is subscribed) comes back after it.
            if case .success(let id)? = client?.subscribe(FleetConfig.topic, retained: true) {
                fleetSubscription = (id, nil)
            } else {
                fleetSettled = true
            }
            reportFleetStatus()
        case .subscribed(let id, let granted) where id == fleetSubscription?.id:
            fleetSubscription?.at = now
            if let code = granted.first, code >= 0x80 {
                fleetSettled = true
                say("the broker refused this host's subscription to the fleet configuration (\(String(cString: mosquittoReason(code)))): check the broker's ACL (pattern read \(FleetConfig.topic)); the cached one applies")
            }
        case .subscribed(let id, _) where id == presenceSubscription:
            break
        case .subscribed(_, let granted):
            guard let code = granted.first, code < 0x80 else {
                say("the broker refused this host's subscription to its inbox (\(granted.first.map { String(cString: mosquittoReason($0)) } ?? "no answer")): check the broker's ACL (pattern read imhost/u/%u/#)")
                return
            }
            subscribed = true
            sendProbe(now: now)
        case .refused(let code, let reason):
            let fix: String = switch code {
            case 0x86, 0x04, 0x05, 0x87:
                "check transport.passwordFile (\(settings.passwordFile)) against the broker (imhost broker add-user DIR \(user) makes a user and its password file)"
            default: "check the broker's log"
            }
            client = nil
            attemptFailed(.init(reason: "the broker at \(settings.address) refused \(user): \(reason); \(fix)", transient: false), now: now, delay: Self.reconnectCap)
        case .unreachable(let why):
            client = nil
            if why.hasPrefix("the TLS handshake") || why.hasPrefix("the broker's certificate") {
                // A certificate or handshake that fails now fails again until someone fixes it.
                attemptFailed(.init(reason: "cannot connect to the broker at \(settings.address): \(why)", transient: false), now: now)
            } else {
                attemptFailed(.init(reason: "cannot reach the broker at \(settings.address) (\(why)); is it running? (imhost broker run DIR)", transient: true), now: now)
            }
        case .disconnected(let code, let reason):
            client = nil
            if code == 0x8E {
                // Session taken over: another connection of this user (another device, or
                // another data folder) took it. Fighting for it would throw each other off.
                wantsOnline = false
                lostConnection()
                status = .offline("another connection of \(user) took the session over")
                say("another connection of \(user) took the session over (another device or data folder): this one stays offline; /online takes it back")
                return
            }
            outage("the connection to the broker was lost (\(reason)); reconnecting", now: now)
        case .message(let topic, let payload, let retained) where topic == FleetConfig.topic:
            // What the broker retains is the newest; older ones queued in the session while this
            // host was away come before it and do not end the wait.
            if retained { fleetSettled = true }
            events.append(.fleet(payload))
        case .message(let topic, let payload, let retained):
            // A retained message in an inbox would come again at every connect: nobody sends
            // one but a host of this user, its presence record; others are refused, once each
            // time they come.
            if retained, topic == Self.topic(to: user, from: user),
               case .presence(let id, _)? = try? Envelope.read(payload, payloadLimit: payloadLimit, sender: user) {
                sawPresence(id)
                return
            }
            guard !retained else {
                refuse(.init(kind: .kind, description: "a retained message on \(TerminalText.safe(topic)) (an inbox takes none: ask the broker's operator to clear it)"), counter: "retained")
                return
            }
            receive(topic: topic, payload: payload, now: now, arrivals: &arrivals)
        case .published(let id, let code):
            published(id: id, code: code, now: now)
        }
    }

    private func mosquittoReason(_ code: Int32) -> UnsafePointer<CChar> { MQTTClient.reasonText(code) }

    // MARK: Who holds the session

    /// Says, retained on the user's own inbox, that this connection holds the user's session.
    private func publishPresence() {
        let record = Envelope.presence(id: claim.connectionID, at: clock())
        if case .success(let mid)? = client?.publish(topic: Self.topic(to: user, from: user), payload: record.bytes, retain: true) {
            publishing[mid] = .answer
        }
    }

    /// A presence record came: this host holds the session, or another host of the user took it
    /// after this one did, and this one leaves (without a goodbye: the status topic is the other
    /// host's now) and stays offline until the user says otherwise.
    private func sawPresence(_ id: String) {
        guard claim.saw(id) == .takenOver, let client else { return }
        client.disconnect()
        self.client = nil
        lostConnection()
        wantsOnline = false
        connectedElsewhere = true
        status = .offline("\(user) is connected elsewhere")
        say("\(user) is connected elsewhere: another host signed in as \(user) after this one and holds the session; this one stays offline (what you send waits, queued); /online takes the session back")
    }

    /// The first connection takes the session only if no other host of the user holds it; when
    /// one does, this one leaves at once (``connectedElsewhere``). For `imhost sync`: a one-shot
    /// command must not throw a running chat off for good.
    public func connectUnlessHeld() { claim.claimNone() }

    /// Whether this host's presence record stays when it leaves (`imhost sync --take`): the host
    /// it took the session from stays offline until its own `/online`, however soon this one
    /// is done. Otherwise a host that leaves clears its record.
    public var keepsPresence = false

    /// Starts where a worker that was thrown off left it (a chat's worker started again): offline,
    /// connected elsewhere, until `/online` takes the session back.
    public func resumeElsewhere() {
        wantsOnline = false
        connectedElsewhere = true
        status = .offline("\(user) is connected elsewhere")
        say("\(user) is still connected elsewhere: another host took the session before this chat restarted; this one stays offline (what you send waits, queued); /online takes the session back")
    }

    private func sendProbe(now: Int64) {
        let id = "probe-" + GlobalID.make(at: now)
        guard case .success(let mid)? = client?.publish(topic: Self.topic(to: user, from: user), payload: Envelope.probe(id: id).bytes) else { return }
        publishing[mid] = .probe
        probe = (id, now + Self.probeMilliseconds)
    }

    // MARK: Receiving

    private func receive(topic: String, payload: [UInt8], now: Int64, arrivals: inout [(sender: String, message: Envelope.Message)]) {
        let prefix = "imhost/u/\(user)/from/"
        let sender = topic.hasPrefix(prefix) ? String(topic.dropFirst(prefix.count)) : ""
        // The sender is the topic's, which the broker's ACL vouches for; nothing else says who.
        guard !sender.isEmpty, sender == user || TransportID.problem(sender) == nil else {
            refuse(.init(kind: .kind, description: "a message on \(TerminalText.safe(topic)), which is not this user's inbox"), counter: "topic")
            return
        }
        let envelope: Envelope
        do throws(Envelope.Refusal) {
            envelope = try Envelope.read(payload, payloadLimit: payloadLimit, sender: sender)
        } catch {
            refuse(error, from: sender)
            return
        }
        switch envelope {
        case .probe(let id):
            if sender == user, id == probe?.id {
                probe = nil
                inboxConfirmed = true
                // Sent after the fleet subscription: a retained configuration came before it.
                fleetSettled = true
                // And after the inbox's: so did a presence record. None came: the broker lost it.
                if claim.noRecordCame() { publishPresence() }
            }
        case .presence(let id, _):
            if sender == user { sawPresence(id) }
        case .message(let message):
            arrivals.append((sender, message))
        case .receipt(let receipt):
            apply(receipt, from: sender, now: now)
        case .confirm(let ids):
            if let confirmed = try? store.receiptsConfirmed(by: sender, ids: ids) { counters.confirmed += confirmed }
        }
    }

    /// Refuses an envelope: counted, said in one line, and answered `refused` when its id could
    /// be read.
    private func refuse(_ refusal: Envelope.Refusal, from sender: String? = nil, counter: String? = nil) {
        counters.refused[counter ?? refusal.kind.rawValue, default: 0] += 1
        // A flood of junk must not bury the chat: the first few refusals of a minute each get
        // a line, the rest one line when the minute is over (sync --json counts them all).
        let now = clock()
        if now - refusalWindow.start >= Self.refusalWindowMilliseconds { flushRefusals(now: now) }
        guard refusalWindow.said < Self.refusalsSaidPerWindow else {
            refusalWindow.unsaid += 1
            return
        }
        refusalWindow.said += 1
        say("refused \(refusal.description)\(sender.map { " from \($0)" } ?? "")")
        if let sender, let id = refusal.messageID {
            answer(sender, .refused, ids: [id], code: refusal.code, reason: refusal.description)
        }
    }

    static let refusalWindowMilliseconds: Int64 = 60_000
    static let refusalsSaidPerWindow = 10

    /// Refusals said and kept quiet in the current minute.
    private var refusalWindow = (start: Int64(0), said: 0, unsaid: 0)

    /// Says how many refusals went unsaid in the minute that ended, and starts a new one.
    private func flushRefusals(now: Int64) {
        if refusalWindow.unsaid > 0 {
            say("refused \(refusalWindow.unsaid) more envelope\(refusalWindow.unsaid == 1 ? "" : "s") in the last minute (imhost sync --json counts them by why)")
        }
        refusalWindow = (now, 0, 0)
    }

    /// Stores what arrived in one transaction, and answers each sender `delivered` (or
    /// `refused`, for a blocked sender).
    private func store(_ arrivals: [(sender: String, message: Envelope.Message)], now: Int64) {
        let incoming = arrivals.map { arrival in
            IncomingMessage(from: arrival.sender, globalID: arrival.message.id, seq: arrival.message.seq, key: arrival.message.key,
                            payload: arrival.message.payload, sentAt: arrival.message.sentAt, jump: arrival.message.jump, arrived: true)
        }
        let results: [MessageStore.Arrival]
        do throws(StoreError) {
            results = try store.storeIncoming(incoming, budget: budget)
        } catch {
            // Not stored, so not answered: the sender sends them again.
            say("\(arrivals.count) message\(arrivals.count == 1 ? "" : "s") could not be stored (\(error)); they come again")
            return
        }
        var delivered: [String: [String]] = [:], blocked: [String: [String]] = [:], overBudget: [String: [String]] = [:]
        var stored: [String: [StoredMessage]] = [:]
        for (arrival, result) in zip(arrivals, results) {
            switch result {
            case .stored(let message):
                counters.received += 1
                delivered[arrival.sender, default: []].append(arrival.message.id)
                stored[arrival.sender, default: []].append(message)
            case .duplicate:
                counters.duplicates += 1
                delivered[arrival.sender, default: []].append(arrival.message.id)
            case .overBudget:
                counters.overBudget += 1
                overBudget[arrival.sender, default: []].append(arrival.message.id)
            case .blocked:
                counters.blocked += 1
                blocked[arrival.sender, default: []].append(arrival.message.id)
            }
        }
        for (sender, ids) in delivered { answer(sender, .delivered, ids: ids) }
        for (sender, ids) in blocked { answer(sender, .refused, ids: ids, code: .blocked, reason: "the receiver blocked you") }
        for (sender, ids) in overBudget {
            answer(sender, .refused, ids: ids, code: .budget,
                   reason: "past \(user)'s budget of \(budget.messages) messages or \(budget.bytes) bytes a day from one person")
            if store.firstTime("budget said: \(sender) \(MessageStore.PeerBudget.day(of: now))") {
                say("refusing \(sender)'s messages for the rest of the day (UTC): past the budget of \(budget.messages) messages or \(budget.bytes) bytes a day from one person (limits.peerMessagesPerDay, limits.peerBytesPerDay in host.json); \(sender) is told")
            }
        }
        for (peer, messages) in stored {
            // A new conversation opens on the page its first message was sent from.
            if let jump = messages.compactMap(\.jump).first { try? store.remember(jump, for: peer, unlessKnown: true) }
            events.append(.arrived(peer: peer, messages))
        }
    }

    /// Tells `peer` its read receipts for `ids` arrived.
    private func publishConfirm(_ ids: [String], to peer: String) {
        if case .success(let mid)? = client?.publish(topic: Self.topic(to: peer, from: user), payload: Envelope.confirm(ids: ids).bytes) {
            publishing[mid] = .answer
        }
    }

    /// Publishes a receipt to `peer`, at most ``Envelope/receiptIDs`` ids each.
    private func answer(_ peer: String, _ state: Envelope.Receipt.State, ids: [String], code: Envelope.RefusalCode? = nil, reason: String? = nil) {
        for start in stride(from: 0, to: ids.count, by: Envelope.receiptIDs) {
            let chunk = Array(ids[start..<min(start + Envelope.receiptIDs, ids.count)])
            let receipt = Envelope.receipt(Envelope.Receipt(state: state, ids: chunk, code: code, reason: reason))
            if case .success(let mid)? = client?.publish(topic: Self.topic(to: peer, from: user), payload: receipt.bytes) {
                publishing[mid] = .answer
            }
        }
    }

    /// Applies a receipt from `peer` to the user's messages to `peer` (ids of messages sent to
    /// anyone else change nothing, and are counted).
    private func apply(_ receipt: Envelope.Receipt, from peer: String, now: Int64) {
        do throws(StoreError) {
            let changed: Int
            switch receipt.state {
            case .delivered, .read:
                changed = try store.receipt(from: peer, ids: receipt.ids, state: receipt.state == .read ? .read : .delivered, at: now)
                if receipt.state == .read { counters.read += changed } else { counters.delivered += changed }
            case .refused:
                let why = Self.refusal(by: peer, receipt.code, receipt.reason)
                changed = try store.fail(to: peer, ids: receipt.ids, reason: why)
                counters.failed += changed
                if changed > 0 { say("\(changed) message\(changed == 1 ? "" : "s") to \(peer) failed: \(why)") }
            }
            // Ids that name no message of the user's to this peer (never sent, or sent to
            // someone else) changed nothing, and are counted.
            let own = try store.ownRows(receipt.ids, to: peer)
            counters.unknownReceipts += receipt.ids.count - own.count
            if let rows = inFlight[peer] { inFlight[peer] = rows.subtracting(own.values) }
            if !own.isEmpty { events.append(.changed(peers: [peer])) }
            // Applied: the peer may stop sending it. (Ids of no message of ours too: it would
            // send them until it gives up, for nothing.)
            if receipt.confirm { publishConfirm(receipt.ids, to: peer) }
        } catch {
            say("a receipt from \(peer) could not be applied (\(error)); it will come again")
        }
    }

    /// What a `refused` receipt from `peer` means, for the user whose message it refused: read
    /// from its code; a code this host does not know (a newer peer's) is shown with the reason.
    static func refusal(by peer: String, _ code: Envelope.RefusalCode?, _ reason: String?) -> String {
        let said = reason.map { " (\($0))" } ?? ""
        switch code {
        case .kind?, .version?:
            return "\(peer)'s imhost is older than this one and cannot take it\(said); it is not sent again: /retry N once \(peer) has updated"
        case .blocked?:
            return "\(peer) blocked you; it is not sent again"
        case .budget?:
            return "\(peer)'s host takes no more from you today\(said); /retry N sends it again tomorrow"
        case .tooLarge?:
            return "too large for \(peer)'s host\(said)"
        case let code?:
            return "refused by \(peer) (\(code))\(said)"
        case nil:
            return "refused by \(peer)\(reason.map { ": \($0)" } ?? "")"
        }
    }

    // MARK: Fleet status

    /// What this host reports on its status topic: ``fleetReport``, and whether it runs
    /// ("running") or went away ("gone", the will).
    private func fleetStatus(state: String) -> [UInt8] {
        fleetReport.document(state: state, at: clock())
    }

    /// Publishes this host's status, retained. Returns the publish's message id.
    @discardableResult
    private func reportFleetStatus(state: String = "running") -> Int32? {
        guard case .success(let id)? = client?.publish(topic: FleetConfig.statusTopic(of: user), payload: fleetStatus(state: state), retain: true) else {
            return nil
        }
        publishing[id] = .answer
        return id
    }

    /// Reports this host gone (with the version it applied: the will, made at connect, may name
    /// an older one) and disconnects, keeping the session. Waits (at most half a second) for the
    /// broker to take the report first: mosquitto 2.0 treats a client that leaves before its
    /// PUBACK as lost, and publishes its will over the report.
    private func goodbye() {
        // Its presence record goes with the host that holds the session (before the status,
        // whose answer is waited for): a host of the user that comes later does not take it
        // for one still here.
        if status == .online, claim.settled, !keepsPresence { _ = client?.publish(topic: Self.topic(to: user, from: user), payload: [], retain: true) }
        guard let client, let id = reportFleetStatus(state: "gone") else { return }
        let deadline = Clock.monotonic() + 500_000_000
        // The broker's answers are applied as usual (a receipt it took is not sent again); a
        // message arriving now is not stored, so not answered: its sender sends it again.
        var answered = false
        while !answered, Clock.monotonic() < deadline {
            for event in client.service() {
                switch event {
                case .published(let published, let code):
                    self.published(id: published, code: code, now: clock())
                    if published == id { answered = true }
                case .disconnected:
                    return
                default:
                    break
                }
            }
            if !accepted.isEmpty { markAccepted(now: clock()) }
            if answered { break }
            MQTTClient.wait(on: client.descriptors, milliseconds: 20)
        }
        client.disconnect()
    }

    // MARK: Sending

    /// Publishes what is due, at most ``window`` per peer waiting for a receipt.
    private func pump(now: Int64) {
        guard subscribed, claim.settled, let client else { return }
        let due: [(peer: String, count: Int)]
        do throws(StoreError) { due = try store.duePeers(now: now) } catch { return }
        for (peer, _) in due {
            let flying = inFlight[peer] ?? []
            let candidates: [Int64]
            do throws(StoreError) {
                candidates = try store.dueRows(for: peer, now: now, limit: Self.window + flying.count)
            } catch { continue }
            // Resends of messages already waiting for a receipt, and new ones while there is room.
            var room = Self.window - flying.count
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
            for send in sends {
                let envelope = Envelope.message(Envelope.Message(id: send.globalID, seq: send.seq ?? 0, key: send.key, payload: send.payload,
                                                                 sentAt: send.sentAt, jump: send.jump))
                switch client.publish(topic: Self.topic(to: send.peer, from: user), payload: envelope.bytes) {
                case .success(let mid):
                    publishing[mid] = .message(send)
                    inFlight[send.peer, default: []].insert(send.row)
                case .failure:
                    try? store.release([send], retryAt: now + 1000)
                }
            }
        }
    }

    /// The broker took these messages: `sent`, and each sent again if no receipt comes, after
    /// 2 s, doubling to at most 5 minutes. One transaction for all.
    private func markAccepted(now: Int64) {
        let sends = accepted
        accepted = []
        if let changed = try? store.markSent(sends, retryAt: { now + min(Self.resendCap, 2000 << min($0.attempts, 12)) }) {
            counters.published += changed
        }
        events.append(.changed(peers: Set(sends.map(\.peer))))
    }

    private func published(id: Int32, code: Int32, now: Int64) {
        guard let what = publishing.removeValue(forKey: id) else { return }
        switch what {
        case .message(let send):
            if code < 0x80 {
                accepted.append(send)
            } else {
                inFlight[send.peer]?.remove(send.row)
                try? store.release([send], retryAt: now + Self.resendCap)
                say("the broker does not let \(user) publish to \(Self.topic(to: send.peer, from: user)) (\(String(cString: mosquittoReason(code)))): check its ACL (pattern write imhost/u/+/from/%u); the message stays queued")
            }
        case .receipts(let receipts):
            for receipt in receipts { receiptsInFlight.remove(receipt.row) }
            // Taken, or refused (then tried again much later, not at once): either way sent
            // again unless the peer confirms it first.
            let base = code < 0x80 ? 2000 : Self.resendCap
            try? store.receiptsSent(receipts) { now + min(Self.resendCap, base << min($0.attempts, 12)) }
        case .answer:
            break
        case .probe:
            if code >= 0x80 {
                probe = nil
                say("the broker does not let \(user) write to its own inbox: check its ACL (pattern write imhost/u/+/from/%u)")
            }
        }
    }

    /// Read receipts handed to the broker and not answered yet: not handed over twice.
    private var receiptsInFlight: Set<Int64> = []

    /// Sends the read receipts chats queued and those due again (or drops them, when host.json
    /// turns them off). Each asks its peer to confirm it; until then it goes again, on a
    /// backoff and after every reconnect, as messages do.
    private func sendQueuedReceipts(now: Int64) {
        guard let client, let queued = try? store.dueReceipts(now: now, limit: 500), !queued.isEmpty else { return }
        guard settings.readReceipts else {
            try? store.dropQueuedReceipts()
            return
        }
        var byPeer: [String: [MessageStore.QueuedReceipt]] = [:]
        for receipt in queued where !receiptsInFlight.contains(receipt.row) { byPeer[receipt.peer, default: []].append(receipt) }
        for (peer, receipts) in byPeer {
            for start in stride(from: 0, to: receipts.count, by: Envelope.receiptIDs) {
                let chunk = Array(receipts[start..<min(start + Envelope.receiptIDs, receipts.count)])
                let envelope = Envelope.receipt(Envelope.Receipt(state: .read, ids: chunk.map(\.globalID), confirm: true))
                if case .success(let mid) = client.publish(topic: Self.topic(to: peer, from: user), payload: envelope.bytes) {
                    publishing[mid] = .receipts(chunk)
                    receiptsInFlight.formUnion(chunk.map(\.row))
                }
            }
        }
    }

    /// Fails what was not delivered within `giveUpHours`.
    private func giveUp(now: Int64) {
        lastGiveUp = now
        let hours = settings.giveUpHours
        let hoursText = hours == hours.rounded() ? "\(Int(hours))" : "\(hours)"
        // Read receipts a peer never confirmed (its imhost is older than confirmations) stop too.
        _ = try? store.dropReceipts(queuedBefore: now - Int64(hours * 3_600_000))
        guard let failed = try? store.failOlder(than: now - Int64(hours * 3_600_000), reason: "not delivered within \(hoursText) hours"),
              !failed.isEmpty else { return }
        counters.failed += failed.count
        for (peer, _) in failed { inFlight[peer] = nil }
        events.append(.changed(peers: Set(failed.map(\.peer))))
        say("\(failed.count) message\(failed.count == 1 ? "" : "s") not delivered within \(hoursText) hours failed; /retry N sends one again")
    }

    private func say(_ line: String) { events.append(.notice(TerminalText.safe(line))) }
}

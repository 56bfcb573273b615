/// The user's connection to the broker, one of the ``Courier``'s parts: a ``BrokerLink`` (which
/// connects, fails over, says an outage once, and subscribes the inbox), and what a host does on
/// it: subscribes the presence record and the fleet configuration, checks with a probe that the
/// inbox reaches this host, settles which host of the user holds the session (``SessionClaim``),
/// reports this host's fleet status, and says goodbye. Everything else that crosses it
/// (messages, the broker's answers to what the other parts published) it hands back from
/// ``service(now:)``.
final class BrokerConnection {
    /// Milliseconds a connecting host waits for its probe to come back through its own inbox.
    static let probeMilliseconds: Int64 = 2000
    /// The same under MQTT 3.1.1: a NATS cluster's first delivery to a new session goes through
    /// JetStream consumers it makes then, which takes seconds.
    static let probeMilliseconds311: Int64 = 10_000
    /// The longest a connecting host waits for the retained fleet configuration after subscribing.
    static let fleetWait: Int64 = 1000

    let settings: HostConfig.Transport
    let user: String
    let link: BrokerLink
    /// This device's login at the broker (its client id too): the user for its first device.
    var login: String { link.endpoint.login }
    /// This device's name (`nil`: the user's first device) and the topic only it reads, where
    /// the user's other devices write to it alone (``Siblings/topic(of:user:)``).
    let device: String?
    let deviceTopic: String
    /// Where this device's presence record is retained: the user's own inbox topic for its first
    /// device (as before devices), below it for another (``Topic/device(user:device:)``), so a
    /// device's record speaks for its own session only and another device of the user never
    /// takes it for a host that took its session.
    let presenceTopic: String
    var clock: () -> Int64 { link.clock }
    var notices: CourierLedger { link.notices }

    /// What this host knows of the connection it has now: made anew with each, gone with it.
    var online: Online?
    /// Whether what the broker retains of the fleet configuration has come, or will not: it
    /// came, the probe came back after it would have, ``fleetWait`` passed after subscribing, or
    /// the connection failed (the cached one applies). Once true, it stays.
    var fleetSettled = false
    /// Whether this host holds the user's session, or another host of the user took it.
    var claim: SessionClaim
    /// Whether this host's presence record stays when it leaves (`imhost sync --take`): the host
    /// it took the session from stays offline until its own `/online`, however soon this one is
    /// done. Otherwise a host that leaves clears its record.
    var keepsPresence = false
    /// Told when the connection went or was made anew: the other parts forget what they had in
    /// flight on it.
    var onReset: () -> Void = {}
    /// What this host reports on its status topic (and in its will); a change is reported at once.
    var fleetReport = FleetReport() {
        didSet { if fleetReport != oldValue, isOnline { reportFleetStatus() } }
    }
    /// The lines this host draws now, by id with their versions (``Envelope/Draws``), which its
    /// `delivered` and `read` receipts say; `nil`: they say none.
    var drawnLines: [String: String]?
    /// What a receipt sent now says of the lines this host draws.
    var draws: Envelope.Draws? { drawnLines.map { Envelope.Draws(at: clock(), lines: $0) } }

    init(settings: HostConfig.Transport, user: String, payloadLimit: Int, photoLimit: Int, fileLimit: Int, clock: @escaping () -> Int64,
         makeClient: @escaping MakeBrokerClient, notices: CourierLedger, host: String? = nil) {
        claim = SessionClaim(connectionID: "c" + GlobalID.make(at: Clock.now()), host: host)
        self.settings = settings
        self.user = user
        let endpoint = BrokerLink.Endpoint(transport: settings, user: user, keepsSession: true,
                                           maximumPacket: Self.maximumPacket(payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit),
                                           inbox: Topic.Filter.inbox(of: user).name)
        link = BrokerLink(endpoint: endpoint, persistence: .always, clock: clock, makeClient: makeClient, notices: notices)
        device = DynamicSecurity.parse(login: endpoint.login)?.device
        deviceTopic = Siblings.topic(of: endpoint.login, user: user)
        presenceTopic = (device.map { Topic.device(user: user, device: $0) } ?? Topic.inbox(to: user, from: user)).name
        link.will = { [unowned self] in
            // A host that goes without a goodbye is marked gone on its status topic.
            (Topic.fleetStatus(user: user).name, fleetReport.document(state: .gone, at: clock()))
        }
        link.onReset = { [unowned self] failed in
            online = nil
            // The broker cannot be reached: the cached fleet configuration is what applies.
            if failed { fleetSettled = true }
            onReset()
        }
    }

    /// The largest packet this host takes, said to the broker at connect (MQTT 5 Maximum Packet
    /// Size), so it never sends a larger one: this host's own largest envelope and a topic, or a
    /// fleet configuration if that is larger.
    static func maximumPacket(payloadLimit: Int, photoLimit: Int, fileLimit: Int) -> Int {
        max(Envelope.packetLimit(payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit), FleetConfig.byteLimit + Envelope.topicRoom)
    }

    // MARK: What it knows

    var status: Courier.Status { link.status }
    var isOnline: Bool { link.isOnline }
    var client: (any BrokerClient)? { link.client }
    /// Whether the user wants to be online (`/online`, `/offline`).
    var wantsOnline: Bool { link.wantsOnline }
    /// Whether another host of the user took the session from this one, and it stays offline
    /// until the user says `/online`.
    var connectedElsewhere: Bool { claim.elsewhere }
    /// The last attempt to connect that failed, until one succeeds.
    var failedAttempt: Courier.AttemptFailure? { link.failedAttempt }
    /// Whether this login connected before, from this data folder (``BrokerLink/knownLogin``).
    var knownLogin: Bool {
        get { link.knownLogin }
        set { link.knownLogin = newValue }
    }
    /// The MQTT spoken.
    var version: MQTTVersion { link.version }
    /// The probe came back since the connection was made: the broker has delivered everything
    /// that waited for this user before it.
    var inboxConfirmed: Bool { online?.probe == .back }
    /// Whether what is due may be sent: the inbox is subscribed (its answers can come back) and
    /// this host knows it holds the session.
    var canSend: Bool { link.inboxGranted && claim.settled }
    /// Whether this host knows it holds the session: arrivals are stored (before, they are held).
    var holdsSession: Bool { claim.settled }
    /// Publishes the broker has not answered yet.
    var unanswered: Int { link.unanswered }
    var readable: [Int32] { link.readable }
    var writable: [Int32] { link.writable }

    /// The soonest this connection has something to do, at most a second from `now`.
    func nextWake(now: Int64) -> Int64 {
        var next = link.nextWake(now: now)
        if let online {
            if case .out(_, let deadline) = online.probe { next = min(next, deadline) }
            if !fleetSettled, let at = online.fleet?.grantedAt { next = min(next, at + Self.fleetWait) }
        }
        return next
    }

    // MARK: The loop

    /// Connects when it is time, runs the client, and hands back what is for the other parts.
    func service(now: Int64) -> [Happening] {
        var happenings: [Happening] = []
        for event in link.service(now: now) {
            switch event {
            case .connected:
                online = Online()
                happenings.append(.connected)
                subscribe()
            case .inboxGranted:
                sendProbe(now: now)
            case .subscribed(let id, let answer) where id == online?.fleet?.id:
                online?.fleet?.grantedAt = now
                if case .refused(let reason) = answer {
                    fleetSettled = true
                    notices.say(.acl(.fleetRefused(reason)))
                }
            case .subscribed:
                break
            case .message(let topic, let payload, let retained) where topic == Topic.fleetConfig.name:
                // What the broker retains is the newest; older ones queued in the session while
                // this host was away come before it and do not end the wait.
                if retained { fleetSettled = true }
                happenings.append(.fleet(payload))
            case .message(let topic, let payload, let retained):
                happenings.append(.message(topic: topic, payload: payload, retained: retained))
            case .answered(_, .probe, let answer):
                if case .refused = answer {
                    online?.probe = .notSent
                    notices.say(.acl(.ownInboxRefused(user: user)))
                }
            case .answered(_, .answer, _), .answered(_, .call, _):
                break
            case .answered(_, let what, let answer):
                happenings.append(.answered(what, answer))
            }
        }
        return happenings
    }

    /// What the client writes until ``releaseWrites()`` leaves together (``BrokerClient/holdWrites()``).
    func holdWrites() { link.holdWrites() }

    /// Sends what was held.
    func releaseWrites() { link.releaseWrites() }

    /// What an online connection checks as time passes: the broker's answers, its probe's
    /// deadline, the fleet wait.
    func checkTimers(now: Int64) {
        guard !link.checkStall(now: now), let online else { return }
        if case .out(_, let deadline) = online.probe, now > deadline {
            self.online?.probe = .lost
            if claim.noRecordCame() { publishPresence() }
            notices.say(.acl(.probeLost))
        }
        if !fleetSettled, let at = online.fleet?.grantedAt, now >= at + Self.fleetWait { fleetSettled = true }
    }

    /// Publishes at QoS 1 as `what`: false when the connection cannot take it now.
    @discardableResult
    func publish(topic: String, payload: [UInt8], retain: Bool = false, as what: BrokerLink.Publish) -> Bool {
        if case .queued = link.send(topic: topic, payload: payload, retain: retain, as: what) { true } else { false }
    }

    /// Publishes a signal at QoS 0, once: `false` when it could not go.
    func signal(topic: String, payload: [UInt8]) -> Bool { link.sendOnce(topic: topic, payload: payload) }

    /// Publishes at QoS 1 as `what`, unless the packet is larger than the broker takes
    /// (``BrokerLink/send(topic:payload:retain:as:)``).
    func send(topic: String, payload: [UInt8], retain: Bool = false, as what: BrokerLink.Publish) -> BrokerLink.Sent {
        link.send(topic: topic, payload: payload, retain: retain, as: what)
    }

    /// Connects (`online`) or, having said goodbye, disconnects (keeping the session on the broker).
    func setOnline(_ online: Bool) {
        // Asked for: this host takes the session, from another host of the user if need be.
        if online { claim.claimNext() }
        link.setOnline(online)
    }

    /// Subscribes a new connection as ``Topic/subscriptions(user:device:)`` says: the inbox, the
    /// presence record, the device's own topic, the fleet configuration; and claims the session
    /// and reports the host's status.
    private func subscribe() {
        if claim.connected() { publishPresence() }
        for subscription in Topic.subscriptions(user: user, device: device) {
            switch subscription.kind {
            case .inbox: link.subscribeInbox()
            case .presence, .device: _ = link.subscribe(subscription.filter, qos: subscription.qos, retained: subscription.retained)
            case .fleet:
                if let id = link.subscribe(subscription.filter, qos: subscription.qos, retained: subscription.retained) {
                    online?.fleet = (id, nil)
                } else {
                    fleetSettled = true
                }
            }
        }
        reportFleetStatus()
    }
}

/// The user's connection to the broker, one of the ``Courier``'s parts: it connects (and again,
/// on a backoff, saying an outage once), subscribes to the inbox, the presence record and the
/// fleet configuration, checks with a probe that the inbox reaches this host, settles which host
/// of the user holds the session (``SessionClaim``), reports this host's fleet status, and says
/// goodbye. Everything else that crosses it (messages, the broker's answers to what the other
/// parts published) it hands back from ``service(now:)``.
///
/// What the connection is, is one value, ``state``, whose cases carry what each knows.
final class BrokerConnection {
    enum State {
        /// Not connected, and why.
        case offline(OfflineReason)
        /// Waiting for the broker's answer.
        case connecting(any BrokerClient)
        /// Connected, and what it knows so far.
        case online(any BrokerClient, Online)
    }

    static let reconnectCap: Int64 = 30 * 1000
    /// Milliseconds a publish may wait for the broker's answer (with no other answer meanwhile)
    /// before the connection counts as stalled and moves on: a cluster's node that lost its
    /// quorum keeps the connection open and answers nothing.
    static let answerWait: Int64 = 5000
    /// Milliseconds before the next address is tried when one fails, until every address failed
    /// once in a row (then the backoff applies).
    static let nextAddressDelay: Int64 = 200
    /// The longest wait between rounds of a list's addresses: a cluster whose nodes all refuse
    /// is electing new leaders after a node's death, for seconds, not minutes.
    static let listReconnectCap: Int64 = 4000
    /// Milliseconds a connecting host waits for its probe to come back through its own inbox.
    static let probeMilliseconds: Int64 = 2000
    /// The same under MQTT 3.1.1: a NATS cluster's first delivery to a new session goes through
    /// JetStream consumers it makes then, which takes seconds.
    static let probeMilliseconds311: Int64 = 10_000
    /// The longest a connecting host waits for the retained fleet configuration after subscribing.
    static let fleetWait: Int64 = 1000

    let settings: HostConfig.Transport
    let user: String
    /// This device's login at the broker (its client id too): the user for its first device.
    var login: String { settings.login ?? user }
    /// This device's name (`nil`: the user's first device) and the topic only it reads, where
    /// the user's other devices write to it alone (``Siblings/topic(of:user:)``).
    let device: String?
    let deviceTopic: String
    /// Where this device's presence record is retained: the user's own inbox topic for its first
    /// device (as before devices), below it for another (`imhost/u/alice/from/alice/phone`), so a
    /// device's record speaks for its own session only and another device of the user never
    /// takes it for a host that took its session.
    var presenceTopic: String {
        (device.map { Topic.device(user: user, device: $0) } ?? Topic.inbox(to: user, from: user)).name
    }
    private let payloadLimit: Int
    private let photoLimit: Int
    let clock: () -> Int64
    private let makeClient: MakeBrokerClient
    let notices: CourierLedger

    var state = State.offline(.notConnectedYet)
    /// Whether the user wants to be online (`/online`, `/offline`).
    var wantsOnline = true
    /// Whether this login connected before, from this data folder: a refusal of its password
    /// then means the device was removed, not that host.json is wrong.
    var knownLogin = false
    /// Whether a failed attempt is said and tried again later (a chat), or ends the connection
    /// unsaid, left in ``failedAttempt`` for a caller that tries once (`imhost sync`).
    var retries = true
    /// The last attempt to connect that failed, until one succeeds.
    private(set) var failedAttempt: Courier.AttemptFailure?
    private var reconnectAt: Int64 = 0
    var reconnectDelay: Int64 = 1000
    /// Which of ``HostConfig/Transport/addresses`` is tried now, and where the present run of
    /// failures began: once every address failed in a row, the next attempt waits the backoff.
    private var addressIndex = 0
    var failuresBegan: Int?
    /// The MQTT spoken: host.json's, or (`auto`) 5 until a broker says it does not speak it.
    private(set) var version: MQTTVersion
    /// Whether the inbox's refused subscription was said, since one was last granted.
    private var saidInboxRefused = false
    /// Since when the oldest unanswered publish has waited with no answer from the broker.
    private var waitingSince: Int64?
    /// What was said of the last outage, so a reconnect loop says it once.
    private var saidOutage: OfflineReason?
    /// Whether the connection went since it was last made, said or not: the next is made "again".
    private var wentSinceConnected = false
    /// Whether what the broker retains of the fleet configuration has come, or will not: it
    /// came, the probe came back after it would have, ``fleetWait`` passed after subscribing, or
    /// the connection failed (the cached one applies). Once true, it stays.
    var fleetSettled = false
    /// Whether this host holds the user's session, or another host of the user took it.
    var claim: SessionClaim
    /// Whether another host of the user took the session from this one, and it stays offline
    /// until the user says `/online`.
    var connectedElsewhere = false
    /// Whether this host's presence record stays when it leaves (`imhost sync --take`): the host
    /// it took the session from stays offline until its own `/online`, however soon this one is
    /// done. Otherwise a host that leaves clears its record.
    var keepsPresence = false
    /// What each publish the broker has yet to answer was.
    var publishing: [Int32: Publish] = [:]
    /// Told when the connection went or was made anew: the other parts forget what they had in
    /// flight on it.
    var onReset: () -> Void = {}
    /// What this host reports on its status topic (and in its will); a change is reported at once.
    var fleetReport = FleetReport() {
        didSet { if fleetReport != oldValue, isOnline { reportFleetStatus() } }
    }

    init(settings: HostConfig.Transport, user: String, payloadLimit: Int, photoLimit: Int, clock: @escaping () -> Int64,
         makeClient: @escaping MakeBrokerClient, notices: CourierLedger, host: String? = nil) {
        claim = SessionClaim(connectionID: "c" + GlobalID.make(at: Clock.now()), host: host)
        self.settings = settings
        self.user = user
        self.payloadLimit = payloadLimit
        self.photoLimit = photoLimit
        self.clock = clock
        self.makeClient = makeClient
        self.notices = notices
        version = settings.protocolChoice == .v311 ? .v311 : .v5
        let login = settings.login ?? user
        device = DynamicSecurity.parse(login: login)?.device
        deviceTopic = Siblings.topic(of: login, user: user)
    }

    // MARK: What it knows

    var status: Courier.Status {
        switch state {
        case .offline(let why): .offline(why)
        case .connecting: .connecting
        case .online: .online
        }
    }

    var isOnline: Bool { if case .online = state { true } else { false } }

    var client: (any BrokerClient)? {
        switch state {
        case .offline: nil
        case .connecting(let client), .online(let client, _): client
        }
    }

    var online: Online? { if case .online(_, let online) = state { online } else { nil } }

    /// The broker address connected to now, or tried next.
    var address: HostConfig.Transport.Address { settings.addresses[addressIndex] }

    /// The probe came back since the connection was made: the broker has delivered everything
    /// that waited for this user before it.
    var inboxConfirmed: Bool { online?.probe == .back }
    /// Whether what is due may be sent: the inbox is subscribed (its answers can come back) and
    /// this host knows it holds the session.
    var canSend: Bool { online?.inbox == .granted && claim.settled }
    /// Whether this host knows it holds the session: arrivals are stored (before, they are held).
    var holdsSession: Bool { claim.settled }
    /// Publishes the broker has not answered yet.
    var unanswered: Int { publishing.count }
    var readable: [Int32] { client?.readable ?? [] }
    var writable: [Int32] { client?.writable ?? [] }

    /// The soonest this connection has something to do, at most a second from `now`.
    func nextWake(now: Int64) -> Int64 {
        var next = now + 1000
        switch state {
        case .offline: if wantsOnline { next = min(next, reconnectAt) }
        case .connecting: break
        case .online(_, let online):
            if case .out(_, let deadline) = online.probe { next = min(next, deadline) }
            if !fleetSettled, let at = online.fleet?.grantedAt { next = min(next, at + Self.fleetWait) }
            if let since = waitingSince { next = min(next, since + Self.answerWait + 1) }
        }
        return next
    }

    /// Changes what an online connection knows.
    func update(_ change: (inout Online) -> Void) {
        guard case .online(let client, var online) = state else { return }
        change(&online)
        state = .online(client, online)
    }

    // MARK: The loop

    /// Connects when it is time, runs the client, and hands back what is for the other parts.
    func service(now: Int64) -> [Happening] {
        if case .offline = state, wantsOnline, now >= reconnectAt { connect(now: now) }
        // A broker (a frozen node) that took the connection and does not answer its CONNECT:
        // the next address. (Still connecting on its thread: that ends on its own.)
        if case .connecting(let client) = state, client.awaitingAnswer, let since = waitingSince, now - since > Self.answerWait {
            client.disconnect()
            waitingSince = nil
            attemptFailed(.unreachable(address: address, .network("no answer within \(Self.answerWait / 1000) s"), retrying: false), transient: true, now: now)
            return []
        }
        guard let client else { return [] }
        var happenings: [Happening] = []
        for event in client.service() { handle(event, now: now, into: &happenings) }
        return happenings
    }

    /// What the client writes until ``releaseWrites()`` leaves together (``BrokerClient/holdWrites()``).
    func holdWrites() { client?.holdWrites() }

    /// Sends what was held.
    func releaseWrites() { client?.releaseWrites() }

    /// What an online connection checks as time passes: its probe's deadline, the fleet wait.
    func checkTimers(now: Int64) {
        guard let online else { return }
        // The broker answers nothing: what waits for an answer goes again, through the next
        // address (the other parts send again what the reset made them forget).
        if let since = waitingSince, now - since > Self.answerWait {
            client?.disconnect()
            outage(.lost("the broker at \(address) answered nothing for \(Self.answerWait / 1000) s"), now: now)
            return
        }
        if case .out(_, let deadline) = online.probe, now > deadline {
            update { $0.probe = .lost }
            if claim.noRecordCame() { publishPresence() }
            notices.say(.acl(.probeLost))
        }
        if !fleetSettled, let at = online.fleet?.grantedAt, now >= at + Self.fleetWait { fleetSettled = true }
    }

    /// Publishes at QoS 1 as `what`: false when the connection cannot take it now.
    @discardableResult
    func publish(topic: String, payload: [UInt8], retain: Bool = false, as what: Publish) -> Bool {
        send(topic: topic, payload: payload, retain: retain, as: what) == .queued
    }

    /// Publishes at QoS 1 as `what`, unless the packet is larger than the broker said it takes:
    /// the broker would end the connection over it (and the host would send it again at every
    /// reconnect).
    func send(topic: String, payload: [UInt8], retain: Bool = false, as what: Publish) -> Sent {
        guard case .online(let client, let online) = state else { return .notNow }
        let bytes = publishPacketSize(topic: topic.utf8.count, payload: payload.count)
        if let limit = online.packetLimit, bytes > limit { return .tooLarge(bytes: bytes, limit: limit) }
        switch client.publish(topic: topic, payload: payload, retain: retain) {
        case .success(let id):
            waited(id, as: what, now: clock())
            return .queued
        case .failure(let failure):
            return failure.tooLarge ? .tooLarge(bytes: bytes, limit: online.packetLimit ?? client.brokerMaximumPacket) : .notNow
        }
    }

    /// Connects (`online`) or, having said goodbye, disconnects (keeping the session on the broker).
    func setOnline(_ online: Bool) {
        wantsOnline = online
        if online {
            reconnectAt = 0
            reconnectDelay = 1000
            failuresBegan = nil
            // Asked for: this host takes the session, from another host of the user if need be.
            claim.claimNext()
            connectedElsewhere = false
        } else {
            lostConnection(.asked)
        }
    }

    /// Notes a publish the broker has yet to answer.
    func waited(_ id: Int32, as what: Publish, now: Int64) {
        if waitingSince == nil { waitingSince = now }
        publishing[id] = what
    }

    /// The broker answered publish `id`: what it was.
    func takeAnswer(_ id: Int32, now: Int64) -> Publish? {
        let what = publishing.removeValue(forKey: id)
        // Still waiting: for other publishes, or for the inbox's subscription.
        waitingSince = publishing.isEmpty && online?.inbox.id == nil ? nil : now
        return what
    }

    // MARK: Connecting

    private func connect(now: Int64) {
        let password: String
        do throws(FileSystem.Failure) {
            password = try settings.password()
        } catch {
            attemptFailed(.passwordUnreadable(file: settings.passwordFile, error: "\(error)"), transient: false, now: now, delay: Self.reconnectCap)
            return
        }
        var clientSettings = BrokerClientSettings(address: address, user: login, password: password,
                                                  maximumPacket: UInt32(Self.maximumPacket(payloadLimit: payloadLimit, photoLimit: photoLimit)))
        clientSettings.version = version
        if let ca = settings.caFile { clientSettings.tls = .init(ca: ca, cert: settings.certFile, key: settings.keyFile) }
        // A host that goes without a goodbye is marked gone on its status topic.
        clientSettings.will = (Topic.fleetStatus(user: user).name, fleetReport.document(state: .gone, at: clock()))
        do throws(BrokerClientFailure) {
            let made = try makeClient(clientSettings)
            state = .connecting(made)
            // The clock the CONNECT's answer is waited on (``answerWait``).
            waitingSince = now
            made.connect()
        } catch {
            attemptFailed(.clientNotMade(error.description), transient: false, now: now, delay: Self.reconnectCap)
        }
    }

    /// The largest packet this host takes, said to the broker at connect (MQTT 5 Maximum Packet
    /// Size), so it never sends a larger one: this host's own largest envelope and a topic, or a
    /// fleet configuration if that is larger.
    static func maximumPacket(payloadLimit: Int, photoLimit: Int) -> Int {
        max(Envelope.packetLimit(payloadLimit: payloadLimit, photoLimit: photoLimit), FleetConfig.byteLimit + Envelope.topicRoom)
    }

    /// An attempt to connect failed: kept for the caller, and an outage (said, and tried again
    /// later; "retrying" when that may work as it is) unless this connection does not retry.
    private func attemptFailed(_ reason: OfflineReason, transient: Bool, now: Int64, delay: Int64? = nil) {
        // Another address is still to be tried in this run of failures: it is, soon, and only
        // the run's last failure is said (or ends a connection that does not retry). Once every
        // address failed, the backoff (not another round at once).
        let moves = delay == nil
        if moves, nextAddress(now: now) {
            lostConnection(reason)
            fleetSettled = true
            return
        }
        failedAttempt = Courier.AttemptFailure(reason: reason, transient: transient)
        if !retries { wantsOnline = false }
        var said = reason
        if retries, transient, case .unreachable(let address, let why, _) = reason { said = .unreachable(address: address, why, retrying: true) }
        outage(said, now: now, delay: moves ? reconnectDelay : delay, aloud: retries)
    }

    /// The connection failed or was lost: said once for the outage (when `aloud`), and tried
    /// again later.
    private func outage(_ why: OfflineReason, now: Int64, delay: Int64? = nil, aloud: Bool = true) {
        lostConnection(why)
        wentSinceConnected = true
        if aloud, saidOutage != why {
            saidOutage = why
            notices.say(.outage(why))
        }
        // The broker cannot be reached: the cached fleet configuration is what applies.
        fleetSettled = true
        if delay == nil, nextAddress(now: now) { return }
        let wait = delay ?? reconnectDelay
        reconnectAt = now + wait + Int64.random(in: 0...(wait / 4))
        reconnectDelay = min(settings.addresses.count > 1 ? Self.listReconnectCap : Self.reconnectCap, reconnectDelay * 2)
    }

    /// Moves on to the next of a list's addresses, to be tried soon, unless every address
    /// failed in a row since the last connection (then false: the backoff applies).
    private func nextAddress(now: Int64) -> Bool {
        guard settings.addresses.count > 1 else { return false }
        let began = failuresBegan ?? addressIndex
        failuresBegan = began
        addressIndex = (addressIndex + 1) % settings.addresses.count
        guard addressIndex != began else { return false }
        reconnectAt = now + Self.nextAddressDelay + Int64.random(in: 0...(Self.nextAddressDelay / 2))
        return true
    }

    /// Offline, for `why`: everything in flight on the connection is forgotten, here and in the
    /// other parts.
    func lostConnection(_ why: OfflineReason) {
        state = .offline(why)
        publishing = [:]
        waitingSince = nil
        onReset()
    }

    private func handle(_ event: BrokerEvent, now: Int64, into happenings: inout [Happening]) {
        switch event {
        case .connected:
            guard case .connecting(let client) = state else { return }
            failedAttempt = nil
            // The backoff and the run of failed addresses start again once the inbox works
            // (``probeCame(_:)``), not here: a broker that takes the connection and then drops it,
            // or refuses the inbox, is not tried again at once.
            if !saidInboxRefused { notices.say(.connected(address: address, user: login, again: saidOutage != nil || wentSinceConnected)) }
            saidOutage = nil
            wentSinceConnected = false
            publishing = [:]
            waitingSince = nil
            onReset()
            state = .online(client, Online(packetLimit: client.brokerMaximumPacket))
            happenings.append(.connected)
            subscribe(client)
        case .subscribed(let id, let answer):
            subscribed(id, answer, now: now)
        case .refused(let refusal) where refusal.wrongVersion && version == .v5 && settings.protocolChoice == .auto:
            // A broker that speaks only MQTT 3.1.1 (a NATS cluster): spoken from now on, at once.
            version = .v311
            state = .offline(.notConnectedYet)
            reconnectAt = now
        case .refused(let refusal) where refusal.unavailable:
            // A cluster's node without its quorum: the next node, as for a network failure.
            attemptFailed(.refused(address: address, user: login, refusal, passwordFile: settings.passwordFile), transient: true, now: now)
        case .refused(let refusal) where refusal.credentials && knownLogin && DynamicSecurity.parse(login: login)?.device != nil:
            // A device that connected before is refused its login: it was removed from the
            // user's devices (or its password changed), and nothing more comes to it.
            attemptFailed(.deviceRemoved(address: address, login: login), transient: false, now: now, delay: Self.reconnectCap)
        case .refused(let refusal):
            attemptFailed(.refused(address: address, user: login, refusal, passwordFile: settings.passwordFile), transient: false,
                          now: now, delay: Self.reconnectCap)
        case .unreachable(let why):
            // A certificate or handshake that fails now fails again until someone fixes it.
            let transient = if case .network = why { true } else { false }
            attemptFailed(.unreachable(address: address, why, retrying: false), transient: transient, now: now)
        case .disconnected(.takenOver):
            // Another connection of this user (another device, or another data folder) took the
            // session. Fighting for it would throw each other off.
            wantsOnline = false
            lostConnection(.takenOver(user: user))
            notices.say(.takenOver(user: user))
        case .disconnected(.lost(let reason)):
            outage(.lost(reason), now: now)
        case .disconnected(.administrative) where DynamicSecurity.parse(login: login)?.device != nil:
            // imhost broker remove-device ends the device's connection so: it is tried again
            // now and then (an operator may add the device again), and said once.
            outage(.deviceRemoved(address: address, login: login), now: now, delay: Self.reconnectCap)
        case .disconnected(.administrative):
            outage(.lost("Administrative action"), now: now)
        case .message(let topic, let payload, let retained) where topic == Topic.fleetConfig.name:
            // What the broker retains is the newest; older ones queued in the session while this
            // host was away come before it and do not end the wait.
            if retained { fleetSettled = true }
            happenings.append(.fleet(payload))
        case .message(let topic, let payload, let retained):
            happenings.append(.message(topic: topic, payload: payload, retained: retained))
        case .published(let id, let answer):
            guard let what = takeAnswer(id, now: now) else { return }
            switch what {
            case .answer: break
            case .probe:
                if case .refused = answer {
                    update { $0.probe = .notSent }
                    notices.say(.acl(.ownInboxRefused(user: user)))
                }
            case .message, .receipts: happenings.append(.answered(what, answer))
            }
        }
    }

    /// Subscribes a new connection: the inbox, the presence record, the fleet configuration;
    /// and claims the session and reports the host's status.
    private func subscribe(_ client: any BrokerClient) {
        if claim.connected() { publishPresence() }
        switch client.subscribe(Topic.Filter.inbox(of: user).name, retained: false) {
        case .success(let id):
            update { $0.inbox = .asked(id) }
            // Its answer is waited for as a publish's is: a node that answers nothing is left.
            if waitingSince == nil { waitingSince = clock() }
        case .failure(let failure): notices.say(.inboxNotSubscribed(failure.description))
        }
        // The presence record the broker retains there (the inbox's subscription takes no
        // retained message): before the probe, whose SUBACK comes later.
        if case .success(let id) = client.subscribe(presenceTopic, retained: true) { update { $0.presence = id } }
        // What the user's other devices say to this one alone: the first device's is below the
        // presence record's topic (another device's is that topic).
        if device == nil { _ = client.subscribe(deviceTopic, retained: false) }
        // The fleet configuration, with what the broker retains of it. Subscribed after the
        // inbox, so the probe (sent when the inbox is subscribed) comes back after it.
        if case .success(let id) = client.subscribe(Topic.fleetConfig.name, retained: true) {
            update { $0.fleet = (id, nil) }
        } else {
            fleetSettled = true
        }
        reportFleetStatus()
    }

    private func subscribed(_ id: Int32, _ answer: BrokerAnswer, now: Int64) {
        guard let online else { return }
        if id == online.fleet?.id {
            update { $0.fleet?.grantedAt = now }
            if case .refused(let reason) = answer {
                fleetSettled = true
                notices.say(.acl(.fleetRefused(reason)))
            }
        } else if id == online.inbox.id {
            waitingSince = publishing.isEmpty ? nil : now
            guard answer == .taken else {
                // Said once until an inbox is granted. Nothing can be sent or received without
                // it, and a cluster's node refuses it while its JetStream waits for the others: the
                // connection goes, and the next address is tried (then again, on the backoff).
                if case .refused(let reason) = answer, !saidInboxRefused {
                    saidInboxRefused = true
                    notices.say(.acl(.inboxRefused(reason)))
                }
                client?.disconnect()
                outage(.lost("the inbox's subscription was refused"), now: now, aloud: false)
                return
            }
            saidInboxRefused = false
            update { $0.inbox = .granted }
            sendProbe(now: now)
        }
    }
}

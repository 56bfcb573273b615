/// One connection to a broker, whoever holds it: the user's (the ``Courier``'s, through
/// ``BrokerConnection``), the operator's fleet commands (``FleetOperator``), `imhost broker`'s
/// control of a running broker. Each connects, waits and fails over the same way:
/// - it tries the broker's addresses in turn (``Failover``): one that cannot be reached, refuses
///   the connection as not serving, answers neither a CONNECT, a publish nor an awaited
///   subscription for ``answerWait``, or refuses the inbox's subscription, gives way to the next;
///   once every address failed in a row, the next round waits a backoff;
/// - it speaks MQTT 5 until a broker says it speaks only 3.1.1 (host.json's `protocol: auto`);
/// - it subscribes its inbox first (``Endpoint/inbox``), and counts nothing sent before the
///   broker granted it;
/// - it says an outage once, or nothing, and tries again as long as its ``Persistence`` says.
///
/// It never blocks: its owner waits on ``readable`` and ``writable`` (at most until
/// ``nextWake(now:)``), then calls ``service(now:)`` and ``checkStall(now:)``.
///
/// What the connection is, is one value, ``state``, whose cases carry what each knows.
final class BrokerLink {
    enum State {
        /// Not connected: why, and when it is tried next (`nil`: not until ``setOnline(_:)``).
        case offline(OfflineReason, retryAt: Int64?)
        /// The CONNECT went at `since`; the broker's answer is waited for.
        case connecting(any BrokerClient, since: Int64)
        /// Connected, and what it knows so far.
        case online(any BrokerClient, Online)
    }

    /// Milliseconds the broker may leave what waits for its answer (a CONNECT, a publish, the
    /// inbox's subscription) unanswered, with no other answer meanwhile, before the connection
    /// counts as stalled and moves on: a cluster's node that lost its quorum, or a frozen one,
    /// keeps the connection open and answers nothing.
    static let answerWait: Int64 = 5000

    let endpoint: Endpoint
    /// How long it keeps trying: a holder that tries once (`imhost sync`) says so after making it.
    var persistence: Persistence
    let clock: () -> Int64
    private let makeClient: MakeBrokerClient
    let notices: CourierLedger

    private(set) var state = State.offline(.notConnectedYet, retryAt: 0)
    /// Which address and MQTT the next attempt takes, and the backoff.
    private var failover: Failover
    /// What was said, so a reconnect loop says an outage and a refused inbox once.
    private var said = Said()
    /// The last attempt to connect that failed, until one succeeds.
    private(set) var failedAttempt: Courier.AttemptFailure?
    /// Whether this login connected before, from this data folder: a refusal of its password
    /// then means the device was removed, not that host.json is wrong.
    var knownLogin = false
    /// Told when the connection went or was made anew (`failed`: it failed, rather than being
    /// left or made): what was in flight on it is forgotten.
    var onReset: (_ failed: Bool) -> Void = { _ in }
    /// What the broker publishes (retained, QoS 1) for this connection when it ends without a
    /// goodbye, as it is when the connection is made.
    var will: () -> (topic: String, payload: [UInt8])? = { nil }

    private struct Said {
        /// The last outage said.
        var outage: OfflineReason?
        /// Whether the connection went since it was last made, said or not: the next is made "again".
        var went = false
        /// Whether the inbox's refused subscription was said, since one was last granted.
        var inboxRefused = false
    }

    init(endpoint: Endpoint, persistence: Persistence, clock: @escaping () -> Int64, makeClient: @escaping MakeBrokerClient, notices: CourierLedger) {
        self.endpoint = endpoint
        self.persistence = persistence
        self.clock = clock
        self.makeClient = makeClient
        self.notices = notices
        failover = Failover(count: endpoint.addresses.count, version: endpoint.protocolChoice == .v311 ? .v311 : .v5)
    }

    // MARK: What it knows

    var status: Courier.Status {
        switch state {
        case .offline(let why, _): .offline(why)
        case .connecting: .connecting
        case .online: .online
        }
    }

    /// Whether it connects, or is to: not offline for good (until ``setOnline(_:)``).
    var wantsOnline: Bool { if case .offline(_, nil) = state { false } else { true } }

    var isOnline: Bool { if case .online = state { true } else { false } }

    var client: (any BrokerClient)? {
        switch state {
        case .offline: nil
        case .connecting(let client, _), .online(let client, _): client
        }
    }

    var online: Online? { if case .online(_, let online) = state { online } else { nil } }

    /// The broker address connected to now, or tried next.
    var address: HostConfig.Transport.Address { endpoint.addresses[failover.index] }

    /// The MQTT spoken: host.json's, or (`auto`) 5 until a broker says it does not speak it.
    var version: MQTTVersion { failover.version }

    /// Whether the inbox is granted: what is sent now gets its answers.
    var inboxGranted: Bool { online?.inbox == .granted }

    /// Publishes the broker has not answered yet.
    var unanswered: Int { online?.publishing.count ?? 0 }
    var readable: [Int32] { client?.readable ?? [] }
    var writable: [Int32] { client?.writable ?? [] }

    /// The soonest this connection has something to do, at most a second from `now`.
    func nextWake(now: Int64) -> Int64 {
        var next = now + 1000
        switch state {
        case .offline(_, let at?): next = min(next, at)
        case .offline, .connecting: break
        case .online(_, let online):
            if let since = online.waitingSince { next = min(next, since + Self.answerWait + 1) }
        }
        return next
    }

    /// Changes what an online connection knows.
    private func update(_ change: (inout Online) -> Void) {
        guard case .online(let client, var online) = state else { return }
        change(&online)
        state = .online(client, online)
    }

    // MARK: The loop

    /// Connects when it is time, runs the client, and hands back what is for its owner.
    func service(now: Int64) -> [Event] {
        if case .offline(_, let at?) = state, now >= at { connect(now: now) }
        // A broker (a frozen node) that took the connection and does not answer its CONNECT:
        // the next address. (Still connecting on its thread: that ends on its own.)
        if case .connecting(let client, let since) = state, client.awaitingAnswer, now - since > Self.answerWait {
            client.disconnect()
            attemptFailed(.unreachable(address: address, .network("no answer within \(Self.answerWait / 1000) s"), retrying: false), transient: true, now: now)
            return []
        }
        guard let client else { return [] }
        var events: [Event] = []
        for event in client.service() { handle(event, now: now, into: &events) }
        return events
    }

    /// The broker answers nothing: what waits for an answer goes again, through the next
    /// address (the owner sends again what the reset made it forget). Returns whether the
    /// connection went so.
    @discardableResult
    func checkStall(now: Int64) -> Bool {
        guard case .online(let client, let online) = state, let since = online.waitingSince, now - since > Self.answerWait else { return false }
        client.disconnect()
        outage(.lost("the broker at \(address) answered nothing for \(Self.answerWait / 1000) s"), now: now)
        return true
    }

    /// What the client writes until ``releaseWrites()`` leaves together (``BrokerClient/holdWrites()``).
    func holdWrites() { client?.holdWrites() }

    /// Sends what was held.
    func releaseWrites() { client?.releaseWrites() }

    // MARK: Subscribing and publishing

    /// Subscribes the inbox of a connection just made. False when it could not be asked for.
    @discardableResult
    func subscribeInbox() -> Bool {
        guard let filter = endpoint.inbox, case .online(let client, _) = state else { return false }
        switch client.subscribe(filter, retained: false) {
        case .success(let id):
            // Its answer is waited for as a publish's is: a node that answers nothing is left.
            let now = clock()
            update {
                $0.inbox = .asked(id)
                if $0.waitingSince == nil { $0.waitingSince = now }
            }
            return true
        case .failure(let failure):
            notices.say(.inboxNotSubscribed(failure.description))
            return false
        }
    }

    /// Subscribes at QoS `qos` (`retained`: with what the filter retains); its id, or `nil` when
    /// the connection cannot take it now. `awaited`: its answer is waited for as a publish's is.
    func subscribe(_ filter: String, qos: Int32 = 1, retained: Bool, awaited: Bool = false) -> Int32? {
        guard case .online(let client, _) = state, case .success(let id) = client.subscribe(filter, qos: qos, retained: retained) else { return nil }
        if awaited {
            let now = clock()
            update {
                $0.awaited.insert(id)
                if $0.waitingSince == nil { $0.waitingSince = now }
            }
        }
        return id
    }

    /// Publishes at QoS 0: `false` when offline, or the client would not take it.
    func sendOnce(topic: String, payload: [UInt8]) -> Bool {
        guard case .online(let client, _) = state else { return false }
        return client.publishOnce(topic: topic, payload: payload)
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
            return .queued(id)
        case .failure(let failure):
            return failure.tooLarge ? .tooLarge(bytes: bytes, limit: online.packetLimit ?? client.brokerMaximumPacket) : .notNow
        }
    }

    /// Notes a publish the broker has yet to answer.
    func waited(_ id: Int32, as what: Publish, now: Int64) {
        update {
            if $0.waitingSince == nil { $0.waitingSince = now }
            $0.publishing[id] = what
        }
    }

    /// The broker answered publish `id`: what it was.
    func takeAnswer(_ id: Int32, now: Int64) -> Publish? {
        var what: Publish?
        update {
            what = $0.publishing.removeValue(forKey: id)
            // Still waiting: for other publishes, or for the inbox's subscription.
            $0.waitingSince = $0.awaitsAnswer ? now : nil
        }
        return what
    }

    // MARK: Online, offline

    /// Connects (`online`: at once, whoever holds the session, the backoff started again) or
    /// stays offline as asked (the owner has said goodbye).
    func setOnline(_ online: Bool) {
        guard online else { return stop(.asked) }
        failover.restart()
        if case .offline(let why, _) = state { state = .offline(why, retryAt: 0) }
    }

    /// Offline for `why` until ``setOnline(_:)``: what was in flight is forgotten.
    func stop(_ why: OfflineReason) {
        state = .offline(why, retryAt: nil)
        onReset(false)
    }

    /// The connection works end to end: the backoff and the run of failed addresses restart.
    func confirmed() { failover.restart() }

    /// Leaves the broker at hand for the next address, unsaid (a command whose answer did not
    /// come, a node that refused what its owner needs).
    func moveOn(_ why: OfflineReason, now: Int64) {
        client?.disconnect()
        outage(why, now: now, aloud: false)
    }

    // MARK: Connecting

    private func connect(now: Int64) {
        let password: String
        switch endpoint.password {
        case .given(let given):
            password = given
        case .file(let file):
            do throws(FileSystem.Failure) {
                password = try HostConfig.Transport.password(in: file)
            } catch {
                attemptFailed(.passwordUnreadable(file: file, error: "\(error)"), transient: false, now: now, delay: Failover.cap)
                return
            }
        }
        var settings = BrokerClientSettings(address: address, user: endpoint.login, password: password, maximumPacket: UInt32(endpoint.maximumPacket))
        settings.version = failover.version
        settings.tls = endpoint.tls
        settings.keepsSession = endpoint.keepsSession
        settings.will = will()
        do throws(BrokerClientFailure) {
            let made = try makeClient(settings)
            state = .connecting(made, since: now)
            made.connect()
        } catch {
            attemptFailed(.clientNotMade(error.description), transient: false, now: now, delay: Failover.cap)
        }
    }

    /// An attempt to connect failed: kept for the caller, and an outage, said (``Persistence/always``:
    /// "retrying" when that may work as it is) or not; it ends the connection when its
    /// persistence says so.
    private func attemptFailed(_ reason: OfflineReason, transient: Bool, now: Int64, delay: Int64? = nil) {
        // Another address is still to be tried in this run of failures: it is, soon, and only
        // the run's last failure is said (or ends a connection that does not retry). Once every
        // address failed, the backoff (not another round at once).
        let moves = delay == nil
        if moves, let at = failover.nextAddress(now: now) {
            lostConnection(reason, retryAt: at, failed: true)
            return
        }
        failedAttempt = Courier.AttemptFailure(reason: reason, transient: transient)
        let ends = switch persistence {
        case .always: false
        case .oneRound: true
        case .until(let deadline): !transient || now >= deadline
        }
        var said = reason
        if persistence == .always, transient, case .unreachable(let address, let why, _) = reason { said = .unreachable(address: address, why, retrying: true) }
        outage(said, now: now, delay: moves ? failover.delay : delay, aloud: persistence == .always, ends: ends)
    }

    /// The connection failed or was lost: said once for the outage (when `aloud`), and tried
    /// again later (unless it `ends`): at the next address, or after `delay` (the backoff when
    /// `nil` and every address failed).
    private func outage(_ why: OfflineReason, now: Int64, delay: Int64? = nil, aloud: Bool = true, ends: Bool = false) {
        let at = delay == nil ? failover.nextAddress(now: now) ?? failover.backoff(now: now) : failover.backoff(now: now, wait: delay)
        lostConnection(why, retryAt: ends ? nil : at, failed: true)
        said.went = true
        if aloud, said.outage != why {
            said.outage = why
            notices.say(.outage(why))
        }
    }

    /// Offline, for `why`: everything in flight on the connection is forgotten, here and by the
    /// owner.
    private func lostConnection(_ why: OfflineReason, retryAt: Int64?, failed: Bool) {
        state = .offline(why, retryAt: retryAt)
        onReset(failed)
    }

    private func handle(_ event: BrokerEvent, now: Int64, into events: inout [Event]) {
        let login = endpoint.login
        switch event {
        case .connected:
            guard case .connecting(let client, _) = state else { return }
            failedAttempt = nil
            // The backoff and the run of failed addresses start again once the connection works
            // end to end (``confirmed()``), not here: a broker that takes the connection and then
            // drops it, or refuses the inbox, is not tried again at once.
            if !said.inboxRefused { notices.say(.connected(address: address, user: login, again: said.outage != nil || said.went)) }
            said.outage = nil
            said.went = false
            onReset(false)
            state = .online(client, Online(packetLimit: client.brokerMaximumPacket))
            events.append(.connected)
        case .subscribed(let id, let answer):
            subscribed(id, answer, now: now, into: &events)
        case .refused(let refusal) where refusal.wrongVersion && failover.version == .v5 && endpoint.protocolChoice == .auto:
            // A broker that speaks only MQTT 3.1.1 (a NATS cluster): spoken from now on, at once.
            failover.version = .v311
            state = .offline(.notConnectedYet, retryAt: now)
        case .refused(let refusal) where refusal.unavailable:
            // A cluster's node without its quorum: the next node, as for a network failure.
            attemptFailed(.refused(address: address, user: login, refusal, passwordFile: endpoint.passwordFile), transient: true, now: now)
        case .refused(let refusal) where refusal.credentials && knownLogin && DynamicSecurity.parse(login: login)?.device != nil:
            // A device that connected before is refused its login: it was removed from the
            // user's devices (or its password changed), and nothing more comes to it.
            attemptFailed(.deviceRemoved(address: address, login: login), transient: false, now: now, delay: Failover.cap)
        case .refused(let refusal):
            attemptFailed(.refused(address: address, user: login, refusal, passwordFile: endpoint.passwordFile), transient: false, now: now, delay: Failover.cap)
        case .unreachable(let why):
            // A certificate or handshake that fails now fails again until someone fixes it.
            let transient = if case .network = why { true } else { false }
            attemptFailed(.unreachable(address: address, why, retrying: false), transient: transient, now: now)
        case .disconnected(.takenOver):
            // Another connection of this user (another device, or another data folder) took the
            // session. Fighting for it would throw each other off.
            stop(.takenOver(user: endpoint.user))
            notices.say(.takenOver(user: endpoint.user))
        case .disconnected(.lost(let reason)):
            outage(.lost(reason), now: now)
        case .disconnected(.administrative) where DynamicSecurity.parse(login: login)?.device != nil:
            // imhost broker remove-device ends the device's connection so: it is tried again
            // now and then (an operator may add the device again), and said once.
            outage(.deviceRemoved(address: address, login: login), now: now, delay: Failover.cap)
        case .disconnected(.administrative):
            outage(.lost("Administrative action"), now: now)
        case .message(let topic, let payload, let retained):
            events.append(.message(topic: topic, payload: payload, retained: retained))
        case .published(let id, let answer):
            guard let what = takeAnswer(id, now: now) else { return }
            if case .answer = what { return }
            events.append(.answered(id: id, what, answer))
        }
    }

    private func subscribed(_ id: Int32, _ answer: BrokerAnswer, now: Int64, into events: inout [Event]) {
        guard case .online(let client, let online) = state else { return }
        guard id == online.inbox.id else {
            if online.awaited.contains(id) {
                update {
                    $0.awaited.remove(id)
                    $0.waitingSince = $0.awaitsAnswer ? now : nil
                }
            }
            events.append(.subscribed(id: id, answer))
            return
        }
        guard answer == .taken else {
            // Said once until an inbox is granted. Nothing can be sent or received without it,
            // and a cluster's node refuses it while its JetStream waits for the others: the
            // connection goes, and the next address is tried (then again, on the backoff).
            if case .refused(let reason) = answer, !said.inboxRefused {
                said.inboxRefused = true
                notices.say(.acl(.inboxRefused(reason)))
            }
            client.disconnect()
            outage(.lost("the inbox's subscription was refused"), now: now, aloud: false)
            return
        }
        said.inboxRefused = false
        update {
            $0.inbox = .granted
            $0.waitingSince = $0.awaitsAnswer ? now : nil
        }
        events.append(.inboxGranted)
    }
}

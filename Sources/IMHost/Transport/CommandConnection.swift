#if canImport(Glibc)
import Glibc
#endif

/// Why a command's connection did not bring what the command waited for.
public enum ConnectionFailure: Error, Sendable, Equatable {
    /// No connection could be made: the last attempt's reason, as a host's connection gives it.
    case notConnected(OfflineReason)
    /// The broker refused the inbox's subscription, each time it was asked within the wait:
    /// the filter, and the broker's words.
    case inboxRefused(filter: String, reason: String)
    /// The broker at `address` answered nothing within `seconds`: the connection moved on.
    case noAnswer(address: HostConfig.Transport.Address, seconds: Int)
    /// The connection went while the command waited (lost, taken over, ended by the broker): why.
    case went(OfflineReason)
}

/// How a command's connection meets the world: the clock it times itself by (milliseconds), how
/// it makes its client, how it waits for its descriptors. The tests put a broker of their own and
/// a clock they move in their place.
package struct ConnectionRuntime {
    package var clock: () -> Int64
    package var makeClient: MakeBrokerClient
    package var wait: (_ descriptors: [pollfd], _ milliseconds: Int32) -> Void

    package init(clock: @escaping () -> Int64, makeClient: @escaping MakeBrokerClient, wait: @escaping (_ descriptors: [pollfd], _ milliseconds: Int32) -> Void) {
        self.clock = clock
        self.makeClient = makeClient
        self.wait = wait
    }

    /// This machine's clock, libmosquitto's client, poll(2).
    package static var system: ConnectionRuntime {
        ConnectionRuntime(clock: { Clock.now() }, makeClient: { settings throws(BrokerClientFailure) in try MQTTClient(settings) },
                          wait: { MQTTClient.wait(on: $0, milliseconds: $1) })
    }
}

/// A connection driven by a command that waits for its answers: the operator's (``FleetOperator``,
/// `imhost fleet`) and `imhost broker`'s control of a running broker. It is a ``BrokerLink``
/// like a host's, so it connects, waits and fails over as the courier does: the next address
/// after a failure, a broker that answers nothing for ``BrokerLink/answerWait`` left, a refused
/// inbox left, rounds on a backoff as long as its ``BrokerLink/Persistence`` says. A command
/// never keeps a session (each starts clean) and says nothing on the way: what ends a wait that
/// did not get its answer is a ``ConnectionFailure``.
package final class CommandConnection {
    /// What a command's connection brings.
    package enum Event {
        /// The broker answered a subscription.
        case subscribed(id: Int32, BrokerAnswer)
        case message(topic: String, payload: [UInt8], retained: Bool)
        /// The broker answered publish `id`.
        case answered(id: Int32, BrokerAnswer)
    }

    let link: BrokerLink
    private let wait: (_ descriptors: [pollfd], _ milliseconds: Int32) -> Void
    /// Events read and not yet handed to an ``await(_:)``: what came after one wait's answer is
    /// the next wait's.
    private var pending: [Event] = []

    /// A connection as `user` with host.json's `transport`: a cluster's nodes are tried round
    /// after round while none can serve, until ``keepTrying(for:)`` says; one broker once.
    package init(transport: HostConfig.Transport, user: String, maximumPacket: Int, inbox: String, runtime: ConnectionRuntime) {
        let endpoint = BrokerLink.Endpoint(transport: transport, user: user, keepsSession: false, maximumPacket: maximumPacket, inbox: inbox)
        link = BrokerLink(endpoint: endpoint, persistence: transport.addresses.count > 1 ? .until(runtime.clock()) : .oneRound, clock: runtime.clock,
                          makeClient: runtime.makeClient, notices: CourierLedger())
        wait = runtime.wait
    }

    /// A connection to one broker as `login`, its password given (`inbox`: where its answers
    /// come; `nil`: it waits for none).
    package init(address: HostConfig.Transport.Address, login: String, password: String, maximumPacket: Int, inbox: String?, runtime: ConnectionRuntime) {
        let endpoint = BrokerLink.Endpoint(addresses: [address], login: login, password: password, maximumPacket: maximumPacket, inbox: inbox)
        link = BrokerLink(endpoint: endpoint, persistence: .oneRound, clock: runtime.clock, makeClient: runtime.makeClient, notices: CourierLedger())
        wait = runtime.wait
    }

    deinit { leave() }

    /// The broker address connected to now, or tried next.
    package var address: HostConfig.Transport.Address { link.address }

    /// How many addresses it moves along.
    package var addresses: Int { link.endpoint.addresses.count }

    /// A cluster's nodes are tried, round after round, for `milliseconds` from now while none
    /// can serve.
    package func keepTrying(for milliseconds: Int64) {
        if case .until = link.persistence { link.persistence = .until(link.clock() + milliseconds) }
    }

    /// Leaves the broker at hand for the next address (it refused what the command needs).
    package func moveOn() {
        pending = []
        link.moveOn(.lost("the broker at \(link.address) refused what this command needs"), now: link.clock())
    }

    /// Waits until the connection is made and its inbox granted: across the addresses, and
    /// again on a backoff while its persistence lasts; at most ``BrokerLink/answerWait`` twice
    /// on one broker.
    package func ready() throws(ConnectionFailure) {
        let start = link.clock()
        let deadline = if case .until(let until) = link.persistence { max(until, start) + BrokerLink.answerWait } else { start + 2 * BrokerLink.answerWait }
        var refused: String?
        while true {
            let now = link.clock()
            for event in link.service(now: now) {
                switch event {
                case .connected:
                    if link.endpoint.inbox != nil, !link.subscribeInbox() { link.moveOn(.lost("cannot subscribe to the inbox"), now: now) }
                case .inboxGranted:
                    link.confirmed()
                default:
                    pending += Self.command(event)
                }
            }
            for case .notice(.acl(.inboxRefused(let reason))) in link.notices.takeEvents() { refused = reason }
            if link.isOnline, link.endpoint.inbox == nil || link.inboxGranted { return }
            link.checkStall(now: now)
            if case .offline(let why, nil) = link.state { throw link.failedAttempt.map { .notConnected($0.reason) } ?? .went(why) }
            guard now < deadline else {
                if let refused, let filter = link.endpoint.inbox { throw .inboxRefused(filter: filter, reason: refused) }
                throw link.failedAttempt.map { .notConnected($0.reason) } ?? .noAnswer(address: link.address, seconds: Int((deadline - start) / 1000))
            }
            pause(now: now, until: deadline)
        }
    }

    /// Subscribes `filter` (with what it retains), its answer waited for as a publish's is.
    package func subscribe(_ filter: String, retained: Bool) throws(ConnectionFailure) -> Int32 {
        guard let id = link.subscribe(filter, retained: retained, awaited: true) else { throw went() }
        return id
    }

    /// Publishes at QoS 1; the broker's answer comes as `.answered(id:_:)` with the id returned.
    @discardableResult
    package func publish(topic: String, payload: [UInt8], retain: Bool = false) throws(ConnectionFailure) -> Int32 {
        guard case .queued(let id) = link.send(topic: topic, payload: payload, retain: retain, as: .call) else { throw went() }
        return id
    }

    /// Runs the connection until `take` returns something for one of its events, which it
    /// returns. The connection must stay up meanwhile; what it waits for must come within
    /// ``BrokerLink/answerWait`` of the last thing the connection brought, or the broker at hand
    /// is left for the next address.
    package func await<Value>(_ take: (Event) -> Value?) throws(ConnectionFailure) -> Value {
        // With no deadline, a run ends only with a value or a failure.
        while true {
            if let value = try run(until: nil, take) { return value }
        }
    }

    /// Runs the connection until `done` says so after one of its events, or until `deadline`
    /// (the clock's, milliseconds): whether `done` said so. The connection must stay up.
    package func watch(until deadline: Int64, _ done: (Event) -> Bool) throws(ConnectionFailure) -> Bool {
        try run(until: deadline) { done($0) ? true : nil } ?? false
    }

    /// Runs the connection until `take` returns something for one of its events, or until
    /// `deadline` (`nil`: as long as the broker brings something, each within
    /// ``BrokerLink/answerWait``).
    private func run<Value>(until deadline: Int64?, _ take: (Event) -> Value?) throws(ConnectionFailure) -> Value? {
        var answerBy = link.clock() + BrokerLink.answerWait
        while true {
            while !pending.isEmpty {
                if let value = take(pending.removeFirst()) { return value }
                answerBy = link.clock() + BrokerLink.answerWait
            }
            let now = link.clock()
            let address = link.address
            pending = service(now: now)
            if !pending.isEmpty { continue }
            if link.checkStall(now: now) { throw noAnswer(at: address) }
            guard link.isOnline else { throw went() }
            if let deadline {
                if now >= deadline { return nil }
            } else if now >= answerBy {
                link.moveOn(.lost("the broker at \(address) answered nothing for \(BrokerLink.answerWait / 1000) s"), now: now)
                throw noAnswer(at: address)
            }
            pause(now: now, until: deadline ?? answerBy)
        }
    }

    /// Says goodbye (the session is not kept) and stays offline.
    package func leave() {
        link.client?.disconnect()
        if link.wantsOnline { link.stop(.asked) }
    }

    /// Runs the link once: what it brought, as a command sees it.
    private func service(now: Int64) -> [Event] {
        link.service(now: now).flatMap(Self.command)
    }

    /// What a command sees of what the link brought: its own publishes' answers, its
    /// subscriptions' and the messages.
    private static func command(_ event: BrokerLink.Event) -> [Event] {
        switch event {
        case .subscribed(let id, let answer): [.subscribed(id: id, answer)]
        case .message(let topic, let payload, let retained): [.message(topic: topic, payload: payload, retained: retained)]
        case .answered(let id, .call, let answer): [.answered(id: id, answer)]
        case .connected, .inboxGranted, .answered: []
        }
    }

    /// The connection went: what was read on it goes with it.
    private func went() -> ConnectionFailure {
        pending = []
        if case .offline(let why, _) = link.state { return .went(why) }
        return .went(.lost("the connection cannot take it"))
    }

    private func noAnswer(at address: HostConfig.Transport.Address) -> ConnectionFailure {
        pending = []
        return .noAnswer(address: address, seconds: Int(BrokerLink.answerWait / 1000))
    }

    /// Waits for the connection's descriptors, at most until its next wake or `deadline`.
    private func pause(now: Int64, until deadline: Int64) {
        let descriptors = link.readable.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            + link.writable.map { pollfd(fd: $0, events: Int16(POLLOUT), revents: 0) }
        wait(descriptors, Int32(max(0, min(link.nextWake(now: now), deadline) - now)))
    }
}

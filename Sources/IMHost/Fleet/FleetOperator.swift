#if canImport(Glibc)
import Glibc
#endif

/// The operator's connection: reads the fleet configuration the broker retains, publishes the
/// next version, and reads back which one won; reads the hosts' status reports. One connection
/// as `operator` (the only user the broker lets write ``FleetConfig/topic``).
///
/// Reads are exact, not timed: after subscribing (which makes the broker send what it retains),
/// the operator publishes a probe to its own inbox; when the probe comes back, everything the
/// broker retained for the subscription has come before it.
public final class FleetOperator {
    /// Why an operation did not happen: one line, for a person.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
        /// The broker refused the publish (not authorised): not the operator's choice.
        public var refusedByBroker = false
        /// What the broker holds on the fleet topic is not a valid configuration.
        public var invalidOnBroker = false
        /// The connection went (another connection as this user took the session over: two
        /// commands at once): worth trying again.
        var takenOver = false
    }

    /// One host's report, from its retained status topic.
    public struct HostStatus: Sendable, Equatable {
        public var user: String
        /// "running" or "gone" (its will: it went away without a goodbye, or signed off).
        public var state: String
        /// The fleet version it applies; `nil` when it applies none.
        public var version: Int64?
        /// When it reported, in ms since 1970.
        public var at: Int64?
    }

    private let settings: HostConfig.Transport
    private let user: String
    private let clock: () -> Int64
    private var client: MQTTClient?
    /// Events read from the connection and not yet handed to a ``pump(_:)``.
    private var pending: [MQTTClient.Event] = []

    /// `transport` as host.json names it; `user` must be `operator` for changes to be taken.
    public init(transport: HostConfig.Transport, user: String, clock: @escaping () -> Int64 = { Clock.now() }) {
        settings = transport
        self.user = user
        self.clock = clock
    }

    deinit { client?.disconnect() }

    // MARK: Reading

    /// The configuration in force: what the broker retains, unless a configuration that wins
    /// over it went by on this connection (another operator's, published before a lower version
    /// replaced it on the broker: hosts keep the higher one, so it is the one to build on).
    /// `invalidAsAbsent`: a retained document that is not a valid configuration counts as none
    /// (else it is refused).
    public func current(invalidAsAbsent: Bool = false) throws(Failure) -> FleetConfig? {
        let messages = try readRetained(FleetConfig.topic)
        var held: FleetConfig?
        if let bytes = messages.last?.payload, !bytes.isEmpty {
            do throws(FleetConfig.Refusal) {
                held = try FleetConfig.read(bytes)
            } catch {
                if !invalidAsAbsent {
                    throw Failure(description: "the fleet configuration the broker holds is not valid (\(error)); hosts keep their last good one; publish a valid one with --init",
                                  invalidOnBroker: true)
                }
            }
        }
        if let seen, seen.wins(over: held) { return seen }
        return held
    }

    /// The configuration that wins among all those seen on this connection, retained or live.
    private var seen: FleetConfig?

    /// Notes a configuration that went by on the fleet topic.
    private func note(fleet payload: [UInt8]) {
        guard let config = try? FleetConfig.read(payload), config.wins(over: seen) else { return }
        seen = config
    }

    /// Every host's retained report, by user.
    public func statuses() throws(Failure) -> [HostStatus] {
        let prefix = FleetConfig.statusTopic(of: "")
        return try readRetained(prefix + "+").compactMap { message in
            let user = String(message.topic.dropFirst(prefix.count))
            guard !message.payload.isEmpty else { return nil }
            guard let text = String(validating: message.payload, as: UTF8.self), message.payload.count <= 1024,
                  let root = try? JSONParser.parse(text), case .object(let members) = root.value else {
                return HostStatus(user: user, state: "unreadable", version: nil, at: nil)
            }
            func member(_ key: String) -> JSONNode.Value? { members.first { $0.key == key }?.value.value }
            var status = HostStatus(user: user, state: "unreadable", version: nil, at: nil)
            if case .string(let state)? = member("state"), ["running", "gone"].contains(state) { status.state = state }
            if case .number(let version, _)? = member("version"), version >= 1, version < 1e15 { status.version = Int64(version) }
            if case .number(let at, _)? = member("at"), at >= 0, at < 1e15 { status.at = Int64(at) }
            return status
        }.sorted { $0.user < $1.user }
    }

    // MARK: Changing

    /// What a change did.
    public enum Outcome: Sendable, Equatable {
        /// Published and read back: this version is the one the broker holds.
        case published(FleetConfig, retries: Int)
        /// The configuration already says so: nothing was published.
        case unchanged(FleetConfig)
    }

    /// Reads the current configuration, applies `edit` to it, publishes the next version
    /// (retained) and reads back which one the broker holds. When another operator's change won
    /// meanwhile, `edit` is applied again on top of it (nothing of theirs is lost). With no
    /// configuration on the broker, a change is refused unless `initialize`.
    public func change(initialize: Bool, _ edit: (inout FleetConfig) throws(Failure) -> Void) throws(Failure) -> Outcome {
        for retries in 0..<10 {
            do throws(Failure) {
                if let outcome = try attempt(initialize: initialize, retries: retries, edit) { return outcome }
            } catch {
                guard error.takenOver else { throw error }
                // Another operator command at the same time: let it finish, then go again.
                _ = poll(nil, 0, Int32.random(in: 50...300))
            }
        }
        throw Failure(description: "another operator changed the fleet configuration ten times while this change was tried; try again")
    }

    /// One try of ``change(initialize:_:)``: `nil` when another operator's change won meanwhile.
    private func attempt(initialize: Bool, retries: Int, _ edit: (inout FleetConfig) throws(Failure) -> Void) throws(Failure) -> Outcome? {
        do {
            let base = try current(invalidAsAbsent: initialize)
            guard base != nil || initialize else {
                throw Failure(description: "there is no fleet configuration on the broker yet; add --init to publish the first one")
            }
            let now = clock()
            var next = base ?? FleetConfig(version: 1, madeAt: now)
            try edit(&next)
            if let base, next.killSwitch == base.killSwitch, next.rollouts == base.rollouts { return .unchanged(base) }
            // With nothing (valid) on the broker, hosts may still apply a version above now
            // (a clock ahead, a lost retained message): go above the highest any host reports.
            let reported = base == nil ? try statuses().compactMap(\.version).filter { $0 <= now + FleetConfig.futureSkew }.max() : nil
            let floor = base?.version ?? reported
            next = FleetConfig(version: FleetConfig.nextVersion(after: floor, now: now), madeAt: now,
                               killSwitch: next.killSwitch, rollouts: next.rollouts)
            guard next.bytes.count <= FleetConfig.byteLimit else {
                throw Failure(description: "the configuration would be \(next.bytes.count) bytes, over the \(FleetConfig.byteLimit) a host reads; lift some of what it turns off first (imhost fleet show)")
            }
            try publish(next)
            let held = try current(invalidAsAbsent: initialize)
            if held?.digest == next.digest { return .published(next, retries: retries) }
            // Another operator's change won (a higher version, or the same with a larger digest):
            // make this one again on top of it.
            return nil
        }
    }

    /// Publishes `config` retained and waits for the broker's answer.
    private func publish(_ config: FleetConfig) throws(Failure) {
        let client = try connected()
        guard case .success(let id) = client.publish(topic: FleetConfig.topic, payload: config.bytes, retain: true) else {
            throw gone("cannot publish the fleet configuration: the connection is gone")
        }
        var answer: Int32?
        try pump { event in
            if case .published(id, let code) = event { answer = code }
            return answer != nil
        }
        if let answer, answer >= 0x80 {
            throw Failure(description: "the broker refused the fleet configuration (\(String(cString: MQTTClient.reasonText(answer)))): only \(TransportID.operatorID) may publish it; run with a host.json whose user is \(TransportID.operatorID), with its password file",
                          refusedByBroker: true)
        }
    }

    // MARK: The connection

    /// The connection went (taken over, lost, or closed by the broker as another connection of
    /// the same user came): dropped with what it left unread, and worth trying again.
    private func gone(_ description: String) -> Failure {
        client = nil
        pending = []
        return Failure(description: description, takenOver: true)
    }

    private struct Retained {
        var topic: String
        var payload: [UInt8]
    }

    /// What the broker retains on `filter`: subscribes (the broker sends its retained messages),
    /// then waits for a probe through the operator's own inbox, which comes after them.
    private func readRetained(_ filter: String) throws(Failure) -> [Retained] {
        let client = try connected()
        guard case .success(let subscription) = client.subscribe(filter, retained: true) else {
            throw gone("cannot subscribe to \(filter): the connection is gone")
        }
        var granted: [Int32]?
        var found: [Retained] = []
        try pump { event in
            switch event {
            case .subscribed(subscription, let codes): granted = codes
            case .message(let topic, let payload, true): found.append(Retained(topic: topic, payload: payload))
            default: break
            }
            return granted != nil
        }
        if let code = granted?.first, code >= 0x80 {
            throw Failure(description: "the broker refused \(user) reading \(filter) (\(String(cString: MQTTClient.reasonText(code)))); fleet commands run as \(TransportID.operatorID)")
        }
        let probe = "probe-" + GlobalID.make(at: clock())
        guard case .success = client.publish(topic: Courier.topic(to: user, from: user), payload: Envelope.probe(id: probe).bytes) else {
            throw gone("cannot publish a probe: the connection is gone")
        }
        var back = false
        try pump { event in
            switch event {
            case .message(let topic, let payload, _) where topic == Courier.topic(to: user, from: user):
                if case .probe(probe)? = try? Envelope.read(payload, payloadLimit: 1024, sender: user) { back = true }
            case .message(let topic, let payload, true): found.append(Retained(topic: topic, payload: payload))
            default: break
            }
            return back
        }
        return found
    }

    /// The connection, made (and the operator's inbox subscribed, for probes) if need be.
    private func connected() throws(Failure) -> MQTTClient {
        if let client { return client }
        let password: String
        do throws(FileSystem.Failure) {
            password = try settings.password()
        } catch {
            throw Failure(description: "cannot read the password in \(settings.passwordFile) (\(error)); fix transport.passwordFile in host.json")
        }
        var clientSettings = MQTTClient.Settings(address: settings.address, user: user, password: password,
                                                 maximumPacket: UInt32(FleetConfig.byteLimit + 4096))
        if let ca = settings.caFile { clientSettings.tls = .init(ca: ca, cert: settings.certFile, key: settings.keyFile) }
        // The operator's session is not kept: each command starts clean.
        clientSettings.sessionExpiry = 0
        let made: MQTTClient
        do throws(MQTTClient.Failure) {
            made = try MQTTClient(clientSettings)
        } catch {
            throw Failure(description: "cannot make a connection: \(error)")
        }
        made.connect()
        client = made
        var up = false
        try pump { (event) throws(Failure) -> Bool in
            switch event {
            case .connected: up = true
            case .refused(_, let reason):
                throw Failure(description: "the broker at \(settings.address) refused \(user): \(reason); check transport.passwordFile (\(settings.passwordFile))")
            case .unreachable(let why):
                throw Failure(description: "cannot reach the broker at \(settings.address) (\(why)); is it running?")
            default: break
            }
            return up
        }
        guard case .success(let inbox) = made.subscribe(Courier.topic(to: user, from: "+")) else {
            throw gone("cannot subscribe to \(user)'s inbox: the connection is gone")
        }
        try pump { event in
            if case .subscribed(inbox, _) = event { return true }
            return false
        }
        return made
    }

    /// Services the connection until `handle` returns true for an event (at most 10 s).
    private func pump(_ handle: (MQTTClient.Event) throws(Failure) -> Bool) throws(Failure) {
        guard let client else { throw Failure(description: "not connected") }
        let deadline = Clock.monotonic() + 10_000_000_000
        while true {
            if pending.isEmpty { pending = client.service() }
            while !pending.isEmpty {
                let event = pending.removeFirst()
                if case .message(FleetConfig.topic, let payload, _) = event { note(fleet: payload) }
                if case .disconnected(let code, let reason) = event {
                    throw gone(code == 0x8E ? "another \(user) connection took the session over (another imhost fleet command at the same time?); try again"
                                            : "the connection to the broker was lost (\(reason))")
                }
                if try handle(event) { return }
            }
            guard Clock.monotonic() < deadline else {
                throw Failure(description: "the broker at \(settings.address) did not answer within 10 s")
            }
            MQTTClient.wait(on: client.descriptors, milliseconds: 100)
        }
    }
}

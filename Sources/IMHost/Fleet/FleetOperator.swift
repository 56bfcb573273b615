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
        /// The connection went (another connection as this user took the session over: two
        /// commands at once): worth trying again.
        var takenOver = false
        /// A cluster's nodes could not serve this now (none reachable or serving, or one refused
        /// a subscription while its JetStream waits for the others): worth trying again soon.
        var transient = false
    }

    private let settings: HostConfig.Transport
    private let user: String
    let clock: () -> Int64
    private var client: MQTTClient?
    /// The address a connection is tried at first: the next one after a transient failure.
    private var firstAddress = 0
    /// Events read from the connection and not yet handed to a ``pump(_:)``.
    private var pending: [MQTTClient.Event] = []
    /// The configuration that wins among those hosts take that went by on this connection.
    private var seen: FleetConfig?
    /// Every host's report as last seen on this connection (retained, or live), by user.
    private(set) var reports: [String: FleetStatus] = [:]
    /// Where the configurations this operator knew on the fleet topic are kept between commands.
    private let ledger: FleetLedger?
    /// The configurations this operator knows were on the fleet topic (the ledger's, and what
    /// went by or was published on this connection): the versions a host's report may claim
    /// and be believed.
    private(set) var known: Set<FleetConfig.Applied>

    /// `transport` as host.json names it; `user` must be `operator` for changes to be taken.
    /// `ledger` keeps what this operator published and saw (``FleetLedger``).
    public init(transport: HostConfig.Transport, user: String, clock: @escaping () -> Int64 = { Clock.now() }, ledger: FleetLedger? = nil) {
        settings = transport
        self.user = user
        self.clock = clock
        self.ledger = ledger
        known = ledger?.load() ?? []
    }

    /// Notes that `config` was on the fleet topic (read there, or published by this operator).
    func know(_ config: FleetConfig) {
        guard known.insert(config.applied).inserted else { return }
        ledger?.record([config.applied])
    }

    deinit { client?.disconnect() }

    // MARK: Reading

    /// What the broker holds on the fleet topic, and what hosts make of it.
    public struct Standing: Sendable {
        /// The document the broker retains, as it is (empty: none).
        public var bytes: [UInt8]
        /// What a host that applies nothing makes of it, judged on this machine's clock:
        /// `.removed`, `.refused` or `.applies`.
        public var verdict: FleetConfig.Verdict
        /// What the next change builds on: what the broker holds when hosts take it, unless a
        /// configuration that wins over it went by on this connection (another operator's,
        /// published before a lower version replaced it on the broker: hosts keep the higher
        /// one, so it is the one to build on).
        public var config: FleetConfig?
        /// Every host's report, by user.
        public var hosts: [FleetStatus]
        /// Hosts that apply a configuration that wins over what the broker holds (a broker
        /// restored from a backup, a late publish): they ignore it.
        public var ahead: [FleetStatus]
        /// The highest version a host reports that a change can go above: one dated at most
        /// ``FleetConfig/futureSkew`` ahead of this machine's clock (above a later one, every
        /// host whose clock is right would refuse the change), and vouched for.
        public var highest: Int64?
        /// Hosts whose report claims a configuration nobody vouches for: not one this operator
        /// published or saw on the fleet topic (``FleetLedger``), nor one that two hosts report.
        /// A user writes its own report as it likes: these are not built on, and their names
        /// do not count as known.
        public var unvouched: [FleetStatus] = []
        /// What the operator's own host has (host.json's lines, its plugins' lines and keys):
        /// names known without any host's report. The command that judges names sets it.
        public var own: FleetReport?

        /// One line when hosts will not apply what the broker holds: which, why, and what to
        /// do; `nil` when every host that reports applies it (or will when it catches up).
        public var problem: String? {
            if case .refused(let why) = verdict {
                let kept = highest.map { " (version \($0) is the highest they report)" } ?? ""
                return "hosts refuse the fleet configuration the broker holds (\(why)) and keep the one they apply\(kept); imhost fleet replace publishes one they apply, above every version they report"
            }
            guard case .applies(let held) = verdict, let top = ahead.compactMap(\.version).max() else { return nil }
            let names = ahead.prefix(3).map(\.user).joined(separator: ", ") + (ahead.count > 3 ? " and \(ahead.count - 3) more" : "")
            let verb = ahead.count == 1 ? "applies" : "apply"
            return "\(names) \(verb) version \(top), newer than the broker's version \(held.version) (a broker restored from a backup?), and ignore\(ahead.count == 1 ? "s" : "") it; the next change goes above it, built on the broker's version \(held.version) (imhost fleet replace publishes that one above it now)"
        }
    }

    /// Reads what the broker holds and every host's report, and judges the one by the others
    /// as hosts do (``FleetConfig/verdict(on:applied:now:)``).
    public func standing() throws(Failure) -> Standing {
        try retrying { (_) throws(Failure) in try readStanding() }
    }

    /// ``standing()``, once.
    func readStanding() throws(Failure) -> Standing {
        let bytes = try held()
        let hosts = try statuses()
        let now = clock()
        let verdict = FleetConfig.verdict(on: bytes, applied: nil, now: now)
        // A report's version is believed when the operator knows it was on the fleet topic, or
        // when another host reports the same one: one user's report alone steers nothing.
        let claims = Dictionary(grouping: hosts.compactMap(\.report.applied), by: { $0 }).mapValues(\.count)
        let vouched = hosts.filter { host in
            host.report.applied.map { known.contains($0) || claims[$0, default: 0] >= Standing.corroboration } ?? true
        }
        let ahead = vouched.filter {
            if case .older = FleetConfig.verdict(on: bytes, applied: $0.report.applied, now: now) { true } else { false }
        }
        let highest = vouched.compactMap(\.version).filter { $0 <= now + FleetConfig.futureSkew }.max()
        var standing = Standing(bytes: bytes, verdict: verdict, config: inForce(verdict), hosts: hosts, ahead: ahead, highest: highest)
        standing.unvouched = hosts.filter { host in !vouched.contains { $0.user == host.user } }
        return standing
    }

    /// What the broker retains on the fleet topic (empty: nothing).
    func held() throws(Failure) -> [UInt8] {
        try readRetained(Topic.fleetConfig.name).last?.payload ?? []
    }

    /// The configuration in force, given what hosts make of what the broker holds.
    func inForce(_ verdict: FleetConfig.Verdict) -> FleetConfig? {
        let held: FleetConfig? = if case .applies(let config) = verdict { config } else { nil }
        if let seen, seen.wins(over: held?.applied) { return seen }
        return held
    }

    /// Every host's report, by user.
    public func statuses() throws(Failure) -> [FleetStatus] {
        _ = try readRetained(Topic.Filter.statuses.name)
        return reports.values.sorted { $0.user < $1.user }
    }

    /// Notes what went by on the fleet and status topics, whichever read it came in.
    private func note(_ event: MQTTClient.Event) {
        guard case .message(let topic, let payload, _) = event else { return }
        switch Topic(topic) {
        case .fleetConfig?:
            // Whatever reads as a configuration was an operator's: a host may report it.
            if let config = try? FleetConfig.read(payload) { know(config) }
            // Only what hosts would take: one they refuse is nothing to build on.
            if case .applies(let config) = FleetConfig.verdict(on: payload, applied: seen?.applied, now: clock()) { seen = config }
        case .fleetStatus(let user)?:
            reports[user] = payload.isEmpty ? nil : FleetStatus.read(user: user, payload)
        default:
            break
        }
    }

    // MARK: The connection

    /// The connection went (taken over, lost, or closed by the broker as another connection of
    /// the same user came): dropped with what it left unread, and worth trying again.
    func gone(_ description: String) -> Failure {
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
        var granted: BrokerAnswer?
        var found: [Retained] = []
        try pump { event in
            switch event {
            case .subscribed(subscription, let answer): granted = answer
            case .message(let topic, let payload, true): found.append(Retained(topic: topic, payload: payload))
            default: break
            }
            return granted != nil
        }
        if case .refused(let reason)? = granted {
            let failure = Failure(description: "the broker refused \(user) reading \(filter) (\(reason)); fleet commands run as \(TransportID.operatorID)")
            // On a cluster, a node refuses a subscription while its JetStream waits for the
            // others: the next node is tried (``retrying(_:)``), and this said if all refuse.
            throw nextNode(failure)
        }
        let probe = "probe-" + GlobalID.make(at: clock())
        guard case .success = client.publish(topic: Topic.inbox(to: user, from: user).name, payload: Envelope.probe(id: probe).bytes) else {
            throw gone("cannot publish a probe: the connection is gone")
        }
        var back = false
        try pump { event in
            switch event {
            case .message(let topic, let payload, _) where topic == Topic.inbox(to: user, from: user).name:
                if case .probe(probe)? = try? Envelope.read(payload, payloadLimit: 1024, sender: user) { back = true }
            case .message(let topic, let payload, true): found.append(Retained(topic: topic, payload: payload))
            default: break
            }
            return back
        }
        return found
    }

    /// The connection, made (and the operator's inbox subscribed, for probes) if need be.
    func connected() throws(Failure) -> MQTTClient {
        if let client { return client }
        let password: String
        do throws(FileSystem.Failure) {
            password = try settings.password()
        } catch {
            throw Failure(description: "cannot read the password in \(settings.passwordFile) (\(error)); fix transport.passwordFile in host.json")
        }
        // Each address in turn (a cluster's nodes), in the MQTT the broker speaks: a node that
        // cannot be reached or is not serving gives way to the next.
        var version: MQTTVersion = settings.protocolChoice == .v311 ? .v311 : .v5
        var failures: [String] = []
        var index = 0
        var made: MQTTClient?
        while made == nil, index < settings.addresses.count {
            // firstAddress is the cursor: where the connection is, or is tried next.
            let address = settings.addresses[firstAddress % settings.addresses.count]
            var clientSettings = MQTTClient.Settings(address: address, user: user, password: password, maximumPacket: UInt32(FleetConfig.byteLimit + 4096))
            clientSettings.version = version
            if let ca = settings.caFile { clientSettings.tls = .init(ca: ca, cert: settings.certFile, key: settings.keyFile) }
            // The operator's session is not kept: each command starts clean.
            clientSettings.keepsSession = false
            let attempt: MQTTClient
            do throws(MQTTClient.Failure) {
                attempt = try MQTTClient(clientSettings)
            } catch {
                throw Failure(description: "cannot make a connection: \(error)")
            }
            attempt.connect()
            client = attempt
            var outcome: BrokerEvent?
            try pump { event in
                switch event {
                case .connected, .refused, .unreachable: outcome = event
                default: break
                }
                return outcome != nil
            }
            switch outcome {
            case .connected?: made = attempt
            case .refused(let refusal)? where refusal.wrongVersion && version == .v5 && settings.protocolChoice == .auto:
                version = .v311
            case .refused(let refusal)? where refusal.unavailable:
                failures.append("the broker at \(address) is not serving (\(refusal.reason))")
                index += 1
                firstAddress += 1
            case .refused(let refusal)?:
                client = nil
                throw Failure(description: "the broker at \(address) refused \(user): \(refusal.reason); check transport.passwordFile (\(settings.passwordFile))")
            case .unreachable(let why)?:
                failures.append("cannot reach the broker at \(address) (\(why))")
                index += 1
                firstAddress += 1
            default:
                index += 1
                firstAddress += 1
            }
        }
        guard let made else {
            client = nil
            var failure = Failure(description: failures.joined(separator: "; ") + "; is it running?")
            failure.transient = settings.addresses.count > 1
            throw failure
        }
        guard case .success(let inbox) = made.subscribe(Topic.Filter.inbox(of: user).name) else {
            throw gone("cannot subscribe to \(user)'s inbox: the connection is gone")
        }
        try pump { event in
            if case .subscribed(inbox, _) = event { return true }
            return false
        }
        return made
    }

    /// `failure` on a cluster: the connection is dropped, the next node is where the next try
    /// starts, and the failure is worth trying again (``retrying(_:)``). On one broker, as it is.
    private func nextNode(_ failure: Failure) -> Failure {
        guard settings.addresses.count > 1 else { return failure }
        var failure = failure
        failure.transient = true
        client = nil
        pending = []
        firstAddress += 1
        return failure
    }

    /// Services the connection until `handle` returns true for an event (at most 10 s).
    func pump(_ handle: (MQTTClient.Event) throws(Failure) -> Bool) throws(Failure) {
        // A cluster's node that does not answer within 5 s gives way to the next.
        let seconds: UInt64 = settings.addresses.count > 1 ? 5 : 10
        guard try serve(until: Clock.monotonic() + seconds * 1_000_000_000, handle) else {
            let failure = Failure(description: "the broker at \(settings.addresses[firstAddress % settings.addresses.count]) did not answer within \(seconds) s")
            // A cluster's node that answers nothing: the next is tried (``retrying(_:)``).
            throw nextNode(failure)
        }
    }

    /// Services the connection until `handle` returns true for an event (true), or until
    /// `deadline` on the monotonic clock (false).
    func serve(until deadline: UInt64, _ handle: (MQTTClient.Event) throws(Failure) -> Bool) throws(Failure) -> Bool {
        guard let client else { throw Failure(description: "not connected") }
        while true {
            if pending.isEmpty { pending = client.service() }
            while !pending.isEmpty {
                let event = pending.removeFirst()
                note(event)
                if case .disconnected(let how) = event {
                    switch how {
                    case .takenOver: throw gone("another \(user) connection took the session over (another imhost fleet command at the same time?); try again")
                    case .lost(let reason): throw gone("the connection to the broker was lost (\(reason))")
                    case .administrative: throw gone("the broker ended the connection (an administrator removed or disabled \(user))")
                    }
                }
                if try handle(event) { return true }
            }
            let now = Clock.monotonic()
            guard now < deadline else { return false }
            MQTTClient.wait(on: client.descriptors, milliseconds: Int32(min(100, (deadline - now) / 1_000_000 + 1)))
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// The operator's connection: reads the fleet configuration the broker retains, publishes the
/// next version, and reads back which one won; reads the hosts' status reports. One connection
/// as `operator` (the only user the broker lets write ``FleetConfig/topic``), a
/// ``CommandConnection``: it connects and fails over as a host's does (a cluster's next node
/// when one cannot serve or answers nothing for 5 s, rounds on a backoff for two minutes).
///
/// Reads are exact, not timed: after subscribing (which makes the broker send what it retains),
/// the operator publishes a probe to its own inbox; when the probe comes back, everything the
/// broker retained for the subscription has come before it.
public final class FleetOperator {
    /// Why an operation did not happen, as a code with what a front end needs to say it.
    public struct Failure: Error, Sendable, Equatable {
        public enum Code: Sendable, Equatable {
            /// The connection did not bring what the operation waited for.
            case connection(ConnectionFailure)
            /// The broker refused `user` reading `filter`, in its words: fleet commands run as
            /// operator.
            case readRefused(user: String, filter: String, reason: String)
            /// The broker refused the configuration, in its words: only operator may publish it.
            case publishRefused(String)
            /// Hosts refuse what the broker holds, so a change built on it would go nowhere.
            case heldRefused(FleetConfig.Refusal)
            /// The broker holds no configuration, so there is nothing to replace.
            case nothingToReplace
            /// The broker holds no configuration yet, and the change does not make the first.
            case noConfiguration
            /// Hosts would refuse the configuration the change makes.
            case wouldRefuse(FleetConfig.Refusal)
            /// Other operators' commands or changes came between ten tries in a row.
            case contended
        }

        public var code: Code
        init(_ code: Code) { self.code = code }

        /// A cluster's nodes could not serve this now (none reachable or serving, none
        /// answering, or one refused a subscription while its JetStream waits for the others):
        /// worth trying again soon.
        var transient = false
    }

    private let user: String
    let clock: () -> Int64
    let connection: CommandConnection
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
    /// `ledger` keeps what this operator published and saw (``FleetLedger``). `clock` is the one
    /// configurations are judged by, as hosts judge them.
    public convenience init(transport: HostConfig.Transport, user: String, clock: @escaping () -> Int64 = { Clock.now() }, ledger: FleetLedger? = nil) {
        self.init(transport: transport, user: user, clock: clock, ledger: ledger, runtime: .system)
    }

    /// The same, connecting through `runtime` (the tests' broker).
    package init(transport: HostConfig.Transport, user: String, clock: @escaping () -> Int64, ledger: FleetLedger?, runtime: ConnectionRuntime) {
        self.user = user
        self.clock = clock
        self.ledger = ledger
        known = ledger?.load() ?? []
        connection = CommandConnection(transport: transport, user: user, maximumPacket: FleetConfig.byteLimit + 4096, inbox: Topic.Filter.inbox(of: user).name,
                                       runtime: runtime)
    }

    /// Notes that `config` was on the fleet topic (read there, or published by this operator).
    func know(_ config: FleetConfig) {
        guard known.insert(config.applied).inserted else { return }
        ledger?.record([config.applied])
    }

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

    // MARK: Reports

    /// Every report the broker holds (made by people, not yet closed), oldest first; one that
    /// cannot be read as a report is listed with its id, to be closed.
    public func filedReports() throws(Failure) -> [FiledReport] {
        try readRetained(Topic.Filter.reports.name).compactMap { retained -> FiledReport? in
            guard case .report(let by, let slot)? = Topic(retained.topic), !retained.payload.isEmpty else { return nil }
            return FiledReport(by: by, slot: slot, report: UserReport.read(retained.payload))
        }.sorted { ($0.report?.at ?? 0, $0.by, $0.slot) < ($1.report?.at ?? 0, $1.by, $1.slot) }
    }

    /// Closes a report: the broker forgets it (an empty retained message on its topic). Returns
    /// the broker's answer.
    package func close(_ report: FiledReport) throws(Failure) -> BrokerAnswer {
        try published([], to: Topic.report(user: report.by, slot: report.slot).name)
    }

    // MARK: The connection

    private struct Retained {
        var topic: String
        var payload: [UInt8]
    }

    /// What the broker retains on `filter`: subscribes (the broker sends its retained messages),
    /// then waits for a probe through the operator's own inbox, which comes after them.
    private func readRetained(_ filter: String) throws(Failure) -> [Retained] {
        try ready()
        let subscription = try command { () throws(ConnectionFailure) in try connection.subscribe(filter, retained: true) }
        var found: [Retained] = []
        let granted: BrokerAnswer = try pump { event in
            switch event {
            case .subscribed(subscription, let answer): return answer
            case .message(let topic, let payload, true): found.append(Retained(topic: topic, payload: payload))
            default: break
            }
            return nil
        }
        if case .refused(let reason) = granted {
            // On a cluster, a node refuses a subscription while its JetStream waits for the
            // others: the next node is tried (``retrying(_:)``), and this said if all refuse.
            throw nextNode(Failure(.readRefused(user: user, filter: filter, reason: reason)))
        }
        let own = Topic.inbox(to: user, from: user).name
        let probe = "probe-" + GlobalID.make(at: clock())
        _ = try command { () throws(ConnectionFailure) in try connection.publish(topic: own, payload: Envelope.probe(id: probe).bytes) }
        let _: Bool = try pump { event in
            switch event {
            case .message(let topic, let payload, _) where topic == own:
                if case .probe(probe)? = try? Envelope.read(payload, payloadLimit: 1024, sender: user) { return true }
            case .message(let topic, let payload, true): found.append(Retained(topic: topic, payload: payload))
            default: break
            }
            return nil
        }
        return found
    }

    /// The connection made, and the operator's inbox subscribed (for probes): across a
    /// cluster's nodes, as long as its persistence says.
    func ready() throws(Failure) {
        try command { () throws(ConnectionFailure) in try connection.ready() }
    }

    /// Publishes `payload` to `topic` (retained), and returns the broker's answer.
    func published(_ payload: [UInt8], to topic: String) throws(Failure) -> BrokerAnswer {
        try ready()
        let id = try command { () throws(ConnectionFailure) in try connection.publish(topic: topic, payload: payload, retain: true) }
        return try pump { event in
            if case .answered(id, let answer) = event { answer } else { nil }
        }
    }

    /// `failure` on a cluster: the node at hand is left, the next is where the next try starts,
    /// and the failure is worth trying again (``retrying(_:)``). On one broker, as it is.
    private func nextNode(_ failure: Failure) -> Failure {
        guard connection.addresses > 1 else { return failure }
        connection.moveOn()
        var failure = failure
        failure.transient = true
        return failure
    }

    /// Runs the connection until `done` says so after one of its events, or until `deadline`
    /// (milliseconds, the connection's clock), noting what went by: whether `done` said so.
    func watch(until deadline: Int64, _ done: () -> Bool) throws(Failure) -> Bool {
        try command { () throws(ConnectionFailure) in
            try connection.watch(until: deadline) { event in
                note(event)
                return done()
            }
        }
    }

    /// Runs the connection until `take` has something for one of its events, noting what
    /// went by on the fleet and status topics whichever read it came in.
    func pump<Value>(_ take: (CommandConnection.Event) -> Value?) throws(Failure) -> Value {
        try command { () throws(ConnectionFailure) in
            try connection.await { event in
                note(event)
                return take(event)
            }
        }
    }

    /// Does `body` on the connection: a failure of it is the operation's, worth trying again on
    /// a cluster when a node answered nothing (the connection left it for the next).
    private func command<Value>(_ body: () throws(ConnectionFailure) -> Value) throws(Failure) -> Value {
        do throws(ConnectionFailure) {
            return try body()
        } catch {
            var failure = Failure(.connection(error))
            if case .noAnswer = error, connection.addresses > 1 { failure.transient = true }
            throw failure
        }
    }

    /// Notes what went by on the fleet and status topics, whichever read it came in.
    private func note(_ event: CommandConnection.Event) {
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
}

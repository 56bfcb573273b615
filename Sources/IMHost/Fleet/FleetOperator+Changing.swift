#if canImport(Glibc)
import Glibc
#endif

/// The operator's changes: each is judged as hosts will judge it before it goes, goes above every
/// version hosts report, and is read back; then hosts' reports say who applied it.
extension FleetOperator {
    /// What a change did.
    public enum Outcome: Sendable, Equatable {
        /// Published and read back: this version is the one the broker holds.
        case published(FleetConfig, retries: Int)
        /// The configuration already says so and every host that reports applies it (for
        /// ``replace()``: hosts apply what the broker holds): nothing was published.
        case unchanged(FleetConfig)
    }

    /// Reads the current configuration, applies `edit` to it, publishes the next version
    /// (retained) and reads back which one the broker holds. When another operator's change won
    /// meanwhile, `edit` is applied again on top of it (nothing of theirs is lost). With no
    /// configuration on the broker, or one hosts refuse, a change is refused unless `initialize`
    /// (which then starts from nothing turned off).
    public func change(initialize: Bool, _ edit: (inout FleetConfig) throws(Failure) -> Void) throws(Failure) -> Outcome {
        try retrying { (retries) throws(Failure) in try attempt(replacing: false, initialize: initialize, retries: retries, edit) }
    }

    /// Replaces what the broker holds when hosts refuse it (invalid, or dated too far ahead) or
    /// ignore it (older than what they apply): publishes, above every version hosts report, what
    /// it turns off when that can be read, else nothing turned off. `.unchanged` when hosts
    /// apply what the broker holds; refused when it holds nothing (a change with `--init` makes
    /// the first).
    public func replace() throws(Failure) -> Outcome {
        try retrying { (retries) throws(Failure) in
            try attempt(replacing: true, initialize: false, retries: retries) { (_: inout FleetConfig) throws(Failure) in }
        }
    }

    /// Waits until the hosts of `users` report that they apply `config` (or a later version), or
    /// `milliseconds` pass; returns their reports as they stand then. Reports come on the
    /// subscription ``standing()`` made, so a change's own read is what this follows.
    public func awaitReports(of users: [String], applying config: FleetConfig, milliseconds: Int64) throws(Failure) -> [FleetStatus] {
        let deadline = Clock.monotonic() + UInt64(max(0, milliseconds)) * 1_000_000
        func done() -> Bool { users.allSatisfy { reports[$0].map { applies($0, config) } ?? false } }
        return try retrying { (retries) throws(Failure) in
            // A connection made again (taken over meanwhile) subscribes again.
            if retries > 0 { _ = try statuses() }
            if !done() { _ = try serve(until: deadline) { _ in done() } }
            return users.compactMap { reports[$0] }
        }
    }

    /// Whether `status` reports applying `config`: that very document, or a later version this
    /// operator vouches for (a report claiming a higher one nobody published applies nothing).
    public func applies(_ status: FleetStatus, _ config: FleetConfig) -> Bool {
        guard let applied = status.report.applied else { return false }
        return applied == config.applied || (applied.version > config.version && known.contains(applied))
    }

    /// Runs `attempt` until it has a result: again when another operator's change won
    /// meanwhile (`nil`) or another operator command took the connection over.
    /// Again too, for 2 minutes, while a cluster's nodes cannot serve it: one just died, and
    /// while it is down a NATS cluster makes a new session's subscriptions (an operator command
    /// starts a clean session each time) slowly, in 46 s measured, or once the node is back.
    func retrying<Result>(_ attempt: (Int) throws(Failure) -> Result?) throws(Failure) -> Result {
        let until = Clock.monotonic() + 120_000_000_000
        var retries = 0
        while retries < 10 {
            do throws(Failure) {
                if let outcome = try attempt(retries) { return outcome }
                retries += 1
            } catch {
                if error.transient {
                    guard Clock.monotonic() < until else { throw error }
                    _ = poll(nil, 0, 1000)
                    continue
                }
                guard error.takenOver else { throw error }
                // Another operator command at the same time: let it finish, then go again.
                _ = poll(nil, 0, Int32.random(in: 50...300))
                retries += 1
            }
        }
        throw Failure(description: "other operators' commands or changes came between ten tries in a row; try again")
    }

    /// One try of a change or a replacement: `nil` when another operator's change won meanwhile.
    private func attempt(replacing: Bool, initialize: Bool, retries: Int, _ edit: (inout FleetConfig) throws(Failure) -> Void) throws(Failure) -> Outcome? {
        let standing = try readStanding()
        // What the next version builds on, and the version it goes above.
        var base = standing.config
        var floor = standing.config?.version
        switch standing.verdict {
        case .refused(let why):
            guard replacing || initialize else {
                throw Failure(description: "nothing published: hosts refuse the fleet configuration the broker holds (\(why)), so a change built on it would go nowhere; imhost fleet replace publishes one they apply, above every version they report (--init starts from nothing turned off)")
            }
            // Its version is what hosts refuse: never built above. A replacement keeps what a
            // readable one turns off (only its date was wrong); --init starts from nothing.
            base = replacing ? (try? FleetConfig.read(standing.bytes)) : nil
            floor = nil
        case .removed where replacing:
            throw Failure(description: "the broker holds no fleet configuration, so there is nothing to replace: hosts keep the one they apply; a change with --init publishes the first")
        case .removed where base == nil && !initialize:
            throw Failure(description: "there is no fleet configuration on the broker yet; add --init to publish the first one")
        default:
            break
        }
        let now = clock()
        var next = base ?? FleetConfig(version: 1, madeAt: now)
        try edit(&next)
        // Hosts that ignore what the broker holds move only to a version above theirs: then an
        // unchanged configuration is published all the same.
        if let base, case .applies = standing.verdict, standing.ahead.isEmpty,
           next.killSwitch == base.killSwitch, next.rollouts == base.rollouts {
            return .unchanged(base)
        }
        next = FleetConfig(version: FleetConfig.nextVersion(after: [floor, standing.highest].compactMap { $0 }.max(), now: now), madeAt: now,
                           killSwitch: next.killSwitch, rollouts: next.rollouts)
        // Judged as hosts will judge it, before it goes.
        if case .refused(let why) = FleetConfig.verdict(on: next.bytes, applied: nil, now: now) {
            throw Failure(description: "not published: hosts would refuse it (\(why)); \(Self.fix(why))")
        }
        try publish(next)
        // Another operator's change won (a higher version, or the same with a larger digest):
        // make this one again on top of it.
        return inForce(FleetConfig.verdict(on: try held(), applied: nil, now: clock()))?.digest == next.digest ? .published(next, retries: retries) : nil
    }

    /// What the operator does about a change hosts would refuse.
    private static func fix(_ refusal: FleetConfig.Refusal) -> String {
        switch refusal.kind {
        case .size: "lift some of what it turns off first (imhost fleet show)"
        case .date: "check this machine's clock (date -u) against the versions hosts report (imhost fleet status)"
        case .document: "this is a fault in imhost; report it with the configuration the broker holds (imhost fleet show --json)"
        }
    }

    /// Publishes `config` retained and waits for the broker's answer.
    private func publish(_ config: FleetConfig) throws(Failure) {
        let client = try connected()
        // Known before it goes: a host may report it before it is read back.
        know(config)
        guard case .success(let id) = client.publish(topic: Topic.fleetConfig.name, payload: config.bytes, retain: true) else {
            throw gone("cannot publish the fleet configuration: the connection is gone")
        }
        var answer: BrokerAnswer?
        try pump { event in
            if case .published(id, let answered) = event { answer = answered }
            return answer != nil
        }
        if case .refused(let reason)? = answer {
            throw Failure(description: "the broker refused the fleet configuration (\(reason)): only \(TransportID.operatorID) may publish it; run with a host.json whose user is \(TransportID.operatorID), with its password file",
                          refusedByBroker: true)
        }
    }
}

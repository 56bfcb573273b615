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
        let deadline = connection.link.clock() + max(0, milliseconds)
        func done() -> Bool { users.allSatisfy { reports[$0].map { applies($0, config) } ?? false } }
        return try retrying { (retries) throws(Failure) in
            // A connection made again (taken over meanwhile) subscribes again.
            if retries > 0 { _ = try statuses() }
            if !done() { _ = try watch(until: deadline) { done() } }
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
    /// meanwhile (`nil`) or the connection went (another operator command took it over: two at
    /// once). Again too, for 2 minutes, while a cluster's nodes cannot serve it: one just died,
    /// and while it is down a NATS cluster makes a new session's subscriptions (an operator
    /// command starts a clean session each time) slowly, in 46 s measured, or once the node is
    /// back. The connection moves along the nodes meanwhile, as a host's does.
    func retrying<Result>(_ attempt: (Int) throws(Failure) -> Result?) throws(Failure) -> Result {
        connection.keepTrying(for: Self.clusterPatience)
        let until = connection.link.clock() + Self.clusterPatience
        var retries = 0
        while retries < 10 {
            do throws(Failure) {
                if let outcome = try attempt(retries) { return outcome }
                retries += 1
            } catch {
                if error.transient {
                    guard connection.link.clock() < until else { throw error }
                    continue
                }
                // Another operator command at the same time: the connection is made again (its
                // backoff lets the other finish), and this goes again.
                guard case .connection(.went) = error.code else { throw error }
                retries += 1
            }
        }
        throw Failure(.contended)
    }

    /// How long a cluster's nodes are tried while none can serve an operator's command.
    static let clusterPatience: Int64 = 120_000

    /// One try of a change or a replacement: `nil` when another operator's change won meanwhile.
    private func attempt(replacing: Bool, initialize: Bool, retries: Int, _ edit: (inout FleetConfig) throws(Failure) -> Void) throws(Failure) -> Outcome? {
        let standing = try readStanding()
        // What the next version builds on, and the version it goes above.
        var base = standing.config
        var floor = standing.config?.version
        switch standing.verdict {
        case .refused(let why):
            guard replacing || initialize else {
                throw Failure(.heldRefused(why))
            }
            // Its version is what hosts refuse: never built above. A replacement keeps what a
            // readable one turns off (only its date was wrong); --init starts from nothing.
            base = replacing ? (try? FleetConfig.read(standing.bytes)) : nil
            floor = nil
        case .removed where replacing:
            throw Failure(.nothingToReplace)
        case .removed where base == nil && !initialize:
            throw Failure(.noConfiguration)
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
            throw Failure(.wouldRefuse(why))
        }
        try publish(next)
        // Another operator's change won (a higher version, or the same with a larger digest):
        // make this one again on top of it.
        return inForce(FleetConfig.verdict(on: try held(), applied: nil, now: clock()))?.digest == next.digest ? .published(next, retries: retries) : nil
    }

    /// Publishes `config` retained and waits for the broker's answer.
    private func publish(_ config: FleetConfig) throws(Failure) {
        // Known before it goes: a host may report it before it is read back.
        know(config)
        if case .refused(let reason) = try published(config.bytes, to: Topic.fleetConfig.name) {
            throw Failure(.publishRefused(reason))
        }
    }
}

import IMKit

/// A fleet configuration as one host applies it: for one user, whose rollouts it decides.
public struct FleetState: Sendable, Equatable {
    public var config: FleetConfig
    public var user: String

    public init(config: FleetConfig, user: String) {
        self.config = config
        self.user = user
    }
}

/// Who turned something off: the three sources of one mechanism. A line is off if any source
/// turns it off; the first that does (quarantine, then host.json, then the fleet) is the one
/// reported.
public enum SwitchedOff: Sendable, Equatable {
    /// host.json's `killSwitch` (the local operator).
    case hostJSON
    /// The fleet configuration's kill switch, at this version.
    case fleet(version: Int64)
    /// A staged rollout that does not include this user: the line's share, in basis points.
    case outsideRollout(version: Int64, share: Int)

    /// "host.json" or "fleet", for `--json` output.
    public var source: String {
        switch self {
        case .hostJSON: "host.json"
        case .fleet, .outsideRollout: "fleet"
        }
    }

    /// The fleet version that decided, when the fleet did.
    public var fleetVersion: Int64? {
        switch self {
        case .hostJSON: nil
        case .fleet(let version), .outsideRollout(let version, _): version
        }
    }
}

extension HostConfig {
    /// Who turned `line` off, if anyone did: host.json's kill switch, the fleet's, or a rollout
    /// this user is outside of.
    public func switchedOff(line: String) -> SwitchedOff? {
        if killSwitch.lines.contains(line) { return .hostJSON }
        guard let fleet else { return nil }
        if fleet.config.killSwitch.lines.contains(line) { return .fleet(version: fleet.config.version) }
        if !fleet.config.includes(user: fleet.user, in: line) {
            return .outsideRollout(version: fleet.config.version, share: fleet.config.rollouts[line] ?? 0)
        }
        return nil
    }

    /// Who turned the message key off, if anyone did.
    public func switchedOff(key: String) -> SwitchedOff? {
        if killSwitch.messages.contains(key) { return .hostJSON }
        if let fleet, fleet.config.killSwitch.messages.contains(key) { return .fleet(version: fleet.config.version) }
        return nil
    }

    /// Who turned the component off, if anyone did.
    public func switchedOff(component: ComponentSet) -> SwitchedOff? {
        if killSwitch.components.contains(component) { return .hostJSON }
        if let fleet, fleet.config.killSwitch.components.contains(component) { return .fleet(version: fleet.config.version) }
        return nil
    }

    /// Components no page shows: host.json's and the fleet's.
    public var killedComponents: ComponentSet {
        killSwitch.components.union(fleet?.config.killSwitch.components ?? [])
    }

    /// Message keys turned off: host.json's and the fleet's.
    var killedKeys: [String] {
        killSwitch.messages + (fleet?.config.killSwitch.messages ?? []).filter { !killSwitch.messages.contains($0) }
    }
}

extension SwitchedOff {
    /// Why a line is off, for a person: what the converter and placeholders say.
    func lineReason(_ id: String) -> String {
        switch self {
        case .hostJSON: "line '\(id)' is in killSwitch.lines"
        case .fleet(let version): "line '\(id)' is turned off fleet-wide (fleet version \(version))"
        case .outsideRollout(let version, let share):
            "line '\(id)' serves \(FleetConfig.percent(share)) of users and this user is not among them (fleet version \(version))"
        }
    }

    /// What to do about it.
    func lineFix(_ id: String) -> String {
        switch self {
        case .hostJSON: "remove it from killSwitch.lines to roll it forward"
        case .fleet: "the operator lifts it: imhost fleet lift \(id)"
        case .outsideRollout: "the operator widens the rollout: imhost fleet rollout \(id) PERCENT"
        }
    }

    /// Where a key or component was turned off, for placeholders: "killSwitch.messages in host.json".
    func place(_ member: String) -> String {
        switch self {
        case .hostJSON: "killSwitch.\(member) in host.json"
        case .fleet(let version), .outsideRollout(let version, _): "the fleet configuration (version \(version))"
        }
    }
}

/// Why a line does not serve chats.
public enum UnavailableReason: String, Sendable, Codable {
    /// The line is `"enabled": false` in host.json, or not in its lines.
    case lineDisabled = "line-disabled"
    /// No plugin provides the line.
    case lineMissing = "line-missing"
    /// The line's plugin was refused at load.
    case lineRefused = "line-refused"
    /// The line failed to register.
    case lineFailed = "line-failed"
    /// The operator turned the line off (`killSwitch.lines` in host.json).
    case killed
    /// The fleet configuration turned the line off (`imhost fleet kill`).
    case fleetKilled = "fleet-killed"
    /// The line is rolled out to a share of users, and this user is not among them.
    case outsideRollout = "outside-rollout"
    /// The host quarantined the line after its code crashed or hung.
    case quarantined
}

/// Whether a line serves now, and if not, why.
public enum Availability: Equatable, Sendable {
    case available
    /// The reason, and one sentence for a person naming the line and the cause.
    case unavailable(UnavailableReason, String)
}

/// Which lines serve, as the line table last found them: a value the converter, placeholders and
/// the route table read. The line table makes a new one after every change; nothing that reads
/// one calls back into the table.
public struct LineAvailability: Sendable {
    /// Lines that serve: loaded, registered or active.
    public private(set) var serving: Set<String>
    /// Why each line that is known and does not serve does not.
    private var unavailable: [String: Availability]

    /// No line serves, and none is known.
    public static let none = LineAvailability(serving: [], unavailable: [:])

    init(serving: Set<String>, unavailable: [String: Availability]) {
        self.serving = serving
        self.unavailable = unavailable
    }

    /// Whether `line` serves, and if not, why (a line nobody knows is missing).
    public func of(_ line: String) -> Availability {
        serving.contains(line) ? .available : unavailable[line] ?? .unavailable(.lineMissing, "no plugin provides line '\(line)'")
    }

    /// Why a line that is known (a file claims it, or host.json names it) does not serve; `nil`
    /// for a line that serves or that nothing knows of.
    public func whyKnownUnavailable(_ line: String) -> (reason: UnavailableReason, why: String)? {
        guard case .unavailable(let reason, let why)? = unavailable[line] else { return nil }
        return (reason, why)
    }
}

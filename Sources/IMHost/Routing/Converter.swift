/// The converter: decides which page a chat jump URL opens, from the routing table, the kill
/// switch and the state of each line, and says why.
///
/// A decision is a parse and at most four hash lookups (the exact rule, the wildcard rule, and
/// the line's availability, which may ask two tables): it costs the same with 10 rules or 10,000.
public struct Converter: Sendable {
    /// Where a jump goes.
    public enum Target: Sendable, Hashable {
        /// The line's carrier page.
        case line(String)
        /// The legacy page built into the host.
        case legacy
    }

    /// Why a jump goes where it goes: a rule sends it to a line that serves, no rule matches, or
    /// the rule's line does not serve (and why not). Written as its raw value (`routed`,
    /// `no-rule`, `killed`, …) in `imhost route` and `--json`.
    public enum Reason: Sendable, Hashable, Codable, RawRepresentable {
        /// A rule sends it to a loaded line.
        case routed
        /// No rule for its rootCateID and cateID.
        case noRule
        /// The rule's line does not serve.
        case unavailable(UnavailableReason)

        public static let lineDisabled = Reason.unavailable(.lineDisabled)
        public static let lineMissing = Reason.unavailable(.lineMissing)
        public static let lineRefused = Reason.unavailable(.lineRefused)
        public static let lineFailed = Reason.unavailable(.lineFailed)
        public static let killed = Reason.unavailable(.killed)
        public static let quarantined = Reason.unavailable(.quarantined)

        /// Which of the three sources turned the line off, when one did: "host.json" (the local
        /// operator), "fleet" (the fleet configuration) or "quarantine" (the host).
        public var source: String? {
            switch self {
            case .unavailable(.killed): "host.json"
            case .unavailable(.fleetKilled), .unavailable(.outsideRollout): "fleet"
            case .unavailable(.quarantined): "quarantine"
            default: nil
            }
        }

        public init?(rawValue: String) {
            switch rawValue {
            case "routed": self = .routed
            case "no-rule": self = .noRule
            default:
                guard let unavailable = UnavailableReason(rawValue: rawValue) else { return nil }
                self = .unavailable(unavailable)
            }
        }

        public var rawValue: String {
            switch self {
            case .routed: "routed"
            case .noRule: "no-rule"
            case .unavailable(let reason): reason.rawValue
            }
        }

        public init(from decoder: any Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let reason = Reason(rawValue: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown reason \(text)"))
            }
            self = reason
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }

    /// One decision. Its URL and explanation are put into words only when asked for, so a
    /// decision itself allocates nothing.
    public struct Decision: Sendable {
        public var jump: JumpURL
        public var target: Target
        public var reason: Reason
        /// The rule that matched, if one did.
        public var rule: HostConfig.Route?
        /// Why the rule's line is unavailable, when it is.
        var unavailable: String?
        /// Whether the URL named its line itself (`im://chat/<line>`) rather than a rule.
        var named: String?

        /// The URL of the page opened: `im://chat/<line>?…` or, on the legacy page, the caller's.
        public var url: String {
            if case .line(let line) = target { return jump.url(forLine: line) }
            return jump.legacyURL
        }

        /// One sentence: which rule, which line, and why this page.
        public var explanation: String {
            if let named {
                return unavailable.map { "the URL names line '\(named)', but \($0): legacy page" } ?? "the URL names line '\(named)'"
            }
            guard let rule else {
                let cate = jump.cateID.map(String.init) ?? "(none)"
                return "no rule for rootCateID \(jump.rootCateID), cateID \(cate): legacy page"
            }
            let matched = "routes[\(rule.index)] (rootCateID \(rule.rootCateID), cateID \(Converter.describe(rule.cateID)))"
            if let unavailable { return "\(matched) names line '\(rule.line)', but \(unavailable): legacy page" }
            return "\(matched) sends it to line '\(rule.line)'"
        }
    }

    private let exact: [Int64: HostConfig.Route]
    private let wildcard: [Int: HostConfig.Route]
    /// Which lines serve, as the line table found them when this converter was made.
    private let lines: LineAvailability

    /// A converter for a configuration and the lines as they stand.
    public init(config: HostConfig, lines: LineAvailability) {
        var exact: [Int64: HostConfig.Route] = [:]
        var wildcard: [Int: HostConfig.Route] = [:]
        for route in config.routes {
            switch route.cateID {
            case .any: wildcard[route.rootCateID] = route
            case .ids(let ids): for id in ids { exact[Self.key(route.rootCateID, id)] = route }
            }
        }
        self.exact = exact
        self.wildcard = wildcard
        // A copy of the table's snapshot (copy on write: no work per line).
        self.lines = lines
    }

    private static func key(_ root: Int, _ cate: Int) -> Int64 { Int64(root) << 32 | Int64(cate) }

    /// Decides where a jump URL goes.
    ///
    /// - Throws: ``JumpURL/Malformed`` for a URL that is not a chat jump.
    public func decide(_ url: String) throws(JumpURL.Malformed) -> Decision {
        decide(try JumpURL.parse(url))
    }

    /// Decides where a chat URL goes: a jump by the rules, a line's page URL (`im://chat/<line>?…`)
    /// to that line if it serves. `imhost route` and `imhost open` both decide here, so they
    /// agree on every URL.
    public func decide(chatURL url: String) throws(JumpURL.Malformed) -> Decision {
        let (jump, line) = try JumpURL.parseChat(url)
        return line.map { decide(jump, line: $0) } ?? decide(jump)
    }

    /// Decides where a parsed jump goes.
    public func decide(_ jump: JumpURL) -> Decision {
        let rule = jump.cateID.flatMap { exact[Self.key(jump.rootCateID, $0)] } ?? wildcard[jump.rootCateID]
        guard let rule else {
            return Decision(jump: jump, target: .legacy, reason: .noRule, rule: nil)
        }
        switch lines.of(rule.line) {
        case .available:
            return Decision(jump: jump, target: .line(rule.line), reason: .routed, rule: rule)
        case .unavailable(let reason, let why):
            return Decision(jump: jump, target: .legacy, reason: .unavailable(reason), rule: rule, unavailable: why)
        }
    }

    /// Decides a jump that names its line already (`im://chat/<line>?…`, opened directly, not
    /// through the converter): the line's page if it is available, else the legacy page and why.
    /// The kill switch applies here too.
    public func decide(_ jump: JumpURL, line: String) -> Decision {
        switch lines.of(line) {
        case .available:
            return Decision(jump: jump, target: .line(line), reason: .routed, rule: nil, named: line)
        case .unavailable(let reason, let why):
            return Decision(jump: jump, target: .legacy, reason: .unavailable(reason), rule: nil, unavailable: why, named: line)
        }
    }

    static func describe(_ match: HostConfig.CateMatch) -> String {
        switch match {
        case .any: "\"*\""
        case .ids(let ids) where ids.count == 1: "\(ids[0])"
        case .ids(let ids): "[" + ids.map(String.init).joined(separator: ", ") + "]"
        }
    }
}

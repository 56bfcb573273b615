import IMKit

/// The operator's configuration for every host at once: a kill switch (lines, message keys,
/// components) and staged rollouts, with a version. Published retained on ``topic``, which only
/// `operator` may write; every host applies the newest it has seen, keeps it in its data folder
/// (``FleetCache``), and reports the version it applied on its status topic (``Topic/fleetStatus(user:)``).
///
/// The document, as published (one JSON object, at most ``byteLimit`` bytes):
///
///     { "v": 1, "version": 1767603600000, "madeAt": 1767603600000,
///       "killSwitch": { "lines": ["house"], "messages": ["jobs.interview"], "components": ["voice"] },
///       "rollouts": { "cars": 25 } }
///
/// - `version`: a new one is `max(previous + 1, now in ms)` (``nextVersion(after:now:)``), so
///   versions grow even when clocks differ. A host never replaces a configuration with one of a
///   lower version; between two of the same version, the one with the larger ``digest`` wins, so
///   every host settles on the same one.
/// - `rollouts`: a line serves `N`% of users (0 to 100, at most two decimals); see
///   ``includes(user:in:)``. A line not named serves everyone.
public struct FleetConfig: Sendable, Equatable {
    /// The retained topic the configuration is published on (``Topic/fleetConfig``), as the
    /// front ends name it.
    public static let topic = Topic.fleetConfig.name
    /// The largest configuration a host reads.
    public static let byteLimit = 64 * 1024

    public var version: Int64
    /// When it was made, in ms since 1970.
    public var madeAt: Int64
    /// What the operator turned off fleet-wide.
    public var killSwitch: HostConfig.KillSwitch
    /// Lines served to a share of users: basis points (100 = 1%), 0 to 10,000.
    public var rollouts: [String: Int]
    /// The document as published: what the digest is of, and what the cache keeps.
    public private(set) var bytes: [UInt8]

    /// A new configuration; its bytes are written from these values.
    public init(version: Int64, madeAt: Int64, killSwitch: HostConfig.KillSwitch = .init(), rollouts: [String: Int] = [:]) {
        self.version = version
        self.madeAt = madeAt
        self.killSwitch = killSwitch
        self.rollouts = rollouts
        bytes = []
        bytes = Array(encoded().utf8)
    }

    /// SHA-256 of ``bytes``, in hex.
    public var digest: String { SHA256.hex(bytes) }

    /// The version after `previous` (none: the first) made at `now`.
    public static func nextVersion(after previous: Int64?, now: Int64) -> Int64 {
        max((previous ?? 0) + 1, now)
    }

    /// Whether this configuration replaces `other` (the one applied): a higher version, or the
    /// same version with a larger digest.
    public func wins(over other: Applied?) -> Bool {
        guard let other else { return true }
        return version != other.version ? version > other.version : digest > other.digest
    }

    /// Whether `user` is among the users a rolled-out `line` serves: the first 4 bytes of
    /// SHA-256("<line>/<user>"), read as a big-endian number, modulo 10,000, below the line's
    /// basis points. A user in at N% stays in as N grows.
    public func includes(user: String, in line: String) -> Bool {
        guard let share = rollouts[line] else { return true }
        return Self.bucket(user: user, line: line) < share
    }

    /// The user's place in a line's rollout, 0 to 9,999.
    public static func bucket(user: String, line: String) -> Int {
        var hash = SHA256()
        hash.update(Array("\(line)/\(user)".utf8))
        let first = hash.finish().prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Int(first % 10_000)
    }

    /// How far ahead of this machine's clock a version may be (a day): clocks differ, but a
    /// version from further in the future would shut out every later change.
    public static let futureSkew: Int64 = 24 * 3600 * 1000

    /// Refuses a configuration dated more than ``futureSkew`` after `now`.
    func checkDate(now: Int64) throws(Refusal) {
        guard version <= now + Self.futureSkew else {
            let hours = (version - now) / (3600 * 1000)
            throw Refusal(description: "its version \(version) is dated \(hours) hours ahead of this machine's clock, more than a day (a wrong clock, or a forged document)",
                          kind: .date)
        }
    }

    /// A percentage written as decimal digits ("25", "0.5", "12.34"; at most two decimals, no
    /// exponent), from 0 to 100, in basis points; `nil` for anything else. Read from the text,
    /// not a binary float: 0.29 is 29 basis points.
    public static func basisPoints(percent text: String) -> Int? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0], fraction = parts.count > 1 ? parts[1] : ""
        guard !whole.isEmpty, whole.count <= 3, fraction.count <= 2, parts.count == 1 || !fraction.isEmpty,
              (whole + fraction).allSatisfy({ $0.isASCII && $0.isNumber }),
              let units = Int(whole), let cents = Int(fraction.isEmpty ? "0" : fraction.count == 1 ? fraction + "0" : fraction) else { return nil }
        let share = units * 100 + cents
        return share <= 10_000 ? share : nil
    }

    /// A rollout's share as a person writes it: "25%", "0.5%".
    public static func percent(_ basisPoints: Int) -> String {
        let cents = basisPoints % 100
        return cents == 0 ? "\(basisPoints / 100)%" : "\(basisPoints / 100).\(cents < 10 ? "0" : "")\(cents)%"
    }

    /// The JSON document for these values, keys in a fixed order.
    func encoded() -> String {
        func list(_ items: [String]) -> String { "[" + items.map(JSONNode.quoted).joined(separator: ", ") + "]" }
        let rollouts = self.rollouts.keys.sorted().map { "\(JSONNode.quoted($0)): \(Self.percentNumber(self.rollouts[$0]!))" }
        return """
            { "v": 1, "version": \(version), "madeAt": \(madeAt), \
            "killSwitch": { "lines": \(list(killSwitch.lines)), "messages": \(list(killSwitch.messages)), \
            "components": \(list(killSwitch.components.names)) }, "rollouts": { \(rollouts.joined(separator: ", ")) } }
            """
    }

    private static func percentNumber(_ basisPoints: Int) -> String {
        String(percent(basisPoints).dropLast())
    }
}


// MARK: Reading

extension FleetConfig {
    /// Why a configuration was refused: one line, for a person.
    public struct Refusal: Error, CustomStringConvertible, Sendable, Equatable {
        public var description: String
        /// What was wrong, for choosing what to tell the operator to do.
        public var kind = Kind.document

        public enum Kind: Sendable, Equatable {
            /// Not a configuration (not JSON, a member wrong).
            case document
            /// Over ``FleetConfig/byteLimit``.
            case size
            /// Dated more than ``FleetConfig/futureSkew`` ahead of the clock.
            case date
        }
    }

    /// Reads a published configuration. Whatever the network or a file holds is checked: a
    /// JSON object of at most ``byteLimit`` bytes, `"v": 1`, a positive version, valid line ids,
    /// message keys and component names, rollouts from 0 to 100 with at most two decimals.
    public static func read(_ bytes: [UInt8]) throws(Refusal) -> FleetConfig {
        guard bytes.count <= byteLimit else {
            throw Refusal(description: "it is \(bytes.count) bytes, over the \(byteLimit)-byte limit", kind: .size)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw Refusal(description: "it is not UTF-8") }
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw Refusal(description: "JSON syntax: \(error.message)")
        }
        let reader = DocumentReader(file: "fleet configuration")
        do throws(ConfigError) {
            let top = try reader.members(root, "", allowed: ["v", "version", "madeAt", "killSwitch", "rollouts"])
            func member(_ key: String) -> JSONNode? { top.member(key) }
            guard let v = member("v"), case .number(1, _) = v.value else {
                throw reader.fail(member("v") ?? root, "v", "\"v\" must be 1 (this host reads version 1 of the fleet configuration)")
            }
            let version = try integer(member("version"), "version", reader: reader, root: root)
            let madeAt = try integer(member("madeAt"), "madeAt", reader: reader, root: root)
            var config = FleetConfig(version: version, madeAt: madeAt)
            if let node = member("killSwitch") {
                for entry in try reader.members(node, "killSwitch", allowed: ["lines", "messages", "components"]) where entry.key == "lines" {
                    for (i, element) in try reader.array(entry.value, "killSwitch.lines").enumerated() {
                        let id = try reader.string(element, "killSwitch.lines[\(i)]")
                        guard LineID.isValid(id) else { throw reader.fail(element, "killSwitch.lines[\(i)]", "\"\(id)\" is not a line id") }
                        config.killSwitch.lines.append(id)
                    }
                }
                // Keys and components as host.json reads them; lines may be ones this host lacks.
                let rest = try reader.killSwitch(JSONNode(value: .object(try reader.members(node, "killSwitch", allowed: nil).filter { $0.key != "lines" }),
                                                          position: node.position), "killSwitch", lineOrder: [])
                config.killSwitch.messages = rest.messages
                config.killSwitch.components = rest.components
            }
            if let node = member("rollouts") {
                for entry in try reader.members(node, "rollouts", allowed: nil) {
                    let path = "rollouts." + entry.key
                    guard LineID.isValid(entry.key) else { throw reader.fail(entry.value, path, "\"\(entry.key)\" is not a line id") }
                    guard case .number(_, let text) = entry.value.value, let share = basisPoints(percent: text) else {
                        throw reader.fail(entry.value, path, "a rollout is a percentage from 0 to 100 with at most two decimals")
                    }
                    config.rollouts[entry.key] = share
                }
            }
            config.bytes = bytes
            return config
        } catch {
            throw Refusal(description: (error.path.isEmpty ? "" : error.path + ": ") + error.message)
        }
    }

    private static func integer(_ node: JSONNode?, _ key: String, reader: DocumentReader, root: JSONNode) throws(ConfigError) -> Int64 {
        guard let node, case .number(let value, _) = node.value, value >= 1, value < 1e15, value.rounded() == value else {
            throw reader.fail(node ?? root, key, "\"\(key)\" must be a whole number of milliseconds since 1970, from 1 to 10^15")
        }
        return Int64(value)
    }
}


// MARK: What a host makes of a document

extension FleetConfig {
    /// What a host applies, all that decides whether the next document replaces it.
    public struct Applied: Sendable, Hashable {
        public var version: Int64
        /// ``FleetConfig/digest`` of the document applied.
        public var digest: String
    }

    /// This configuration, as what a host applies.
    public var applied: Applied { Applied(version: version, digest: digest) }

    /// What a host does with what the fleet topic holds.
    public enum Verdict: Sendable, Equatable {
        /// Nothing is held (removed, or never published): the host keeps what it applies.
        case removed
        /// Not a configuration a host takes (invalid, too large, dated too far ahead): the host
        /// keeps what it applies.
        case refused(Refusal)
        /// The one the host applies already.
        case same
        /// It loses to the one the host applies (a lower version, or the same with a smaller
        /// digest): the host ignores it.
        case older(FleetConfig, than: Applied)
        /// The host applies it.
        case applies(FleetConfig)
    }

    /// The one judgement of a document on the fleet topic: hosts make it of what arrives, with
    /// the configuration they apply and their clock; the operator's tools make it of what the
    /// broker holds (for each host, with what the host reports it applies) and of what they are
    /// about to publish, with the operator's clock. Neither keeps its own copy of the rules.
    public static func verdict(on bytes: [UInt8], applied: Applied?, now: Int64) -> Verdict {
        guard !bytes.isEmpty else { return .removed }
        let config: FleetConfig
        do throws(Refusal) {
            config = try read(bytes)
            try config.checkDate(now: now)
        } catch {
            return .refused(error)
        }
        if let applied {
            if config.digest == applied.digest { return .same }
            if !config.wins(over: applied) { return .older(config, than: applied) }
        }
        return .applies(config)
    }
}

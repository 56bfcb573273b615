/// A release of nats-server, as its `--version` says it (`nats-server: v2.9.10`): compared as
/// semantic versions, a pre-release (`2.10.0-RC.1`) before its release.
public struct NATSVersion: Sendable, Comparable, Hashable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int
    /// What follows `-` (`RC.1`), or `nil` for a release.
    public var prerelease: String?

    public init(_ major: Int, _ minor: Int, _ patch: Int, prerelease: String? = nil) {
        (self.major, self.minor, self.patch, self.prerelease) = (major, minor, patch, prerelease)
    }

    /// `2.9.10`, `v2.9.10` or `2.10.0-RC.1`; `nil` for anything else.
    public init?(_ text: some StringProtocol) {
        var text = Substring(text)
        if text.first == "v" { text = text.dropFirst() }
        let dash = text.firstIndex(of: "-")
        let numbers = text[..<(dash ?? text.endIndex)].split(separator: ".", omittingEmptySubsequences: false)
        let parts = numbers.compactMap { part in (1...6).contains(part.utf8.count) && part.utf8.allSatisfy({ (48...57).contains($0) }) ? Int(part) : nil }
        guard numbers.count == 3, parts.count == 3 else { return nil }
        let rest = dash.map { String(text[text.index(after: $0)...]) }
        if let rest, rest.isEmpty || !rest.utf8.allSatisfy({ (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 46 || $0 == 45 }) {
            return nil
        }
        self.init(parts[0], parts[1], parts[2], prerelease: rest)
    }

    public var description: String { "\(major).\(minor).\(patch)" + (prerelease.map { "-" + $0 } ?? "") }

    public static func < (a: NATSVersion, b: NATSVersion) -> Bool {
        if (a.major, a.minor, a.patch) != (b.major, b.minor, b.patch) { return (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch) }
        switch (a.prerelease, b.prerelease) {
        case (nil, _): return false
        case (_, nil): return true
        // Two pre-releases of one version: by their text (RC.1 before RC.2), enough for a gate.
        case (let x?, let y?): return x < y
        }
    }
}

/// The nats-server options a cluster's node configuration writes that not every release
/// takes: each one's block, name, the first release whose configuration parser reads it, and
/// the first that ignores it again (read in nats-server's `server/opts.go` at each tag: an
/// option a release does not know is refused, "unknown field", and the node does not start; one
/// it ignores is a warning at every start). ``BrokerCluster`` writes each through
/// ``line(_:for:)``: set where it is ``taken(by:)``, else a comment saying why not.
///
/// The MQTT settings are ``required``: they place where a session and its queue are kept, so a
/// release older than any of them is refused at `broker init` rather than run otherwise. The
/// others are written only where they are taken.
public enum NATSOption: CaseIterable, Sendable {
    /// `mqtt { max_ack_pending }`: how many QoS 1 messages a subscription has unacknowledged.
    case mqttMaxAckPending
    /// `mqtt { stream_replicas }`: how many nodes keep each MQTT stream.
    case mqttStreamReplicas
    /// `mqtt { consumer_replicas }`: how many nodes keep each MQTT consumer (a QoS 1 subscription).
    case mqttConsumerReplicas
    /// `mqtt { consumer_memory_storage }`: consumers kept in memory rather than on disk.
    case mqttConsumerMemoryStorage
    /// `mqtt { consumer_inactive_threshold }`: how long a consumer of a gone session is kept.
    case mqttConsumerInactiveThreshold
    /// `jetstream { sync_interval }`: how often JetStream flushes its store to disk.
    case jetstreamSyncInterval

    /// The block it is written in.
    public var block: String {
        switch self {
        case .jetstreamSyncInterval: "jetstream"
        default: "mqtt"
        }
    }

    /// Its name in that block.
    public var name: String {
        switch self {
        case .mqttMaxAckPending: "max_ack_pending"
        case .mqttStreamReplicas: "stream_replicas"
        case .mqttConsumerReplicas: "consumer_replicas"
        case .mqttConsumerMemoryStorage: "consumer_memory_storage"
        case .mqttConsumerInactiveThreshold: "consumer_inactive_threshold"
        case .jetstreamSyncInterval: "sync_interval"
        }
    }

    /// The first release that takes it.
    public var since: NATSVersion {
        switch self {
        case .mqttMaxAckPending: NATSVersion(2, 2, 0)
        case .mqttStreamReplicas, .mqttConsumerReplicas, .mqttConsumerMemoryStorage: NATSVersion(2, 8, 3)
        case .mqttConsumerInactiveThreshold: NATSVersion(2, 9, 0)
        case .jetstreamSyncInterval: NATSVersion(2, 10, 0)
        }
    }

    /// The first release that reads it but ignores it, warning at every start; `nil`: none yet.
    /// consumer_replicas from 2.9.12: MQTT's message stream keeps messages while a consumer is
    /// interested, and such a stream's consumers must have its replicas, so every consumer gets
    /// stream_replicas (nats-server commit 4a3c27a).
    public var ignoredSince: NATSVersion? {
        switch self {
        case .mqttConsumerReplicas: NATSVersion(2, 9, 12)
        default: nil
        }
    }

    /// Whether a release older than ``since`` is refused (the MQTT settings), rather than
    /// written without it.
    public var required: Bool { block == "mqtt" }

    /// Whether `version` takes it, and applies it.
    public func taken(by version: NATSVersion) -> Bool { version >= since && ignoredSince.map { version < $0 } != false }

    /// The oldest release a cluster runs: the latest ``since`` of the ``required`` options.
    public static let oldestSupported: NATSVersion = allCases.filter(\.required).map(\.since).max() ?? NATSVersion(2, 2, 0)

    /// The line a configuration holds for it in `version`: `name: value`, or, where `version`
    /// does not take it, a comment saying so (so the file still says why it is not set).
    public func line(_ value: String, for version: NATSVersion) -> String {
        if taken(by: version) { return "\(name): \(value)" }
        if let ignoredSince, version >= ignoredSince {
            return "# \(name): \(value) is not written: nats-server \(version) ignores it (every release from \(ignoredSince) does)"
        }
        return "# \(name): \(value) is not written: nats-server \(version) does not take it (\(since) and later do)"
    }
}

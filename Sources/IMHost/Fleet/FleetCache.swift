#if canImport(Glibc)
import Glibc
#endif

/// The last good fleet configuration, kept in the data folder (`<data>/fleet.json`, written
/// atomically) so a host that cannot reach the broker, or starts before it, applies what it last
/// knew: fleet control never fails open. `route`, `plugins` and `open` read only this.
public struct FleetCache: Sendable {
    public let path: String

    public init(dataFolder: String) { path = dataFolder + "/fleet.json" }

    /// The cached configuration; `nil` when there is none. A cache that cannot be read or is not
    /// a valid configuration is reported in `problem` and not used.
    public func load() -> (config: FleetConfig?, problem: String?) {
        let bytes: [UInt8]
        var info = stat()
        guard lstat(path, &info) == 0 else { return (nil, nil) }
        do {
            bytes = Array(try FileSystem.readDocument(path, limit: FleetConfig.byteLimit).utf8)
        } catch {
            return (nil, "cannot read the cached fleet configuration \(path) (\(error)); using host.json alone until the broker sends one")
        }
        // Judged as one from the broker is, by a host that applies nothing yet.
        switch FleetConfig.verdict(on: bytes, applied: nil, now: Clock.now()) {
        case .applies(let config):
            return (config, nil)
        case .refused(let error):
            return (nil, "the cached fleet configuration \(path) is not valid (\(error)); using host.json alone until the broker sends one")
        case .removed, .same, .older:
            return (nil, "the cached fleet configuration \(path) is empty; using host.json alone until the broker sends one")
        }
    }

    /// Keeps `config` as the last good one.
    public func save(_ config: FleetConfig) throws(FileSystem.Failure) {
        try FileSystem.writeAtomically(config.bytes, to: path, mode: 0o644)
    }
}

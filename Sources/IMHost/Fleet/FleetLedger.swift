/// The fleet configurations this operator knows were on the fleet topic: every one its commands
/// published or read there that hosts would take, as (version, digest), kept in the operator's
/// data folder (`<data>/fleet-ledger`, one `VERSION DIGEST` a line, the newest 1,000).
///
/// A host's status report is written by its user, and any user can write anything on its own
/// status topic: a version a report claims counts for what the next change goes above only when
/// the operator can vouch for it (``FleetOperator/Standing``). This ledger is what it vouches
/// with, beside what the broker holds now and what went by on the connection, so a broker
/// restored from a backup still has hosts' newer versions vouched for by the operator that made
/// them.
public struct FleetLedger: Sendable {
    public let path: String
    /// The most entries kept.
    static let limit = 1000

    public init(dataFolder: String) { path = dataFolder + "/fleet-ledger" }

    /// What it holds (nothing when there is no file, or it cannot be read).
    public func load() -> Set<FleetConfig.Applied> {
        guard let text = try? FileSystem.readDocument(path, limit: Self.limit * 100) else { return [] }
        var known: Set<FleetConfig.Applied> = []
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let version = Int64(parts[0]), parts[1].utf8.count == 64 else { continue }
            known.insert(FleetConfig.Applied(version: version, digest: String(parts[1])))
        }
        return known
    }

    /// Adds `entries`, keeping the newest ``limit``; a failure to write is not the operator's
    /// concern now (it vouches for less later).
    public func record(_ entries: Set<FleetConfig.Applied>) {
        let known = load()
        guard !entries.isSubset(of: known) else { return }
        let kept = known.union(entries).sorted { ($0.version, $0.digest) > ($1.version, $1.digest) }.prefix(Self.limit)
        let text = kept.map { "\($0.version) \($0.digest)\n" }.joined()
        try? FileSystem.makeFolders(FileSystem.directory(of: path))
        try? FileSystem.writeAtomically(Array(text.utf8), to: path, mode: 0o644)
    }
}

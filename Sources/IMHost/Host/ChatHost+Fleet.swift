#if canImport(Glibc)
import Glibc
#endif

/// The fleet configuration, as a host applies it: the newest version wins, the last good one is
/// kept in the data folder, and an invalid one changes nothing.
extension ChatHost {
    /// Applies a fleet configuration that came from the broker, if it wins over the one
    /// applied: kept in the cache, applied live (as a host.json edit is), and reported on the
    /// host's status topic. Returns what a person should see: the new configuration applied, or
    /// one line saying why it was refused; nothing for an older one (a late retained message).
    func receiveFleet(_ bytes: [UInt8]) -> Courier.Event? {
        let received: FleetConfig
        do throws(FleetConfig.Refusal) {
            received = try FleetConfig.read(bytes)
        } catch {
            let kept = config.fleet.map { "version \($0.config.version) stays" } ?? "host.json alone applies"
            return .notice("refused a fleet configuration: \(error); \(kept) (the operator publishes a valid one with imhost fleet)")
        }
        let applied = config.fleet?.config
        guard received.wins(over: applied) else { return nil }
        // Another process of this data folder may have kept a newer one meanwhile: keep the
        // newest on disk.
        let cache = FleetCache(dataFolder: dataFolder)
        if received.wins(over: cache.load().config) {
            do throws(FileSystem.Failure) {
                try cache.save(received)
            } catch {
                announce("cannot keep fleet configuration version \(received.version) in \(cache.path) (\(error)); it applies until this host stops")
            }
        }
        fleetProblem = nil
        applyFleet(received)
        return .fleetApplied(version: received.version, summary: Self.summary(of: received, user: userID))
    }

    /// Applies `fleet` live: lines it turns off stop serving (their services stop), lines it
    /// turns back on serve again; pages opened from now on follow it.
    func applyFleet(_ fleet: FleetConfig) {
        var next = config
        next.fleet = FleetState(config: fleet, user: userID)
        // apply(_:) keeps the fleet of self.config: set it first.
        setFleet(next.fleet)
        apply(next)
        courier?.fleetVersion = fleet.version
    }

    /// In a process that does not hold the connection: applies the fleet configuration the one
    /// that does kept in the cache, when it changed and wins over the one applied (a stat a call).
    public func followFleetCache() -> Courier.Event? {
        let cache = FleetCache(dataFolder: dataFolder)
        var info = stat()
        let stamp = lstat(cache.path, &info) == 0 ? [Int(info.st_ino), Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec] : []
        guard stamp != fleetCacheStamp else { return nil }
        fleetCacheStamp = stamp
        guard let cached = cache.load().config, cached.wins(over: config.fleet?.config) else { return nil }
        applyFleet(cached)
        return .fleetApplied(version: cached.version, summary: Self.summary(of: cached, user: userID))
    }

    /// What a fleet configuration turns off, for one line: "house off; cars at 25% (you are out)".
    static func summary(of fleet: FleetConfig, user: String) -> String {
        var parts = fleet.killSwitch.lines.map { "line \($0) off" }
        parts += fleet.killSwitch.messages.map { "key \($0) off" }
        parts += fleet.killSwitch.components.names.map { "component \($0) off" }
        parts += fleet.rollouts.keys.sorted().map { line in
            "line \(line) at \(FleetConfig.percent(fleet.rollouts[line]!)) (\(fleet.includes(user: user, in: line) ? "you are in" : "you are out"))"
        }
        return parts.isEmpty ? "nothing turned off" : parts.joined(separator: "; ")
    }
}

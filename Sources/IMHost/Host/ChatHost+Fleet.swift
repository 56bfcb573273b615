#if canImport(Glibc)
import Glibc
#endif

/// The fleet configuration, as a host applies it: the newest version wins, the last good one is
/// kept in the data folder, and an invalid one changes nothing.
extension ChatHost {
    /// Applies a fleet configuration that came from the broker, if it wins over the one
    /// applied: kept in the cache, applied live (as a host.json edit is), and reported on the
    /// host's status topic. Returns what a person should see: the configuration applied and what
    /// it changed, or one line saying why it was not (invalid, removed, older than the one
    /// applied, or dated in the future); nothing for the one already applied.
    func receiveFleet(_ bytes: [UInt8]) -> Courier.Event? {
        let applied = config.fleet?.config
        let kept = applied?.version
        let received: FleetConfig
        switch FleetConfig.verdict(on: bytes, applied: applied?.applied, now: Clock.now()) {
        case .removed:
            return fleetRefusal(.removed(kept: kept))
        case .refused(let error):
            return fleetRefusal(.refused(error, kept: kept))
        case .same:
            return nil
        case .older(let older, let newer):
            return fleetRefusal(.older(version: older.version, applied: newer.version))
        case .applies(let config):
            received = config
        }
        // Another process of this data folder may have kept a newer one meanwhile: keep the
        // newest on disk.
        let cache = FleetCache(dataFolder: dataFolder)
        if received.wins(over: cache.load().config?.applied) {
            do throws(FileSystem.Failure) {
                try cache.save(received)
            } catch {
                announce("cannot keep fleet configuration version \(received.version) in \(cache.path) (\(error)); it applies until this host stops")
            }
        }
        fleetProblem = nil
        return applyFleet(received)
    }

    /// A configuration not applied, said at most ten a minute (a flood of junk on the fleet
    /// topic must not bury the chat); the rest are counted in the next one said.
    private func fleetRefusal(_ why: FleetNotApplied) -> Courier.Event? {
        guard fleetRefusals.admits(at: Clock.now()) else { return nil }
        return .notice(.fleetNotApplied(why, unsaid: fleetRefusals.takeUnsaid()))
    }

    /// Applies `fleet` live: lines it turns off stop serving (their services stop), lines it
    /// turns back on serve again; pages opened from now on follow it. Returns what a person
    /// sees: the version, and what it changed for this user.
    func applyFleet(_ fleet: FleetConfig) -> Courier.Event {
        let before = config.fleet?.config
        apply(config, fleet: fleet)
        return .fleetApplied(version: fleet.version, summary: Self.changes(from: before, to: fleet, user: userID))
    }

    /// In a process that does not hold the connection: applies the fleet configuration the one
    /// that does kept in the cache, when it changed and wins over the one applied (a stat a call).
    public func followFleetCache() -> Courier.Event? {
        let cache = FleetCache(dataFolder: dataFolder)
        var info = stat()
        let stamp = lstat(cache.path, &info) == 0 ? [Int(info.st_ino), Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec] : []
        guard stamp != fleetCacheStamp else { return nil }
        fleetCacheStamp = stamp
        guard let cached = cache.load().config, cached.wins(over: config.fleet?.config.applied) else { return nil }
        return applyFleet(cached)
    }

    /// What this host reports with its fleet status: the configuration it applies, the lines
    /// installed or configured, and the message keys their manifests register (as the plugin
    /// cache knows them: no line's library is opened for it).
    public var fleetReport: FleetReport {
        let lines = Set(config.lineOrder).union(self.lines.rows.compactMap(\.lineID))
        let keys = Set(self.lines.rows.flatMap { $0.manifest?.messageKeys ?? [] })
        return FleetReport(applied: config.fleet?.config.applied, lines: lines.sorted(), keys: keys.sorted())
    }

    /// What changed from `old` to `new`, for one line, at most five items: "line house off; line
    /// cars at 25% (you are out)"; "nothing turned off" when nothing is.
    static func changes(from old: FleetConfig?, to new: FleetConfig, user: String) -> String {
        let before = old ?? FleetConfig(version: 0, madeAt: 0)
        func diff(_ kind: String, _ was: [String], _ now: [String]) -> [String] {
            now.filter { !was.contains($0) }.map { "\(kind) \($0) off" } + was.filter { !now.contains($0) }.map { "\(kind) \($0) on" }
        }
        var parts = diff("line", before.killSwitch.lines, new.killSwitch.lines)
        parts += diff("key", before.killSwitch.messages, new.killSwitch.messages)
        parts += diff("component", before.killSwitch.components.names, new.killSwitch.components.names)
        for line in Set(before.rollouts.keys).union(new.rollouts.keys).sorted() where before.rollouts[line] != new.rollouts[line] {
            let share = new.rollouts[line].map(FleetConfig.percent) ?? "100%"
            parts.append("line \(line) at \(share) (\(new.includes(user: user, in: line) ? "you are in" : "you are out"))")
        }
        if parts.isEmpty {
            let off = new.killSwitch.lines.count + new.killSwitch.messages.count + new.killSwitch.components.names.count
            return off == 0 && new.rollouts.isEmpty ? "nothing turned off" : "no change here"
        }
        return parts.prefix(5).joined(separator: "; ") + (parts.count > 5 ? "; and \(parts.count - 5) more (imhost fleet show)" : "")
    }
}

import IMHost
import IMHostRuntime
#if canImport(Glibc)
import Glibc
#endif

/// The spare worker `imhost web` keeps for the next page a tab opens (``SpareWorker``): when one
/// is started, when one that read something now changed gives way, and how they end. It lives on
/// the server's thread; the page that takes the spare owns it from then on.
final class SpareKeeper {
    private var spare: SpareWorker?
    /// Spares asked to end (they read what changed since), reaped as they do; killed past 2 s.
    private var retiring: [SpareWorker] = []
    /// When a spare last ended before any page took it, or could not be started: another is not
    /// started for a minute (the page's own worker says what is wrong meanwhile).
    private var lostAt: UInt64?
    /// The plugin folder as the spare found it (its entries: a file put in, renamed or taken out),
    /// and the folder as last seen, since when: a spare is started once it has stayed the same
    /// for a second (a build writing into it is not chased).
    private var folder: FileIdentity?
    private var folderSeen: (identity: FileIdentity?, since: UInt64)?
    private let pluginsFolder: String
    private let startOne: () -> SpareWorker?

    /// `start` starts a spare for the server's pages.
    init(pluginsFolder: String, start: @escaping () -> SpareWorker?) {
        self.pluginsFolder = pluginsFolder
        startOne = start
    }

    /// At each turn of the server's loop: reaps the spares that were asked to end, notices one
    /// that ended on its own or read a plugin folder that changed, and starts one when there is
    /// none, unless a page waits for its first drawing (`pageWaiting`: the spare's start would
    /// slow it), the folder is still changing, or one was lost within the minute.
    func keep(pageWaiting: @autoclosure () -> Bool) {
        let now = Clock.monotonic()
        retiring.removeAll { old in
            guard old.isRunning else { return true }
            guard let since = old.endingSince, now - since > 2_000_000_000 else { return false }
            old.kill()
            return true
        }
        if let spare, !spare.isRunning {
            self.spare = nil
            lostAt = now
        }
        let seen = FileIdentity.of(pluginsFolder)
        if folderSeen?.identity != seen { folderSeen = (seen, now) }
        if spare != nil, seen != folder { retire() }
        guard spare == nil, lostAt.map({ now - $0 > 60_000_000_000 }) ?? true, let folderSeen, now - folderSeen.since > 1_000_000_000,
              !pageWaiting() else { return }
        folder = seen
        spare = startOne()
        if spare == nil { lostAt = now }
    }

    /// The spare read something that has changed: it is asked to end, and a new one started.
    /// `again`: what changed may be what ended the last one, which is tried again at once.
    func retire(again: Bool = false) {
        if again { lostAt = nil }
        guard let spare else { return }
        spare.end()
        retiring.append(spare)
        self.spare = nil
    }

    /// The spare, for a page that starts now; none is kept until that page is drawn.
    func take() -> SpareWorker? {
        defer { spare = nil }
        return spare
    }

    /// Ends every spare: each signs out within 2 s, or is killed.
    func stop() {
        retire()
        let deadline = Clock.monotonic() + 2_000_000_000
        while retiring.contains(where: \.isRunning), Clock.monotonic() < deadline { usleep(10_000) }
        for old in retiring where old.isRunning { old.kill() }
        retiring = []
    }
}

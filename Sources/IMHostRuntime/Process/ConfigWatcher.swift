import IMHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Tells when a chat should re-read host.json and the quarantine: on `SIGHUP`, or when either
/// file changed on disk (its modification or change time, size or inode: editors often replace
/// a file, and a same-size edit whose modification time was put back still moves the change
/// time, which nobody can set).
package final class ConfigWatcher {
    /// Set by the `SIGHUP` handler; an atomic, the only thing a signal handler may touch.
    private static let hangup = Atomic<Bool>(false)

    private let paths: [String]
    private var seen: [Signature?]

    private struct Signature: Equatable {
        var seconds: Int
        var nanoseconds: Int
        var changed: Int
        var changedNanoseconds: Int
        var size: Int
        var inode: UInt
    }

    package init(paths: [String]) {
        self.paths = paths
        seen = paths.map(Self.signature)
        signal(SIGHUP) { _ in ConfigWatcher.hangup.store(true, ordering: .relaxed) }
        // A parent may start us with SIGHUP blocked (the mask is inherited): unblock it.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Whether a reload is due now; a due reload is reported once.
    package func reloadDue() -> Bool {
        let signalled = Self.hangup.exchange(false, ordering: .relaxed)
        let current = paths.map(Self.signature)
        let changed = current != seen
        seen = current
        return signalled || changed
    }

    /// Records the files as they are now, after a reload asked for another way.
    package func markSeen() { seen = paths.map(Self.signature) }

    private static func signature(of path: String) -> Signature? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Signature(seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec,
                         changed: info.st_ctim.tv_sec, changedNanoseconds: info.st_ctim.tv_nsec,
                         size: Int(info.st_size), inode: UInt(info.st_ino))
    }
}

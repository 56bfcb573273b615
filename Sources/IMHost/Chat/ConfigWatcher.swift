import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Tells when host.json should be read again: on `SIGHUP`, or when the file changed on disk
/// (its modification time, size or inode: editors often replace the file).
final class ConfigWatcher {
    /// Set by the `SIGHUP` handler; an atomic, the only thing a signal handler may touch.
    private static let hangup = Atomic<Bool>(false)

    private let path: String
    private var seen: Signature?

    private struct Signature: Equatable {
        var seconds: Int
        var nanoseconds: Int
        var size: Int
        var inode: UInt
    }

    init(path: String) {
        self.path = path
        seen = Self.signature(of: path)
        signal(SIGHUP) { _ in ConfigWatcher.hangup.store(true, ordering: .relaxed) }
        // A parent may start us with SIGHUP blocked (the mask is inherited): unblock it.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Whether a reload is due now; a due reload is reported once.
    func reloadDue() -> Bool {
        let signalled = Self.hangup.exchange(false, ordering: .relaxed)
        let current = Self.signature(of: path)
        let changed = current != nil && current != seen
        if changed { seen = current }
        return signalled || changed
    }

    /// Records the file as it is now, after a reload it asked for itself.
    func markSeen() { seen = Self.signature(of: path) }

    private static func signature(of path: String) -> Signature? {
        guard let info = try? FileSystem.status(path, followLinks: true) else { return nil }
        return Signature(seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec,
                         size: Int(info.st_size), inode: UInt(info.st_ino))
    }
}

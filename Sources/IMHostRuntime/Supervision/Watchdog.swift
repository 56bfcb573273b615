/// Turns a call of line code that does not return into a hang: the breadcrumb's frame must move
/// (its sequence changes with every call and return) within ``limit``.
///
/// Time the supervisor itself did not run (it was stopped with Ctrl-Z or SIGSTOP, and the
/// worker with it) is not the line's: a gap between two looks longer than ``pause`` is taken
/// off the clock, so a chat stopped during a legitimate call and resumed is never a hang.
struct Watchdog {
    /// Nanoseconds one call may take.
    let limit: UInt64
    /// A gap between looks longer than this (nanoseconds) means the watcher did not run.
    let pause: UInt64
    private var still: (sequence: UInt32, since: UInt64)?
    private var lastLook: UInt64?

    init(seconds: Double, pause: UInt64 = 1_000_000_000) {
        limit = UInt64(seconds * 1e9)
        self.pause = pause
    }

    /// Looks at the breadcrumb at `now` (monotonic nanoseconds): `depth` calls deep in line code,
    /// its frame at `sequence`; `running` is false while the worker itself is stopped (SIGSTOP).
    /// Returns true when one frame has been current, running, longer than the limit.
    mutating func isHung(depth: Int, sequence: UInt32, now: UInt64, running: Bool = true) -> Bool {
        defer { lastLook = now }
        if let lastLook, now > lastLook, !running || now - lastLook > pause, let seen = still {
            // The watcher was stopped, or the worker is: the call was not running.
            still = (seen.sequence, seen.since + (now - lastLook))
        }
        guard depth > 0 else {
            still = nil
            return false
        }
        guard let seen = still, seen.sequence == sequence else {
            still = (sequence, now)
            return false
        }
        return now >= seen.since && now - seen.since >= limit
    }
}

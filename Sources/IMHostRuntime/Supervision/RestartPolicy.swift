/// How often a crashed worker is started again, as systemd's `StartLimitBurst` within
/// `StartLimitIntervalSec`: up to ``burst`` restarts within ``window`` milliseconds; a crash past
/// that stops. A chat that crashes now and then goes on; one that crashes at every start does not
/// spin.
struct RestartPolicy {
    /// Restarts allowed within the window.
    let burst: Int
    /// Milliseconds.
    let window: Int64
    /// When the recent restarts happened.
    private var restarts: [Int64] = []

    init(burst: Int = 3, window: Int64 = 60_000) {
        self.burst = burst
        self.window = window
    }

    /// Whether a crash at `now` (milliseconds) may be followed by a restart; if so, counts it.
    mutating func allowsRestart(at now: Int64) -> Bool {
        restarts.removeAll { now - $0 > window }
        guard restarts.count < burst else { return false }
        restarts.append(now)
        return true
    }

    /// Restarts counted within the window, as of the last question.
    var recent: Int { restarts.count }
}

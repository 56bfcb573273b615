/// At most ten refusals said a minute: a flood of junk from the network (envelopes in an inbox,
/// configurations on the fleet topic) must not bury the chat. What goes unsaid is counted, for
/// one line that sums it up.
struct RefusalLimit {
    static let windowMilliseconds: Int64 = 60_000
    static let saidPerWindow = 10

    /// When the current minute started.
    private(set) var start: Int64 = 0
    private var said = 0
    /// Refusals kept quiet and not summed up yet.
    private(set) var unsaid = 0

    /// Whether the minute that started at ``start`` is over at `now`.
    func isOver(at now: Int64) -> Bool { now - start >= Self.windowMilliseconds }

    /// Whether a refusal at `now` is said: yes for the first ten of a minute (a minute that is
    /// over starts a new one); the rest are counted in ``unsaid``.
    mutating func admits(at now: Int64) -> Bool {
        if isOver(at: now) {
            start = now
            said = 0
        }
        guard said < Self.saidPerWindow else {
            unsaid += 1
            return false
        }
        said += 1
        return true
    }

    /// How many went unsaid since the last time this was asked; they are summed up now.
    mutating func takeUnsaid() -> Int {
        defer { unsaid = 0 }
        return unsaid
    }

    /// Ends the current minute at `now` (and starts the next): returns how many went unsaid.
    mutating func endMinute(at now: Int64) -> Int {
        start = now
        said = 0
        return takeUnsaid()
    }
}

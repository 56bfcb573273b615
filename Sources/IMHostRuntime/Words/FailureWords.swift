import IMHost

/// The terminal's words for why one of the user's messages failed (``MessageFailure``), as `/why`,
/// the connection's notices and a scenario's transcript say it: one line, as worded (a peer's
/// words quoted as they came: whoever prints it makes it safe), ending in what to type to send
/// it again where typing does.
package enum FailureWords {
    /// `failure` in one line; `retry` is what sends it again: `/retry 4` for one message, `/retry N`
    /// in a notice of several.
    package static func sentence(_ failure: MessageFailure, retry: String) -> String {
        switch failure {
        case .refusedByPeer(let refusal):
            refused(refusal, retry: retry)
        case .tooLargeForBroker(let refusal):
            tooLarge(refusal, retry: retry)
        case .notDelivered(let hours):
            "not delivered within \(Self.hours(hours)) hours; \(retry) sends it again"
        case .unknownState(let state):
            "the store holds the state \"\(state)\", which this imhost does not know"
        case .unknownCode(let code):
            "failed for a reason this imhost does not know (\"\(code)\", stored by a newer one)"
        case .other(let text):
            text
        }
    }

    /// What the user's messages refused by a peer's host say, read from its code: a code this
    /// host does not know is said with the peer's words.
    private static func refused(_ refusal: PeerRefusal, retry: String) -> String {
        let peer = refusal.peer, said = refusal.reason.map { " (\($0))" } ?? ""
        switch refusal.code {
        case .kind?, .version?:
            return "\(peer)'s imhost is older than this one and cannot take it\(said); it is not sent again: \(retry) once \(peer) has updated"
        case .blocked?:
            return "\(peer) blocked you; it is not sent again"
        case .budget?:
            return "\(peer)'s host takes no more from you today\(said); \(retry) sends it again tomorrow"
        case .tooLarge?:
            return "too large for \(peer)'s host\(said)"
        case let code?:
            return "refused by \(peer) (\(code))\(said)"
        case nil:
            return "refused by \(peer)\(refusal.reason.map { ": \($0)" } ?? "")"
        }
    }

    private static func tooLarge(_ refusal: BrokerTooLarge, retry: String) -> String {
        var size = Self.size(refusal.bytes), most = refusal.limit.map(Self.size)
        // Sizes that round alike say their bytes.
        if size == most { size = "\(refusal.bytes) bytes"; most = refusal.limit.map { "\($0) bytes" } }
        let takes = most.map { "the broker takes messages up to \($0)" } ?? "the broker does not take a message this large"
        return "\(takes); this one is \(size): not sent. The broker's operator runs imhost broker upgrade DIR and restarts it; then \(retry) sends it again"
    }

    /// A size for a person: "900 bytes", "70 KB", "1.2 MB" (1000s, as a file manager says them).
    package static func size(_ bytes: Int) -> String {
        if bytes < 1000 { return "\(bytes) bytes" }
        if bytes < 1_000_000 { return "\(bytes / 1000) KB" }
        let tenths = (bytes + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10) MB"
    }

    /// The units a length of time is said in.
    package enum TimeUnit: String, Sendable { case second, minute, hour, day }

    /// A length of time for a person: "45 seconds", "2 minutes", "3 hours", "2 days".
    package static func duration(seconds: Int) -> String {
        duration(seconds: seconds) { count, unit in "\(count) \(unit.rawValue)\(count == 1 ? "" : "s")" }
    }

    /// A length of time in the unit a person would count it in, said by `say` (a count and its
    /// unit), in any language.
    package static func duration(seconds: Int, say: (Int, TimeUnit) -> String) -> String {
        if seconds < 120 { return seconds % 60 == 0 && seconds > 0 ? say(seconds / 60, .minute) : say(seconds, .second) }
        if seconds < 7_200 { return say(seconds / 60, .minute) }
        if seconds < 172_800 { return say(seconds / 3_600, .hour) }
        return say(seconds / 86_400, .day)
    }

    /// Hours as host.json gives them: "72", "0.5".
    package static func hours(_ hours: Double) -> String {
        hours == hours.rounded() ? "\(Int(hours))" : "\(hours)"
    }
}

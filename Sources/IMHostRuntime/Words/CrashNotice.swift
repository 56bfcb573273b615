import IMHost
import IMKit

extension Supervisor.Crash {
    /// One line for a person: whose code crashed doing what, what it cost, and how to lift it.
    /// `callLimit` (seconds) words a hang.
    package func notice(callLimit: Double) -> String {
        let seconds = callLimit == callLimit.rounded() ? "\(Int(callLimit)) s" : "\(callLimit) s"
        let ending = record.isHang ? "hung (no return within \(seconds))" : "crashed (\(record.signal))"
        let what = record.site.phrase(key: record.key, message: record.message)
        let said = record.detail.map { " It said: \($0)." } ?? ""
        guard let line = record.line else {
            let who = record.file.map { "plugin file \($0)" } ?? "the chat worker"
            return TerminalText.safe("imhost: \(who) \(ending) outside any line's code; it was restarted.\(said)")
        }
        let cost: String
        let lift: String
        switch record.quarantined {
        case "message":
            cost = "that message from \(record.sender ?? "another host") is quarantined (a crash on another host's message costs only that message): it shows as a placeholder"
            lift = " Lift with: imhost quarantine lift \(record.key ?? line)."
        case "sender":
            cost = "\(record.key ?? "") messages from \(record.sender ?? "that sender") are held (\(Quarantine.heldAfter) of them crashed it within ten minutes): they show as held, without running line code"
            lift = " Lift with: imhost quarantine lift \(record.key ?? line)."
        case "key":
            cost = "message key \(record.key ?? "") is quarantined: its messages show as placeholders"
            lift = " Lift with: imhost quarantine lift \(record.key ?? line)."
        case "line":
            cost = "line '\(line)' is quarantined: its chats open on the legacy page"
            lift = " Lift with: imhost quarantine lift \(line)."
        default:
            cost = "nothing was quarantined"
            lift = ""
        }
        let kept = unrecorded.map { " It could not be recorded (\($0)): the quarantine holds for this chat only." }
            ?? notLogged.map { " It is not in crashes.log (\($0))." } ?? ""
        return TerminalText.safe("imhost: line '\(line)' \(ending) \(what); \(cost).\(lift)\(kept)\(said)")
    }
}

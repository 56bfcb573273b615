import IMHost

/// What changed between two drawings of one chat page, keyed by message (its number in the
/// conversation, which never changes): a message added at the end, one whose state or body
/// changed, one that left the window, how many earlier messages there are. A front end that
/// keeps what it drew (the browser's tabs) applies these instead of drawing the page again; one
/// that redraws (the terminal) draws the new value. When the page as a whole changed (another
/// title, line, route or components: a kill switch, a crash, a reload; what the peer's host
/// draws, as its receipts said; older messages loaded; the first message of an empty chat), the
/// change is ``replaced``.
public enum PageChanges: Sendable, Equatable {
    /// Draw the new page whole.
    case replaced
    /// Apply these, in order (none: nothing a person sees changed).
    case messages([Change])

    public enum Change: Sendable, Equatable {
        /// A message after the last one shown.
        case added(PageView.Message)
        /// A message shown, drawn anew (its state, its body, its photos, how the peer drew it).
        case changed(PageView.Message)
        /// A message no longer shown (the window moved past it), by number.
        case removed(Int)
        /// How many earlier messages are not shown (the "show earlier" control).
        case earlier(Int)
    }

    /// The changes from `old` to `new` of the same chat.
    public static func between(_ old: PageView, _ new: PageView) -> PageChanges {
        guard old.url == new.url, old.conversation == new.conversation, old.title == new.title, old.lineID == new.lineID, old.lineVersion == new.lineVersion,
              old.isLegacy == new.isLegacy, old.route == new.route, old.components == new.components, old.width == new.width,
              old.peerPlaceholder == new.peerPlaceholder,
              !old.messages.isEmpty, !new.messages.isEmpty else {
            return old == new ? .messages([]) : .replaced
        }
        let before = Dictionary(old.messages.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Set(new.messages.map(\.number))
        let lastShown = old.messages.last!.number
        var changes: [Change] = []
        for message in old.messages where !after.contains(message.number) {
            // Only the oldest leave as the window moves on; anything else is a new page.
            guard message.number < new.messages.first!.number else { return .replaced }
            changes.append(.removed(message.number))
        }
        for message in new.messages {
            if let was = before[message.number] {
                if was != message { changes.append(.changed(message)) }
            } else {
                // Earlier messages loaded (or one in the middle): the page is drawn again.
                guard message.number > lastShown else { return .replaced }
                changes.append(.added(message))
            }
        }
        let earlierBefore = old.total - old.messages.count, earlierAfter = new.total - new.messages.count
        if earlierBefore != earlierAfter { changes.append(.earlier(max(0, earlierAfter))) }
        return .messages(changes)
    }
}

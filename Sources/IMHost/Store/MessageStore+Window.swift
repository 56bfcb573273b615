import IMKit

/// What a page draws of a conversation, read from one snapshot: its newest messages and what
/// the page shows beside them.
struct ConversationWindow {
    /// The newest messages, oldest first.
    var entries: [StoredMessage] = []
    /// How many messages the conversation holds.
    var total = 0
    /// Whether the peer is blocked.
    var blocked = false
    /// By position, for the messages that have them: photos (without their bytes), a voice
    /// message's recording and a file message's file (likewise), and who reacted how.
    var photos: [Int: [PhotoSlot]] = [:]
    var voices: [Int: VoiceSlot] = [:]
    var files: [Int: FileSlot] = [:]
    var reactions: [Int: [(person: String, emoji: String)]] = [:]
    /// The lines the peer's host draws, as its newest receipt said them, when asked for.
    var peerLines: Envelope.Draws?
}

extension MessageStore {
    /// The newest `limit` messages of the conversation with `peer` and what a page shows beside
    /// them (``ConversationWindow``; `peerLines` only when asked), in one read transaction: a
    /// page's draw looks at the database once, not once a query (each look cost more than most
    /// of its queries), and sees one state of it.
    func window(of peer: String, limit: Int, peerLines: Bool) throws(StoreError) -> ConversationWindow {
        try guarded {
            try database.reading {
                var window = ConversationWindow()
                window.total = try messageCount(of: peer)
                window.entries = try storedRows(of: peer, endingBefore: window.total, limit: limit)
                window.blocked = try isBlocked(peer)
                if let first = window.entries.first?.position, let last = window.entries.last?.position {
                    window.photos = try photoRows(peer: peer, positions: first...last)
                    window.voices = try slots(Self.voices, peer: peer, positions: first...last)
                    window.files = try slots(Self.files, peer: peer, positions: first...last)
                    window.reactions = try reactionRows(peer: peer, positions: first...last)
                }
                if peerLines { window.peerLines = try peerLinesRow(of: peer) }
                return window
            }
        }
    }
}

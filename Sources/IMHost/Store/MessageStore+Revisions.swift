import IMKit

/// Revisions: a card changed in place (IMKit 1.4's `ChatContext.revise`). A message keeps its
/// first payload and its newest revision beside it (`revised_payload`, its number, author and
/// time); a page draws the newest. A revision the user makes goes to the peer's host (a
/// ``PeerNote``) and to the user's other devices (a note); each host keeps the newest by its
/// number (of two with one number, the larger author's id), so a late older revision never
/// overwrites a newer one and the same revision twice is kept once.
extension MessageStore {
    /// What revising a message came to.
    public enum ReviseOutcome: Sendable, Equatable {
        /// Kept, and on its way.
        case revised(Envelope.Revision)
        /// No message of the conversation is that one.
        case noMessage
        /// It was recalled: nothing is left to change.
        case recalled
        /// The user's own message has not reached the peer's host yet (queued or failed): a
        /// revision could arrive before it.
        case notSent
        /// The revision is of another key: a message keeps its kind.
        case otherKey
        /// A built-in message (a text, a photo's caption, a place): only a line's cards change.
        case builtIn
        /// It has as many revisions as a message may have (``Envelope/Revision/most``).
        case tooMany
    }

    /// The user revises the message `sender` gave `id` in the conversation with `peer`, with
    /// `payload` of `key`, at `time`: kept as its next revision, and queued for the peer's host
    /// and the user's other devices, in one transaction.
    public func revise(_ peer: String, sender: String, id: String, key: String, payload: MessagePayload, at time: Int64) throws(StoreError) -> ReviseOutcome {
        try refuseIfReadOnly()
        return try guarded {
            try database.transaction {
                let find = try database.statement("""
                    SELECT m.id, m.key, m.recalled_at, m.revision, m.outgoing, m.state FROM messages m JOIN conversations c ON c.id = m.conversation
                    WHERE m.sender = ? AND m.global_id = ? AND c.peer = ?
                    """)
                try find.bind(sender, id, peer)
                guard try find.step() else { return .noMessage }
                guard find.optionalInt(2) == nil else { return .recalled }
                guard find.text(1) == key else { return .otherKey }
                guard Self.revisable(key) else { return .builtIn }
                // The user's own message must be at the peer's host first: a revision that came
                // before it would be answered and dropped there, and the message sent as it was.
                let state = MessageState(stored: find.text(5), outgoing: find.int(4) != 0)
                if find.int(4) != 0, ![.delivered, .read].contains(state) { return .notSent }
                let number = Int(find.optionalInt(3) ?? 0) + 1
                guard number <= Envelope.Revision.most else { return .tooMany }
                let revision = Envelope.Revision(id: id, from: sender, number: number, key: key, payload: payload, at: time)
                try keep(revision, row: find.int(0), author: user)
                let value = PeerNote.revisionValue(revision)
                try queue(PeerNote(peer: peer, kind: .revise, sender: sender, id: id, value: value, at: time))
                if try hasSiblingsNow() { try noteSiblings("revised", peer: peer, id: id, value: value, sender: sender) }
                return .revised(revision)
            }
        }
    }

    /// A revision by `author` (the peer `peer`, or the user from another device) of a message
    /// of their conversation: kept when it is newer than the one here. One of a message of
    /// anyone but the two of them, of a message not stored here or stored in another
    /// conversation, of another key, of a recalled message, or from a blocked peer is not.
    /// Returns whether it was kept.
    @discardableResult
    public func applyRevision(_ revision: Envelope.Revision, by author: String, peer: String) throws(StoreError) -> Bool {
        try refuseIfReadOnly()
        guard revision.from == peer || revision.from == user, author == peer || author == user, Self.revisable(revision.key) else { return false }
        return try guarded {
            try database.transaction {
                if author != user, try isBlocked(author) { return false }
                let find = try database.statement("""
                    SELECT m.id, m.revision, m.revised_by FROM messages m JOIN conversations c ON c.id = m.conversation
                    WHERE m.sender = ? AND m.global_id = ? AND c.peer = ? AND m.key = ? AND m.recalled_at IS NULL
                    """)
                try find.bind(revision.from, revision.id, peer, revision.key)
                guard try find.step() else { return false }
                // A number far past the one here would leave no room for the next: a peer could
                // freeze the card. Revisions made since the last one kept are at most a few.
                guard revision.number <= Int(find.optionalInt(1) ?? 0) + Envelope.Revision.window else { return false }
                guard revision.isNewer(byAuthor: author, than: find.optionalInt(1).map(Int.init), by: find.optionalText(2)) else { return false }
                try keep(revision, row: find.int(0), author: author)
                return true
            }
        }
    }

    /// Whether messages of `key` may change in place: a line's, never the host's built-ins (a
    /// peer must not rewrite what a person wrote).
    static func revisable(_ key: String) -> Bool { LineID.owner(ofMessageKey: key) != nil }

    /// Keeps `revision` as message `row`'s newest, in the open transaction: its words replace
    /// the first payload's in the summary and the search index.
    private func keep(_ revision: Envelope.Revision, row: Int64, author: String) throws {
        // The index holds no text of its own: it is told the words it took, to take them out.
        try database.statement("""
            INSERT INTO message_text (message_text, rowid, text)
            SELECT 'delete', id, summary FROM messages
            WHERE id = ?1 AND summary != '' AND id <= (SELECT indexed_through FROM search_progress)
            """).bind(row).run()
        let text = MessageText.of(key: revision.key, payload: revision.payload.json)
        try database.statement("""
            UPDATE messages SET revision = ?1, revised_by = ?2, revised_at = ?3, revised_payload = ?4, summary = ?5 WHERE id = ?6
            """).bind(revision.number, author, revision.at, revision.payload.json, text, row).run()
        try database.statement("""
            INSERT INTO message_text (rowid, text) SELECT id, summary FROM messages
            WHERE id = ?1 AND summary != '' AND id <= (SELECT indexed_through FROM search_progress)
            """).bind(row).run()
    }
}

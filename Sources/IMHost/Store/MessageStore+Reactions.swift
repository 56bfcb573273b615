/// Reactions: one a person a message, from a short set (``Envelope/Reaction/emoji``). The
/// user's own goes to the peer's host (a ``PeerNote``) and to the user's other devices (a note);
/// each host keeps the latest of each person's, by when it was made, so a late older one never
/// undoes a newer. A message is named by its sender and id, so a reaction may come before its
/// message and shows once the message is there.
extension MessageStore {
    /// What reacting to a message came to.
    public enum ReactOutcome: Sendable, Equatable {
        /// Done; `previous` is the user's reaction before (`nil`: none).
        case reacted(previous: String?)
        /// No message has that number.
        case noMessage
        /// It was recalled: nothing to react to.
        case recalled
    }

    /// The user reacts to message number `number` of the conversation with `peer` with `emoji`
    /// (`""` takes the reaction back), at `time`: kept, and queued for the peer's host and the
    /// user's other devices, in one transaction.
    public func react(_ peer: String, number: Int, emoji: String, at time: Int64) throws(StoreError) -> ReactOutcome {
        try refuseIfReadOnly()
        return try guarded {
            try database.transaction {
                let find = try database.statement("""
                    SELECT m.sender, m.global_id, m.recalled_at FROM messages m JOIN conversations c ON c.id = m.conversation
                    WHERE c.peer = ? AND m.position = ?
                    """)
                try find.bind(peer, number - 1)
                guard try find.step() else { return .noMessage }
                guard find.optionalInt(2) == nil else { return .recalled }
                let reaction = Envelope.Reaction(id: find.text(1), from: find.text(0), emoji: emoji, at: time)
                let before = try database.statement("SELECT emoji FROM reactions WHERE sender = ? AND global_id = ? AND person = ?")
                try before.bind(reaction.from, reaction.id, user)
                let previous = try before.step() ? before.text(0) : nil
                try keep(reaction, by: user)
                try queue(PeerNote(peer: peer, kind: .react, sender: reaction.from, id: reaction.id, value: emoji, at: time))
                if try hasSiblingsNow() { try noteSiblings("reacted", peer: peer, id: reaction.id, value: emoji, sender: reaction.from) }
                return .reacted(previous: previous.flatMap { $0.isEmpty ? nil : $0 })
            }
        }
    }

    /// Keeps `person`'s reaction unless a later one of theirs is kept already.
    private func keep(_ reaction: Envelope.Reaction, by person: String) throws {
        try database.statement("""
            INSERT INTO reactions (sender, global_id, person, emoji, at) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (sender, global_id, person) DO UPDATE SET emoji = ?4, at = ?5 WHERE ?5 > at OR (?5 = at AND emoji != ?4)
            """).bind(reaction.from, reaction.id, person, reaction.emoji, reaction.at).run()
    }

    /// A reaction of `person` (the peer `peer`, or the user from another device) to a message of
    /// their conversation: kept when it is the latest of theirs. One about a message of anyone
    /// but the two of them, of a message stored in another conversation, or from a blocked peer
    /// is not; neither is one about a message not stored here (so a peer cannot fill the store
    /// with reactions to ids it makes up). Returns whether it was kept.
    @discardableResult
    public func applyReaction(_ reaction: Envelope.Reaction, by person: String, peer: String) throws(StoreError) -> Bool {
        try refuseIfReadOnly()
        guard reaction.from == peer || reaction.from == user else { return false }
        return try guarded {
            try database.transaction {
                if person != user, try isBlocked(person) { return false }
                let find = try database.statement("""
                    SELECT 1 FROM messages m JOIN conversations c ON c.id = m.conversation
                    WHERE m.sender = ? AND m.global_id = ? AND c.peer = ? AND m.recalled_at IS NULL
                    """)
                try find.bind(reaction.from, reaction.id, peer)
                guard try find.step() else { return false }
                try keep(reaction, by: person)
                return database.changes > 0
            }
        }
    }

    /// The user's own reactions, the latest first (taken back ones too, with an empty emoji), at
    /// most `limit`, each with its conversation: what a catch-up answer names, so a device that
    /// missed a `reacted` note has it.
    public func recentReactions(limit: Int) throws(StoreError) -> [Envelope.Sibling.Reacted] {
        try guarded {
            let find = try database.statement("""
                SELECT c.peer, r.global_id, r.sender, r.emoji, r.at FROM reactions r
                JOIN messages m ON m.sender = r.sender AND m.global_id = r.global_id JOIN conversations c ON c.id = m.conversation
                WHERE r.person = ? ORDER BY r.at DESC LIMIT ?
                """)
            try find.bind(user, limit)
            var found: [Envelope.Sibling.Reacted] = []
            while try find.step() {
                found.append(Envelope.Sibling.Reacted(peer: find.text(0), reaction: Envelope.Reaction(id: find.text(1), from: find.text(2),
                                                                                                     emoji: find.text(3), at: find.int(4))))
            }
            return found
        }
    }

    /// The reactions to the messages at `positions` of the conversation with `peer`, by
    /// position: who reacted how, the earliest first.
    public func reactions(peer: String, positions: ClosedRange<Int>) throws(StoreError) -> [Int: [(person: String, emoji: String)]] {
        try guarded { try reactionRows(peer: peer, positions: positions) }
    }

    /// ``reactions(peer:positions:)``, in the caller's ``guarded(_:)``.
    func reactionRows(peer: String, positions: ClosedRange<Int>) throws -> [Int: [(person: String, emoji: String)]] {
        let rows = try database.statement("""
            SELECT m.position, r.person, r.emoji FROM messages m JOIN conversations c ON c.id = m.conversation
            JOIN reactions r ON r.sender = m.sender AND r.global_id = m.global_id
            WHERE c.peer = ?1 AND m.position BETWEEN ?2 AND ?3 AND r.emoji != '' AND m.recalled_at IS NULL AND r.person IN (?1, ?4)
            ORDER BY m.position, r.at
            """)
        try rows.bind(peer, positions.lowerBound, positions.upperBound, user)
        var found: [Int: [(person: String, emoji: String)]] = [:]
        while try rows.step() { found[Int(rows.int(0)), default: []].append((rows.text(1), rows.text(2))) }
        return found
    }
}

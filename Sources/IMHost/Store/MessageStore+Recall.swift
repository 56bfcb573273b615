/// Recalling a message: the sender takes it back within `limits.recallSeconds`, and every device
/// of both people replaces it with a mark that it was recalled. Nothing of what it said stays in
/// the store's files: its row keeps its place, key and times, its payload becomes `{}` and its
/// summary `''`, its photos go, its words leave the search index (the FTS5 'delete' with the text
/// as it was indexed, then 'optimize', which rewrites the index without its trigrams), and the
/// write-ahead log is cut to nothing (a TRUNCATE checkpoint, tried again while another process
/// reads the store). Every writing connection zeroes what it frees (`secure_delete`,
/// ``configure(_:)``), so the pages it left hold no text either.
extension MessageStore {
    /// What recalling one of the user's messages came to.
    public enum RecallOutcome: Sendable, Equatable {
        /// Recalled here; `text` is what it said (a text's, a photo's caption), for the
        /// recalling device's input only, and `peerTakes` whether the peer's host announced it
        /// takes recalls (`nil`: not known yet; the recall waits until its receipts say).
        case recalled(text: String?, peerTakes: Bool?)
        /// The peer's message: only its sender recalls a message.
        case notOwn
        /// Sent at `sentAt`, longer ago than the limit allows.
        case tooLate(sentAt: Int64)
        /// Recalled already.
        case already
        /// No message has that number.
        case noMessage
    }

    /// Recalls the user's message number `number` in the conversation with `peer`, at `now`,
    /// if it was sent within `limit` milliseconds: replaced in one transaction, its recall queued
    /// for the peer (``notesDue(now:limit:)``) and noted for the user's other devices.
    public func recall(_ peer: String, number: Int, at now: Int64, limit: Int64) throws(StoreError) -> RecallOutcome {
        try refuseIfReadOnly()
        let outcome: RecallOutcome = try guarded {
            try database.transaction {
                let find = try database.statement("""
                    SELECT m.id, m.outgoing, m.sent_at, m.recalled_at, m.key, m.payload, m.global_id
                    FROM messages m JOIN conversations c ON c.id = m.conversation WHERE c.peer = ? AND m.position = ?
                    """)
                try find.bind(peer, number - 1)
                guard try find.step() else { return .noMessage }
                guard find.int(1) != 0 else { return .notOwn }
                guard find.optionalInt(3) == nil else { return .already }
                let sentAt = find.int(2)
                guard now - sentAt <= limit else { return .tooLate(sentAt: sentAt) }
                let row = find.int(0), key = find.text(4), payload = find.text(5), id = find.text(6)
                try scrub(row: row, at: now)
                try database.statement("DELETE FROM outbox WHERE message = ?").bind(row).run()
                try queue(PeerNote(peer: peer, kind: .recall, sender: user, id: id, at: now))
                if try hasSiblingsNow() { try noteSiblings("recalled", peer: peer, id: id) }
                let takes = try features(ofPeer: peer).map { $0.contains(Envelope.Feature.recall) }
                return .recalled(text: Self.editableText(key: key, payload: payload), peerTakes: takes)
            }
        }
        // The files are scrubbed after the recall is on its way: by the chat that recalled, once it
        // woke the connection (``scrubFiles()``), or by the connection's holder within
        // ``scrubEvery``, never before it.
        return outcome
    }

    /// The user's own messages most recently recalled, newest first, at most `limit`: what a
    /// catch-up answer names, so a device that missed a `recalled` note has it recalled.
    public func recentRecalls(limit: Int) throws(StoreError) -> [Envelope.Sibling.Recalled] {
        try guarded {
            let find = try database.statement("""
                SELECT c.peer, m.global_id, m.recalled_at FROM messages m JOIN conversations c ON c.id = m.conversation
                WHERE m.outgoing = 1 AND m.recalled_at IS NOT NULL ORDER BY m.recalled_at DESC LIMIT ?
                """)
            try find.bind(limit)
            var recalls: [Envelope.Sibling.Recalled] = []
            while try find.step() { recalls.append(Envelope.Sibling.Recalled(peer: find.text(0), id: find.text(1), at: find.int(2))) }
            return recalls
        }
    }

    /// Whether a message of `sender` with this id is stored here (a cleared one is not).
    public func holds(sender: String, id: String) throws(StoreError) -> Bool {
        try guarded {
            let find = try database.statement("SELECT 1 FROM messages WHERE sender = ? AND global_id = ?")
            try find.bind(sender, id)
            return try find.step()
        }
    }

    /// What the user may edit again of a recalled message: a text's text, a photo's caption.
    private static func editableText(key: String, payload: String) -> String? {
        guard key == "text" || key == "photo" else { return nil }
        guard case .object(let members)? = try? JSONParser.parse(payload).value else { return nil }
        let name = key == "text" ? "text" : "caption"
        if case .string(let text)? = members.member(name)?.value, !text.isEmpty { return text }
        return nil
    }

    /// Replaces message `row` by its recall, in the open transaction: its words leave the search
    /// index, its photos and payload go, and the file is marked to be scrubbed (``scrubFiles()``).
    private func scrub(row: Int64, at time: Int64) throws {
        // The index holds no text of its own: it is told the words it took, to take them out.
        try database.statement("""
            INSERT INTO message_text (message_text, rowid, text)
            SELECT 'delete', id, summary FROM messages
            WHERE id = ?1 AND summary != '' AND id <= (SELECT indexed_through FROM search_progress)
            """).bind(row).run()
        try database.statement("DELETE FROM photos WHERE message = ?").bind(row).run()
        try database.statement("DELETE FROM voices WHERE message = ?").bind(row).run()
        try database.statement("DELETE FROM files WHERE message = ?").bind(row).run()
        try database.statement("DELETE FROM reactions WHERE (sender, global_id) = (SELECT sender, global_id FROM messages WHERE id = ?)").bind(row).run()
        try database.statement("UPDATE messages SET payload = '{}', revision = NULL, revised_by = NULL, revised_at = NULL, revised_payload = NULL, summary = '', recalled_at = ? WHERE id = ?").bind(time, row).run()
        try database.statement("""
            INSERT INTO store_facts (name, value) VALUES ('scrub due', ?1) ON CONFLICT (name) DO UPDATE SET value = ?1
            """).bind(String(time)).run()
    }

    /// Applies a recall: `sender`'s messages `ids` in the conversation with `peer` (the sender,
    /// for a peer's recall; the peer it was sent to, for the user's own, from another device)
    /// are replaced. One not stored here is never stored (its id is kept as a cleared chat's
    /// are). Returns whether a message shown here changed.
    public func applyRecall(from sender: String, peer: String, ids: [String], at time: Int64) throws(StoreError) -> Bool {
        try refuseIfReadOnly()
        let changed: Bool = try guarded {
            try database.transaction {
                var changed = false
                let find = try database.statement("""
                    SELECT m.id, m.recalled_at FROM messages m JOIN conversations c ON c.id = m.conversation
                    WHERE m.sender = ? AND m.global_id = ? AND c.peer = ?
                    """)
                for id in ids {
                    find.reset()
                    try find.bind(sender, id, peer)
                    if try find.step() {
                        guard find.optionalInt(1) == nil else { continue }
                        try scrub(row: find.int(0), at: time)
                        try database.statement("DELETE FROM outbox WHERE message = ?").bind(find.int(0)).run()
                        changed = true
                    } else {
                        try database.statement("INSERT OR IGNORE INTO cleared (sender, global_id) VALUES (?, ?)").bind(sender, id).run()
                    }
                }
                return changed
            }
        }
        // Scrubbed when the connection's holder is next idle: the page shows the recall first.
        if changed { lastScrubTry = 0 }
        return changed
    }

    // MARK: Scrubbing the files

    /// After a recall: the search index is rewritten without the recalled words ('optimize'),
    /// and the write-ahead log is checkpointed and cut to nothing, so no file of the store holds
    /// what the message said. A reader in another process holding an older snapshot keeps the
    /// log from being cut: the mark stays, and ``scrubFilesIfDue(now:)`` tries again. Returns
    /// whether it is done.
    @discardableResult
    public func scrubFiles() -> Bool {
        guard !isReadOnly else { return false }
        // No statement of this connection may hold a read open: the log is cut only when
        // nobody reads an older snapshot of it, this connection included.
        defer { database.finishStatements() }
        // A reader in another process is not waited for (a chat must not stall on it): the
        // mark stays, and the next try is the idle connection's.
        func truncated() throws -> Bool {
            database.finishStatements()
            let timeout = try database.statement("PRAGMA busy_timeout")
            _ = try timeout.step()
            let waits = timeout.int(0)
            try database.execute("PRAGMA busy_timeout = 0")
            defer { try? database.execute("PRAGMA busy_timeout = \(waits)") }
            let checkpoint = try database.statement("PRAGMA wal_checkpoint(TRUNCATE)")
            _ = try checkpoint.step()
            let busy = checkpoint.int(0) != 0
            database.finishStatements()
            return !busy
        }
        do {
            try database.execute("INSERT INTO message_text (message_text) VALUES ('optimize')")
            guard try truncated() else { return false }
            try database.statement("DELETE FROM store_facts WHERE name = 'scrub due'").run()
            // The delete itself went to the log: cut it again (nothing to keep there now).
            return try truncated()
        } catch {
            return false
        }
    }

    /// How often the process holding the connection tries again to scrub the files after a
    /// recall, in milliseconds.
    public static let scrubEvery: Int64 = 2_000

    /// Scrubs the files when a recall left them to be (in this process or another), at most
    /// every ``scrubEvery``.
    public func scrubFilesIfDue(now: Int64) {
        guard !isReadOnly, now - lastScrubTry >= Self.scrubEvery else { return }
        lastScrubTry = now
        guard let due = try? database.statement("SELECT 1 FROM store_facts WHERE name = 'scrub due'") else { return }
        let isDue = (try? due.step()) == true
        database.finishStatements()
        if isDue { scrubFiles() }
    }
}

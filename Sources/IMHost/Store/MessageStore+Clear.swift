/// A chat cleared on this device (the menu's Clear, `/clear`): what it held leaves this store,
/// and only the ids stay, so nothing brings it back here (the sender's resend, another device's
/// catch-up). The user's other devices keep theirs.
extension MessageStore {
    /// Clears the conversation with `peer`: its messages, their photos, their words in the
    /// search index and what of them waits to be sent leave the store, in one transaction; their
    /// ids are kept (`cleared`, ``Migrations`` 11). The conversation stays, empty: its next
    /// message is number 1. Returns how many messages left (0 for a peer with none).
    @discardableResult
    public func clear(_ peer: String) throws(StoreError) -> Int {
        try refuseIfReadOnly()
        return try guarded {
            // Pages freed by the delete are zeroed (secure_delete, as every writing connection
            // has it), not left holding the text (the write-ahead log keeps it until its next
            // checkpoint, the index's segments until they merge).
            return try database.transaction {
                let find = try database.statement("SELECT id FROM conversations WHERE peer = ?")
                try find.bind(peer)
                guard try find.step() else { return 0 }
                let conversation = find.int(0)
                // The index holds no text of its own: it is told the words it took, to take them out.
                try database.statement("""
                    INSERT INTO message_text (message_text, rowid, text)
                    SELECT 'delete', id, summary FROM messages
                    WHERE conversation = ?1 AND summary != '' AND id <= (SELECT indexed_through FROM search_progress)
                    """).bind(conversation).run()
                try database.statement("""
                    INSERT OR IGNORE INTO cleared (sender, global_id) SELECT sender, global_id FROM messages WHERE conversation = ?
                    """).bind(conversation).run()
                try database.statement("""
                    DELETE FROM reactions WHERE (sender, global_id) IN (SELECT sender, global_id FROM messages WHERE conversation = ?)
                    """).bind(conversation).run()
                for table in ["photos", "voices", "files", "outbox"] {
                    try database.statement("DELETE FROM \(table) WHERE message IN (SELECT id FROM messages WHERE conversation = ?)").bind(conversation).run()
                }
                try database.statement("DELETE FROM messages WHERE conversation = ?").bind(conversation).run()
                let count = database.changes
                try database.statement("UPDATE conversations SET message_count = 0, unread = 0, last_message = NULL WHERE id = ?").bind(conversation).run()
                // A seen another device said for one of them is moot now.
                try database.statement("DELETE FROM sibling_seen WHERE peer = ?").bind(peer).run()
                return count
            }
        }
    }
}

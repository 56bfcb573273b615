/// What was read on the user's other devices (``Envelope/Sibling/seen(by:peer:upTo:)``, and the
/// read points a catch-up's answer carries): read here too, whenever it comes. A `seen` that
/// names a message this device does not have yet (it came first, or the message comes later
/// from the broker, its sender's resend or a catch-up) is kept (`sibling_seen`, ``Migrations``,
/// 9), the last said for each conversation, and applied once the message is stored.
extension MessageStore {
    /// What a `seen` from another device did here.
    public enum SiblingSeen: Sendable, Equatable {
        /// Messages were marked read.
        case read
        /// Nothing to do: already read, or a blocked peer's.
        case unchanged
        /// The message is not here yet: kept until it is.
        case kept
    }

    /// Another device read the conversation with `peer` up to the message `upTo`: it is read
    /// here too, without a receipt (the device that showed it sent one); kept until that
    /// message is stored when it is not here yet.
    public func siblingSaw(_ peer: String, upTo id: String) throws(StoreError) -> SiblingSeen {
        if let position = try guarded({ try position(ofPeer: peer, id: id) }) {
            return try markRead(peer, before: position + 1, noteSiblings: false).isEmpty ? .unchanged : .read
        }
        try refuseIfReadOnly()
        return try guarded {
            // A blocked peer's messages are not stored: nothing would ever apply it.
            guard try !isBlocked(peer) else { return .unchanged }
            try database.statement("""
                INSERT INTO sibling_seen (peer, global_id, kept_at) VALUES (?1, ?2, ?3)
                ON CONFLICT (peer) DO UPDATE SET global_id = ?2, kept_at = ?3
                """).bind(peer, id, Clock.now()).run()
            return .kept
        }
    }

    /// Applies the kept `seen`s whose messages are stored now, and drops them. Returns the peers
    /// whose conversations changed, and whether any is still kept (its message has yet to come).
    public func siblingSawKept() throws(StoreError) -> (changed: [String], stillKept: Bool) {
        guard !isReadOnly else { return ([], false) }
        let found = try guarded { () throws -> [(peer: String, id: String, position: Int)] in
            let rows = try database.statement("""
                SELECT k.peer, k.global_id, m.position FROM sibling_seen k
                JOIN messages m ON m.sender = k.peer AND m.global_id = k.global_id
                JOIN conversations c ON c.id = m.conversation AND c.peer = k.peer
                """)
            var found: [(peer: String, id: String, position: Int)] = []
            while try rows.step() { found.append((rows.text(0), rows.text(1), Int(rows.int(2)))) }
            return found
        }
        var changed: [String] = []
        for kept in found {
            if try !markRead(kept.peer, before: kept.position + 1, noteSiblings: false).isEmpty { changed.append(kept.peer) }
            // (Applied twice, after a crash between the two, it changes nothing the second time.)
            try guarded { try database.statement("DELETE FROM sibling_seen WHERE peer = ? AND global_id = ?").bind(kept.peer, kept.id).run() }
        }
        return (changed, try guarded { try database.statement("SELECT 1 FROM sibling_seen LIMIT 1").step() })
    }

    /// The peers of the conversations with unread messages here, the `limit` most recent: a
    /// catch-up asks the other devices how far each is read there.
    public func unreadPeers(limit: Int) throws(StoreError) -> [String] {
        try guarded {
            let rows = try database.statement("SELECT peer FROM conversations WHERE unread > 0 ORDER BY updated_at DESC, id DESC LIMIT ?")
            try rows.bind(limit)
            var peers: [String] = []
            while try rows.step() { peers.append(rows.text(0)) }
            return peers
        }
    }

    /// How far each of `peers`' conversations is read here: the id of its newest read message
    /// that came over the transport (another device can have it; a scenario's it cannot). A
    /// conversation with none is left out.
    public func readPoints(of peers: [String]) throws(StoreError) -> [String: String] {
        try guarded {
            let find = try database.statement("""
                SELECT m.global_id FROM messages m JOIN conversations c ON c.id = m.conversation
                WHERE c.peer = ?1 AND m.sender = ?1 AND m.outgoing = 0 AND m.arrived = 1 AND m.state = 'read' ORDER BY m.position DESC LIMIT 1
                """)
            var points: [String: String] = [:]
            for peer in peers {
                find.reset()
                try find.bind(peer)
                if try find.step() { points[peer] = find.text(0) }
            }
            return points
        }
    }

    /// The place of `peer`'s message `id` in their conversation, if it is stored.
    private func position(ofPeer peer: String, id: String) throws -> Int? {
        let find = try database.statement("""
            SELECT m.position FROM messages m JOIN conversations c ON c.id = m.conversation WHERE c.peer = ? AND m.sender = ? AND m.global_id = ?
            """)
        try find.bind(peer, peer, id)
        return try find.step() ? Int(find.int(0)) : nil
    }
}

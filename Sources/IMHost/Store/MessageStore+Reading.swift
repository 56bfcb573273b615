#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMKit

extension MessageStore {
    private static let columns = """
        m.id, m.position, m.sender, m.recipient, m.global_id, m.seq, m.key, coalesce(m.revised_payload, m.payload), m.sent_at, m.outgoing, m.state,
        m.reason, m.jump, m.arrived, m.sent_before, m.drawn, m.reply_sender, m.reply_id, m.recalled_at, m.revision, m.revised_by, m.revised_at
        """

    private func stored(_ row: Statement, peer: String) -> StoredMessage {
        let position = Int(row.int(1))
        let jump = self.jump(row.optionalText(12))
        let outgoing = row.int(9) != 0, stored = row.text(10)
        let state = MessageState(stored: stored, outgoing: outgoing)
        // A state this code does not know is said, not taken for another.
        let failure = state == .unknown ? .unknownState(stored) : row.optionalText(11).map(MessageFailure.init(stored:))
        return StoredMessage(envelope: envelope(position: position, peer: peer, from: row.text(2), to: row.text(3), time: row.int(8),
                                                key: row.text(6), payload: MessagePayload(json: row.text(7)), globalID: row.text(4)),
                             position: position, state: state, failure: failure,
                             seq: row.optionalInt(5).map(Int.init), isOutgoing: row.int(9) != 0, jump: jump, row: row.int(0),
                             arrived: row.int(13) != 0, sentBefore: row.optionalInt(14).map(Int.init),
                             peerDrawn: outgoing ? row.optionalText(15).flatMap { Drawn.read(json: $0) } : nil,
                             reply: ReplyTo.stored(row.optionalText(16), row.optionalText(17)),
                             recalledAt: row.optionalInt(18),
                             revision: row.optionalInt(19).map { StoredMessage.Revised(number: Int($0), by: row.optionalText(20) ?? "", at: row.optionalInt(21) ?? 0) })
    }

    /// A stored jump (``encode(_:)``'s JSON) as the page it names; `nil` for none, or one that
    /// does not read. Decoded once a text: a conversation's messages mostly name one page, and
    /// a JSON decoder a row was most of what reading a page's 50 messages cost.
    func jump(_ text: String?) -> JumpPage? {
        guard let text else { return nil }
        if let known = decodedJumps[text] { return known }
        let page = try? JSONDecoder().decode(JumpPage.self, from: Data(text.utf8))
        if decodedJumps.count >= 64 { decodedJumps.removeAll(keepingCapacity: true) }
        decodedJumps[text] = .some(page)
        return page
    }

    /// How many messages the conversation with `peer` holds.
    public func count(of peer: String) throws(StoreError) -> Int {
        try guarded { try messageCount(of: peer) }
    }

    /// ``count(of:)``, in the caller's ``guarded(_:)``.
    func messageCount(of peer: String) throws -> Int {
        let find = try database.statement("SELECT message_count FROM conversations WHERE peer = ?")
        try find.bind(peer)
        return try find.step() ? Int(find.int(0)) : 0
    }

    /// Up to `limit` messages of the conversation with `peer`, oldest first, ending before
    /// position `end` (a count; `nil` for the newest).
    public func stored(of peer: String, endingBefore end: Int?, limit: Int) throws(StoreError) -> [StoredMessage] {
        try guarded { try storedRows(of: peer, endingBefore: end ?? messageCount(of: peer), limit: limit) }
    }

    /// ``stored(of:endingBefore:limit:)``, in the caller's ``guarded(_:)``.
    func storedRows(of peer: String, endingBefore upper: Int, limit: Int) throws -> [StoredMessage] {
        let rows = try database.statement("""
            SELECT \(Self.columns) FROM messages m JOIN conversations c ON c.id = m.conversation
            WHERE c.peer = ? AND m.position >= ? AND m.position < ? ORDER BY m.position
            """)
        try rows.bind(peer, max(0, upper - limit), upper)
        var found: [StoredMessage] = []
        while try rows.step() { found.append(stored(rows, peer: peer)) }
        return found
    }

    /// The messages as lines and tools see them, with their positions: ``stored(of:endingBefore:limit:)``.
    public func messages(of peer: String, endingBefore end: Int?, limit: Int) throws(StoreError) -> [(position: Int, message: MessageEnvelope)] {
        try stored(of: peer, endingBefore: end, limit: limit).map { ($0.position, $0.envelope) }
    }

    /// The message the sender `from` gave `globalID`, when it is stored.
    public func message(from sender: String, globalID: String) throws(StoreError) -> StoredMessage? {
        try guarded {
            let rows = try database.statement("""
                SELECT \(Self.columns), c.peer FROM messages m JOIN conversations c ON c.id = m.conversation
                WHERE m.sender = ? AND m.global_id = ?
                """)
            try rows.bind(sender, globalID)
            return try rows.step() ? stored(rows, peer: rows.text(22)) : nil
        }
    }

    /// Every conversation, newest first (or the newest `limit`): its peer, newest message,
    /// unread count, time and the page it opens on. Costs one row a conversation, however many
    /// messages they hold.
    public func conversations(limit: Int? = nil) throws(StoreError) -> [ConversationSummary] {
        try guarded {
            let rows = try database.statement("""
                SELECT c.peer, m.key, m.summary, m.outgoing, c.unread, c.updated_at, c.message_count, c.root_cate_id, c.cate_id, c.info_id
                FROM conversations c LEFT JOIN messages m ON m.id = c.last_message
                WHERE c.message_count > 0 ORDER BY c.updated_at DESC, c.id DESC LIMIT ?
                """)
            try rows.bind(limit ?? -1)
            var found: [ConversationSummary] = []
            while try rows.step() {
                let page = rows.optionalInt(7).map { JumpPage(rootCateID: Int($0), cateID: rows.optionalInt(8).map(Int.init), infoID: rows.optionalText(9)) }
                found.append(ConversationSummary(peer: rows.text(0), lastKey: rows.optionalText(1), lastText: rows.optionalText(2),
                                                 lastFromPeer: rows.optionalInt(3) == 0, unread: Int(rows.int(4)), updatedAt: rows.int(5),
                                                 messages: Int(rows.int(6)), page: page))
            }
            return found
        }
    }

    /// The page the conversation with `peer` opens on, when one is known.
    public func page(for peer: String) throws(StoreError) -> JumpPage? {
        try guarded {
            let row = try database.statement("SELECT root_cate_id, cate_id, info_id FROM conversations WHERE peer = ?")
            try row.bind(peer)
            guard try row.step(), let root = row.optionalInt(0) else { return nil }
            return JumpPage(rootCateID: Int(root), cateID: row.optionalInt(1).map(Int.init), infoID: row.optionalText(2))
        }
    }

    /// How many of `peer`'s messages are unread; `nil` for a conversation that does not exist.
    public func unreadCount(of peer: String) throws(StoreError) -> Int? {
        try guarded {
            let find = try database.statement("SELECT unread FROM conversations WHERE peer = ?")
            try find.bind(peer)
            return try find.step() ? Int(find.int(0)) : nil
        }
    }

    /// Whether `peer` is blocked.
    public func blocked(_ peer: String) throws(StoreError) -> Bool {
        try guarded { try isBlocked(peer) }
    }
}

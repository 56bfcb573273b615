/// The user's reports of people (the menu's Report, `/report`): kept here from the moment the
/// person reports until the broker takes the report (``Courier``), so one made offline, or lost
/// with a connection, goes at the next.
extension MessageStore {
    /// Makes a report of `peer`, with the peer's last messages in the chat, and keeps it to be
    /// sent. Returns it.
    @discardableResult
    public func report(_ peer: String, url: String, line: String?, lineVersion: String?, at time: Int64) throws(StoreError) -> UserReport {
        try refuseIfReadOnly()
        return try guarded {
            let rows = try database.statement("""
                SELECT m.global_id, m.sent_at, m.key, m.summary FROM messages m JOIN conversations c ON m.conversation = c.id
                WHERE c.peer = ? AND m.outgoing = 0 ORDER BY m.position DESC LIMIT ?
                """)
            try rows.bind(peer, UserReport.messageLimit)
            var messages: [UserReport.Message] = []
            while try rows.step() {
                messages.insert(UserReport.Message(id: rows.text(0), at: rows.int(1), key: rows.text(2), text: rows.text(3)), at: 0)
            }
            let report = UserReport(id: GlobalID.make(at: time), at: time, peer: peer, url: url, line: line, lineVersion: lineVersion, messages: messages)
            try database.statement("INSERT INTO reports (id, peer, made_at, body) VALUES (?, ?, ?, ?)")
                .bind(report.id, peer, time, String(decoding: report.bytes, as: UTF8.self)).run()
            return report
        }
    }

    /// Reports the broker has not taken yet, oldest first: their ids and documents.
    public func untakenReports(limit: Int) throws(StoreError) -> [(id: String, body: [UInt8])] {
        try guarded {
            let rows = try database.statement("SELECT id, body FROM reports WHERE taken_at IS NULL ORDER BY made_at, id LIMIT ?")
            try rows.bind(limit)
            var found: [(id: String, body: [UInt8])] = []
            while try rows.step() { found.append((rows.text(0), Array(rows.text(1).utf8))) }
            return found
        }
    }

    /// The broker took report `id`.
    public func reportTaken(_ id: String, at time: Int64) throws(StoreError) {
        try refuseIfReadOnly()
        try guarded { try database.statement("UPDATE reports SET taken_at = ? WHERE id = ?").bind(time, id).run() }
    }

    /// How many reports of `peer` this user made, and how many the broker has taken.
    public func reportCount(of peer: String) throws(StoreError) -> (made: Int, taken: Int) {
        try guarded {
            let rows = try database.statement("SELECT count(*), count(taken_at) FROM reports WHERE peer = ?")
            try rows.bind(peer)
            _ = try rows.step()
            return (Int(rows.int(0)), Int(rows.int(1)))
        }
    }
}

/// The user's reports of people (the menu's Report, `/report`): kept here from the moment the
/// person reports until the broker takes the report (``Courier``), so one made offline, or lost
/// with a connection, goes at the next.
extension MessageStore {
    /// Makes a report of `peer`, with the peer's last messages in the chat, and keeps it to be
    /// sent, in the user's next report slot (``Topic/reportSlots``, in turn). Returns it.
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
            try database.transaction {
                let count = try database.statement("SELECT count(*) FROM reports")
                _ = try count.step()
                let slot = Int(count.int(0)) % Topic.reportSlots
                try database.statement("INSERT INTO reports (id, peer, made_at, body, slot) VALUES (?, ?, ?, ?, ?)")
                    .bind(report.id, peer, time, String(decoding: report.bytes, as: UTF8.self), slot).run()
            }
            return report
        }
    }

    /// A report to send: its id, slot and document.
    public struct UntakenReport: Sendable, Equatable {
        public var id: String
        public var slot: Int
        public var body: [UInt8]
    }

    /// Reports the broker has not taken yet, oldest first.
    public func untakenReports(limit: Int) throws(StoreError) -> [UntakenReport] {
        try reports(where: "taken_at IS NULL ORDER BY made_at, id LIMIT ?", Int64(limit))
    }

    /// Reports the broker took at `since` or later, oldest first.
    public func reportsTaken(since: Int64) throws(StoreError) -> [UntakenReport] {
        try reports(where: "taken_at >= ? ORDER BY made_at, id", since)
    }

    private func reports(where condition: String, _ value: Int64) throws(StoreError) -> [UntakenReport] {
        try guarded {
            let rows = try database.statement("SELECT id, slot, body FROM reports WHERE " + condition)
            try rows.bind(value)
            var found: [UntakenReport] = []
            while try rows.step() { found.append(UntakenReport(id: rows.text(0), slot: Int(rows.int(1)), body: Array(rows.text(2).utf8))) }
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

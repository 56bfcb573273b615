import CSQLite

/// Copies what can still be read out of a damaged database into a new one. The system's SQLite
/// (3.40) has no recovery API, so each table is read by ranges of rowids: a range that fails (it
/// touches a damaged page) is split in halves, down to single rowids, and a rowid that still
/// fails is skipped and counted as lost. A row SQLite hands back came from a page that read
/// whole, so what was read of a range before it failed is kept. Then the copy is made whole:
/// places renumbered one after another in each conversation, in their old order; each
/// conversation's counts taken again; every undelivered message of the user's back in the
/// outbox; the search index built.
struct StoreRecovery {
    /// What was copied, and what could not be read.
    struct Counts: Sendable, Equatable, CustomStringConvertible {
        var messages = 0
        /// Messages' rowids that could not be read.
        var lostMessages = 0
        var conversations = 0
        var queued = 0
        var receipts = 0
        var blocked = 0
        /// What could not be read whole, for a person ("the outbox"), beside messages' lost
        /// rowids, which are counted.
        var unreadable: [String] = []

        /// Nothing was there to copy, and something could not be read.
        var isNothing: Bool { messages + conversations + queued + receipts + blocked == 0 && !unreadable.isEmpty }

        /// For a person: "286 messages (14 could not be read), 2 conversations, ...".
        var description: String {
            func count(_ number: Int, _ one: String, _ many: String) -> String { "\(number) \(number == 1 ? one : many)" }
            var text = count(messages, "message", "messages") + (lostMessages > 0 ? " (\(lostMessages) could not be read)" : "")
            text += ", " + count(conversations, "conversation", "conversations")
            text += ", " + count(queued, "queued send", "queued sends")
            text += ", " + count(receipts, "read receipt to send", "read receipts to send")
            text += ", " + count(blocked, "blocked peer", "blocked peers")
            if !unreadable.isEmpty { text += "; not all of " + unreadable.joined(separator: ", ") + " could be read" }
            return text
        }
    }

    /// The damaged database, opened to be read only.
    private let source: Database
    /// The new one, its schema made, in a transaction.
    private let target: Database
    private var counts = Counts()

    /// Copies what can be read of the database at `path` into `target` (a new store's database,
    /// foreign keys off: a message may outlive its conversation's row), in one transaction.
    /// Throws only what `target` throws; what cannot be read of `path` is counted.
    static func copy(from path: String, into target: Database) throws -> Counts {
        let source: Database
        do {
            source = try Database(path: path, mode: .readOnly(immutable: false))
        } catch {
            return Counts(unreadable: ["the file"])
        }
        defer { source.closeLeavingLog() }
        var recovery = StoreRecovery(source: source, target: target)
        try target.transaction {
            try recovery.copyTables()
            try recovery.makeWhole()
            try recovery.countCopied()
        }
        return recovery.counts
    }

    private init(source: Database, target: Database) {
        self.source = source
        self.target = target
    }

    /// The tables copied, in order, each with what a person calls it.
    private static let tables = [("conversations", "conversations"), ("messages", "messages"), ("outbox", "the outbox"),
                                 ("receipts_out", "read receipts to send"), ("blocked", "blocked peers"), ("store_facts", "the store's facts")]

    /// Each table, rows as they were (ids kept, so references between them hold).
    private mutating func copyTables() throws {
        // Where the messages end when their last page cannot be read: what refers to them says.
        let newest = ["SELECT max(last_message) FROM conversations", "SELECT max(message) FROM outbox",
                      "SELECT indexed_through FROM search_progress"].compactMap { try? scalar($0) }.max()
        for (table, name) in Self.tables {
            let lost = try copy(table, newest: table == "messages" ? newest : nil)
            if table == "messages" { counts.lostMessages = lost.rows }
            // Messages' lost rowids are counted; a table whose lost rows are not is named.
            if lost.any && (table != "messages" || lost.rows == 0) { counts.unreadable.append(name) }
        }
    }

    /// One value of the source, `nil` for NULL; throws when it cannot be read.
    private func scalar(_ sql: String) throws -> Int64? {
        let statement = try source.statement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.optionalInt(0) : nil
    }

    /// The columns of `table` both databases have (an older store lacks later ones).
    private func columns(of table: String) throws -> [String] {
        func names(_ database: Database) throws -> [String] {
            // A table name of ours, never outside text.
            let info = try database.statement("SELECT name FROM pragma_table_info('\(table)')")
            var found: [String] = []
            while try info.step() { found.append(info.text(0)) }
            return found
        }
        let wanted = Set(try names(target))
        return try names(source).filter(wanted.contains)
    }

    /// Copies the rows of `table` it can read; returns how many rowids could not be read, and
    /// whether any part of it could not (its end included, when no bound is known).
    private mutating func copy(_ table: String, newest: Int64?) throws -> (rows: Int, any: Bool) {
        guard let names = try? columns(of: table), !names.isEmpty else { return (0, true) }
        let list = names.joined(separator: ", ")
        var copier = TableCopier(source: source, target: target,
                                 range: "SELECT rowid, \(list) FROM \(table) WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
                                 single: "SELECT rowid, \(list) FROM \(table) WHERE rowid = ?",
                                 insert: "INSERT OR IGNORE INTO \(table) (\(list)) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))",
                                 columns: Int32(names.count))
        let first = Result { try scalar("SELECT min(rowid) FROM \(table)") }, last = Result { try scalar("SELECT max(rowid) FROM \(table)") }
        if case .success(nil) = first, case .success(nil) = last { return (0, false) }
        // The first page damaged: rowids start at 1.
        let low = (try? first.get()) ?? 1
        if let high = (try? last.get()) ?? newest {
            try copier.copy(low...max(low, high))
            return (copier.lost, copier.lost > 0)
        }
        // Its last page is damaged and nothing says where it ends: what reads before it is copied.
        try copier.copy(from: low)
        return (0, true)
    }

    /// Renumbers, recounts, queues again and indexes what was copied.
    private func makeWhole() throws {
        // A message whose conversation's row was lost: the conversation again, by its peer.
        try target.execute("""
            INSERT OR IGNORE INTO conversations (id, peer)
            SELECT conversation, CASE WHEN outgoing = 1 THEN recipient ELSE sender END FROM messages
            WHERE conversation NOT IN (SELECT id FROM conversations) GROUP BY conversation;
            CREATE TEMP TABLE recovered_places (id INTEGER PRIMARY KEY, conversation INTEGER, old INTEGER, new INTEGER);
            INSERT INTO recovered_places
            SELECT id, conversation, position, row_number() OVER (PARTITION BY conversation ORDER BY position, id) - 1 FROM messages;
            CREATE INDEX temp.recovered_by_old ON recovered_places (conversation, old);
            UPDATE messages SET sent_before = (SELECT new FROM recovered_places p WHERE p.conversation = messages.conversation AND p.old = messages.sent_before)
            WHERE sent_before IS NOT NULL;
            UPDATE messages SET position = -1 - (SELECT new FROM recovered_places p WHERE p.id = messages.id);
            UPDATE messages SET position = -1 - position;
            DROP TABLE recovered_places;
            UPDATE conversations SET
                message_count = (SELECT count(*) FROM messages m WHERE m.conversation = conversations.id),
                unread = (SELECT count(*) FROM messages m WHERE m.conversation = conversations.id AND m.outgoing = 0 AND m.state = 'received'),
                last_message = (SELECT m.id FROM messages m WHERE m.conversation = conversations.id ORDER BY m.position DESC LIMIT 1),
                next_seq = max(next_seq, coalesce((SELECT max(m.seq) FROM messages m WHERE m.conversation = conversations.id AND m.outgoing = 1), 0) + 1),
                updated_at = max(updated_at, coalesce((SELECT max(m.stored_at) FROM messages m WHERE m.conversation = conversations.id), 0));
            DELETE FROM outbox WHERE message NOT IN (SELECT id FROM messages);
            UPDATE outbox SET lease_pid = NULL, lease_until = NULL;
            INSERT INTO outbox (message, peer, queued_at)
            SELECT id, recipient, sent_at FROM messages WHERE outgoing = 1 AND state IN ('queued', 'sent') AND id NOT IN (SELECT message FROM outbox);
            """)
        try MessageStore.indexNewMessages(in: target)
    }

    /// The counts of the new database, as the person will see it.
    private mutating func countCopied() throws {
        func count(_ table: String) throws -> Int {
            let statement = try target.statement("SELECT count(*) FROM \(table)")
            defer { statement.reset() }
            _ = try statement.step()
            return Int(statement.int(0))
        }
        counts.messages = try count("messages")
        counts.conversations = try count("conversations")
        counts.queued = try count("outbox")
        counts.receipts = try count("receipts_out")
        counts.blocked = try count("blocked")
    }
}

/// Copies one table's rows by rowid ranges (``StoreRecovery``).
private struct TableCopier {
    let source: Database
    let target: Database
    /// The SQL reading a range of rowids, reading one rowid, and inserting a row.
    let range: String
    let single: String
    let insert: String
    /// How many columns a row has after its rowid.
    let columns: Int32
    /// Rowids that could not be read.
    private(set) var lost = 0

    /// Copies the rows of `rowids`: what fails is split in halves, down to single rowids.
    mutating func copy(_ rowids: ClosedRange<Int64>) throws {
        guard let next = try read(range, rowids.lowerBound, rowids.upperBound) else { return }
        // What was read before the failure is kept; the rest is split.
        guard next <= rowids.upperBound else { return }
        guard next < rowids.upperBound else {
            if try read(single, next) != nil { lost += 1 }
            return
        }
        // The mean rounded down, without overflow however far apart they are.
        let middle = (next >> 1) + (rowids.upperBound >> 1) + (next & rowids.upperBound & 1)
        try copy(next...middle)
        try copy(middle + 1...rowids.upperBound)
    }

    /// Inserts a row read from the source. A row the damage turned into something the store
    /// never holds (a state it does not know, a second copy) is not copied, as a row that cannot
    /// be read is not.
    private static func insert(_ row: Statement) throws(Database.Failure) {
        do {
            try row.run()
        } catch {
            guard error.primary == SQLITE_CONSTRAINT else { throw error }
        }
    }

    /// Copies the rows from `rowid` on until one cannot be read.
    func copy(from rowid: Int64) throws {
        _ = try read(range, rowid, Int64.max)
    }

    /// Reads the rows `sql` gives for `bounds` and inserts each into the target. Returns `nil`
    /// when it read to the end, or the rowid after the last row read when the source failed.
    /// Only the target's errors are thrown.
    private func read(_ sql: String, _ bounds: Int64...) throws -> Int64? {
        var next = bounds[0]
        let rows: Statement
        do {
            rows = try source.statement(sql)
            for (index, bound) in bounds.enumerated() { try rows.bind(at: Int32(index + 1), bound) }
        } catch {
            return next
        }
        defer { rows.reset() }
        while true {
            let more: Bool
            do {
                more = try rows.step()
            } catch {
                return next
            }
            guard more else { return nil }
            let row = try target.statement(insert)
            try row.bind(columnsOf: rows, 1..<columns + 1)
            try Self.insert(row)
            // No rowid comes after the largest.
            guard rows.int(0) < Int64.max else { return nil }
            next = rows.int(0) + 1
        }
    }
}

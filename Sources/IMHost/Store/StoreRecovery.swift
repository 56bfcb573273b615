import CSQLite

/// Copies what can still be read out of a damaged database into a new one. The system's SQLite
/// (3.40) has no recovery API, so each table is read by ranges of rowids: a range that fails (it
/// touches a damaged page) is split in halves, down to single rowids, and a rowid that still
/// fails is skipped and counted as lost. A row SQLite hands back came from a page that read
/// whole, so what was read of a range before it failed is kept. Then the copy is made whole:
/// places renumbered one after another in each conversation, in their old order; each
/// conversation's counts taken again; every undelivered message of the user's back in the
/// outbox; the search index built.
///
/// A table that cannot be read whole that way (its root page damaged, so no range reads; the
/// file's first page damaged, so nothing opens) is looked for page by page too (``PageScan``):
/// the rows of messages, drafts, conversations, read receipts and blocked peers left on leaf
/// pages nothing leads to any more are copied, each recognised by its shape (its columns' count
/// and types), with its rowid.
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
        /// What the user typed and had not sent (``MessageStore/addDraft(peer:typed:at:)``).
        var drafts = 0
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
            if drafts > 0 { text += ", " + count(drafts, "unsent draft", "unsent drafts") }
            if !unreadable.isEmpty { text += "; not all of " + unreadable.joined(separator: ", ") + " could be read" }
            return text
        }
    }

    /// The damaged database, opened to be read only; `nil` when it does not open.
    private let source: Database?
    /// Its path, for reading its pages.
    private let path: String
    /// The new one, its schema made, in a transaction.
    private let target: Database
    private var counts = Counts()

    /// Copies what can be read of the database at `path` into `target` (a new store's database,
    /// foreign keys off: a message may outlive its conversation's row), in one transaction.
    /// Throws only what `target` throws; what cannot be read of `path` is counted.
    static func copy(from path: String, into target: Database) throws -> Counts {
        // A file whose first page is damaged does not open, or opens and reads no schema: its
        // pages are still read.
        var source = try? Database(path: path, mode: .readOnly(immutable: false))
        if let opened = source, (try? opened.statement("SELECT count(*) FROM sqlite_schema").step()) != true {
            opened.closeLeavingLog()
            source = nil
        }
        defer { source?.closeLeavingLog() }
        var recovery = StoreRecovery(source: source, path: path, target: target)
        try target.transaction {
            if source != nil { try recovery.copyTables() }
            try recovery.scanPages()
            try recovery.makeWhole()
            try recovery.countCopied()
        }
        if source == nil { recovery.counts.unreadable = ["the file"] }
        return recovery.counts
    }

    private init(source: Database?, path: String, target: Database) {
        self.source = source
        self.path = path
        self.target = target
    }

    /// The tables copied by rowid, in order, each with what a person calls it.
    private static let tables = [("conversations", "conversations"), ("messages", "messages"), ("outbox", "the outbox"),
                                 ("receipts_out", "read receipts to send"), ("blocked", "blocked peers"), ("store_facts", "the store's facts"),
                                 ("drafts", "unsent drafts"), ("photos", "photos"), ("voices", "voice recordings"), ("files", "files"),
                                 ("sibling_notes", "notes for the user's other devices")]
    // (`siblings` is not copied: a device that forgets how far it has what the others have asks
    // them from the start again, and takes only what it lacks. Nor is `sibling_seen`: how far
    // the others read a conversation still unread here comes with that catch-up.)

    /// The tables also looked for page by page when they could not be read whole: what the
    /// user wrote or chose, which nothing else says again. (The outbox is made again from the
    /// messages' states, the search index from their summaries.) Their rows' shapes differ.
    private static let scanned: Set<String> = ["messages", "drafts", "blocked", "conversations", "receipts_out"]
    /// Those of them not read whole by rowid (all of them, until the copy says otherwise).
    private var unfinished: [String: Int] = Dictionary(uniqueKeysWithValues: scanned.map { ($0, 0) })

    /// Each table, rows as they were (ids kept, so references between them hold).
    private mutating func copyTables() throws {
        // Where the messages end when their last page cannot be read: what refers to them says.
        let newest = ["SELECT max(last_message) FROM conversations", "SELECT max(message) FROM outbox",
                      "SELECT indexed_through FROM search_progress"].compactMap { try? scalar($0) }.max()
        for (table, name) in Self.tables {
            let lost = try copy(table, newest: table == "messages" ? newest : nil)
            if table == "messages" { counts.lostMessages = lost.rows }
            if Self.scanned.contains(table) {
                if lost.any { unfinished[table] = lost.rows } else { unfinished[table] = nil }
            }
            // Messages' lost rowids are counted; a table whose lost rows are not is named.
            if lost.any && (table != "messages" || lost.rows == 0) { counts.unreadable.append(name) }
        }
        try copyBudgets()
    }

    /// Each peer's count for the day (a table without rowids, so read in its key's order from
    /// both ends: what lies before and after a damaged page), so a peer past its budget stays
    /// past it.
    private mutating func copyBudgets() throws {
        guard let source else { return }
        var failed = false
        for order in ["peer, day", "peer DESC, day DESC"] {
            var read: [(peer: String, day: Int64, messages: Int64, bytes: Int64)] = []
            do {
                let rows = try source.statement("SELECT peer, day, messages, bytes FROM peer_budget ORDER BY \(order)")
                defer { rows.reset() }
                while try rows.step() { read.append((rows.text(0), rows.int(1), rows.int(2), rows.int(3))) }
            } catch {
                failed = true
            }
            for row in read {
                try target.statement("INSERT OR IGNORE INTO peer_budget (peer, day, messages, bytes) VALUES (?, ?, ?, ?)")
                    .bind(row.peer, row.day, row.messages, row.bytes).run()
            }
        }
        if failed { counts.unreadable.append("the day's budgets") }
    }

    /// The rows of the messages and drafts tables that could not all be read by rowid, looked
    /// for on every table leaf page of the file (and its log), recognised by their shape.
    private mutating func scanPages() throws {
        guard !unfinished.isEmpty, let pages = PageScan(path: path) else { return }
        defer { pages.close() }
        struct Shape {
            var table: String
            var columns: [(name: String, integer: Bool, nullable: Bool)]
            /// Columns a row may lack (added after it was written): nullable or defaulted, at the end.
            var optionalTail: Int
            /// Whether the first column is the INTEGER PRIMARY KEY, the rowid's name.
            var rowidKey: Bool
            var insert: String
        }
        var shapes: [Shape] = []
        for table in unfinished.keys.sorted() {
            let info = try target.statement("SELECT name, type, \"notnull\", dflt_value IS NOT NULL, pk FROM pragma_table_info('\(table)') ORDER BY cid")
            var columns: [(name: String, integer: Bool, nullable: Bool)] = [], tail = 0, rowidKey = false
            while try info.step() {
                // The INTEGER PRIMARY KEY is the rowid: its record holds NULL.
                let key = info.int(4) == 1 && info.text(1) == "INTEGER"
                if key && columns.isEmpty { rowidKey = true }
                columns.append((info.text(0), info.text(1) == "INTEGER", key || info.int(2) == 0))
                tail = info.int(2) == 0 || info.int(3) == 1 ? tail + 1 : 0
            }
            info.reset()
            let names = columns.map(\.name).joined(separator: ", ")
            shapes.append(Shape(table: table, columns: columns, optionalTail: tail, rowidKey: rowidKey,
                                insert: "INSERT OR IGNORE INTO \(table) (\(names)) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"))
        }
        var found: [String: Int] = [:]
        try pages.rows { row in
            for shape in shapes {
                guard row.values.count <= shape.columns.count, row.values.count >= shape.columns.count - shape.optionalTail,
                      zip(row.values, shape.columns).allSatisfy({ value, column in
                          switch value {
                          case .null: column.nullable
                          case .integer: column.integer
                          case .text: !column.integer
                          case .real, .blob: false
                          }
                      }) else { continue }
                let insert = try target.statement(shape.insert)
                for index in shape.columns.indices {
                    let value: (any SQLiteValue)? = switch index < row.values.count ? row.values[index] : .null {
                    // The INTEGER PRIMARY KEY's record holds NULL: its value is the rowid.
                    case _ where index == 0 && shape.rowidKey: row.rowid
                    case .integer(let number): number
                    case .text(let bytes): String(decoding: bytes, as: UTF8.self)
                    default: nil
                    }
                    try insert.bind(at: Int32(index + 1), value)
                }
                do {
                    try insert.run()
                    found[shape.table, default: 0] += target.changes
                } catch let error as Database.Failure where error.primary == SQLITE_CONSTRAINT {
                    // A row the damage made into one the store never holds.
                }
                break
            }
        }
        counts.lostMessages = max(0, counts.lostMessages - (found["messages"] ?? 0))
    }

    /// One value of the source, `nil` for NULL; throws when it cannot be read.
    private func scalar(_ sql: String) throws -> Int64? {
        guard let source else { return nil }
        let statement = try source.statement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.optionalInt(0) : nil
    }

    /// The columns of `table` both databases have (an older store lacks later ones).
    private func columns(of table: String) throws -> [String] {
        guard let source else { return [] }
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
        guard let source else { return (0, true) }
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
                next_seq = max(next_seq, coalesce((SELECT max(m.seq) FROM messages m WHERE m.conversation = conversations.id AND m.outgoing = 1 AND m.device IS NULL), 0) + 1),
                updated_at = max(updated_at, coalesce((SELECT max(m.stored_at) FROM messages m WHERE m.conversation = conversations.id), 0));
            DELETE FROM outbox WHERE message NOT IN (SELECT id FROM messages);
            UPDATE outbox SET lease_pid = NULL, lease_until = NULL;
            INSERT INTO outbox (message, peer, queued_at)
            SELECT id, recipient, sent_at FROM messages WHERE outgoing = 1 AND device IS NULL AND state IN ('queued', 'sent') AND id NOT IN (SELECT message FROM outbox);
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
        counts.drafts = try count("drafts")
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

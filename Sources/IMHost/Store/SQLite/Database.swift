import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// One connection to an SQLite database file, used from one thread: the chat's. A thin layer
/// over SQLite's C API: statements are prepared once and reused, values are always bound (no SQL
/// is ever built from outside text), and every error says which file, what SQLite said, and its
/// code.
final class Database {
    /// An error from SQLite: its (extended) result code and message, and the file.
    struct Failure: Error, CustomStringConvertible {
        /// SQLite's extended result code.
        var code: Int32
        var message: String
        var path: String
        /// The system's error number behind an I/O error (`ENOSPC`, `EFBIG`, …), 0 if none.
        var systemError: Int32 = 0

        /// The primary result code (`SQLITE_FULL`, `SQLITE_CORRUPT`, …).
        var primary: Int32 { code & 0xFF }
        /// The database is damaged (or is not a database): it must not be written to.
        var isCorrupt: Bool { primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB }
        /// The disk is full, or a file-size limit was reached.
        var isFull: Bool {
            primary == SQLITE_FULL || [ENOSPC, EDQUOT, EFBIG].contains(systemError)
                || (primary == SQLITE_IOERR && systemError == 0 && code == Database.ioErrWrite)
        }
        var isBusy: Bool { primary == SQLITE_BUSY || primary == SQLITE_LOCKED }

        var description: String {
            "\(path): \(message)" + (systemError != 0 ? ": \(String(cString: strerror(systemError)))" : "") + " (SQLite \(code))"
        }
    }

    /// SQLITE_IOERR_WRITE: what a write past a file-size limit (EFBIG) comes back as.
    static let ioErrWrite: Int32 = SQLITE_IOERR | (3 << 8)

    let path: String
    /// Safe to hold: the connection is made in init, closed once in deinit, and only this
    /// object (on its one thread) uses it.
    private let handle: OpaquePointer
    private var statements: [String: Statement] = [:]
    /// Statements stepped since the last ``finishStatements()``: the only ones it has to reset.
    fileprivate var stepped: [Statement] = []

    /// How to open.
    enum Mode {
        /// Read and write, making the file if need be.
        case readWrite
        /// Read only; `immutable` when nothing else can have it open (a read-only folder with
        /// no write-ahead log): SQLite then needs no shared-memory file.
        case readOnly(immutable: Bool)
        /// A database in memory only, gone when closed.
        case memory
    }

    /// Opens `path`, never through a link (the caller has checked it is a regular file).
    init(path: String, mode: Mode, busyTimeout milliseconds: Int32 = 5000) throws(Failure) {
        self.path = path
        var flags = SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        var name = path
        switch mode {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly(let immutable):
            flags |= SQLITE_OPEN_READONLY
            if immutable {
                flags |= SQLITE_OPEN_URI
                name = "file:" + Self.uriEscaped(path) + "?immutable=1"
            }
        case .memory:
            flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY
            name = ":memory:"
        }
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(name, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            let system = opened.map { sqlite3_system_errno($0) } ?? 0
            sqlite3_close_v2(opened)
            throw Failure(code: code, message: message, path: path, systemError: system)
        }
        handle = opened
        sqlite3_busy_timeout(handle, milliseconds)
        sqlite3_extended_result_codes(handle, 1)
    }

    /// Set when the connection is given up because its descriptors were closed under it.
    private var isAbandoned = false
    /// Set when the connection was closed before its end (``closeLeavingLog()``).
    private var isClosed = false

    deinit {
        stepped.removeAll()
        statements.removeAll()
        // An abandoned connection is leaked on purpose: closing it would close descriptor
        // numbers that may now belong to other files.
        if !isAbandoned && !isClosed { sqlite3_close_v2(handle) }
    }

    /// Gives the connection up: it is never closed (see deinit), and never used again.
    func abandon() { isAbandoned = true }

    /// Closes the connection now without a checkpoint: the write-ahead log stays as it is and
    /// nothing is written to the file (a damaged database, or one read to copy it). Afterwards
    /// every use fails with an error, never touching the closed connection.
    func closeLeavingLog() {
        guard !isClosed, !isAbandoned else { return }
        stepped.removeAll()
        statements.removeAll()
        imhost_sqlite_no_checkpoint_on_close(handle)
        sqlite3_close_v2(handle)
        isClosed = true
    }

    /// The error every use of a closed connection gets.
    private var closedFailure: Failure { Failure(code: SQLITE_MISUSE, message: "the connection was closed", path: path) }

    /// A path as a URI's path: `%` `?` `#` escaped.
    private static func uriEscaped(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"):
                out += "%" + String(byte, radix: 16, uppercase: true)
            default:
                out.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return out
    }

    func failure(_ code: Int32) -> Failure {
        Failure(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)), path: path,
                systemError: sqlite3_system_errno(handle))
    }

    /// Runs SQL that binds nothing and returns no rows: pragmas and schema.
    func execute(_ sql: String) throws(Failure) {
        guard !isClosed else { throw closedFailure }
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// The statement for `sql`, prepared the first time and reused after (reset, its bindings
    /// cleared).
    func statement(_ sql: String) throws(Failure) -> Statement {
        guard !isClosed else { throw closedFailure }
        if let prepared = statements[sql] {
            prepared.reset()
            return prepared
        }
        var raw: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard code == SQLITE_OK, let raw else { throw failure(code) }
        let prepared = Statement(raw, database: self)
        statements[sql] = prepared
        return prepared
    }

    /// Resets every statement, so none holds a read transaction open between uses: a stale
    /// snapshot would make this connection's next write fail at once (`SQLITE_BUSY_SNAPSHOT`)
    /// when another process wrote meanwhile.
    func finishStatements() {
        for statement in stepped {
            // Its bindings hold no lock: they are cleared when it is next used.
            statement.finish()
            statement.isListed = false
        }
        stepped.removeAll(keepingCapacity: true)
    }

    /// Runs `body` in one transaction: `BEGIN IMMEDIATE` takes the write lock at once (another
    /// process waits up to the busy timeout), so what `body` reads is what it writes over.
    /// Committed when `body` returns, rolled back when it throws.
    ///
    /// Every statement is reset before the commit: one left mid-result would keep a read
    /// transaction open through it, and SQLite skips the automatic checkpoint of a connection
    /// with a transaction open; the write-ahead log would then grow without end, and every
    /// commit, extending the file, would cost a metadata flush too (measured: 2.4x a bare fsync
    /// instead of 1.4x).
    ///
    /// Statements are reset before it begins too: a read left open would pin an old snapshot,
    /// and SQLite refuses at once (no busy wait) to write over one another process has moved on
    /// from (`SQLITE_BUSY_SNAPSHOT`).
    ///
    /// `durable: false` commits without waiting for the disk (`synchronous=NORMAL` for this
    /// transaction): for what the connection records of its own progress (a claim, `sent`, when
    /// to try again), which a power cut may take back at no cost but a resend. The write-ahead
    /// log keeps commits in order, so the next durable commit puts it on disk too. A send, an
    /// arrival and a receipt's state are always durable.
    func transaction<T>(durable: Bool = true, _ body: () throws -> T) throws -> T {
        finishStatements()
        if !durable { try statement("PRAGMA synchronous = NORMAL").run() }
        defer { if !durable { try? statement("PRAGMA synchronous = FULL").run() } }
        return try within("BEGIN IMMEDIATE", body)
    }

    /// Runs `body`'s reads in one read transaction (`BEGIN`, which locks nothing until the first
    /// read): every statement sees one snapshot, and the log is looked at once, not once a
    /// statement. Ended (every statement reset first) when `body` returns or throws.
    func reading<T>(_ body: () throws -> T) throws -> T {
        finishStatements()
        return try within("BEGIN", body)
    }

    /// `begin`, then `body`, then a commit; a rollback when it throws.
    private func within<T>(_ begin: String, _ body: () throws -> T) throws -> T {
        try statement(begin).run()
        do {
            let result = try body()
            finishStatements()
            try statement("COMMIT").run()
            return result
        } catch {
            finishStatements()
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Rows changed by the last statement.
    var changes: Int { isClosed ? 0 : Int(sqlite3_changes(handle)) }

    /// The rowid of the last row inserted.
    var lastInsertedRow: Int64 { isClosed ? 0 : sqlite3_last_insert_rowid(handle) }

    /// `PRAGMA data_version`: changes when another connection (another process) commits.
    func dataVersion() throws(Failure) -> Int64 {
        let statement = try statement("PRAGMA data_version")
        defer { statement.reset() }
        _ = try statement.step()
        return statement.int(0)
    }

    /// `PRAGMA user_version`.
    var userVersion: Int {
        get throws(Failure) {
            let statement = try statement("PRAGMA user_version")
            defer { statement.reset() }
            _ = try statement.step()
            return Int(statement.int(0))
        }
    }

    /// The version of the SQLite library in use.
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}

/// A prepared statement: bind by position (from 1), step, read columns (from 0).
final class Statement {
    private let raw: OpaquePointer
    private unowned let database: Database

    init(_ raw: OpaquePointer, database: Database) {
        self.raw = raw
        self.database = database
    }

    /// In its database's ``Database/stepped``: stepped since the last finish.
    fileprivate var isListed = false

    deinit { sqlite3_finalize(raw) }

    func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    /// Ends the statement's run (no read transaction is left open by it); its bindings stay.
    func finish() { sqlite3_reset(raw) }

    /// Binds values in order, from parameter 1: `Int`, `Int64`, `Int32`, `Bool`, `String`, or `nil`.
    @discardableResult
    func bind(_ values: (any SQLiteValue)?...) throws(Database.Failure) -> Statement {
        for (offset, value) in values.enumerated() { try bind(at: Int32(offset + 1), value) }
        return self
    }

    /// Binds one value at parameter `index` (from 1).
    func bind(at index: Int32, _ value: (any SQLiteValue)?) throws(Database.Failure) {
        let code = value?.bind(raw, at: index) ?? sqlite3_bind_null(raw, index)
        guard code == SQLITE_OK else { throw database.failure(code) }
    }

    /// Steps once: true when a row is ready to read, false when done.
    func step() throws(Database.Failure) -> Bool {
        if !isListed {
            isListed = true
            database.stepped.append(self)
        }
        let code = sqlite3_step(raw)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.failure(code)
        }
    }

    /// Steps to the end, for statements that return no rows.
    func run() throws(Database.Failure) {
        while try step() {}
    }

    func int(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }

    func optionalInt(_ column: Int32) -> Int64? { isNull(column) ? nil : int(column) }

    /// A text column as a String (its bytes as they are stored; not-UTF-8 bytes repaired).
    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(raw, column) else { return "" }
        let count = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    /// A blob column's bytes (empty for NULL).
    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(raw, column))
        guard count > 0, let bytes = sqlite3_column_blob(raw, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Binds columns `columns` of the row `row` is on to parameters 1, 2, ... of this
    /// statement, as they are (integer, real, text, blob or null), whatever their type.
    func bind(columnsOf row: Statement, _ columns: Range<Int32>) throws(Database.Failure) {
        for (offset, column) in columns.enumerated() {
            let code = sqlite3_bind_value(raw, Int32(offset + 1), sqlite3_column_value(row.raw, column))
            guard code == SQLITE_OK else { throw database.failure(code) }
        }
    }
}

/// A value a statement binds: each type binds itself, so binding casts nothing (a chain of
/// dynamic casts cost a tenth of storing a burst of arrivals).
protocol SQLiteValue: Sendable {
    /// Binds it at parameter `index` (from 1) of `statement`; SQLite's result code.
    func bind(_ statement: OpaquePointer, at index: Int32) -> Int32
}

extension Int64: SQLiteValue {
    func bind(_ statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self) }
}

extension Int: SQLiteValue {
    func bind(_ statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, Int64(self)) }
}

extension Int32: SQLiteValue {
    func bind(_ statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, Int64(self)) }
}

extension Bool: SQLiteValue {
    func bind(_ statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self ? 1 : 0) }
}

extension [UInt8]: SQLiteValue {
    func bind(_ statement: OpaquePointer, at index: Int32) -> Int32 {
        withUnsafeBytes { bytes in imhost_sqlite_bind_blob(statement, index, bytes.baseAddress, Int32(bytes.count)) }
    }
}

extension String: SQLiteValue {
    func bind(_ statement: OpaquePointer, at index: Int32) -> Int32 {
        var text = self
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return imhost_sqlite_bind_text(statement, index, "", 0) }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { imhost_sqlite_bind_text(statement, index, $0, Int32(bytes.count)) }
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSQLite
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// One user's messages, in one SQLite database: `<data>/users/<user>/messages.sqlite3`.
///
/// - Opened in WAL mode, `synchronous=FULL`: a send reported done is on disk. A busy timeout lets
///   several `imhost` processes of one user share it; foreign keys are on. Never opened through
///   a link, and only after `lstat` says it is a regular file.
/// - Its schema is versioned in `PRAGMA user_version`, migrated in code (``Migrations``); a
///   database newer than this code is refused in one line.
/// - Storing a message and queueing it for delivery are one transaction; a message is
///   identified by (sender, global id), so storing one that is there already changes nothing.
/// - A damaged database (not a database, truncated, a bad header or schema, a damaged page) is
///   found at open, when SQLite says `SQLITE_CORRUPT`, or by ``check()``: it is never written to
///   again, moved aside (`messages.sqlite3.damaged-<time>`), and a new one holding what could be
///   read out of it takes its place (``StoreRecovery``); one line says so, with the counts.
/// - A folder that cannot be written is read: with no write-ahead log, the database is opened
///   immutable; with one, a private copy of the two is read (SQLite cannot read a WAL without
///   writing its index file beside it), removed from the disk as soon as it is open. Sends are
///   refused in one line.
/// - A data folder of the JSON-lines store (imhost 1.0) is imported once (``LegacyImport``).
public final class MessageStore {
    /// The signed-in user whose messages these are.
    public let user: String
    /// The database file; `:memory:` for a store kept in memory.
    public let path: String
    /// The user's folder; `nil` in memory.
    let folder: String?
    /// Whether messages can only be read.
    public private(set) var isReadOnly: Bool
    /// Why messages can only be read, for a person: the folder cannot be written, or the disk is
    /// full.
    public private(set) var readOnlyReason: String?
    /// What opening or running did that a person should know (an import, a damaged file moved
    /// aside and what was read out of it, a read-only copy), one line each.
    public private(set) var notes: [String] = []
    /// Whether this store found its database damaged (and replaced it) since it was opened.
    public private(set) var foundDamage = false
    var database: Database
    /// The descriptors SQLite holds on the database and its log files, as they were when they
    /// were opened: line code runs in this process and could close them (and the numbers be
    /// reused for other files). Checked before every use; see ``guarded(_:)``.
    private var descriptors: [Held] = []
    /// Whether messages stored since the search index last caught up may have words it lacks:
    /// set when this process stores one (and at first, for what others stored), cleared by
    /// ``catchUpSearchIndex(limit:)``. Another process's messages wait for this one's next, or
    /// for a search.
    var wordsPending = true
    /// When this process last tried to scrub the files after a recall (``scrubFilesIfDue(now:)``).
    var lastScrubTry: Int64 = 0
    /// The stored jumps decoded so far, by their JSON (``jump(_:)``).
    var decodedJumps: [String: JumpPage?] = [:]

    /// The database file this store's connection holds, as it was when opened.
    var heldIdentity: FileIdentity? {
        descriptors.first { $0.path == path }.map { FileIdentity(device: $0.device, inode: $0.inode) }
    }

    /// Looks again at the descriptors SQLite holds (after a new connection).
    func refreshDescriptors() { descriptors = Self.descriptors(of: path) }

    deinit {
        // Closing checkpoints and deletes the write-ahead log by its name: not when another
        // process has put a new database under that name (``reopenIfReplaced()``).
        if !isReadOnly, let held = heldIdentity, FileIdentity(of: path) != held { database.closeLeavingLog() }
    }

    /// A descriptor SQLite holds, and the file it was.
    private struct Held {
        var fd: Int32
        var path: String
        var device: UInt64
        var inode: UInt64
    }
    /// Connections given up because their descriptors were closed under them: never closed (their
    /// numbers may belong to other files now), kept so they are not.
    private var abandoned: [Database] = []

    /// The file's name in the user's folder.
    public static let fileName = "messages.sqlite3"

    /// A store kept in memory, for tests and chats nobody needs to keep.
    public init(memoryFor user: String) throws(StoreError) {
        self.user = user
        path = ":memory:"
        folder = nil
        isReadOnly = false
        do {
            database = try Database(path: path, mode: .memory)
            try Self.prepare(database)
        } catch {
            throw Self.storeError(error)
        }
    }

    /// Opens (making it, and the user's folder, if need be) the store of `user` under
    /// `dataFolder`, importing a 1.0 folder's JSON-lines logs the first time. `say` is told
    /// when opening has to wait for another process importing the same folder.
    public init(dataFolder: String, user: String, say: (String) -> Void = { _ in }) throws(StoreError) {
        self.user = user
        Self.removeAbandonedCopies()
        let folder = try StoreFolder(dataFolder: dataFolder, user: user)
        self.folder = folder.path
        path = folder.path + "/" + Self.fileName
        isReadOnly = folder.isReadOnly
        if isReadOnly { readOnlyReason = "the data folder (\(folder.path)) is read-only, so messages can be read but not stored; make it writable" }
        var info = stat()
        let exists = lstat(path, &info) == 0
        if exists, info.st_mode & S_IFMT != S_IFREG {
            throw StoreError(.refused, "\(path) is \(FileSystem.kind(info.st_mode)), not a regular file: it is not opened; remove it")
        }
        if exists, !isReadOnly, access(path, W_OK) != 0 {
            isReadOnly = true
            readOnlyReason = "\(path) is read-only, so messages can be read but not stored; make it writable"
        }
        do {
            if isReadOnly {
                database = try Self.openReadOnly(path, exists: exists, notes: &notes)
            } else {
                switch try Self.openWritable(path, exists: exists) {
                case .opened(let connection):
                    database = connection
                case .damaged(let failure, let connection):
                    database = try Self.replaceDamaged(path, found: exists ? FileIdentity(info) : nil, damaged: connection,
                                                       failure: failure, notes: &notes)
                    foundDamage = true
                }
            }
        } catch let failure as Database.Failure where failure.isFull && !isReadOnly {
            // No room to open it for writing (its log cannot be made): it can still be read.
            isReadOnly = true
            let why = failure.systemError != 0 ? String(cString: strerror(failure.systemError)) : failure.message
            readOnlyReason = "the disk holding \(path) is full (\(why)); free some space"
            notes.append("the disk holding \(path) is full (\(why)): messages are shown, and nothing can be sent until there is room")
            do {
                var said: [String] = []
                database = try Self.openReadOnly(path, exists: exists, notes: &said)
            } catch {
                throw Self.storeError(error)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw Self.storeError(error)
        }
        descriptors = Self.descriptors(of: path)
        // No statement of the checks above may keep a read transaction open: its snapshot would
        // hide what another process commits meanwhile (an import, a message).
        database.finishStatements()
        try LegacyImport.importIfPresent(into: self, say: say)
    }

    /// What opening a database for writing found.
    private enum Opening {
        case opened(Database)
        /// It is damaged: what said so, and the connection to it when one was made.
        case damaged(Database.Failure, Database?)
    }

    /// Opens (making it if need be) and migrates the database at `path`, or finds it damaged.
    private static func openWritable(_ path: String, exists: Bool) throws -> Opening {
        if exists, let damage = headerDamage(path) {
            return .damaged(Database.Failure(code: SQLITE_CORRUPT, message: damage, path: path), nil)
        }
        // One process at a time makes, switches to WAL and migrates the database: two at once on
        // a new file can deadlock on its locks, and SQLite then answers SQLITE_BUSY at once,
        // without waiting. (A damaged one is replaced after the lock is let go: replacing takes it.)
        let opening = openingLock(in: FileSystem.directory(of: path))
        defer { if opening >= 0 { close(opening) } }
        // A new database a process killed while reading a damaged one out left half built (it is
        // built under this lock, so none is being built now).
        removeHalfBuilt(path)
        if !exists {
            // Made here, mode 0600 and never through a link; SQLite gives its log files the same mode.
            let made = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if made >= 0 { close(made) }
        }
        let database = try Database(path: path, mode: .readWrite)
        do {
            try prepare(database)
        } catch let failure as Database.Failure where failure.isCorrupt || failure.code == badSchema {
            return .damaged(failure, database)
        }
        return .opened(database)
    }

    /// The descriptors this process holds on `path` and its `-wal` and `-shm` files, from
    /// `/proc/self/fd`, with the identity of each.
    private static func descriptors(of path: String) -> [Held] {
        guard path != ":memory:", let names = try? FileSystem.entries(of: "/proc/self/fd") else { return [] }
        let wanted = Set([path, path + "-wal", path + "-shm"])
        var found: [Held] = []
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        for name in names {
            guard let fd = Int32(name) else { continue }
            let length = readlink("/proc/self/fd/" + name, &buffer, buffer.count - 1)
            guard length > 0 else { continue }
            let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            var info = stat()
            guard wanted.contains(target), fstat(fd, &info) == 0 else { continue }
            found.append(Held(fd: fd, path: target, device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
        }
        return found
    }

    /// When line code closed the database's descriptors under SQLite, each number is given the
    /// same file again (while nothing else has taken it), so the old connection can be closed
    /// cleanly and a new one opened. A number some other file has taken meanwhile is not
    /// touched: the connection is given up (never closed, so that file is not), and the store
    /// says it cannot go on.
    private func reopenIfClosedUnderUs() throws {
        var intact = true, repairable = true
        for held in descriptors {
            var info = stat()
            if fstat(held.fd, &info) == 0 {
                if UInt64(info.st_dev) != held.device || UInt64(info.st_ino) != held.inode { intact = false; repairable = false }
                continue
            }
            intact = false
            guard errno == EBADF else { repairable = false; continue }
            let again = open(held.path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            if again < 0 || fstat(again, &info) != 0 || UInt64(info.st_dev) != held.device || UInt64(info.st_ino) != held.inode
                || (again != held.fd && dup2(again, held.fd) < 0) {
                repairable = false
            }
            if again >= 0, again != held.fd { close(again) }
        }
        guard !intact else { return }
        guard repairable else {
            database.abandon()
            abandoned.append(database)
            descriptors = []
            throw StoreError(.failed, "the store's files were closed under it by line code in this process, and their numbers taken by other files; \(Self.fileName) cannot be used safely until the chat starts again")
        }
        let connection = isReadOnly ? try Database(path: path, mode: .readOnly(immutable: access(path + "-wal", F_OK) != 0))
                                    : try Database(path: path, mode: .readWrite)
        database = connection
        if !isReadOnly { try Self.configure(database) }
        _ = try database.userVersion
        descriptors = Self.descriptors(of: path)
        notes.append("the store's files were closed under it (by line code in this process); \(Self.fileName) was opened again")
    }

    /// A result code of ours: the schema is not the one its version says.
    static let badSchema: Int32 = 0x7A11

    /// What every writing connection sets: a commit is on disk when it returns; references are
    /// checked; what a write frees is zeroed; and the write-ahead log, once checkpointed, is cut back to 4 MiB (its size at an
    /// automatic checkpoint) rather than keeping whatever size a big import once gave it.
    static func configure(_ database: Database) throws {
        try database.execute("PRAGMA synchronous = FULL")
        // What a write frees is zeroed, not left in the file: a recalled or cleared message's
        // text, a sent draft's (MessageStore+Recall.swift).
        try database.execute("PRAGMA secure_delete = ON")
        try database.execute("PRAGMA foreign_keys = ON")
        try database.execute("PRAGMA journal_size_limit = 4194304")
    }

    /// `<user folder>/store.lock`, held (`flock`) while this process opens the database; -1 when
    /// it cannot be made (then opening goes on without it).
    static func openingLock(in folder: String) -> Int32 {
        let fd = open(folder + "/store.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard fd >= 0 else { return -1 }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return -1
        }
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        return fd
    }

    /// Pragmas and migrations, and a check that the schema is what its version says.
    static func prepare(_ database: Database) throws {
        try database.execute("PRAGMA journal_mode = WAL")
        try configure(database)
        try Migrations.apply(to: database)
        try checkSchema(database)
    }

    /// What is wrong with a database file's header, read before SQLite opens it: not an SQLite
    /// database, or shorter than the header says (truncated); `nil` when it looks whole. (SQLite
    /// itself takes a short file for a smaller database, and finds out only when it reads a page
    /// that is gone.)
    static func headerDamage(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0 else { return nil }
        var header = [UInt8](repeating: 0, count: 100)
        let got = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 100, 0) }
        guard got == 100, header.starts(with: Array("SQLite format 3\u{0}".utf8)) else {
            return "it does not start as an SQLite database does"
        }
        func number(_ offset: Int, _ count: Int) -> Int { header[offset..<offset + count].reduce(0) { $0 << 8 | Int($1) } }
        let pageSize = number(16, 2) == 1 ? 65536 : number(16, 2)
        let pages = number(28, 4)
        // The header's page count holds when the change counter and the version it is valid for
        // agree; and only with no write-ahead log, whose frames may hold the pages past the end
        // (a checkpoint cut short by a full disk leaves it so, and SQLite reads them from there).
        var log = stat()
        guard pages > 0, number(24, 4) == number(92, 4), Int(info.st_size) < pages * pageSize,
              lstat(path + "-wal", &log) != 0 || log.st_size == 0 else { return nil }
        return "it is \(info.st_size) bytes, and its header says \(pages) pages of \(pageSize): it was cut short"
    }

    /// The tables the schema has, or the database is damaged.
    static func checkSchema(_ database: Database) throws(Database.Failure) {
        let statement = try database.statement("SELECT count(*) FROM sqlite_schema WHERE type IN ('table') AND name IN ('conversations', 'messages', 'outbox', 'blocked', 'store_facts', 'message_text', 'search_progress', 'receipts_out')")
        _ = try statement.step()
        guard statement.int(0) == 8 else {
            throw Database.Failure(code: badSchema, message: "its schema is not the store's (tables are missing)", path: database.path)
        }
    }

    /// A read-only folder: nothing there yet is an empty store in memory; a database with no
    /// write-ahead log is opened immutable; one with a log is read from a private copy.
    ///
    /// The copy holds every message of the user, so none is left on disk: the two files are
    /// copied into a folder of this process's (``FileSystem/makePrivateScratch(prefix:)``), the
    /// log checkpointed into the copy and the copy made a single file (`journal_mode=DELETE`),
    /// then opened immutable (SQLite then needs no file beside it, and never opens it again by
    /// name), and the folder removed while it is open. A process killed in between leaves the
    /// folder; the next start removes it (``removeAbandonedCopies()``).
    private static func openReadOnly(_ path: String, exists: Bool, notes: inout [String]) throws -> Database {
        guard exists else {
            let empty = try Database(path: ":memory:", mode: .memory)
            try prepare(empty)
            return empty
        }
        guard access(path + "-wal", F_OK) == 0 else {
            let database = try Database(path: path, mode: .readOnly(immutable: true))
            try checkSchema(database)
            return database
        }
        let folder = try FileSystem.makePrivateScratch(prefix: copyPrefix)
        defer { try? FileSystem.removeTree(folder) }
        let copy = folder + "/" + fileName
        for suffix in ["", "-wal"] {
            do {
                try FileSystem.copyFile(path + suffix, to: copy + suffix)
            } catch {
                throw StoreError(.readOnly, "cannot read \(path)\(suffix) to show it from a read-only folder (\(error.call): \(error))")
            }
        }
        do {
            let writable = try Database(path: copy, mode: .readWrite)
            try writable.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try writable.execute("PRAGMA journal_mode = DELETE")
        }
        notes.append("\(FileSystem.directory(of: path)) is read-only: its messages are shown from a copy taken now, and nothing can be sent")
        let database = try Database(path: copy, mode: .readOnly(immutable: true))
        try checkSchema(database)
        return database
    }

    /// The start of the name of a folder holding a private copy: `imhost-store-<pid>-XXXXXX`.
    static let copyPrefix = "imhost-store-"

    /// Removes the private copies (``openReadOnly(_:exists:notes:)``) that processes killed
    /// before they could remove them left behind, those of older imhosts (named without their
    /// process id) included.
    static func removeAbandonedCopies() {
        // Copies made before the process id was in the name too (imhost-store-XXXXXX).
        FileSystem.removeAbandonedScratch(prefix: copyPrefix, unnamed: true)
    }

    /// A database error as the store says it.
    static func storeError(_ error: any Error) -> StoreError {
        if let store = error as? StoreError { return store }
        guard let failure = error as? Database.Failure else { return StoreError(.failed, "\(error)") }
        if failure.isFull {
            let why = failure.systemError != 0 ? String(cString: strerror(failure.systemError)) : "a write failed"
            return StoreError(.full, "cannot write \(failure.path): \(why): the disk is full or a file-size limit was reached; nothing was stored")
        }
        if failure.isCorrupt { return StoreError(.damaged, "\(failure.path) is damaged (\(failure.message))") }
        if failure.primary == SQLITE_READONLY {
            return StoreError(.readOnly, "cannot write \(failure.path): it is read-only (\(failure.message))")
        }
        if failure.isBusy {
            return StoreError(.failed, "\(failure.path) is busy: another process has held it for more than 5 s; nothing was stored, try again")
        }
        return StoreError(.failed, failure.description)
    }

    /// Runs `body` against the database; SQLite's errors become ``StoreError``s. A database
    /// found damaged meanwhile is moved aside and replaced by a new one holding what could be
    /// read out of it (said in ``notes``; ``replaceDamaged(_:found:damaged:failure:notes:)``),
    /// and `body` runs once more against that.
    func guarded<T>(_ body: () throws -> T) throws(StoreError) -> T {
        defer { database.finishStatements() }
        do {
            try reopenIfClosedUnderUs()
            try reopenIfReplaced()
            return try body()
        } catch let failure as Database.Failure where failure.isCorrupt && !isReadOnly && folder != nil {
            do {
                database = try Self.replaceDamaged(path, found: heldIdentity ?? FileIdentity(of: path), damaged: database, failure: failure,
                                                   notes: &notes)
                foundDamage = true
                refreshDescriptors()
                return try body()
            } catch {
                throw Self.storeError(error)
            }
        } catch {
            throw Self.storeError(error)
        }
    }

    /// What opening or running said since it was last asked, and forgets it.
    public func takeNotes() -> [String] {
        defer { notes = [] }
        return notes
    }

    /// Adds a note for a person.
    func note(_ text: String) { notes.append(text) }

    /// Whether this data folder connected to the broker as `login` before.
    public func hasConnected(as login: String) -> Bool {
        (try? guarded {
            try database.statement("SELECT 1 FROM store_facts WHERE name = ?").bind("connected as " + login).step()
        }) ?? false
    }

    /// Remembers that this data folder connected as `login`; returns true.
    public func connected(as login: String) -> Bool {
        _ = firstTime("connected as " + login)
        return true
    }

    /// Whether `fact` is told for the first time: recorded now, so it is told once a store.
    public func firstTime(_ fact: String) -> Bool {
        guard !isReadOnly else { return false }
        return (try? guarded {
            try database.statement("INSERT OR IGNORE INTO store_facts (name, value) VALUES (?, ?)").bind(fact, Clock.iso8601(Clock.now())).run()
            return database.changes == 1
        }) ?? false
    }

    /// Whether another process changed the database since the last look (`PRAGMA data_version`).
    public func changedElsewhere() -> Bool {
        guard let version = try? guarded({ try database.dataVersion() }) else { return false }
        defer { lastDataVersion = version }
        return lastDataVersion.map { $0 != version } ?? false
    }

    private var lastDataVersion: Int64?
}

import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A damaged database is never silent, and what it still holds is kept: it is moved aside,
/// untouched, and a new one takes its place holding what could be read out of it
/// (``StoreRecovery``); one line says where it went and what was read.
extension MessageStore {
    /// Which file a path named: a damaged one is replaced only if it is still the one found.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        init(device: UInt64, inode: UInt64) {
            self.device = device
            self.inode = inode
        }

        init(_ info: stat) {
            self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        }

        /// The file at `path` now, if there is one.
        init?(of path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            self.init(info)
        }
    }

    /// `PRAGMA quick_check`: every page and index looked at; `["ok"]`, or what is wrong. A
    /// database this process can write that turns out damaged (quick_check cannot finish, or
    /// reports problems) is replaced, ``foundDamage`` says so, and the new one is checked; a
    /// read-only one is only looked at.
    public func check() throws(StoreError) -> [String] {
        try guarded {
            let statement = try database.statement("PRAGMA quick_check")
            var found: [String] = []
            while try statement.step() { found.append(statement.text(0)) }
            statement.reset()
            // A row may hold several lines, under a heading naming the database.
            let problems = found.flatMap { $0.split(separator: "\n").map(String.init) }.filter { $0 != "ok" && !$0.hasPrefix("*** in database") }
            guard let first = problems.first, !isReadOnly, folder != nil else { return found }
            // Damaged: guarded replaces it and checks the new one.
            throw Database.Failure(code: SQLITE_CORRUPT, message: "quick_check: " + first + (problems.count > 1 ? " and \(problems.count - 1) more" : ""),
                                   path: path)
        }
    }

    /// Moves the damaged database at `path` aside, as `messages.sqlite3.damaged-<time>` with its
    /// `-wal` and `-shm`, and puts in its place a new one holding what could be read out of it,
    /// said in one line in `notes`. The damaged file is never written to: `damaged` (this
    /// process's connection to it, if any) is closed without a checkpoint, the new one is built
    /// beside it and renamed over its name, so the name always holds one or the other. Done
    /// under the opening lock; when the file at `path` is no longer `found` (another process
    /// replaced it meanwhile), that replacement is opened as it is.
    static func replaceDamaged(_ path: String, found: FileIdentity?, damaged: Database?, failure: Database.Failure,
                               notes: inout [String]) throws -> Database {
        damaged?.closeLeavingLog()
        let folder = FileSystem.directory(of: path)
        let opening = openingLock(in: folder)
        defer { if opening >= 0 { close(opening) } }
        let why = failure.message
        if let found, FileIdentity(of: path) != found {
            notes.append("\(path) was found damaged (\(why)); another imhost process has moved it aside meanwhile and put what it could read in its place")
            return try openPrepared(path)
        }
        removeHalfBuilt(path)
        let building = path + ".recovering"
        let counts = try recover(path, into: building)
        let aside = path + ".damaged-" + Clock.iso8601(Clock.now()).replacing(":", with: "")
        func cannotMove(_ what: String) -> StoreError {
            StoreError(.damaged, "\(path) is damaged (\(why)) and \(what) cannot be moved aside (\(String(cString: strerror(errno)))); move it yourself")
        }
        // A second name first, so the damaged file keeps its own until the new one takes it.
        guard link(path, aside) == 0 || rename(path, aside) == 0 else { throw cannotMove("it") }
        for suffix in ["-wal", "-shm"] where access(path + suffix, F_OK) == 0 {
            guard rename(path + suffix, aside + suffix) == 0 else { throw cannotMove("its \(suffix) file") }
        }
        guard rename(building, path) == 0 else { throw cannotMove("it") }
        FileSystem.syncFolder(folder)
        let kept = counts.isNothing ? "a new store started; nothing could be read out of it"
                                    : "a new store started with what could be read out of it: \(counts)"
        notes.append("\(path) is damaged (\(why)): it was moved aside to \(FileSystem.baseName(aside)), untouched, and \(kept)")
        return try openPrepared(path)
    }

    /// The file at ``path`` is no longer the one this connection holds: another process found
    /// it damaged and put a new one in its place. This connection is closed without a
    /// checkpoint (one would delete the new database's log, which has the same name) and the new
    /// one opened.
    func reopenIfReplaced() throws {
        guard !isReadOnly, let held = heldIdentity, FileIdentity(of: path) != held else { return }
        database.closeLeavingLog()
        database = try Self.openPrepared(path)
        refreshDescriptors()
        note("another imhost process found \(path) damaged and replaced it: this one goes on with the new one")
    }

    /// Removes what a process killed while building a new database for a damaged one left.
    static func removeHalfBuilt(_ path: String) {
        for suffix in ["", "-journal"] { unlink(path + ".recovering" + suffix) }
    }

    /// Builds at `building` a new database holding what can be read out of the one at `path`:
    /// one file (no write-ahead log), made durable by its commit.
    private static func recover(_ path: String, into building: String) throws -> StoreRecovery.Counts {
        let fresh = try Database(path: building, mode: .readWrite)
        defer { fresh.closeLeavingLog() }
        try configure(fresh)
        try Migrations.apply(to: fresh)
        try checkSchema(fresh)
        // A message whose conversation's row was lost is copied all the same.
        try fresh.execute("PRAGMA foreign_keys = OFF")
        return try StoreRecovery.copy(from: path, into: fresh)
    }

    /// The database at `path`, opened for writing and prepared.
    static func openPrepared(_ path: String) throws -> Database {
        let database = try Database(path: path, mode: .readWrite)
        try prepare(database)
        return database
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// Imports a user folder written by the JSON-lines store of imhost 1.0 (one `<peer>.jsonl` log a
/// conversation, an `.index` beside each, `outbox.jsonl`) into the user's database, once.
///
/// Under an exclusive lock (a second process waits, and says so), every conversation is read in
/// order and stored with its local ids (`m1`, `m2`, … keep their numbers), messages still pending
/// in the outbox stay queued, and the rest of the user's messages count as sent. A line that is
/// not a message is kept as one that says so (so every number stays); a torn last line (a write
/// cut short) is not a message and is left out; both are named. The import is checked (every
/// conversation's count and ids) before it is committed, and only then are the old files moved
/// aside into `imported-1.0/`, never deleted and never imported twice. A read-only 1.0 folder is
/// imported into a store in memory for the run.
enum LegacyImport {
    /// The fact recorded once the import is committed.
    static let fact = "imported-1.0"
    /// Where the old files go.
    static let aside = "imported-1.0"

    private struct Record: Decodable {
        var state: String
        var conversation: String
        var id: String
    }

    static func importIfPresent(into store: MessageStore, say: (String) -> Void) throws(StoreError) {
        guard let folder = store.folder else { return }
        var undecodable: [String] = []
        let names = ((try? FileSystem.entries(of: folder, undecodable: &undecodable)) ?? []).filter(isLegacy)
        guard !names.isEmpty else { return }
        // Exclusive: two processes of one user must not import the same folder twice.
        var lock: Int32 = -1
        if !store.isReadOnly {
            lock = open(folder + "/import.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
            if lock >= 0, flock(lock, LOCK_EX | LOCK_NB) != 0 {
                say("another imhost is importing the 1.0 messages of user '\(store.user)' in \(folder); waiting for it")
                while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
            }
        }
        defer { if lock >= 0 { close(lock) } }
        if try alreadyImported(store) {
            moveAside(names, in: folder, store: store)
            return
        }
        let logs = names.filter { $0.hasSuffix(".jsonl") && $0 != "outbox.jsonl" }.sorted()
        let pending = pendingSends(folder + "/outbox.jsonl")
        var report = Report()
        try store.guarded {
            try store.database.transaction {
                for name in logs {
                    try importLog(folder + "/" + name, into: store, pending: pending, report: &report)
                }
                try store.indexNewMessages()
                try store.database.statement("INSERT INTO store_facts (name, value) VALUES (?, ?)")
                    .bind(fact, Clock.iso8601(Clock.now())).run()
            }
        }
        for problem in report.problems { store.note(problem) }
        if store.isReadOnly || store.path == ":memory:" {
            store.note("\(folder) is a read-only folder of the 1.0 store: its \(report.messages) messages were read into memory for this run, and nothing can be sent")
            return
        }
        let kept = moveAside(names, in: folder, store: store)
        store.note("imported the 1.0 messages of user '\(store.user)': \(report.conversations) conversation\(report.conversations == 1 ? "" : "s"), \(report.messages) message\(report.messages == 1 ? "" : "s")\(report.queued > 0 ? " (\(report.queued) still queued)" : ""); the old files are kept in \(kept)")
    }

    /// A file of the 1.0 store.
    static func isLegacy(_ name: String) -> Bool {
        name.hasSuffix(".jsonl") || name.hasSuffix(".jsonl.index") || name.hasSuffix(".jsonl.torn")
    }

    private static func alreadyImported(_ store: MessageStore) throws(StoreError) -> Bool {
        try store.guarded {
            let find = try store.database.statement("SELECT 1 FROM store_facts WHERE name = ?")
            try find.bind(fact)
            return try find.step()
        }
    }

    private struct Report {
        var conversations = 0
        var messages = 0
        var queued = 0
        var problems: [String] = []
    }

    /// The messages the 1.0 outbox still held pending, as (conversation, id).
    private static func pendingSends(_ path: String) -> Set<String> {
        var pending: Set<String> = []
        for record in JSONLines.read(Record.self, from: path) {
            let key = record.conversation + "\u{0}" + record.id
            if record.state == "pending" { pending.insert(key) } else { pending.remove(key) }
        }
        return pending
    }

    /// One conversation's log, in order, in the open transaction; checked before it returns.
    private static func importLog(_ path: String, into store: MessageStore, pending: Set<String>, report: inout Report) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            report.problems.append("could not read \(path) to import it (\(String(cString: strerror(errno)))); it is kept as it is")
            return
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            report.problems.append("\(path) is \(FileSystem.kind(info.st_mode)), not a log: not imported")
            return
        }
        let name = FileSystem.baseName(path)
        let peer = decodeName(String(name.dropLast(".jsonl".count)))
        let decoder = JSONDecoder()
        // A line longer than the largest payload host.json can allow is never read whole.
        let lines = LineBuffer(limit: Self.largestLine)
        var position = 0, outgoing = 0
        var conversation: Int64?
        var last: (row: Int64, time: Int64)?
        func add(_ envelope: MessageEnvelope, raw: Bool) throws {
            let id: Int64
            if let known = conversation { id = known } else { id = try store.conversation(with: peer) }
            conversation = id
            let mine = envelope.from == store.user && !raw
            let queued = mine && pending.contains(peer + "\u{0}" + envelope.id)
            let text = raw ? "" : MessageText.of(key: envelope.key, payload: envelope.payload.json)
            try store.database.statement("""
                INSERT INTO messages (conversation, position, sender, recipient, global_id, seq, key, payload, sent_at, stored_at,
                                      outgoing, state, summary)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).bind(id, position, envelope.from, envelope.to, GlobalID.make(at: envelope.timestamp), mine ? outgoing + 1 : nil,
                          envelope.key, envelope.payload.json, envelope.timestamp, Clock.now(), mine,
                          queued ? "queued" : mine ? "sent" : "read", text).run()
            let row = store.database.lastInsertedRow
            if queued {
                try store.database.statement("INSERT INTO outbox (message, peer, queued_at) VALUES (?, ?, ?)").bind(row, peer, envelope.timestamp).run()
                report.queued += 1
            }
            if mine { outgoing += 1 }
            last = (row, envelope.timestamp)
            position += 1
        }
        var number = 0
        while lines.fill(from: fd) || lines.hasLine {
            while let piece = lines.next() {
                number += 1
                guard case .line(let line) = piece else {
                    let bytes = if case .tooLong(let count) = piece { count } else { 0 }
                    report.problems.append("line \(number) of \(path) is \(bytes) bytes, more than a message can be: it is kept as a placeholder that says so (the line stays in the 1.0 file)")
                    try add(MessageEnvelope(id: "m\(position + 1)", conversation: peer, from: "?", to: "?", timestamp: 0,
                                            key: MessageEnvelope.unreadableKey,
                                            payload: MessagePayload(json: "(a line of \(bytes) bytes, too large to import)")), raw: true)
                    continue
                }
                if let envelope = try? decoder.decode(MessageEnvelope.self, from: Data(line.utf8)) {
                    try add(envelope, raw: false)
                } else {
                    // Kept as a message that says it does not read, so every later number stays.
                    report.problems.append("line \(number) of \(path) is not a message: it is kept as a placeholder that says so")
                    try add(MessageEnvelope(id: "m\(position + 1)", conversation: peer, from: "?", to: "?", timestamp: 0,
                                            key: MessageEnvelope.unreadableKey, payload: MessagePayload(json: line)), raw: true)
                }
            }
        }
        let torn: Int? = switch lines.restPiece() {
        case .line(let rest)?: rest.isEmpty ? nil : rest.utf8.count
        case .tooLong(let bytes)?: bytes
        case nil: nil
        }
        if let torn {
            report.problems.append("the last line of \(path) (line \(number + 1), \(torn) bytes) was cut short by a crash: it is not a message and was not imported")
        }
        guard let conversation, let last else { return }
        try store.database.statement("""
            UPDATE conversations SET message_count = ?, next_seq = ?, last_message = ?, updated_at = ? WHERE id = ?
            """).bind(position, outgoing + 1, last.row, last.time, conversation).run()
        // Checked before anything is committed: the count, and every id in its place.
        let check = try store.database.statement("SELECT count(*), min(position), max(position) FROM messages WHERE conversation = ?")
        try check.bind(conversation)
        _ = try check.step()
        guard check.int(0) == position, check.int(1) == 0, check.int(2) == position - 1 else {
            throw StoreError(.failed, "the import of \(path) does not check out (\(check.int(0)) messages stored of \(position)); nothing was imported, and the 1.0 files are kept")
        }
        report.conversations += 1
        report.messages += position
    }

    /// The longest 1.0 log line imported: the largest payload host.json allows, and room for its
    /// envelope.
    static let largestLine = (64 << 20) + 64 * 1024

    /// A 1.0 log's name back to its conversation id: `%XX` are bytes.
    static func decodeName(_ name: String) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(name.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
               let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Moves the 1.0 files into `imported-1.0/` (a new name if that is taken). Returns where.
    @discardableResult
    private static func moveAside(_ names: [String], in folder: String, store: MessageStore) -> String {
        var target = folder + "/" + aside
        var attempt = 1
        while mkdir(target, 0o700) != 0 {
            guard errno == EEXIST else {
                store.note("the 1.0 files in \(folder) could not be moved aside (\(String(cString: strerror(errno)))); they are kept where they are, and not imported again")
                return folder
            }
            attempt += 1
            target = folder + "/" + aside + "-\(attempt)"
        }
        for name in names + ["outbox.jsonl"] where access(folder + "/" + name, F_OK) == 0 {
            rename(folder + "/" + name, target + "/" + name)
        }
        FileSystem.syncFolder(folder)
        return target
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What the host took out of service on its own after line code crashed or hung, kept in
/// `<data>/quarantine.json`.
///
/// Quarantine is the kill switch's other source: the operator turns a line or a key off in
/// host.json, the host turns one off here, and both have the same effect. It escalates, and each
/// step is the smallest that stops the crash:
///
/// - a crash in line code on a message that came from another host (its builder drawing it, or
///   the page's or the builder's tap on it) quarantines that message only (by its sender and
///   global id), so one peer cannot switch a receiver's line or key off; a third such crash of
///   one key from one sender within ten minutes holds that (sender, key): its later messages show
///   as held without running line code. Only when a second sender's message of the same key
///   crashes the line within ten minutes is the key quarantined, and the line only when another
///   of its keys is quarantined already (several keys);
/// - a first crash in a message builder drawing the user's own message (or one `/recv` or a
///   scenario stored: those count as the user's own) quarantines that message key: its messages show as placeholders, with the reason, on every
///   page;
/// - a second crash of the same line within ten minutes, or any crash while loading or
///   registering, in a page hook, a tap, a route handler or a service, quarantines the line: its
///   chats open on the legacy page, its routes answer not-found, its builders and services stop;
/// - a file that crashes before it says which line it is (in a constructor) is quarantined as a
///   file, and not opened again.
///
/// An entry applies to the file identity that crashed, so it lifts by itself when the file is
/// replaced; `imhost quarantine lift` lifts it by hand.
public final class Quarantine {
    /// How much a crash costs.
    public enum Scope: String, Sendable, Codable {
        /// One message from another host.
        case message
        /// One sender's messages of one key.
        case sender
        case key, line, file
    }

    /// One thing taken out of service.
    public struct Hold: Codable, Sendable, Equatable {
        /// The line; `nil` for a file that crashed before it said which line it is.
        public var line: String?
        /// The message key, when only that key (or one message of it) is quarantined.
        public var key: String?
        /// The sender and global id of the one message quarantined, when only that message is;
        /// the sender alone when that sender's messages of `key` are held.
        public var sender: String?
        public var globalID: String?
        /// The plugin file's name in the plugin folder.
        public var file: String?
        /// The identity of the file that crashed; `nil` when it was not known.
        public var identity: FileIdentity?
        /// When it was quarantined.
        public var since: String
        /// The crash or hang that put it here.
        public var crash: CrashRecord

        /// Whether this entry takes out a message, a key, a line or a file.
        public var scope: Scope {
            globalID != nil ? .message : sender != nil && key != nil ? .sender : key != nil ? .key : line != nil ? .line : .file
        }

        /// What happened and when: "crashed (SIGSEGV) building message m3 (house.listing) at 2026-…".
        public var reason: String { "\(crash.event) at \(crash.time)" }

        /// Whether the hold applies to the file as it is now.
        public func applies(to current: FileIdentity?) -> Bool {
            identity == nil || identity == current
        }

        /// Whether it is for a crash before the line was vetted (loading, its entry point,
        /// registering, or a constructor): the file is not opened again.
        var isLoadingCrash: Bool { [.load, .entry, .register].contains(crash.site) || scope == .file }
    }

    private struct Document: Codable {
        var version: Int
        var entries: [Hold]
        /// When each line was last lifted by hand: crashes before it no longer count.
        var lifts: [String: String]?
    }

    /// Two crashes of one line this close together (milliseconds) quarantine the whole line.
    public static let escalationWindow: Int64 = 10 * 60 * 1000

    /// `<data>/quarantine.json`.
    public let path: String
    /// What is held out of service, oldest first.
    public private(set) var holds: [Hold]
    /// When each line was last lifted by hand.
    private(set) var lifts: [String: String] = [:]
    /// Why the file could not be read or decoded, when it could not: a warning for a person.
    public private(set) var problem: String?
    /// The file is there and cannot be read (another owner, a mode, a FIFO or a folder in its
    /// place): nobody knows what it holds, so every line counts as quarantined until it can be
    /// read, and it is never written over.
    public private(set) var isUnreadable = false

    /// Reads `<data>/quarantine.json`; a missing file is an empty quarantine.
    public init(dataFolder: String) {
        path = dataFolder + "/quarantine.json"
        holds = []
        let bytes: [UInt8]
        do throws(FileSystem.Failure) {
            bytes = try FileSystem.readBytes(path, limit: 16 << 20, followingLinks: false)
        } catch where error.code == ENOENT {
            return
        } catch {
            isUnreadable = true
            if let kind = error.notRegular {
                // Not a file imhost wrote: nothing is held in it, and changing its owner or mode
                // would not help (for a link, it would change whatever it points at).
                problem = "\(path) is \(kind), not a file imhost wrote, so every line is held out of service until it is gone; remove it (rm\(kind == "a folder" ? " -r" : "") \(path)), and imhost writes a new one at the next crash"
            } else {
                problem = "\(path) cannot be read (\(error.call): \(error)), so every line is held out of service until it can; give it back to this user (chown \(geteuid()) \(path); chmod 600 \(path)), or remove it"
            }
            return
        }
        do {
            let document = try JSONDecoder().decode(Document.self, from: Data(bytes))
            holds = document.entries
            lifts = document.lifts ?? [:]
        } catch {
            problem = "\(path) does not read (\(Self.brief(error))), so nothing counts as quarantined; it is kept as \(FileSystem.baseName(path)).corrupt when next written"
        }
    }

    private static func brief(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): context.debugDescription
        case DecodingError.keyNotFound(let key, _): "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context): "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "\(error)"
        }
    }

    /// What to lift.
    public enum Target: Sendable, Equatable {
        /// Every entry of a line, its keys too.
        case line(String)
        /// One quarantined message key.
        case key(String)
        /// The entry of a plugin file, by its name.
        case file(String)
        /// Everything.
        case all
    }

    /// Lifts entries and returns what was lifted. A lifted line's earlier crashes no longer count
    /// towards quarantining it again. Chats that are open pick it up at once.
    public static func lift(dataFolder: String, _ target: Target) throws(FileSystem.Failure) -> [Hold] {
        try locked(dataFolder) { () throws(FileSystem.Failure) in
            let quarantine = Quarantine(dataFolder: dataFolder)
            let lifted = quarantine.holds.filter { entry in
                switch target {
                case .all: true
                case .line(let line): entry.line == line
                case .key(let key): entry.key == key
                case .file(let file): entry.file == file
                }
            }
            guard !lifted.isEmpty else { return [] }
            quarantine.holds.removeAll { lifted.contains($0) }
            let now = Clock.iso8601(Clock.now())
            for line in Set(lifted.compactMap(\.line)) { quarantine.lifts[line] = now }
            try quarantine.write()
            return lifted
        }
    }

    /// Drops the `holds` of files that have changed since they crashed from the quarantine in
    /// `dataFolder`, writing the file only when something was dropped. `current` gives a file's
    /// identity by name, `nil` when it is gone.
    static func prune(dataFolder: String, holds: [Hold], current: (String) -> FileIdentity?) {
        let stale = holds.filter { hold in
            guard let file = hold.file, hold.identity != nil else { return false }
            return !hold.applies(to: current(file))
        }
        guard !stale.isEmpty else { return }
        try? locked(dataFolder) { () throws(FileSystem.Failure) in
            let fresh = Quarantine(dataFolder: dataFolder)
            fresh.holds.removeAll { stale.contains($0) }
            try fresh.write()
        }
    }

    /// A crash as recorded.
    public struct Recorded: Sendable {
        /// The record, with ``CrashRecord/quarantined`` set to what it cost.
        public var crash: CrashRecord
        /// Why it is not in `crashes.log`, when it is not (the hold, if any, is written all
        /// the same: it matters more).
        public var notLogged: String?
    }

    /// Records a crash: decides what it costs from the line's recent crashes, adds the quarantine
    /// entry, then appends the crash to `<data>/crashes.log`. Returns the record as kept, or why
    /// the quarantine entry could not be written. Without `holding`, the crash is recorded and
    /// costs nothing (it was not the line's doing).
    public static func record(_ crash: CrashRecord, dataFolder: String, holding: Bool = true) -> Result<Recorded, FileSystem.Failure> {
        do {
            return .success(try locked(dataFolder) { () throws(FileSystem.Failure) in
                let log = CrashLog(dataFolder: dataFolder)
                var crash = crash
                crash.quarantined = nil
                if holding {
                    let quarantine = Quarantine(dataFolder: dataFolder)
                    // What counts: the crash log, and the crashes behind entries (the log may be
                    // gone), since the line was last lifted by hand.
                    let since = crash.line.flatMap { quarantine.lifts[$0] }.flatMap(Clock.parse) ?? Int64.min
                    let history = (log.recentRecords() + quarantine.holds.map(\.crash)).filter { (Clock.parse($0.time) ?? 0) > since }
                    if let scope = scope(of: crash, history: history) {
                        let entry = Hold(crash, scope: scope)
                        quarantine.holds.append(entry)
                        try quarantine.write()
                        crash = entry.crash
                    }
                }
                do throws(FileSystem.Failure) {
                    try log.append(crash)
                    return Recorded(crash: crash, notLogged: nil)
                } catch {
                    return Recorded(crash: crash, notLogged: "\(error.call): \(error)")
                }
            })
        } catch {
            return .failure(error)
        }
    }

    /// What a crash costs, given the crashes recorded before it; `nil` when no line code was
    /// named (a crash of the host itself quarantines nothing). Only crashes that were held
    /// against the line count: a chat killed from outside during a line's call is recorded, but
    /// it was not the line's doing, and it never makes a later crash cost more.
    public static func scope(of crash: CrashRecord, history: [CrashRecord]) -> Scope? {
        guard let line = crash.line else { return crash.file == nil ? nil : .file }
        guard crash.site == .builder || crash.site == .tap, let key = crash.key else { return .line }
        let now = Clock.parse(crash.time) ?? Clock.now()
        var recent: [CrashRecord] = []
        // A crash is in the log and behind its hold too: counted once.
        for earlier in history where !recent.contains(earlier) {
            guard earlier.quarantined != nil, earlier.line == line, earlier.identity == crash.identity,
                  let then = Clock.parse(earlier.time), now - then <= escalationWindow, then <= now else { continue }
            recent.append(earlier)
        }
        guard let sender = crash.sender, crash.globalID != nil else {
            // The user's own message (or one /recv stored): a tap costs the line, as a page's
            // hook does; a builder its key first. Peers' crashes never make it cost more.
            if crash.site == .tap { return .line }
            return recent.contains { $0.sender == nil } ? .line : .key
        }
        // A message from another host: it costs the message, unless another sender's message of
        // the same key crashed too (then the key; and the line when another key of it is
        // quarantined already), or it is this sender's third of the key (then the sender's key).
        let othersOfKey = recent.filter { $0.sender != nil && $0.sender != sender && $0.key == key }
        guard othersOfKey.isEmpty else {
            return recent.contains { $0.quarantined == Scope.key.rawValue && $0.key != key } ? .line : .key
        }
        let mine = recent.filter { $0.sender == sender && $0.key == key }
        return mine.count >= heldAfter - 1 ? .sender : .message
    }

    /// The crashes of one key from one sender within ``escalationWindow`` after which that
    /// sender's messages of the key are held.
    public static let heldAfter = 3

    /// Writes the file atomically: a new file, flushed, renamed over the old one. A file that
    /// did not read is kept beside it first, for whoever wants to see what it said.
    private func write() throws(FileSystem.Failure) {
        // What cannot be read is never written over: it may hold another user's holds.
        if isUnreadable { throw FileSystem.Failure(call: "read \(FileSystem.baseName(path))", code: EACCES) }
        if problem != nil { rename(path, path + ".corrupt") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(Document(version: 1, entries: holds, lifts: lifts.isEmpty ? nil : lifts)) else { return }
        try FileSystem.writeAtomically(Array(data) + [UInt8(ascii: "\n")], to: path)
    }

    /// Runs `body` holding `<data>/quarantine.lock`, so two processes never interleave a
    /// read-modify-write of the quarantine or the crash log.
    private static func locked<T>(_ dataFolder: String, _ body: () throws(FileSystem.Failure) -> T) throws(FileSystem.Failure) -> T {
        try FileSystem.makeFolders(dataFolder)
        let fd = open(dataFolder + "/quarantine.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard fd >= 0 else { throw FileSystem.Failure(call: "open", code: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw FileSystem.Failure(call: "open quarantine.lock", code: EINVAL, notRegular: info.st_mode)
        }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw FileSystem.Failure(call: "flock", code: errno) }
        }
        return try body()
    }
}

extension Quarantine.Hold {
    /// The entry a crash earns at `scope`, the crash marked with it: a key's entry names the
    /// key, a line's or a file's does not.
    package init(_ crash: CrashRecord, scope: Quarantine.Scope) {
        var crash = crash
        crash.quarantined = scope.rawValue
        self.init(line: crash.line, key: [.key, .message, .sender].contains(scope) ? crash.key : nil,
                  sender: scope == .message || scope == .sender ? crash.sender : nil, globalID: scope == .message ? crash.globalID : nil,
                  file: crash.file, identity: crash.identity, since: crash.time, crash: crash)
    }
}

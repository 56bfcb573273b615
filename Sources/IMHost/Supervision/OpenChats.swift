#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Which builds of lines open chats run, so `imhost plugins` can say when a chat still runs
/// another build than the file in the folder.
///
/// Each `imhost chat` keeps the builds its worker opened in `<data>/run/<pid>.lines` (one JSON
/// object: the supervisor's pid and start time, and the builds), rewritten when they change and
/// removed when the chat ends. A file whose process is gone (a chat killed with SIGKILL), or
/// whose pid now belongs to another process (another start time), is ignored, and removed by
/// the next start of any command (``removeLeftovers(dataFolder:)``, beside the breadcrumbs). Keeping it is best effort: a data folder that cannot be written
/// costs `imhost plugins` this knowledge, never the chat.
public enum OpenChats {
    /// One open chat: its supervisor, and the builds its worker opened.
    public struct Chat: Codable, Sendable, Equatable {
        public var pid: Int32
        /// When the process started (clock ticks after boot, from `/proc/PID/stat`).
        public var started: UInt64
        public var lines: [LineBuild]
    }

    /// The open chats of `dataFolder`.
    public static func all(dataFolder: String) -> [Chat] {
        let folder = Breadcrumb.folder(in: dataFolder)
        guard let names = try? FileSystem.entries(of: folder) else { return [] }
        let decoder = JSONDecoder()
        return names.sorted().compactMap { name -> Chat? in
            guard name.hasSuffix(suffix), let bytes = try? FileSystem.readBytes(folder + "/" + name, limit: 1 << 20, followingLinks: false),
                  let chat = try? decoder.decode(Chat.self, from: Data(bytes)), isAlive(chat) else { return nil }
            return chat
        }
    }

    /// What this process keeps for its chat: ``update(_:)`` it as the worker's builds change;
    /// the file goes when it is released.
    public final class Record {
        private let folder: String
        private let path: String
        private var written: [LineBuild]?

        /// `page`: one of several chats of this process (`imhost web`'s pages), each its own file.
        public init(dataFolder: String, page: Bool = false) {
            folder = Breadcrumb.folder(in: dataFolder)
            let number = page ? "-\(OpenChats.pages.add(1, ordering: .relaxed).newValue)" : ""
            path = folder + "/\(getpid())" + number + OpenChats.suffix
        }

        deinit { unlink(path) }

        /// Records the builds the worker opened, if they changed.
        public func update(_ builds: [LineBuild]) {
            let opened = builds.filter(\.opened)
            guard opened != written, let started = OpenChats.startTime(of: getpid()) else { return }
            written = opened
            // Only into the data folder's own private run folder, never through a planted link.
            guard (try? Breadcrumb.checkPrivate(folder, making: true)) != nil,
                  let bytes = try? JSONLines.encode(Chat(pid: getpid(), started: started, lines: opened)) else { return }
            try? FileSystem.writeAtomically(bytes, to: path)
        }
    }

    /// Removes the files of chats that are gone.
    static func removeLeftovers(dataFolder: String) {
        let folder = Breadcrumb.folder(in: dataFolder)
        guard let names = try? FileSystem.entries(of: folder), names.contains(where: { $0.hasSuffix(suffix) }) else { return }
        let live = Set(all(dataFolder: dataFolder).map(\.pid))
        for name in names where name.hasSuffix(suffix) {
            guard let pid = Int32(name.dropLast(suffix.count).prefix { $0 != "-" }), !live.contains(pid) else { continue }
            unlink(folder + "/" + name)
        }
    }

    private static let suffix = ".lines"
    /// Pages of this process that kept a record, to number their files.
    private static let pages = Atomic<Int>(0)

    private static func isAlive(_ chat: Chat) -> Bool {
        Breadcrumb.isRunning(chat.pid) && startTime(of: chat.pid) == chat.started
    }

    /// When process `pid` started, in clock ticks after boot (field 22 of `/proc/PID/stat`).
    static func startTime(of pid: Int32) -> UInt64? {
        guard let stat = try? FileSystem.readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        // After "pid (name) ": field 3 is the state; the start time is field 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? UInt64(fields[19]) : nil
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// The one connection a user has per data folder: whoever holds `<user folder>/connection.lock`
/// (`flock`) talks to the broker; every other process of the user works through the database.
/// The lock goes when its process ends, however it ends: a chat worker that crashes frees it
/// for the worker that replaces it.
public final class ConnectionLock {
    private let fd: Int32
    public let path: String

    /// Who holds a lock, as the holder wrote it: its process id and command.
    public struct Holder: Sendable, CustomStringConvertible {
        public var pid: Int32
        public var command: String
        public var description: String { pid > 0 ? "imhost \(command) (process \(pid))" : "another imhost process" }
    }

    /// What trying to take the lock came to.
    public enum Attempt {
        case taken(ConnectionLock)
        /// Another process holds it.
        case held(by: Holder?)
        /// The lock file cannot be used: why.
        case unusable(String)
    }

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// Takes the lock of the store's user folder, without waiting, writing `command` as the
    /// holder.
    public static func take(for store: MessageStore, command: String) -> Attempt {
        guard let folder = store.folder else { return .unusable("the store is in memory") }
        let path = folder + "/connection.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard fd >= 0 else { return .unusable("cannot open \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return .unusable("\(path) is \(FileSystem.kind(info.st_mode)), not a regular file; remove it")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = read(fd)
            close(fd)
            return .held(by: holder)
        }
        _ = ftruncate(fd, 0)
        try? FileSystem.writeAll(fd, Array("\(getpid()) \(command)\n".utf8), at: 0)
        return .taken(ConnectionLock(fd: fd, path: path))
    }

    /// Who holds the lock of the store's user folder now, if anyone does.
    public static func holder(for store: MessageStore) -> Holder? {
        guard let folder = store.folder else { return nil }
        let fd = open(folder + "/connection.lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // A lock nobody holds: taken and let go at once.
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        return read(fd)
    }

    private static func read(_ fd: Int32) -> Holder? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        let parts = text.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let pid = Int32(parts[0]) else { return nil }
        return Holder(pid: pid, command: String(parts[1].split(separator: "\n").first ?? ""))
    }
}

import CIMHostSupport
#if canImport(Glibc)
import Glibc
#endif

/// Where a process is in line code, kept in a small memory-mapped file that outlives the process.
///
/// Before the host calls into a line (its registration, page hooks, builders, taps, route
/// handlers, services) it enters a frame naming the line, its file, what is being called, and
/// the message key and id; it leaves the frame when the call returns. Entering is a few stores
/// into the mapping: no allocation and no system call, so it is safe on every message. When the
/// process dies, the file still says where it was; the supervisor (or the next start) turns that
/// into a crash record and a quarantine. A watchdog that sees the same frame for too long turns
/// it into a recorded hang.
///
/// Layout (4096 bytes, little-endian): a header (magic, pid, depth, sequence) and seven frames of
/// 512 bytes, one per nesting level (a page hook that opens a route calls a second line); deeper
/// calls count in `depth` and are attributed to the seventh frame.
package final class Breadcrumb {
    static let fileSize = 4096
    static let frameSize = IMHOST_CRUMB_FRAME
    static let frameCount = 7
    /// "IMCRUMB2" (version 2: a message's sender and global id fit in a frame).
    static let magic: UInt64 = 0x3242_4D55_5243_4D49

    /// Where things are; what the C crash handler writes too comes from its header, so the
    /// two agree by construction.
    enum Offset {
        static let magic = 0, pid = 8, depth = IMHOST_CRUMB_DEPTH, sequence = 16, signal = IMHOST_CRUMB_SIGNAL
        static let site = IMHOST_CRUMB_SITE, mark = IMHOST_CRUMB_MARK
        static let keyLength = IMHOST_CRUMB_KEY_LENGTH, key = IMHOST_CRUMB_KEY
        static let messageLength = IMHOST_CRUMB_MESSAGE_LENGTH, message = IMHOST_CRUMB_MESSAGE
        static let keyCapacity = 128, messageCapacity = 156
    }

    private let mapping: UnsafeMutableRawPointer
    private var depth = 0
    private var sequence: UInt32 = 0

    /// Maps a breadcrumb file for tools and benchmarks: made at `path` if need be (never through
    /// a link), its space reserved.
    convenience init(path: String) throws(FileSystem.Failure) {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else { throw FileSystem.Failure(call: "open", code: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw FileSystem.Failure(call: "fstat", code: EINVAL) }
        let reserved = posix_fallocate(fd, 0, off_t(Self.fileSize))
        guard reserved == 0 else { throw FileSystem.Failure(call: "posix_fallocate", code: reserved) }
        try self.init(fd: fd)
    }

    /// Maps the breadcrumb file open on `fd`, whose space is reserved (a ``Reservation``'s, or
    /// the one a supervisor handed its worker), for writing. The descriptor may be closed after.
    init(fd: Int32) throws(FileSystem.Failure) {
        // The file's blocks are allocated (posix_fallocate): touching the mapping cannot raise
        // SIGBUS on a full disk.
        guard let mapped = mmap(nil, Self.fileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            throw FileSystem.Failure(call: "mmap", code: errno)
        }
        mapping = mapped
        // Safe: the mapping is fileSize bytes and lives until deinit; every offset written below
        // is a constant inside it, and every copied length is clamped to its field's capacity.
        mapping.initializeMemory(as: UInt8.self, repeating: 0, count: Self.fileSize)
        mapping.storeBytes(of: Self.magic, toByteOffset: Offset.magic, as: UInt64.self)
        mapping.storeBytes(of: Int32(getpid()), toByteOffset: Offset.pid, as: Int32.self)
    }

    deinit { munmap(mapping, Self.fileSize) }

    /// From now on, a fatal signal while the host is in its own code is blamed on the line whose
    /// library is on the crashing thread's stack (a thread the line started), written here.
    func watchCrashes() {
        imhost_crash_watch(mapping)
    }

    /// Tells the crash handler which line a library (found by any address in it) belongs to.
    static func register(image address: UnsafeRawPointer, of mark: LineMark) {
        _ = mark.bytes.withUnsafeBufferPointer { imhost_crash_add_image(address, $0.baseAddress, $0.count) }
    }

    /// Enters a frame: from now until ``leave(_:)``, a death of this process is blamed on it.
    /// Returns the level to pass to ``leave(_:)``.
    @inline(__always)
    func enter(_ site: CrashSite, _ mark: LineMark, key: String?, message: String?) -> Int {
        let level = depth
        depth += 1
        let frame = mapping + Self.frameSize * (1 + min(level, Self.frameCount - 1))
        frame.storeBytes(of: site.rawValue, toByteOffset: Offset.site, as: UInt32.self)
        mark.bytes.withUnsafeBytes { frame.advanced(by: Offset.mark).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        Self.copy(key, into: frame, lengthAt: Offset.keyLength, textAt: Offset.key, capacity: Offset.keyCapacity)
        Self.copy(message, into: frame, lengthAt: Offset.messageLength, textAt: Offset.message, capacity: Offset.messageCapacity)
        publish()
        return level
    }

    /// Leaves the frame `enter` returned `level` for.
    @inline(__always)
    func leave(_ level: Int) {
        depth = level
        publish()
    }

    @inline(__always)
    private func publish() {
        sequence &+= 1
        mapping.storeBytes(of: sequence, toByteOffset: Offset.sequence, as: UInt32.self)
        mapping.storeBytes(of: UInt32(depth), toByteOffset: Offset.depth, as: UInt32.self)
    }

    @inline(__always)
    private static func copy(_ text: String?, into frame: UnsafeMutableRawPointer, lengthAt: Int, textAt: Int, capacity: Int) {
        guard let text else {
            frame.storeBytes(of: 0, toByteOffset: lengthAt, as: UInt16.self)
            return
        }
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Int in
            let count = min(bytes.count, capacity)
            if count > 0 { frame.advanced(by: textAt).copyMemory(from: bytes.baseAddress!, byteCount: count) }
            return count
        } ?? {
            var count = 0
            for byte in text.utf8.prefix(capacity) {
                frame.storeBytes(of: byte, toByteOffset: textAt + count, as: UInt8.self)
                count += 1
            }
            return count
        }()
        frame.storeBytes(of: UInt16(copied), toByteOffset: lengthAt, as: UInt16.self)
    }

    /// What a frame says of the message being handled: its id (`m5`) and, for a message from
    /// another host, its sender and global id, kept as `m5 US sender US id` (US: the unit
    /// separator, which no id holds).
    package struct MessageOrigin: Equatable {
        var id: String
        var sender: String?
        var globalID: String?

        init(id: String, sender: String? = nil, globalID: String? = nil) {
            self.id = id
            self.sender = sender
            self.globalID = globalID
        }

        init(crumb text: String) {
            let parts = text.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
            self.init(id: parts[0], sender: parts.count == 3 ? parts[1] : nil, globalID: parts.count == 3 ? parts[2] : nil)
        }

        var crumb: String {
            guard let sender, let globalID else { return id }
            return id + "\u{1F}" + sender + "\u{1F}" + globalID
        }
    }

    // MARK: Reading

    /// What a breadcrumb file says.
    package struct Snapshot: Equatable {
        package var pid: Int32
        /// How deep in line code the process was; 0 when it was in host code.
        package var depth: Int
        /// Changes with every enter and leave: the same value seen twice means no progress.
        package var sequence: UInt32
        /// The fatal signal the process's own crash handler caught, 0 if none: a process killed
        /// from outside (SIGKILL, or with its parent) leaves none.
        package var fatalSignal: Int32 = 0
        /// The innermost frame, when `depth > 0`.
        package var frame: Frame?
    }

    /// One frame: what was being called, of which line and file.
    package struct Frame: Equatable {
        package var site: CrashSite
        package var line: String?
        package var file: String?
        package var identity: FileIdentity?
        package var key: String?
        package var message: String?
    }

    /// Reads a breadcrumb file; `nil` when it is missing or not a breadcrumb.
    static func read(_ path: String) -> Snapshot? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return read(fd: fd)
    }

    /// Reads a breadcrumb from a descriptor already open on it (a reservation's, polled while a
    /// command runs, or an orphan's being collected): one `pread`, no open.
    static func read(fd: Int32) -> Snapshot? {
        var bytes = [UInt8](repeating: 0, count: fileSize)
        var got = 0
        while got < fileSize {
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, fileSize - got, off_t(got)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            got += count
        }
        return bytes.withUnsafeBytes { raw -> Snapshot? in
            guard raw.loadUnaligned(fromByteOffset: Offset.magic, as: UInt64.self) == magic else { return nil }
            let depth = Int(raw.loadUnaligned(fromByteOffset: Offset.depth, as: UInt32.self))
            var snapshot = Snapshot(pid: raw.loadUnaligned(fromByteOffset: Offset.pid, as: Int32.self), depth: depth,
                                    sequence: raw.loadUnaligned(fromByteOffset: Offset.sequence, as: UInt32.self),
                                    fatalSignal: Int32(bitPattern: raw.loadUnaligned(fromByteOffset: Offset.signal, as: UInt32.self)))
            guard depth > 0 else { return snapshot }
            let frame = frameSize * (1 + min(depth - 1, frameCount - 1))
            func text(_ lengthAt: Int, _ at: Int, _ capacity: Int, wide: Bool) -> String? {
                let length = wide ? Int(raw.loadUnaligned(fromByteOffset: frame + lengthAt, as: UInt16.self))
                    : Int(raw[frame + lengthAt])
                guard length > 0 else { return nil }
                return String(decoding: raw[(frame + at)..<(frame + at + min(length, capacity))], as: UTF8.self)
            }
            let mark = frame + Offset.mark
            let identity = FileIdentity(device: raw.loadUnaligned(fromByteOffset: mark, as: UInt64.self),
                                        inode: raw.loadUnaligned(fromByteOffset: mark + 8, as: UInt64.self),
                                        size: raw.loadUnaligned(fromByteOffset: mark + 16, as: Int64.self),
                                        modified: raw.loadUnaligned(fromByteOffset: mark + 24, as: Int64.self),
                                        changed: raw.loadUnaligned(fromByteOffset: mark + 32, as: Int64.self))
            snapshot.frame = Frame(
                site: CrashSite(rawValue: raw.loadUnaligned(fromByteOffset: frame + Offset.site, as: UInt32.self)) ?? .unknown,
                line: text(Offset.mark + LineMark.lineLength, Offset.mark + LineMark.line, LineMark.lineCapacity, wide: false),
                file: text(Offset.mark + LineMark.nameLength, Offset.mark + LineMark.name, LineMark.nameCapacity, wide: true),
                identity: identity.inode == 0 && identity.device == 0 ? nil : identity,
                key: text(Offset.keyLength, Offset.key, Offset.keyCapacity, wide: true),
                message: text(Offset.messageLength, Offset.message, Offset.messageCapacity, wide: true))
            return snapshot
        }
    }

    /// Whether a process exists and has not ended (a zombie nobody reaped has ended).
    static func isRunning(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? FileSystem.readText("/proc/\(pid)/stat"),
              let close = stat.utf8.lastIndex(of: UInt8(ascii: ")")) else { return true }
        // After "pid (name) ": the state letter; Z is a zombie, X dead.
        let state = stat.utf8[stat.utf8.index(close, offsetBy: 2, limitedBy: stat.utf8.endIndex) ?? close]
        return state != UInt8(ascii: "Z") && state != UInt8(ascii: "X")
    }

    // MARK: Files

    /// The folder breadcrumbs live in: `<data>/run`.
    static func folder(in dataFolder: String) -> String { dataFolder + "/run" }

    /// The folder breadcrumbs go to when the data folder cannot take them: `$XDG_RUNTIME_DIR/imhost`,
    /// or `/tmp/imhost-run-<uid>`. Several data folders may share it, so a breadcrumb there is
    /// named after its data folder (``Reservation/prefix(for:)``).
    static var privateFolder: String {
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") {
            return runtime + "/imhost"
        }
        return "/tmp/imhost-run-\(geteuid())"
    }

    /// Why a folder would not do for breadcrumbs.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
        var isFull = false
    }

    /// Checks that `folder` is fit to hold breadcrumbs, making it (mode 0700) when `making` and it
    /// is missing: a folder and not a link, owned by this user, and writable by nobody else. A
    /// folder another local user made first, or a link planted in its place, is refused, naming it;
    /// nothing is ever written through it.
    static func checkPrivate(_ folder: String, making: Bool) throws(Refusal) {
        if making, mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw Refusal(description: "mkdir: \(String(cString: strerror(errno)))", isFull: errno == ENOSPC || errno == EDQUOT)
        }
        var info = stat()
        guard lstat(folder, &info) == 0 else { throw Refusal(description: "lstat: \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw Refusal(description: "it is \(FileSystem.kind(info.st_mode)), not a folder; remove it")
        }
        guard info.st_uid == geteuid() else {
            throw Refusal(description: "it is owned by \(PluginFolderTrust.describe(user: info.st_uid)), not you; remove it, or set XDG_RUNTIME_DIR to a folder of your own")
        }
        guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw Refusal(description: "others may write in it (mode \(PluginFolderTrust.octal(info.st_mode))); run chmod 700 \(folder)")
        }
    }

    /// A breadcrumb made and locked by the process that answers for it: a supervisor for its
    /// worker, or a host for itself. While the lock is held, nobody takes the file for an orphan.
    package final class Reservation {
        /// The file; `nil` when the breadcrumb is kept in memory only.
        package let path: String?
        /// The breadcrumb, open (and locked when it is a file): handed to a worker as a
        /// descriptor, never by its path.
        package let fd: Int32
        /// Why the breadcrumb is in memory only, when it is: a crash is still named, but one
        /// while imhost itself is killed cannot be found at the next start. Said once.
        package let inMemoryBecause: String?

        /// Why no breadcrumb could be made at all (not even in memory).
        package struct Unavailable: Error, CustomStringConvertible {
            package var description: String
        }

        /// Makes the breadcrumb where it can be kept best:
        ///
        /// 1. `<data>/run/<pid>-<n>.crumb`;
        /// 2. when the data folder cannot take it (read-only, full, or `run` is not this user's
        ///    private folder), ``Breadcrumb/privateFolder``, named after the data folder;
        /// 3. when neither can, in memory (`memfd_create`): a full disk, a read-only data folder
        ///    and a planted private folder still leave a chat that reads, sends where it can, and
        ///    names a line that crashes.
        ///
        /// A file is made under another name, locked, its space reserved, then renamed, so
        /// nobody ever sees it unlocked, and touching its mapping cannot fail for want of space.
        package init(dataFolder: String) throws(Unavailable) {
            let own = Breadcrumb.folder(in: dataFolder)
            let fallback = Breadcrumb.privateFolder
            var refusals: [String] = []
            do {
                try FileSystem.makeFolders(dataFolder)
                try Breadcrumb.checkPrivate(own, making: true)
                (path, fd) = try Self.make(in: own, prefix: "")
                inMemoryBecause = nil
                return
            } catch let failure as FileSystem.Failure {
                refusals.append("in \(own) (\(failure.call): \(failure))")
            } catch {
                refusals.append("in \(own) (\(error))")
            }
            do throws(Refusal) {
                try Breadcrumb.checkPrivate(fallback, making: true)
                (path, fd) = try Self.make(in: fallback, prefix: Self.prefix(for: dataFolder))
                inMemoryBecause = nil
                return
            } catch {
                refusals.append("in \(fallback) (\(error))")
            }
            let memory = imhost_memory_file("imhost-breadcrumb", Breadcrumb.fileSize)
            guard memory >= 0 else {
                throw Unavailable(description: "cannot keep the chat's breadcrumb \(refusals.joined(separator: " nor ")), nor in memory (\(String(cString: strerror(errno))))")
            }
            path = nil
            fd = memory
            inMemoryBecause = "cannot keep it " + refusals.joined(separator: " nor ")
        }

        private static func make(in folder: String, prefix: String) throws(Refusal) -> (String, Int32) {
            for attempt in 0..<1000 {
                let name = folder + "/\(prefix)\(getpid())-\(attempt)"
                let fd = open(name + ".new", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                guard fd >= 0 else {
                    if errno == EEXIST { continue }
                    throw Refusal(description: "open: \(String(cString: strerror(errno)))", isFull: errno == ENOSPC || errno == EDQUOT)
                }
                func fail(_ call: String, _ code: Int32) -> Refusal {
                    close(fd)
                    unlink(name + ".new")
                    return Refusal(description: "\(call): \(String(cString: strerror(code)))", isFull: code == ENOSPC || code == EDQUOT)
                }
                guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { throw fail("flock", errno) }
                // Its blocks allocated now, not when the mapping is first touched: on a full disk
                // that would be SIGBUS in the middle of a chat.
                let reserved = posix_fallocate(fd, 0, off_t(Breadcrumb.fileSize))
                guard reserved == 0 else { throw fail("posix_fallocate", reserved) }
                guard rename(name + ".new", name + ".crumb") == 0 else { throw fail("rename", errno) }
                return (name + ".crumb", fd)
            }
            throw Refusal(description: "open: 1000 names taken")
        }

        /// What a breadcrumb in the shared private folder is named after: its data folder's
        /// identity (device and inode), so a start collects only its own orphans there.
        static func prefix(for dataFolder: String) -> String {
            var info = stat()
            guard stat(dataFolder, &info) == 0 else { return "unknown-" }
            return "\(info.st_dev)-\(info.st_ino)-"
        }

        /// What the breadcrumb says now.
        package func read() -> Snapshot? { Breadcrumb.read(fd: fd) }

        /// Removes the file (its lock goes with it), or lets the memory go.
        package func remove() {
            if let path { unlink(path) }
            close(fd)
        }
    }

    /// Breadcrumbs left by processes that died with no one to answer for them, in `<data>/run`
    /// and in the private folder (those named after this data folder): calls `handle` with each
    /// that was in line code, then removes them all. Only this user's files in folders fit to
    /// hold breadcrumbs count: a file another user planted is never read. A file still locked
    /// belongs to a live process and is left alone.
    static func collectOrphans(dataFolder: String, _ handle: (Snapshot) -> Void) {
        let places = [(folder(in: dataFolder), ""), (privateFolder, Reservation.prefix(for: dataFolder))]
        for (folder, prefix) in places {
            guard (try? checkPrivate(folder, making: false)) != nil, let names = try? FileSystem.entries(of: folder) else { continue }
            for name in names where name.hasSuffix(".crumb") && name.hasPrefix(prefix) {
                // In <data>/run every crumb is this folder's; there, names carry no prefix.
                if prefix.isEmpty, name.first.map({ !$0.isNumber }) ?? true { continue }
                collect(folder + "/" + name, handle)
            }
        }
    }

    private static func collect(_ path: String, _ handle: (Snapshot) -> Void) {
        // Not blocking, not following a link, regular files of this user's only: a FIFO or a
        // device named .crumb must not hang or feed a start, nor another user's forgery count.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size == off_t(fileSize), info.st_uid == geteuid() else { return }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return }
        let snapshot = read(fd: fd)
        // A writer still alive (its supervisor gone, its own end near) is not an orphan yet.
        if let pid = snapshot?.pid, pid > 0, pid != getpid(), isRunning(pid) { return }
        if let snapshot, snapshot.depth > 0 { handle(snapshot) }
        unlink(path)
    }
}

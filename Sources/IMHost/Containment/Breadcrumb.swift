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
final class Breadcrumb {
    static let fileSize = 4096
    static let frameSize = IMHOST_CRUMB_FRAME
    static let frameCount = 7
    /// "IMCRUMB1".
    static let magic: UInt64 = 0x3142_4D55_5243_4D49

    /// Where things are; what the C crash handler writes too comes from its header, so the
    /// two agree by construction.
    enum Offset {
        static let magic = 0, pid = 8, depth = IMHOST_CRUMB_DEPTH, sequence = 16
        static let site = IMHOST_CRUMB_SITE, mark = IMHOST_CRUMB_MARK
        static let keyLength = IMHOST_CRUMB_KEY_LENGTH, key = IMHOST_CRUMB_KEY
        static let messageLength = IMHOST_CRUMB_MESSAGE_LENGTH, message = IMHOST_CRUMB_MESSAGE
        static let keyCapacity = 160, messageCapacity = 96
    }

    private let mapping: UnsafeMutableRawPointer
    private var depth = 0
    private var sequence: UInt32 = 0

    /// Maps the breadcrumb file at `path` (made by a ``Reservation``) for writing.
    init(path: String) throws(FileSystem.Failure) {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystem.Failure(call: "open", code: errno) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(Self.fileSize)) == 0 else { throw FileSystem.Failure(call: "ftruncate", code: errno) }
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

    // MARK: Reading

    /// What a breadcrumb file says.
    struct Snapshot: Equatable {
        var pid: Int32
        /// How deep in line code the process was; 0 when it was in host code.
        var depth: Int
        /// Changes with every enter and leave: the same value seen twice means no progress.
        var sequence: UInt32
        /// The innermost frame, when `depth > 0`.
        var frame: Frame?
    }

    /// One frame: what was being called, of which line and file.
    struct Frame: Equatable {
        var site: CrashSite
        var line: String?
        var file: String?
        var identity: FileIdentity?
        var key: String?
        var message: String?
    }

    /// Reads a breadcrumb file; `nil` when it is missing or not a breadcrumb.
    static func read(_ path: String) -> Snapshot? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
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
                                    sequence: raw.loadUnaligned(fromByteOffset: Offset.sequence, as: UInt32.self))
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

    /// A breadcrumb file made and locked by the process that answers for it: a supervisor for its
    /// worker, or a host for itself. While the lock is held, nobody takes the file for an orphan.
    final class Reservation {
        let path: String
        private let fd: Int32

        /// Makes `<data>/run/<pid>-<n>.crumb`, empty, and locked: it is made under another name,
        /// locked, then renamed, so nobody ever sees it unlocked. When the data folder cannot be
        /// written, it goes to a folder of this user's in /tmp instead.
        init(dataFolder: String) throws(FileSystem.Failure) {
            do {
                (path, fd) = try Self.make(in: Breadcrumb.folder(in: dataFolder))
            } catch {
                (path, fd) = try Self.make(in: "/tmp/imhost-run-\(getuid())")
            }
        }

        private static func make(in folder: String) throws(FileSystem.Failure) -> (String, Int32) {
            try FileSystem.makeFolders(folder)
            for attempt in 0..<1000 {
                let name = folder + "/\(getpid())-\(attempt)"
                let fd = open(name + ".new", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard fd >= 0 else {
                    if errno == EEXIST { continue }
                    throw FileSystem.Failure(call: "open", code: errno)
                }
                guard flock(fd, LOCK_EX | LOCK_NB) == 0, ftruncate(fd, off_t(Breadcrumb.fileSize)) == 0,
                      rename(name + ".new", name + ".crumb") == 0 else {
                    let failure = FileSystem.Failure(call: "flock", code: errno)
                    close(fd)
                    unlink(name + ".new")
                    throw failure
                }
                return (name + ".crumb", fd)
            }
            throw FileSystem.Failure(call: "open", code: EEXIST)
        }

        /// What the file says now.
        func read() -> Snapshot? { Breadcrumb.read(fd: fd) }

        /// Removes the file; its lock goes with it.
        func remove() {
            unlink(path)
            close(fd)
        }
    }

    /// Breadcrumbs left by processes that died with no one to answer for them: calls `handle`
    /// with each that was in line code, then removes them all. A file still locked belongs to
    /// a live process and is left alone.
    static func collectOrphans(dataFolder: String, _ handle: (Snapshot) -> Void) {
        let folder = folder(in: dataFolder)
        guard let names = try? FileSystem.entries(of: folder) else { return }
        for name in names where name.hasSuffix(".crumb") {
            let path = folder + "/" + name
            // Not blocking, not following a link, regular files only: a FIFO or a device named
            // .crumb must not hang or feed a start.
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size == off_t(fileSize) else { continue }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            let snapshot = read(fd: fd)
            // A writer still alive (its supervisor gone, its own end near) is not an orphan yet.
            if let pid = snapshot?.pid, pid > 0, pid != getpid(), isRunning(pid) { continue }
            if let snapshot, snapshot.depth > 0 { handle(snapshot) }
            unlink(path)
        }
    }
}

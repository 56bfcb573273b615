#if canImport(Glibc)
import Glibc
#endif

/// The few file-system operations the host needs, on top of the C library, so the checks a
/// plugin goes through are exactly the system calls they name.
public enum FileSystem {
    /// An `errno` with the call that set it.
    public struct Failure: Error, CustomStringConvertible, Sendable, Equatable {
        public var call: String
        public var code: Int32
        /// What the path is when it is not a regular file (a FIFO, a folder, a device).
        public var notRegular: String?
        public var description: String {
            notRegular.map { "it is \($0), not a regular file" } ?? String(cString: strerror(code))
        }

        package init(call: String, code: Int32) {
            self.call = call
            self.code = code
        }

        /// A path that is not a regular file, found by `fstat` as `mode`.
        package init(call: String, code: Int32, notRegular mode: mode_t) {
            self.init(call: call, code: code)
            notRegular = FileSystem.kind(mode)
        }
    }

    /// What a file mode says a path is, for a person: "a FIFO", "a folder".
    package static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a folder"
        case S_IFIFO: "a FIFO"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a link"
        default: "not a file"
        }
    }

    /// Makes a folder and its missing parents, mode 0700 (or `mode`, less the umask); an
    /// existing folder is fine.
    package static func makeFolders(_ path: String, mode: mode_t = 0o700) throws(Failure) {
        if mkdir(path, mode) == 0 || errno == EEXIST { return }
        guard errno == ENOENT else { throw Failure(call: "mkdir", code: errno) }
        let parent = directory(of: path)
        guard parent != path, parent != "/", parent != "." else { throw Failure(call: "mkdir", code: ENOENT) }
        try makeFolders(parent, mode: mode)
        guard mkdir(path, mode) == 0 || errno == EEXIST else { throw Failure(call: "mkdir", code: errno) }
    }

    /// Writes every byte to `fd` (at `offset`, or at the end for an `O_APPEND` descriptor),
    /// however the kernel splits the write.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64? = nil) throws(Failure) {
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { buffer in
                offset.map { pwrite(fd, buffer.baseAddress! + done, bytes.count - done, off_t($0) + off_t(done)) }
                    ?? write(fd, buffer.baseAddress! + done, bytes.count - done)
            }
            if wrote < 0 {
                if errno == EINTR { continue }
                throw Failure(call: "write", code: errno)
            }
            done += wrote
        }
    }

    /// Appends `bytes` and a newline to a file (made with mode 0600 if need be) and flushes it.
    /// A file whose last line was cut short gets a newline first, so the new line stands whole;
    /// a failed append is cut back, so the file never keeps half a line. The file is never
    /// reached through a link, and must be a regular file (a FIFO in its place is refused, not
    /// waited on).
    package static func appendLine(_ bytes: [UInt8], to path: String) throws(Failure) {
        var fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        var created = false
        if fd < 0, errno == ENOENT {
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
            created = fd >= 0
        }
        guard fd >= 0 else {
            // A link in its place (O_NOFOLLOW) is named as such, not as a loop of links.
            if errno == ELOOP { throw Failure(call: "open \(path)", code: ELOOP, notRegular: S_IFLNK) }
            if errno == EISDIR { throw Failure(call: "open \(path)", code: EISDIR, notRegular: S_IFDIR) }
            throw Failure(call: "open \(path)", code: errno)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure(call: "fstat \(path)", code: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw Failure(call: "open \(path)", code: EINVAL, notRegular: info.st_mode) }
        // A new file's name must survive a power cut as its contents do.
        if created { syncFolder(directory(of: path)) }
        var last: UInt8 = 0x0A
        if info.st_size > 0 { _ = pread(fd, &last, 1, info.st_size - 1) }
        do throws(Failure) {
            try writeAll(fd, (last == 0x0A ? [] : [0x0A]) + bytes + [UInt8(ascii: "\n")])
            guard fsync(fd) == 0 else { throw Failure(call: "fsync \(path)", code: errno) }
        } catch {
            _ = ftruncate(fd, info.st_size)
            throw error.call.hasSuffix(path) ? error : Failure(call: "\(error.call) \(path)", code: error.code)
        }
    }

    /// Replaces a file's contents atomically: a new file beside it, flushed, renamed over it,
    /// and the folder flushed, so a reader sees the old contents or the new, never a mix.
    package static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600) throws(Failure) {
        let temporary = path + ".\(getpid()).tmp"
        // A new file, never one someone left (or linked) under this name.
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(call: "open", code: errno) }
        do throws(Failure) {
            try writeAll(fd, bytes)
            guard fsync(fd) == 0 else { throw Failure(call: "fsync", code: errno) }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let failure = Failure(call: "rename", code: errno)
            unlink(temporary)
            throw failure
        }
        syncFolder(directory(of: path))
    }

    /// Flushes a folder, so a file just made or renamed in it survives a power cut.
    package static func syncFolder(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Reads a whole file as UTF-8 text.
    public static func readText(_ path: String) throws(Failure) -> String {
        String(decoding: try readBytes(path, limit: Int.max), as: UTF8.self)
    }

    /// Reads at most `limit` bytes from the start of a regular file. It is opened without
    /// blocking and checked before a byte is read: a FIFO, a device or a folder in its place is
    /// refused (``Failure/notRegular``), never waited on or read forever. Without
    /// `followingLinks` (imhost's own files in the data folder), a link in its place is refused
    /// too, as "a link".
    package static func readBytes(_ path: String, limit: Int, followingLinks: Bool = true) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (followingLinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else {
            if errno == ELOOP, !followingLinks { throw Failure(call: "open", code: ELOOP, notRegular: S_IFLNK) }
            throw Failure(call: "open", code: errno)
        }
        defer { close(fd) }
        // Sized by fstat and read in place: one buffer, no chunk to copy from. A file that grows
        // while it is read, or reports no size (as /proc files do), makes the buffer grow.
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure(call: "fstat", code: errno) }
        guard info.st_mode & S_IFMT == S_IFREG || path.hasPrefix("/proc/") else {
            throw Failure(call: "open", code: EINVAL, notRegular: info.st_mode)
        }
        let expected = info.st_size > 0 ? Int(info.st_size) : 0
        var result = [UInt8](repeating: 0, count: min(limit, max(expected + 1, 4096)))
        var filled = 0
        while filled < limit {
            if filled == result.count {
                // Doubled in one step ([UInt8](repeating:) is a memset; appending repeated
                // elements one by one is slow without optimization).
                result += [UInt8](repeating: 0, count: min(result.count, limit - result.count))
            }
            let count = result.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(call: "read", code: errno)
            }
            if count == 0 { break }
            filled += count
        }
        result.removeLast(result.count - filled)
        return result
    }

    /// Why a document (host.json, a scenario) was not read.
    package enum DocumentFailure: Error, CustomStringConvertible {
        /// It could not be opened or read.
        case unreadable(Failure)
        /// It is not a regular file (a device such as /dev/zero, a folder, a pipe).
        case notRegular(String)
        /// It is larger than the limit.
        case tooLarge(size: Int64, limit: Int)
        /// It is not valid UTF-8; where the first bad byte is.
        case notUTF8(SourcePosition)

        package var description: String {
            switch self {
            case .unreadable(let failure): "cannot read it (\(failure))"
            case .notRegular(let kind): "it is \(kind), not a regular file"
            case .tooLarge(let size, let limit): "it is \(size) bytes; the limit is \(limit) (\(limit >> 10) KiB)"
            case .notUTF8: "it is not valid UTF-8"
            }
        }

        package var position: SourcePosition? {
            if case .notUTF8(let position) = self { position } else { nil }
        }
    }

    /// A text document: a regular file of at most `limit` bytes of valid UTF-8, read whole.
    package static func readDocument(_ path: String, limit: Int) throws(DocumentFailure) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .unreadable(Failure(call: "stat", code: errno)) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw .notRegular("a folder")
        case S_IFCHR, S_IFBLK: throw .notRegular("a device")
        case S_IFIFO: throw .notRegular("a pipe")
        default: throw .notRegular("not a file")
        }
        guard info.st_size <= limit else { throw .tooLarge(size: Int64(info.st_size), limit: limit) }
        let bytes: [UInt8]
        do {
            bytes = try readBytes(path, limit: limit + 1)
        } catch {
            throw .unreadable(error)
        }
        guard bytes.count <= limit else { throw .tooLarge(size: Int64(bytes.count), limit: limit) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            // Where the first bad byte is, as a line and column for the person fixing it.
            var line = 1, column = 1
            var iterator = bytes.makeIterator()
            var decoder = UTF8()
            while case .scalarValue(let scalar) = decoder.decode(&iterator) {
                if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
            }
            throw .notUTF8(SourcePosition(line: line, column: column))
        }
        return text
    }

    /// `lstat` or `stat` of a path.
    package static func status(_ path: String, followLinks: Bool) throws(Failure) -> stat {
        var info = stat()
        let result = followLinks ? stat(path, &info) : lstat(path, &info)
        guard result == 0 else { throw Failure(call: followLinks ? "stat" : "lstat", code: errno) }
        return info
    }

    /// The canonical absolute path, with every link resolved.
    package static func realPath(_ path: String) throws(Failure) -> String {
        guard let resolved = realpath(path, nil) else { throw Failure(call: "realpath", code: errno) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Names in a folder, sorted, without `.` and `..`.
    package static func entries(of folder: String) throws(Failure) -> [String] {
        var undecodable: [String] = []
        return try entries(of: folder, undecodable: &undecodable)
    }

    /// The names in `folder`, sorted; a name that is not valid UTF-8 cannot be named back to
    /// the kernel from a `String`, so it goes to `undecodable` instead, its bad bytes shown as
    /// `\xFF`.
    package static func entries(of folder: String, undecodable: inout [String]) throws(Failure) -> [String] {
        guard let dir = opendir(folder) else { throw Failure(call: "opendir", code: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            // d_name is a NUL-terminated array of NAME_MAX + 1 bytes (the kernel ends every name
            // with a NUL), so strlen stays inside it.
            let bytes: [UInt8] = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: UInt8.self, capacity: Int(NAME_MAX) + 1) { Array(UnsafeBufferPointer(start: $0, count: strlen($0))) }
            }
            if let name = String(validating: bytes, as: UTF8.self) {
                if name != "." && name != ".." { names.append(name) }
            } else {
                undecodable.append(escapingInvalidUTF8(bytes))
            }
        }
        undecodable.sort()
        return names.sorted()
    }

    /// Bytes as text, each byte that is not part of valid UTF-8 shown as `\xFF`.
    package static func escapingInvalidUTF8(_ bytes: [UInt8]) -> String {
        var text = ""
        var index = 0
        while index < bytes.count {
            // The longest valid sequence starting here (1 to 4 bytes), or one bad byte.
            var taken = 0
            for length in 1...min(4, bytes.count - index) {
                if let piece = String(validating: bytes[index..<index + length], as: UTF8.self) {
                    text += piece
                    taken = length
                    break
                }
            }
            if taken == 0 {
                text += "\\x" + String(bytes[index], radix: 16, uppercase: true)
                taken = 1
            }
            index += taken
        }
        return text
    }

    /// The folder part of a path: `"a/b/host.json"` → `"a/b"`, `"host.json"` → `"."`.
    package static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The last part of a path.
    package static func baseName(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// `path` made absolute against `folder` (itself made absolute against the working folder).
    package static func resolve(_ path: String, against folder: String) -> String {
        if path.hasPrefix("/") { return normalize(path) }
        let base = folder.hasPrefix("/") ? folder : currentDirectory() + "/" + folder
        return normalize(base + "/" + path)
    }

    package static func currentDirectory() -> String {
        guard let cwd = getcwd(nil, 0) else { return "." }
        defer { free(cwd) }
        return String(cString: cwd)
    }

    /// Removes `.` and `..` parts and doubled slashes from an absolute path.
    package static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": _ = parts.popLast()
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }
}

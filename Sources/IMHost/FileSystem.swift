#if canImport(Glibc)
import Glibc
#endif

/// The few file-system operations the host needs, on top of the C library, so the checks a
/// plugin goes through are exactly the system calls they name.
enum FileSystem {
    /// An `errno` with the call that set it.
    struct Failure: Error, CustomStringConvertible {
        var call: String
        var code: Int32
        var description: String { String(cString: strerror(code)) }
    }

    /// Reads a whole file as UTF-8 text.
    static func readText(_ path: String) throws(Failure) -> String {
        String(decoding: try readBytes(path, limit: Int.max), as: UTF8.self)
    }

    /// Reads at most `limit` bytes from the start of a file.
    static func readBytes(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(call: "open", code: errno) }
        defer { close(fd) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while result.count < limit {
            let wanted = min(chunk.count, limit - result.count)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(call: "read", code: errno)
            }
            if count == 0 { break }
            result.append(contentsOf: chunk[0..<count])
        }
        return result
    }

    /// `lstat` or `stat` of a path.
    static func status(_ path: String, followLinks: Bool) throws(Failure) -> stat {
        var info = stat()
        let result = followLinks ? stat(path, &info) : lstat(path, &info)
        guard result == 0 else { throw Failure(call: followLinks ? "stat" : "lstat", code: errno) }
        return info
    }

    /// The canonical absolute path, with every link resolved.
    static func realPath(_ path: String) throws(Failure) -> String {
        guard let resolved = realpath(path, nil) else { throw Failure(call: "realpath", code: errno) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Names in a folder, sorted, without `.` and `..`.
    static func entries(of folder: String) throws(Failure) -> [String] {
        guard let dir = opendir(folder) else { throw Failure(call: "opendir", code: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// The folder part of a path: `"a/b/host.json"` → `"a/b"`, `"host.json"` → `"."`.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The last part of a path.
    static func baseName(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// `path` made absolute against `folder` (itself made absolute against the working folder).
    static func resolve(_ path: String, against folder: String) -> String {
        if path.hasPrefix("/") { return normalize(path) }
        let base = folder.hasPrefix("/") ? folder : currentDirectory() + "/" + folder
        return normalize(base + "/" + path)
    }

    static func currentDirectory() -> String {
        guard let cwd = getcwd(nil, 0) else { return "." }
        defer { free(cwd) }
        return String(cString: cwd)
    }

    /// Removes `.` and `..` parts and doubled slashes from an absolute path.
    static func normalize(_ path: String) -> String {
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

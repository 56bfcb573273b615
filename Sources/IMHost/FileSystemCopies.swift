#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// Where private scratch folders go: `$TMPDIR` when it is an absolute path, else `/tmp`.
    package static var scratchParent: String {
        getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
    }

    /// A new folder only this user can use (mode 0700), under ``scratchParent``, named
    /// `<prefix><pid>-XXXXXX`: a process killed outright cannot remove its own, and the process
    /// id in the name lets a later one remove it (``removeAbandonedScratch(prefix:in:)``).
    package static func makePrivateScratch(prefix: String) throws(Failure) -> String {
        var template = Array("\(scratchParent)/\(prefix)\(getpid())-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure(call: "mkdtemp", code: errno) }
        return String(cString: made)
    }

    /// Removes the folders `<prefix><pid>-…` in `parent` that this user owns and whose process
    /// is gone (another user's, or a running process's, are left alone). With `unnamed`, also
    /// the folders `<prefix>XXXXXX` made before the process id was in the name: one is removed
    /// when no process of this user has a file in it open (or works in it).
    package static func removeAbandonedScratch(prefix: String, in parent: String = scratchParent, unnamed: Bool = false) {
        guard let names = try? entries(of: parent) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            let path = parent + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid() else { continue }
            if let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0 {
                guard kill(pid, 0) != 0, errno == ESRCH else { continue }
            } else {
                // mkdtemp's six letters and digits, and nothing running uses it.
                guard unnamed, rest.utf8.count == 6, rest.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }),
                      !isInUse(path) else { continue }
            }
            try? removeTree(path)
        }
    }

    /// Whether a process this user can see has a file under `folder` open, or works in it
    /// (`/proc/<pid>/fd/*` and `/proc/<pid>/cwd`). A process whose descriptors cannot be read
    /// (another user's) is taken not to: this user's 0700 folder is not theirs to hold.
    static func isInUse(_ folder: String) -> Bool {
        let inside = folder + "/"
        func within(_ link: String) -> Bool {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(link, &buffer, buffer.count - 1)
            guard count > 0 else { return false }
            let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return target == folder || target.hasPrefix(inside)
        }
        for process in (try? entries(of: "/proc")) ?? [] where process.allSatisfy(\.isNumber) {
            if within("/proc/\(process)/cwd") { return true }
            for fd in (try? entries(of: "/proc/\(process)/fd")) ?? [] where within("/proc/\(process)/fd/\(fd)") { return true }
        }
        return false
    }

    /// Copies a regular file's bytes to a new file (mode 0600), flushing nothing: for scratch
    /// copies. Neither end is followed through a link.
    package static func copyFile(_ source: String, to target: String) throws(Failure) {
        let input = open(source, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard input >= 0 else { throw Failure(call: "open", code: errno) }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0 else { throw Failure(call: "fstat", code: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw Failure(call: "open", code: EINVAL, notRegular: info.st_mode) }
        let output = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard output >= 0 else { throw Failure(call: "open", code: errno) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(call: "read", code: errno)
            }
            if count == 0 { return }
            try writeAll(output, Array(buffer[0..<count]))
        }
    }

    /// Removes a folder and everything in it, never following a link out of it.
    package static func removeTree(_ path: String) throws(Failure) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw Failure(call: "lstat", code: errno)
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            var undecodable: [String] = []
            for name in try entries(of: path, undecodable: &undecodable) { try removeTree(path + "/" + name) }
            guard rmdir(path) == 0 else { throw Failure(call: "rmdir", code: errno) }
        } else {
            guard unlink(path) == 0 else { throw Failure(call: "unlink", code: errno) }
        }
    }
}

import IMKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// A scratch folder in /tmp, removed with everything in it when released (also after SIGINT
/// and SIGTERM, which end the run normally). A run killed outright (SIGKILL) cannot tidy up,
/// so its folder carries its process id, `imhost-play-<pid>-XXXXXX`, and the next run removes
/// the folders of runs that are gone: none is left behind for long.
final class ScratchFolder {
    let path: String?
    static let parent = "/tmp"
    static let prefix = "imhost-play-"

    init(path: String?) { self.path = path }

    init() throws(FileSystem.Failure) {
        Self.removeAbandoned()
        var template = Array("\(Self.parent)/\(Self.prefix)\(getpid())-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw FileSystem.Failure(call: "mkdtemp", code: errno) }
        path = String(cString: made)
    }

    deinit {
        if let path { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Removes scratch folders of this user whose run is no longer running.
    static func removeAbandoned() {
        guard let names = try? FileSystem.entries(of: parent) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0 else { continue }
            let path = parent + "/" + name
            var info = stat()
            // Only our own folders, and only when their process is gone (not merely another user's).
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(),
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

import IMKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMHostRuntime
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
        FileSystem.removeAbandonedScratch(prefix: prefix, in: parent)
    }
}

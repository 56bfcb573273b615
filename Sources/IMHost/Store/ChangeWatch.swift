#if canImport(Glibc)
import Glibc
#endif

/// Wakes a process when another one changes a file it follows: the user's store (every commit
/// writes its write-ahead log) and the fleet cache. A chat that does not hold the user's
/// connection (a browser's page, whose server holds it; a second terminal) waits on this rather
/// than looking at the database every second: it sleeps until something changed. inotify
/// watches each file's folder, not the file, because the file may be made anew (the log after a
/// checkpoint that removed it, the cache by a rename over it).
package final class ChangeWatch {
    /// Readable when a followed file may have changed; ``drain()`` says.
    package let descriptor: Int32
    /// The names followed in each watched folder, by watch descriptor.
    private let names: [Int32: Set<String>]

    /// Follows `files` (absolute paths); `nil` when the kernel gives no watch (inotify's limits
    /// reached, a folder missing): the caller looks every second instead.
    package init?(files: [String]) {
        var byFolder: [String: Set<String>] = [:]
        for file in files {
            guard let slash = file.lastIndex(of: "/") else { continue }
            byFolder[String(file[..<slash]), default: []].insert(String(file[file.index(after: slash)...]))
        }
        let fd = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard fd >= 0, !byFolder.isEmpty else {
            if fd >= 0 { close(fd) }
            return nil
        }
        var names: [Int32: Set<String>] = [:]
        for (folder, followed) in byFolder {
            let watch = inotify_add_watch(fd, folder, UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_CLOSE_WRITE))
            guard watch >= 0 else {
                close(fd)
                return nil
            }
            names[watch] = followed
        }
        descriptor = fd
        self.names = names
    }

    deinit { close(descriptor) }

    /// Reads what the kernel said since the last call, without waiting. Returns whether a
    /// followed file changed (other files of its folder are not news).
    package func drain() -> Bool {
        var changed = false
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            // struct inotify_event: int wd; uint32 mask, cookie, len; char name[len] (padded with NULs).
            var offset = 0
            let header = 16
            while offset + header <= count {
                let (watch, length) = buffer.withUnsafeBytes { bytes in
                    (bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self), Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let nameBytes = buffer[(offset + header)..<min(count, offset + header + length)].prefix { $0 != 0 }
                // An overflowed queue (watch -1) lost events: take it as a change.
                if watch < 0 || names[watch]?.contains(String(decoding: nameBytes, as: UTF8.self)) == true { changed = true }
                offset += header + length
            }
        }
        return changed
    }
}

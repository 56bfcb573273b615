#if canImport(Glibc)
import Glibc
#endif

/// One version of one file: its device and inode, size, and modification and change times.
///
/// Replacing, rewriting or touching a plugin gives it a new identity, so facts cached about a
/// file, and a quarantine recorded against it, apply to exactly the bytes they were learnt from.
public struct FileIdentity: Hashable, Sendable, Codable, CustomStringConvertible {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// Modification time, nanoseconds since 1970.
    public var modified: Int64
    /// Status-change time, nanoseconds since 1970: a file copied over with its old mtime still changes it.
    public var changed: Int64

    public init(device: UInt64, inode: UInt64, size: Int64, modified: Int64, changed: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.changed = changed
    }

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
    }

    /// The identity of the file at `path` now, following links; `nil` when it cannot be read.
    package static func of(_ path: String) -> FileIdentity? {
        (try? FileSystem.status(path, followLinks: true)).map(FileIdentity.init)
    }

    public var description: String { "dev \(device) inode \(inode) size \(size) mtime \(modified) ctime \(changed)" }
}

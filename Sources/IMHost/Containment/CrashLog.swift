#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `<data>/crashes.log`: every crash and hang of line code, appended as it is recorded, one JSON
/// object a line. It is kept to about ``limit`` bytes: past that it becomes `crashes.log.1`
/// (replacing the one before) and a new file starts, so a line crashing in a loop cannot fill the
/// disk. Recording a crash reads only the log's last ``recentBytes``: what the escalation rule
/// needs (the last ten minutes), never the whole file.
public struct CrashLog: Sendable {
    public let path: String
    /// The size past which the log is rotated.
    public static let limit: Int64 = 1 << 20
    /// How much of the log's end a crash's escalation reads.
    static let recentBytes = 256 << 10

    public init(dataFolder: String) { path = dataFolder + "/crashes.log" }

    /// Appends a record, whole, and flushes it to disk.
    public func append(_ record: CrashRecord) throws(FileSystem.Failure) {
        try FileSystem.makeFolders(FileSystem.directory(of: path))
        guard let line = try? JSONLines.encode(record) else { return }
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int64(info.st_size) > Self.limit {
            rename(path, path + ".1")
        }
        try FileSystem.appendLine(line, to: path)
    }

    /// Every record in the log, oldest first; lines that do not read are skipped. For people and
    /// tests: it reads the whole file.
    public func records() -> [CrashRecord] { JSONLines.read(CrashRecord.self, from: path) }

    /// The records in the log's last ``recentBytes``, oldest first.
    func recentRecords() -> [CrashRecord] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return [] }
        let start = max(0, Int64(info.st_size) - Int64(Self.recentBytes))
        var bytes = [UInt8](repeating: 0, count: Int(Int64(info.st_size) - start))
        let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(start)) }
        guard got > 0 else { return [] }
        bytes.removeLast(bytes.count - got)
        // From the first whole line: the tail may start in the middle of one.
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: true).dropFirst(start > 0 ? 1 : 0)
        let decoder = JSONDecoder()
        return lines.compactMap { try? decoder.decode(CrashRecord.self, from: Data($0)) }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `<data>/crashes.log`: every crash and hang of line code, appended as it is recorded.
public struct CrashLog: Sendable {
    public let path: String

    public init(dataFolder: String) { path = dataFolder + "/crashes.log" }

    /// Appends a record, whole, and flushes it to disk.
    public func append(_ record: CrashRecord) throws(FileSystem.Failure) {
        try FileSystem.makeFolders(FileSystem.directory(of: path))
        guard let line = try? JSONLines.encode(record) else { return }
        try FileSystem.appendLine(line, to: path)
    }

    /// Every record, oldest first; lines that do not read are skipped.
    public func records() -> [CrashRecord] { JSONLines.read(CrashRecord.self, from: path) }
}

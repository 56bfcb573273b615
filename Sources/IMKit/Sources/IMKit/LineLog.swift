internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// A line's log. Each entry is one line, prefixed with the line id and the level, made safe for
/// a terminal (control and bidi characters shown as escapes, newlines included), and cut at
/// ``maximumBytes`` bytes. The host appends every entry, with the time, to `lines.log` in its
/// data folder, and writes warnings and errors to standard error too (informational entries
/// as well when it runs with `--verbose`).
///
/// Get one with `YourLine.log` (``BusinessLine/log``). It is `Sendable`: use it from any
/// thread, background tasks included.
///
/// ```swift
/// HouseLine.log.warning("listing \(id) has no price")
/// ```
public struct LineLog: Sendable {
    /// The line the entries are attributed to.
    public let lineID: String

    /// The longest entry kept, in bytes of UTF-8; a longer one is cut and ends with `…`.
    public static let maximumBytes = 4096

    /// A log for `lineID`. Prefer `YourLine.log`.
    public init(lineID: String) { self.lineID = lineID }

    /// Something worth knowing, e.g. a cache was rebuilt.
    public func info(_ message: String) { LogSink.write(lineID, .info, message) }

    /// Something went wrong and the line coped, e.g. a field was missing.
    public func warning(_ message: String) { LogSink.write(lineID, .warning, message) }

    /// Something went wrong and the line could not do what was asked.
    public func error(_ message: String) { LogSink.write(lineID, .error, message) }
}

/// How important a log entry is.
@_spi(Host)
public enum LogLevel: String, Sendable {
    case info, warning, error
}

/// Where line logs go. Until the host installs its own, entries go to standard error.
@_spi(Host)
public enum LogSink {
    /// Receives an entry: the line, the level, and the entry already made one safe line.
    public typealias Receiver = @Sendable (_ lineID: String, _ level: LogLevel, _ entry: String) -> Void

    private static let receiver = Mutex<Receiver?>(nil)

    /// Sends every later entry to `receiver`.
    public static func install(_ receiver: @escaping Receiver) {
        self.receiver.withLock { $0 = receiver }
    }

    /// The entry as it is written: one line, safe for a terminal, cut to the maximum length.
    public static func entry(_ message: String) -> String {
        var safe = TerminalText.safe(message)
        if safe.utf8.count > LineLog.maximumBytes {
            var cut = ""
            var bytes = 0
            for character in safe {
                bytes += character.utf8.count
                if bytes > LineLog.maximumBytes - 3 { break }
                cut.append(character)
            }
            safe = cut + "…"
        }
        return safe
    }

    static func write(_ lineID: String, _ level: LogLevel, _ message: String) {
        deliver(lineID: lineID, level: level, entry: entry(message))
    }

    /// Hands an entry, already made one safe line, to the receiver installed (or standard error):
    /// for the host, passing on what a line logged in another process.
    public static func deliver(lineID: String, level: LogLevel, entry: String) {
        if let receiver = receiver.withLock({ $0 }) {
            receiver(lineID, level, entry)
            return
        }
        let line = Array("\(TerminalText.safe(lineID)): \(level.rawValue): \(entry)\n".utf8)
        line.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}

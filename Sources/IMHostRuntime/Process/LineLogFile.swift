import IMHost
@_spi(Host) import IMKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where lines' log entries go (``LineLog``): appended with the time to `lines.log` in the data
/// folder, and warnings and errors (every entry, when verbose) also to standard error as one
/// line, `[house] warning: …`. A front end's, not the core's: the file and standard error are
/// read on a terminal, so the line id (any string a line gives its `LineLog`) is made safe here;
/// the entry arrives made safe and one line by IMKit.
///
/// The file is kept to about ``limit`` bytes: when it grows past, it becomes `lines.log.1`
/// (replacing the one before) and a new file starts, so a line logging in a loop cannot fill
/// the disk.
public final class LineLogFile: Sendable {
    let path: String
    /// Whether entries below warnings go to standard error too (`--verbose`).
    let verbose: Bool
    /// Where entries for standard error go: standard error itself, or (in a chat worker) the
    /// supervisor, which passes them on without taking them for a crash's last words.
    private let echo: @Sendable (String) -> Void
    static let limit: Int64 = 1 << 20
    /// Writes from any thread (a line may log from a background task) go one at a time.
    private let lock = Mutex(())
    /// Whether it was said that the file cannot be written.
    private let unwritableSaid = Atomic<Bool>(false)

    public init(dataFolder: String, verbose: Bool = false, echo: (@Sendable (String) -> Void)? = nil) {
        path = dataFolder + "/lines.log"
        self.verbose = verbose
        self.echo = echo ?? { text in try? FileSystem.writeAll(2, Array((text + "\n").utf8)) }
    }

    /// Sends every line's log entries in this process here from now on. The commands do this
    /// for the host they run; a process has one such receiver.
    public func install() {
        LogSink.install { [self] line, level, entry in write(line: line, level: level, entry: entry) }
    }

    func write(line: String, level: LogLevel, entry: String) {
        let text = "[\(TerminalText.safe(line))] \(level.rawValue): \(entry)"
        lock.withLock { _ in
            if verbose || level != .info { echo(text) }
            var info = stat()
            if stat(path, &info) == 0, Int64(info.st_size) > Self.limit {
                rename(path, path + ".1")
            }
            let stamped = Array("\(Clock.iso8601(Clock.now())) \(text)".utf8)
            do throws(FileSystem.Failure) {
                do throws(FileSystem.Failure) {
                    try FileSystem.appendLine(stamped, to: path)
                } catch where error.code == ENOENT {
                    // The data folder is made when it is first needed, not at every entry.
                    try? FileSystem.makeFolders(FileSystem.directory(of: path))
                    try FileSystem.appendLine(stamped, to: path)
                }
            } catch {
                // Said once a process: the entries still reach standard error when they would.
                if !unwritableSaid.exchange(true, ordering: .relaxed) {
                    echo("imhost: cannot write lines' log entries to \(TerminalText.safe(path)) (\(error)); they are not kept")
                }
            }
        }
    }
}

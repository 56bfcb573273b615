#if canImport(Glibc)
import Glibc
#endif
import IMKit

/// Where a command writes: results to standard output, diagnostics to standard error.
public struct Output: Sendable {
    /// Writes a result.
    public let out: @Sendable (String) -> Void
    /// Writes a diagnostic.
    public let err: @Sendable (String) -> Void

    /// Writes to the process's standard output and error.
    public static let standard = Output(
        out: { text in write(to: STDOUT_FILENO, text) },
        err: { text in write(to: STDERR_FILENO, text) })

    /// Writes to two file descriptors.
    public init(outFD: Int32, errFD: Int32) {
        out = { text in Output.write(to: outFD, text) }
        err = { text in Output.write(to: errFD, text) }
    }

    /// Creates an output from two writers (tests capture into buffers).
    public init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void) {
        self.out = out
        self.err = err
    }

    /// Writes a one-line diagnostic: what was refused, why, what to do. It quotes text from
    /// outside (URLs, ids, file names, a line's errors), so the whole line is made safe here,
    /// once: controls, bidi controls and newlines are shown as visible escapes.
    public func diagnostic(_ line: String) {
        err(TerminalText.safe(line) + "\n")
    }

    /// Writes all of `text`, unbuffered, so output and diagnostics interleave as they happen.
    private static func write(to fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}

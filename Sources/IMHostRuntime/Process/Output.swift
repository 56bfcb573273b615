#if canImport(Glibc)
import IMHost
import Glibc
#endif
import IMKit
import Synchronization

/// Where a command writes: results to standard output, diagnostics to standard error.
///
/// A write of results that fails (`EPIPE` from a reader that went away, `ENOSPC` on a full disk,
/// `/dev/full`) is remembered: the command ends with exit 1 and says so on standard error, and a
/// chat whose output is gone stops reading input (see ``lostOutput``).
public struct Output: Sendable {
    /// The error of the first write of results that failed in this process, 0 while none has.
    private static let failure = Atomic<Int32>(0)

    /// Why results could not be written, once a write failed: "Broken pipe".
    public static var lostOutput: String? {
        let code = failure.load(ordering: .relaxed)
        return code == 0 ? nil : String(cString: strerror(code))
    }

    /// Writes a result.
    public let out: @Sendable (String) -> Void
    /// Writes a diagnostic.
    public let err: @Sendable (String) -> Void

    /// Writes to the process's standard output and error.
    public static let standard = Output(outFD: STDOUT_FILENO, errFD: STDERR_FILENO)

    /// Writes to two file descriptors.
    public init(outFD: Int32, errFD: Int32) {
        out = { text in
            if let code = Output.write(to: outFD, text) { _ = Output.failure.compareExchange(expected: 0, desired: code, ordering: .relaxed) }
        }
        err = { text in _ = Output.write(to: errFD, text) }
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
    /// Returns the error when it could not.
    private static func write(to fd: Int32, _ text: String) -> Int32? {
        var text = text
        return text.withUTF8 { buffer -> Int32? in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import IMHost
import IMHostRuntime

/// Reads lines from a file descriptor without blocking longer than asked, so a chat can notice a
/// reload request while it waits for the user. On a pipe, or a terminal in its usual (canonical)
/// mode, lines come as the line discipline ends them; on a terminal in non-canonical mode, keys
/// go through a ``LineEditor`` that draws what is typed on a ``ChatScreen``.
///
/// Linear in what it reads (see ``LineBuffer``, which holds the bytes). A line longer than
/// `limit` bytes is not kept: it is read to its end and discarded, and reported as `.tooLong`
/// with its length, so one huge line cannot exhaust memory.
package final class LineReader {
    package enum Event: Equatable {
        case line(String)
        /// A line longer than the limit, read and dropped; its length in bytes.
        case tooLong(Int)
        case timeout
        case end
    }

    /// The default limit on a line: 1 MiB.
    package static let defaultLimit = 1 << 20

    private let fd: Int32
    private let buffer: LineBuffer
    private let editor: LineEditor?

    package init(fd: Int32 = STDIN_FILENO, limit: Int = LineReader.defaultLimit) {
        self.fd = fd
        buffer = LineBuffer(limit: limit, stripsCarriageReturn: true)
        editor = nil
    }

    /// Reads keys from a terminal in non-canonical mode (``TerminalMode``), editing the line on
    /// `screen`.
    init(editing screen: ChatScreen, fd: Int32 = STDIN_FILENO, limit: Int = LineReader.defaultLimit) {
        self.fd = fd
        buffer = LineBuffer(limit: limit, stripsCarriageReturn: true)
        editor = LineEditor(screen: screen, limit: limit)
    }

    /// The next line (without its newline), `.timeout` after `milliseconds` with no full line
    /// or as soon as one of `wake` is readable, or `.end` once the input is closed and drained.
    /// It reads at most one chunk a call: input that never ends a line (`< /dev/zero`) comes
    /// back as `.timeout` after every chunk, so the caller still sees signals and its children.
    package func next(timeout milliseconds: Int32, wake: [Int32] = []) -> Event {
        if let editor { return edit(editor, timeout: milliseconds, wake: wake) }
        while true {
            if let piece = buffer.next() { return Self.event(piece) }
            if buffer.ended {
                // The last line, without a newline: dropped whole if it is too long.
                return buffer.restPiece().map(Self.event) ?? .end
            }
            switch wait(milliseconds, wake: wake) {
            case .quiet: return .timeout
            case .failed:
                buffer.end()
                continue
            case .readable:
                buffer.fill(from: fd)
                if let piece = buffer.next() { return Self.event(piece) }
                if !buffer.ended { return .timeout }
            }
        }
    }

    /// The same for keys: at most one read a call, and what it holds taken key by key.
    private func edit(_ editor: LineEditor, timeout milliseconds: Int32, wake: [Int32]) -> Event {
        if let event = editor.next() { return event }
        switch wait(milliseconds, wake: wake) {
        case .quiet: return .timeout
        case .failed: return .end
        case .readable: break
        }
        var keys = [UInt8](repeating: 0, count: 4096)
        let count = keys.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && (errno == EINTR || errno == EAGAIN) { return .timeout }
        // The terminal hung up (0), or cannot be read: the input is over.
        guard count > 0 else { return .end }
        editor.feed(keys[..<count])
        return editor.next() ?? .timeout
    }

    private enum Waited {
        case readable, quiet, failed
    }

    /// Waits until the input is readable, `milliseconds` pass or one of `wake` is readable
    /// (a signal counts as quiet: the caller looks at it), or polling fails.
    private func wait(_ milliseconds: Int32, wake: [Int32]) -> Waited {
        var pollers = ([fd] + wake).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&pollers, nfds_t(pollers.count), milliseconds)
        if ready < 0 { return errno == EINTR ? .quiet : .failed }
        return ready == 0 || pollers[0].revents == 0 ? .quiet : .readable
    }

    private static func event(_ piece: LineBuffer.Piece) -> Event {
        switch piece {
        case .line(let line): .line(line)
        case .tooLong(let length): .tooLong(length)
        }
    }
}

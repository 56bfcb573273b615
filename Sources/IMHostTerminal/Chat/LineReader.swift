#if canImport(Glibc)
import Glibc
#endif
import IMHost

/// Reads lines from a file descriptor without blocking longer than asked, so a chat can notice a
/// reload request while it waits for the user. Works the same on a terminal and a pipe.
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

    package init(fd: Int32 = STDIN_FILENO, limit: Int = LineReader.defaultLimit) {
        self.fd = fd
        buffer = LineBuffer(limit: limit, stripsCarriageReturn: true)
    }

    /// The next line (without its newline), `.timeout` after `milliseconds` with no full line
    /// or as soon as one of `wake` is readable, or `.end` once the input is closed and drained.
    /// It reads at most one chunk a call: input that never ends a line (`< /dev/zero`) comes
    /// back as `.timeout` after every chunk, so the caller still sees signals and its children.
    package func next(timeout milliseconds: Int32, wake: [Int32] = []) -> Event {
        while true {
            if let piece = buffer.next() { return Self.event(piece) }
            if buffer.ended {
                // The last line, without a newline: dropped whole if it is too long.
                return buffer.restPiece().map(Self.event) ?? .end
            }
            var pollers = ([fd] + wake).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&pollers, nfds_t(pollers.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { return .timeout }
                buffer.end()
                continue
            }
            if ready == 0 || pollers[0].revents == 0 { return .timeout }
            buffer.fill(from: fd)
            if let piece = buffer.next() { return Self.event(piece) }
            if !buffer.ended { return .timeout }
        }
    }

    private static func event(_ piece: LineBuffer.Piece) -> Event {
        switch piece {
        case .line(let line): .line(line)
        case .tooLong(let length): .tooLong(length)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Reads lines from a file descriptor without blocking longer than asked, so a chat can notice a
/// reload request while it waits for the user. Works the same on a terminal and a pipe.
final class LineReader {
    enum Event: Equatable {
        case line(String)
        case timeout
        case end
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var ended = false

    init(fd: Int32 = STDIN_FILENO) { self.fd = fd }

    /// The next line (without its newline), `.timeout` after `milliseconds` with no full line
    /// or as soon as one of `wake` is readable, or `.end` once the input is closed and drained.
    func next(timeout milliseconds: Int32, wake: [Int32] = []) -> Event {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return .line(String(decoding: line, as: UTF8.self))
            }
            if ended {
                guard !buffer.isEmpty else { return .end }
                defer { buffer.removeAll() }
                return .line(String(decoding: buffer, as: UTF8.self))
            }
            var pollers = ([fd] + wake).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&pollers, nfds_t(pollers.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { return .timeout }
                ended = true
                continue
            }
            if ready == 0 || pollers[0].revents == 0 { return .timeout }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                ended = true
            } else {
                buffer += chunk[0..<count]
            }
        }
    }
}

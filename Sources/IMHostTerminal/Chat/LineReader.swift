#if canImport(Glibc)
import Glibc
#endif

/// Reads lines from a file descriptor without blocking longer than asked, so a chat can notice a
/// reload request while it waits for the user. Works the same on a terminal and a pipe.
///
/// Linear in what it reads: a search for the newline resumes where the last one stopped, and
/// consumed lines are dropped from the front in one move once they make up half the buffer. A
/// line longer than `limit` bytes is not kept: it is read to its end and discarded, and reported
/// as `.tooLong` with its length, so one huge line cannot exhaust memory.
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
    private let limit: Int
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts.
    private var start = 0
    /// How far past `start` the search for a newline has already looked.
    private var scanned = 0
    /// Bytes of an over-long line dropped so far, while it is being skipped.
    private var skipping: Int?
    private var ended = false

    package init(fd: Int32 = STDIN_FILENO, limit: Int = LineReader.defaultLimit) {
        self.fd = fd
        self.limit = limit
    }

    /// The next line (without its newline), `.timeout` after `milliseconds` with no full line
    /// or as soon as one of `wake` is readable, or `.end` once the input is closed and drained.
    package func next(timeout milliseconds: Int32, wake: [Int32] = []) -> Event {
        while true {
            if let event = takeLine() { return event }
            if ended {
                if let skipped = skipping {
                    skipping = nil
                    return .tooLong(skipped + buffer.count - start)
                }
                guard start < buffer.count else { return .end }
                defer { clear() }
                return .line(String(decoding: buffer[start...], as: UTF8.self))
            }
            var pollers = ([fd] + wake).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&pollers, nfds_t(pollers.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { return .timeout }
                ended = true
                continue
            }
            if ready == 0 || pollers[0].revents == 0 { return .timeout }
            if !fill() { ended = true }
        }
    }

    /// A whole line from the buffer, or an over-long one's end, if there is one.
    private func takeLine() -> Event? {
        let end = buffer.count
        var newline: Int?
        buffer.withUnsafeBufferPointer { bytes in
            var index = start + scanned
            while index < end {
                if bytes[index] == 0x0A { newline = index; return }
                index += 1
            }
        }
        guard let newline else {
            scanned = end - start
            if end - start > limit {
                // Too long to keep: count it and drop what is buffered.
                skipping = (skipping ?? 0) + (end - start)
                clear()
            }
            return nil
        }
        let lineEnd = newline > start && buffer[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
        let length = newline - start
        let event: Event
        if let skipped = skipping {
            event = .tooLong(skipped + length)
            skipping = nil
        } else if length > limit {
            event = .tooLong(length)
        } else {
            event = .line(String(decoding: buffer[start..<lineEnd], as: UTF8.self))
        }
        start = newline + 1
        scanned = 0
        if start * 2 >= buffer.count {
            buffer.removeSubrange(..<start)
            start = 0
        }
        return event
    }

    /// Reads what is there (64 KiB, or as much as is buffered already: a long line is read in
    /// ever larger steps, so it takes few reads and copies); false at the end of the input.
    private func fill() -> Bool {
        let chunkSize = max(64 * 1024, buffer.count - start)
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: chunkSize))
        var count = 0
        repeat {
            count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + old, chunkSize) }
        } while count < 0 && errno == EINTR
        buffer.removeLast(chunkSize - max(0, count))
        return count > 0
    }

    private func clear() {
        buffer.removeAll(keepingCapacity: true)
        start = 0
        scanned = 0
    }
}

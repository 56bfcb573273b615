#if canImport(Glibc)
import Glibc
#endif

/// Reads lines from a file descriptor without blocking longer than asked, so a chat can notice a
/// reload request while it waits for the user. Works the same on a terminal and a pipe.
///
/// Linear in what it reads: a search for the newline resumes where the last one stopped, and
/// consumed lines are dropped from the front in one move when a read needs the room. A line
/// longer than `limit` bytes is not kept: it is read to its end and discarded, and reported as
/// `.tooLong` with its length, so one huge line cannot exhaust memory.
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
    // The bytes read and not yet taken are `storage[start..<count]`. Raw memory rather than an
    // array: a read goes straight into its free space and the newline is found with memchr, so
    // a debug build is linear too (an array's generic paths cost a hundred times more without
    // optimization). Safe because only this class touches it, `start <= count <= capacity`
    // always holds, and it is freed once, in deinit.
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var count = 0
    /// Where the unread part of the storage starts.
    private var start = 0
    /// How far past `start` the search for a newline has already looked.
    private var scanned = 0
    /// Bytes of an over-long line dropped so far, while it is being skipped.
    private var skipping: Int?
    private var ended = false

    private static let chunk = 64 * 1024

    package init(fd: Int32 = STDIN_FILENO, limit: Int = LineReader.defaultLimit) {
        self.fd = fd
        self.limit = limit
        capacity = 2 * Self.chunk
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    /// The next line (without its newline), `.timeout` after `milliseconds` with no full line
    /// or as soon as one of `wake` is readable, or `.end` once the input is closed and drained.
    package func next(timeout milliseconds: Int32, wake: [Int32] = []) -> Event {
        while true {
            if let event = takeLine() { return event }
            if ended {
                // The last line, without a newline: dropped whole if it is too long.
                defer { clear() }
                if let skipped = skipping {
                    skipping = nil
                    return .tooLong(skipped + count - start)
                }
                guard start < count else { return .end }
                if count - start > limit { return .tooLong(count - start) }
                let end = storage[count - 1] == UInt8(ascii: "\r") ? count - 1 : count
                return .line(text(start..<end))
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

    /// A whole line from the storage, or an over-long one's end, if there is one.
    private func takeLine() -> Event? {
        let from = start + scanned
        guard let found = memchr(storage + from, 0x0A, count - from) else {
            scanned = count - start
            if count - start > limit {
                // Too long to keep: count it and drop what is buffered.
                skipping = (skipping ?? 0) + (count - start)
                clear()
            }
            return nil
        }
        let newline = found.assumingMemoryBound(to: UInt8.self) - storage
        let lineEnd = newline > start && storage[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
        let length = newline - start
        let event: Event
        if let skipped = skipping {
            event = .tooLong(skipped + length)
            skipping = nil
        } else if length > limit {
            event = .tooLong(length)
        } else {
            event = .line(text(start..<lineEnd))
        }
        start = newline + 1
        scanned = 0
        if start == count {
            start = 0
            count = 0
        }
        return event
    }

    private func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(start: storage + range.lowerBound, count: range.count), as: UTF8.self)
    }

    /// Reads what is there (64 KiB, or as much as is buffered already: a long line is read in
    /// ever larger steps, so it takes few reads and copies); false at the end of the input.
    private func fill() -> Bool {
        let size = max(Self.chunk, count - start)
        if count + size > capacity {
            // Taken lines are dropped from the front first; the storage grows only for a line
            // longer than what it holds, doubling, so a long line costs linear time.
            if start > 0 {
                memmove(storage, storage + start, count - start)
                count -= start
                start = 0
            }
            if count + size > capacity {
                let grown = max(2 * capacity, count + size)
                let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
                larger.initialize(from: storage, count: count)
                storage.deallocate()
                storage = larger
                capacity = grown
            }
        }
        var read = 0
        repeat {
            read = Glibc.read(fd, storage + count, size)
        } while read < 0 && errno == EINTR
        guard read > 0 else { return false }
        count += read
        return true
    }

    private func clear() {
        start = 0
        count = 0
        scanned = 0
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Bytes read from a descriptor, cut into lines as they arrive: the chat's input, a worker's
/// answers and what line code prints.
///
/// Linear in what it reads: a search for the newline resumes where the last one stopped (with
/// `memchr`), reads go straight into free space, and taken lines are dropped from the front in
/// one move when a read needs the room. A line longer than `limit` bytes is not kept: it is read
/// to its end and discarded, and reported as ``Piece/tooLong(_:)`` with its length.
package final class LineBuffer {
    /// What the buffer gives: a line without its newline, or the length of one too long to keep.
    package enum Piece: Equatable {
        case line(String)
        case tooLong(Int)
    }

    private let limit: Int
    private let stripsCarriageReturn: Bool
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
    /// The descriptor reached its end (or failed).
    package private(set) var ended = false

    private static let chunk = 64 * 1024

    /// A buffer that keeps lines of up to `limit` bytes, and takes a `\r` before a newline (or
    /// at the end) off the line when `stripsCarriageReturn`.
    package init(limit: Int = .max, stripsCarriageReturn: Bool = false) {
        self.limit = limit
        self.stripsCarriageReturn = stripsCarriageReturn
        capacity = 2 * Self.chunk
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    /// Reads what is there (64 KiB, or as much as is buffered already: a long line is read in
    /// ever larger steps, so it takes few reads and copies); false at the end of the input or on
    /// an error, which ends it.
    @discardableResult
    package func fill(from fd: Int32) -> Bool {
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
        guard read > 0 else {
            ended = true
            return false
        }
        count += read
        return true
    }

    /// Marks the input over, as a failed read does.
    package func end() { ended = true }

    /// The next whole line, or an over-long one's end, if there is one.
    package func next() -> Piece? {
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
        let length = newline - start
        let piece: Piece
        if let skipped = skipping {
            piece = .tooLong(skipped + length)
            skipping = nil
        } else if length > limit {
            piece = .tooLong(length)
        } else {
            piece = .line(text(start..<newline))
        }
        start = newline + 1
        scanned = 0
        if start == count {
            start = 0
            count = 0
        }
        return piece
    }

    /// The next whole line, if there is one (a buffer without a limit has no over-long lines).
    package func nextLine() -> String? {
        while let piece = next() {
            if case .line(let line) = piece { return line }
        }
        return nil
    }

    /// Whether a whole line is waiting.
    package var hasLine: Bool {
        let from = start + scanned
        return memchr(storage + from, 0x0A, count - from) != nil
    }

    /// What is left after the last newline (at the end of the input, an unterminated last
    /// line), dropped whole if it is too long; the buffer is empty after.
    package func restPiece() -> Piece? {
        defer { clear() }
        if let skipped = skipping {
            skipping = nil
            return .tooLong(skipped + count - start)
        }
        guard start < count else { return nil }
        if count - start > limit { return .tooLong(count - start) }
        return .line(text(start..<count))
    }

    /// What is left after the last newline, as text (a buffer without a limit keeps it all).
    package func rest() -> String? {
        guard case .line(let line)? = restPiece() else { return nil }
        return line
    }

    /// The text of `range`, without a carriage return at its end when the buffer strips them.
    private func text(_ range: Range<Int>) -> String {
        var end = range.upperBound
        if stripsCarriageReturn, end > range.lowerBound, storage[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return String(decoding: UnsafeBufferPointer(start: storage + range.lowerBound, count: end - range.lowerBound), as: UTF8.self)
    }

    private func clear() {
        start = 0
        count = 0
        scanned = 0
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// One conversation on disk: an append-only log of JSON lines, and an index of where each line
/// starts (8 bytes a message), so the last page of a conversation of any length is read with two
/// small reads, and its messages are numbered without counting lines.
///
/// The log is the truth; the index is checked against it and rebuilt from it when they disagree.
/// Several processes may append to one conversation: every append takes the log's lock, indexes
/// what another writer left unindexed (one killed between its two writes), picks the position,
/// and writes. A line is on disk (`fsync`) before `append` returns; a failed write is cut back,
/// so the log never keeps half a line, and the error names the file. A torn last line left by a
/// crash is moved aside to `<name>.torn`, and every earlier message stays.
///
/// A log that cannot be written (a read-only data folder) still reads, but not in two small
/// reads: its index cannot be trusted or written, so the whole log is scanned once at open and
/// the index kept in memory.
final class ConversationLog {
    let path: String
    private let log: Int32
    /// The index file, or -1 when it cannot be opened for writing and `memoryIndex` holds it.
    private let index: Int32
    private var memoryIndex: [UInt64]?
    /// Whether appends are refused: the log could only be opened for reading (or not at all).
    let isReadOnly: Bool
    /// Messages in the log, as of the last look.
    private(set) var count = 0
    /// What opening had to repair, said for a person; empty when the files were whole.
    private(set) var repairs: [String] = []

    /// Logs up to this size are checked line by line against their index on open; larger ones
    /// by their ends and evenly spaced samples (and every entry read is checked as it is used).
    static let fullCheckLimit: UInt64 = 8 << 20

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(path: String) throws(Failure) {
        self.path = path
        var readOnly = false
        var fd = Glibc.open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        let created = fd >= 0 && (try? Self.size(fd)) == 0
        if fd < 0, errno == EROFS || errno == EACCES || errno == EPERM {
            readOnly = true
            fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            // A conversation that does not exist in a read-only folder is an empty one.
            if fd < 0, errno == ENOENT { fd = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }
        }
        guard fd >= 0 else { throw Self.failure("open", path) }
        log = fd
        isReadOnly = readOnly
        var indexFD: Int32 = -1
        if !readOnly {
            indexFD = Glibc.open(path + ".index", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
            if indexFD < 0 {
                let failure = Self.failure("open", path + ".index")
                Glibc.close(log)
                throw failure
            }
            // A new file's name must survive a power cut too.
            if created { FileSystem.syncFolder(FileSystem.directory(of: path)) }
        }
        index = indexFD
        if readOnly { memoryIndex = [] }
        try locked { () throws(Failure) in try open() }
    }

    deinit {
        Glibc.close(log)
        if index >= 0 { Glibc.close(index) }
    }

    // MARK: Writing

    /// Appends one message: `make` is given its position (from 0), under the lock, and returns
    /// the line to write (it may throw to write nothing). Returns once the line is on disk.
    func append(_ make: (Int) throws -> [UInt8]) throws -> Int {
        try refuseIfReadOnly()
        return try locked { () throws -> Int in
            let end = try catchUp()
            let position = count
            let line = try make(position)
            try write([line], at: end)
            return position
        }
    }

    /// Appends messages as they are, with one flush to disk (imports and benchmarks).
    func append(lines: [[UInt8]]) throws(Failure) {
        try refuseIfReadOnly()
        try locked { () throws(Failure) in
            try write(lines, at: try catchUp())
        }
    }

    private func refuseIfReadOnly() throws(Failure) {
        guard !isReadOnly else {
            throw Failure(description: "cannot write \(path): the data folder is read-only; messages can be read but not sent")
        }
    }

    /// Writes whole lines after the last one (the log ends at `start`, as `catchUp` found it),
    /// then their index entries; on any failure both files are cut back to where they were.
    /// Called under the lock, after `catchUp`.
    private func write(_ lines: [[UInt8]], at start: UInt64) throws(Failure) {
        var bytes: [UInt8] = []
        var starts: [UInt64] = []
        var offset = start
        for line in lines {
            starts.append(offset)
            bytes += line
            bytes.append(UInt8(ascii: "\n"))
            offset += UInt64(line.count + 1)
        }
        do throws(FileSystem.Failure) {
            try FileSystem.writeAll(log, bytes)
            guard fsync(log) == 0 else { throw FileSystem.Failure(call: "fsync", code: errno) }
        } catch {
            // Half a line would make the next message unreadable: cut back to the last whole line.
            _ = ftruncate(log, off_t(start))
            _ = fsync(log)
            throw Failure(description: "cannot write \(path): \(error.call): \(error); nothing was stored")
        }
        do throws(Failure) {
            try writeIndex(starts, at: count)
        } catch {
            // A message the index does not know would appear later as if sent: take it back.
            _ = ftruncate(log, off_t(start))
            _ = fsync(log)
            throw Failure(description: "\(error.description); nothing was stored")
        }
        count += lines.count
    }

    // MARK: Reading

    /// The number of messages now, another writer's included.
    func refreshCount() throws(Failure) -> Int {
        if index >= 0 { count = Int(try Self.size(index) / 8) }
        return count
    }

    /// Lines `range` of the log (positions from 0), oldest first. An index entry that does not
    /// point at a line start makes the index be rebuilt from the log, once, and the read retried.
    func lines(_ range: Range<Int>) throws(Failure) -> [[UInt8]] {
        guard !range.isEmpty else { return [] }
        do {
            return try readLines(range)
        } catch IndexProblem.mismatch {
            try locked { () throws(Failure) in
                try rebuild(because: "its index did not point at line starts")
            }
            do {
                return try readLines(range)
            } catch {
                throw Failure(description: "\(path): the index still disagrees with the log after a rebuild")
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "\(path): \(error)")
        }
    }

    private enum IndexProblem: Error { case mismatch }

    private func readLines(_ range: Range<Int>) throws -> [[UInt8]] {
        let upper = min(range.upperBound, count)
        guard range.lowerBound < upper else { return [] }
        let starts = try entries(range.lowerBound..<upper)
        let logSize = try Self.size(log)
        let end = upper < count ? try entries(upper..<upper + 1)[0] : logSize
        guard end <= logSize, end >= starts[0] else { throw IndexProblem.mismatch }
        if starts[0] > 0, try read(log, from: starts[0] - 1, count: 1) != [UInt8(ascii: "\n")] { throw IndexProblem.mismatch }
        let bytes = try read(log, from: starts[0], count: Int(end - starts[0]))
        var lines: [[UInt8]] = []
        lines.reserveCapacity(starts.count)
        for (i, start) in starts.enumerated() {
            let from = Int(start - starts[0])
            let to = i + 1 < starts.count ? Int(starts[i + 1] - starts[0]) : bytes.count
            // Each line ends with the newline just before the next one starts.
            guard from < to, to <= bytes.count, bytes[to - 1] == UInt8(ascii: "\n") else { throw IndexProblem.mismatch }
            lines.append(Array(bytes[from..<(to - 1)]))
        }
        return lines
    }

    // MARK: Checking and repairing

    /// At open: cut a torn last line, then check the index against the log (all of it for a
    /// small log; its ends and samples for a large one) and rebuild it when it does not agree.
    private func open() throws(Failure) {
        try cutTornLine()
        if index >= 0, try Self.size(index) % 8 != 0 {
            try rebuild(because: "its index had a partial entry")
            return
        }
        let logSize = try Self.size(log)
        let entryCount = index >= 0 ? Int(try Self.size(index) / 8) : 0
        if memoryIndex != nil || logSize <= Self.fullCheckLimit {
            let starts = try lineStarts(from: 0, to: logSize)
            if memoryIndex != nil {
                memoryIndex = starts
                count = starts.count
            } else if try entries(0..<entryCount) != starts {
                try rebuild(because: "its index did not match the log", starts: starts)
            } else {
                count = entryCount
            }
            return
        }
        count = entryCount
        guard try sampleAgrees(logSize: logSize) else {
            try rebuild(because: "its index did not match the log")
            return
        }
        // Lines another writer left unindexed, or that the index lost.
        try catchUp(logSize: logSize)
    }

    /// Whether the index's first and last entries, and evenly spaced ones, are increasing line
    /// starts, and the last line ends at the end of the log.
    private func sampleAgrees(logSize: UInt64) throws(Failure) -> Bool {
        guard count > 0 else { return true }
        let samples = Set([0, count - 1] + stride(from: 0, to: count, by: max(1, count / 64)))
        var previous: UInt64?
        for position in samples.sorted() {
            let start = try entries(position..<position + 1)[0]
            if let previous, start <= previous { return false }
            guard start < logSize else { return false }
            if start == 0 {
                if position != 0 { return false }
            } else if try read(log, from: start - 1, count: 1) != [UInt8(ascii: "\n")] {
                return false
            }
            previous = start
        }
        return try entries(0..<1)[0] == 0
    }

    /// Indexes the whole lines after the last indexed one (left by a writer killed between its
    /// two writes), after cutting a torn last line (unless the caller just did, and passes the
    /// log's size). Called under the lock. Returns the log's size, where the next line goes.
    @discardableResult
    private func catchUp(logSize known: UInt64? = nil) throws(Failure) -> UInt64 {
        let logSize: UInt64
        if let known { logSize = known } else { logSize = try cutTornLine() }
        _ = try refreshCount()
        var indexedEnd: UInt64 = 0
        if count > 0 {
            let last = try entries(count - 1..<count)[0]
            var atLineStart = last == 0
            if !atLineStart, last <= logSize { atLineStart = try read(log, from: last - 1, count: 1) == [UInt8(ascii: "\n")] }
            guard last < logSize, atLineStart else {
                try rebuild(because: "its last index entry did not point at a line")
                return logSize
            }
            indexedEnd = try lineEnd(from: last, before: logSize)
        }
        guard indexedEnd < logSize else { return logSize }
        let missing = try lineStarts(from: indexedEnd, to: logSize)
        if index >= 0 {
            try writeIndex(missing, at: count)
        } else {
            memoryIndex = (memoryIndex ?? []) + missing
        }
        count += missing.count
        repairs.append("indexed \(missing.count) message\(missing.count == 1 ? "" : "s") of \(FileSystem.baseName(path)) that a writer stopped before indexing")
        return logSize
    }

    /// Rebuilds the index from the log.
    private func rebuild(because reason: String, starts known: [UInt64]? = nil) throws(Failure) {
        let starts: [UInt64]
        if let known { starts = known } else { starts = try lineStarts(from: 0, to: try Self.size(log)) }
        if index >= 0 {
            guard ftruncate(index, 0) == 0 else { throw Self.failure("truncate", path + ".index") }
            try writeIndex(starts, at: 0)
        } else {
            memoryIndex = starts
        }
        count = starts.count
        repairs.append("rebuilt the index of \(FileSystem.baseName(path)) from its log (\(reason)): \(starts.count) messages")
    }

    private func writeIndex(_ starts: [UInt64], at position: Int) throws(Failure) {
        do throws(FileSystem.Failure) {
            try FileSystem.writeAll(index, starts.flatMap(Self.littleEndian), at: UInt64(position) * 8)
        } catch {
            _ = ftruncate(index, off_t(position * 8))
            throw Failure(description: "cannot write \(path).index: \(error.call): \(error)")
        }
    }

    /// Moves a last line without its newline (a write cut short) to `<name>.torn`. Returns the
    /// log's size after.
    @discardableResult
    private func cutTornLine() throws(Failure) -> UInt64 {
        let logSize = try Self.size(log)
        guard logSize > 0, try read(log, from: logSize - 1, count: 1) != [UInt8(ascii: "\n")] else { return logSize }
        guard !isReadOnly else { return logSize }
        let keep = try lastLineEnd(before: logSize)
        let torn = try read(log, from: keep, count: Int(logSize - keep))
        let aside = path + ".torn"
        do throws(FileSystem.Failure) {
            try FileSystem.appendLine(torn, to: aside)
        } catch {
            throw Failure(description: "cannot write \(aside): \(error.call): \(error)")
        }
        guard ftruncate(log, off_t(keep)) == 0, fsync(log) == 0 else { throw Self.failure("truncate", path) }
        repairs.append("recovered \(FileSystem.baseName(path)): a torn last line of \(torn.count) bytes (a write cut short) was moved to \(FileSystem.baseName(aside)); every earlier message is intact")
        return keep
    }

    /// The starts of the whole lines in `from..<to` (a last line without a newline is not one).
    private func lineStarts(from: UInt64, to: UInt64) throws(Failure) -> [UInt64] {
        var starts: [UInt64] = []
        var lineStart = from
        var offset = from
        while offset < to {
            let chunk = try read(log, from: offset, count: Int(min(to - offset, 1 << 20)))
            if chunk.isEmpty { break }
            chunk.withUnsafeBufferPointer { bytes in
                for (i, byte) in bytes.enumerated() where byte == 0x0A {
                    starts.append(lineStart)
                    lineStart = offset + UInt64(i) + 1
                }
            }
            offset += UInt64(chunk.count)
        }
        return starts
    }

    /// The offset just after the newline that ends the line starting at `start`.
    private func lineEnd(from start: UInt64, before end: UInt64) throws(Failure) -> UInt64 {
        var offset = start
        while offset < end {
            let chunk = try read(log, from: offset, count: Int(min(end - offset, 64 * 1024)))
            if chunk.isEmpty { return offset }
            if let newline = chunk.firstIndex(of: UInt8(ascii: "\n")) { return offset + UInt64(newline) + 1 }
            offset += UInt64(chunk.count)
        }
        return offset
    }

    /// The offset just after the last newline before `end`, or 0.
    private func lastLineEnd(before end: UInt64) throws(Failure) -> UInt64 {
        var upper = end
        while upper > 0 {
            let from = upper > 64 * 1024 ? upper - 64 * 1024 : 0
            let chunk = try read(log, from: from, count: Int(upper - from))
            if let newline = chunk.lastIndex(of: UInt8(ascii: "\n")) { return from + UInt64(newline) + 1 }
            upper = from
        }
        return 0
    }

    // MARK: Files

    private func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        // The lock is advisory and only between writers of this log; a read-only log is
        // never written, so it needs no lock to be read.
        if !isReadOnly { flock(log, LOCK_EX) }
        defer { if !isReadOnly { flock(log, LOCK_UN) } }
        return try body()
    }

    /// Index entries `range`, from the file or from memory.
    private func entries(_ range: Range<Int>) throws(Failure) -> [UInt64] {
        guard !range.isEmpty else { return [] }
        if let memoryIndex {
            guard range.upperBound <= memoryIndex.count else { throw Failure(description: "\(path): the index is shorter than expected") }
            return Array(memoryIndex[range])
        }
        let bytes = try read(index, from: UInt64(range.lowerBound) * 8, count: range.count * 8)
        guard bytes.count == range.count * 8 else { throw Failure(description: "\(path).index is shorter than expected") }
        var values: [UInt64] = []
        values.reserveCapacity(range.count)
        bytes.withUnsafeBufferPointer { raw in
            for entry in 0..<range.count {
                var value: UInt64 = 0
                for byte in 0..<8 { value |= UInt64(raw[entry * 8 + byte]) << UInt64(8 * byte) }
                values.append(value)
            }
        }
        return values
    }

    private static func littleEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    private static func size(_ fd: Int32) throws(Failure) -> UInt64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("fstat", "a conversation file") }
        return UInt64(info.st_size)
    }

    private func read(_ fd: Int32, from offset: UInt64, count: Int) throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw Self.failure("read", path)
            }
            if got == 0 { break }
            done += got
        }
        if done < count { buffer.removeLast(count - done) }
        return buffer
    }

    private static func failure(_ call: String, _ file: String) -> Failure {
        Failure(description: "\(call) \(file): \(String(cString: strerror(errno)))")
    }
}

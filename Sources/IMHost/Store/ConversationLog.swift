#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import IMKit

/// One conversation on disk: an append-only log of JSON lines, and an index of where each line
/// starts (8 bytes a message), so the last page of a conversation of any length is read with two
/// small reads, and its messages are numbered without counting lines.
///
/// The log is the truth; the index is rebuilt from it when they disagree. A line is on disk
/// (`fsync`) before `append` returns. A torn last line, left by a crash in the middle of a
/// write, is moved aside to `<name>.torn` on open, and every earlier message stays.
final class ConversationLog {
    let path: String
    private let log: Int32
    private let index: Int32
    /// Messages in the log.
    private(set) var count: Int
    /// What opening had to repair, said for a person; empty when the files were whole.
    private(set) var repairs: [String] = []

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(path: String) throws(Failure) {
        self.path = path
        log = Glibc.open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard log >= 0 else { throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        index = Glibc.open(path + ".index", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard index >= 0 else {
            Glibc.close(log)
            throw Failure(description: "cannot open \(path).index: \(String(cString: strerror(errno)))")
        }
        count = 0
        try locked { () throws(Failure) in try recover() }
    }

    deinit {
        Glibc.close(log)
        Glibc.close(index)
    }

    // MARK: Writing

    /// Appends messages and returns once they are on disk. One `fsync` for the whole batch.
    func append(_ lines: [[UInt8]]) throws(Failure) {
        try locked { () throws(Failure) in
            // Another process may have appended since: take the sizes under the lock.
            var offset = try size(of: log)
            count = Int(try size(of: index) / 8)
            var bytes: [UInt8] = []
            var offsets: [UInt64] = []
            for line in lines {
                offsets.append(offset)
                bytes += line
                bytes.append(UInt8(ascii: "\n"))
                offset += UInt64(line.count + 1)
            }
            try writeAll(log, bytes, at: nil)
            guard fsync(log) == 0 else { throw failure("fsync", path) }
            try writeAll(index, offsets.flatMap(Self.littleEndian), at: UInt64(count) * 8)
            count += lines.count
        }
    }

    // MARK: Reading

    /// Lines `range` of the log (positions from 0), oldest first.
    func lines(_ range: Range<Int>) throws(Failure) -> [[UInt8]] {
        guard !range.isEmpty else { return [] }
        let upper = min(range.upperBound, count)
        let starts = try readIndex(range.lowerBound..<upper)
        let end = upper < count ? try readIndex(upper..<upper + 1)[0] : try size(of: log)
        let bytes = try read(log, from: starts[0], count: Int(end - starts[0]))
        var lines: [[UInt8]] = []
        for (i, start) in starts.enumerated() {
            let from = Int(start - starts[0])
            let to = i + 1 < starts.count ? Int(starts[i + 1] - starts[0]) : bytes.count
            var line = Array(bytes[from..<to])
            if line.last == UInt8(ascii: "\n") { line.removeLast() }
            lines.append(line)
        }
        return lines
    }

    // MARK: Recovery

    /// Cuts a torn last line, then makes the index agree with the log.
    private func recover() throws(Failure) {
        var logSize = try size(of: log)
        if logSize > 0, try read(log, from: logSize - 1, count: 1) != [UInt8(ascii: "\n")] {
            let keep = try lastLineEnd(before: logSize)
            let torn = try read(log, from: keep, count: Int(logSize - keep))
            let aside = path + ".torn"
            let fd = Glibc.open(aside, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw failure("open", aside) }
            defer { Glibc.close(fd) }
            try writeAll(fd, torn + [UInt8(ascii: "\n")], at: nil)
            guard fsync(fd) == 0, ftruncate(log, off_t(keep)) == 0, fsync(log) == 0 else { throw failure("truncate", path) }
            repairs.append("recovered \(FileSystem.baseName(path)): a torn last line of \(torn.count) bytes (a write cut short) was moved to \(FileSystem.baseName(aside)); every earlier message is intact")
            logSize = keep
        }

        let indexSize = try size(of: index)
        var entries = Int(indexSize / 8)
        // Drop index entries past the log's end, and any whose line does not start after a newline.
        while entries > 0 {
            let start = try readIndex(entries - 1..<entries)[0]
            if start < logSize {
                if start == 0 { break }
                let before = try read(log, from: start - 1, count: 1)
                if before == [UInt8(ascii: "\n")] { break }
            }
            entries -= 1
        }
        var scanFrom: UInt64 = 0
        if entries > 0 {
            let start = try readIndex(entries - 1..<entries)[0]
            scanFrom = try lineEnd(from: start)
        }
        // Index the lines the index does not know yet (none, after a clean shutdown).
        var newStarts: [UInt64] = []
        var offset = scanFrom
        while offset < logSize {
            newStarts.append(offset)
            offset = try lineEnd(from: offset)
        }
        if UInt64(entries) * 8 != indexSize || !newStarts.isEmpty {
            guard ftruncate(index, off_t(entries * 8)) == 0 else { throw failure("truncate", path + ".index") }
            try writeAll(index, newStarts.flatMap(Self.littleEndian), at: UInt64(entries) * 8)
            repairs.append("re-indexed \(FileSystem.baseName(path)) from its log: \(entries + newStarts.count) messages")
        }
        count = entries + newStarts.count
    }

    /// The offset just after the newline that ends the line starting at `start`.
    private func lineEnd(from start: UInt64) throws(Failure) -> UInt64 {
        var offset = start
        while true {
            let chunk = try read(log, from: offset, count: 64 * 1024)
            if chunk.isEmpty { return offset }
            if let newline = chunk.firstIndex(of: UInt8(ascii: "\n")) { return offset + UInt64(newline) + 1 }
            offset += UInt64(chunk.count)
        }
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

    private func locked<T>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        guard flock(log, LOCK_EX) == 0 else { throw failure("flock", path) }
        defer { flock(log, LOCK_UN) }
        return try body()
    }

    private func readIndex(_ range: Range<Int>) throws(Failure) -> [UInt64] {
        let bytes = try read(index, from: UInt64(range.lowerBound) * 8, count: range.count * 8)
        guard bytes.count == range.count * 8 else { throw Failure(description: "\(path).index is shorter than expected") }
        var values: [UInt64] = []
        values.reserveCapacity(range.count)
        for entry in 0..<range.count {
            var value: UInt64 = 0
            for byte in 0..<8 { value |= UInt64(bytes[entry * 8 + byte]) << UInt64(8 * byte) }
            values.append(value)
        }
        return values
    }

    private static func littleEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    private func size(of fd: Int32) throws(Failure) -> UInt64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("fstat", path) }
        return UInt64(info.st_size)
    }

    private func read(_ fd: Int32, from offset: UInt64, count: Int) throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw failure("read", path)
            }
            if got == 0 { break }
            done += got
        }
        return Array(buffer[0..<done])
    }

    /// Writes all bytes, at an offset, or appended when `offset` is nil.
    private func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64?) throws(Failure) {
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { buffer in
                offset.map { pwrite(fd, buffer.baseAddress! + done, bytes.count - done, off_t($0) + off_t(done)) }
                    ?? Glibc.write(fd, buffer.baseAddress! + done, bytes.count - done)
            }
            if wrote < 0 {
                if errno == EINTR { continue }
                throw failure("write", path)
            }
            done += wrote
        }
    }

    private func failure(_ call: String, _ file: String) -> Failure {
        Failure(description: "\(call) \(file): \(String(cString: strerror(errno)))")
    }
}

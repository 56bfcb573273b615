import Foundation
import Testing
@testable import IMHostTerminal

/// The reader behind `imhost chat`'s input and the worker's commands, over a real file.
@Suite("Reading input lines")
struct LineReaderTests {
    /// Every event until the end of `bytes`, read with a line limit of `limit`.
    func events(_ bytes: [UInt8], limit: Int) throws -> [LineReader.Event] {
        let path = NSTemporaryDirectory() + "imhost-lines-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        let reader = LineReader(fd: fd, limit: limit)
        var events: [LineReader.Event] = []
        while true {
            let event = reader.next(timeout: 1000)
            if event == .end { return events }
            if event != .timeout { events.append(event) }
        }
    }

    @Test("lines, CRLF and a last line without a newline")
    func lines() throws {
        #expect(try events(Array("one\r\ntwo\n\nthree\r".utf8), limit: 100) == [.line("one"), .line("two"), .line(""), .line("three")])
    }

    @Test("an over-long line is dropped whole, also as the last line without a newline")
    func overLong() throws {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 300_000)
        #expect(try events(long + Array("\nafter\n".utf8), limit: 100_000) == [.tooLong(300_000), .line("after")])
        // Nothing of its tail comes back as a line of its own.
        #expect(try events(long, limit: 100_000) == [.tooLong(300_000)])
        #expect(try events(Array("ok\n".utf8) + long.prefix(150_000), limit: 100_000) == [.line("ok"), .tooLong(150_000)])
    }

    @Test("many lines across reads, and one line longer than a read, come back whole")
    func acrossReads() throws {
        let lines = (0..<50_000).map { "line \($0) " + String(repeating: "y", count: $0 % 7) }
        let big = String(repeating: "z", count: 200_000)
        let text = lines.joined(separator: "\n") + "\n" + big + "\n"
        let read = try events(Array(text.utf8), limit: 1 << 20)
        #expect(read == lines.map { .line($0) } + [.line(big)])
    }
}

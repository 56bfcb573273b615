// What the web benchmarks speak to `imhost web` and `imhost preview` with: a watched process, a
// browser tab's HTTP and event streams.
import Foundation

/// Where a trip ends: a descriptor that becomes readable when something may have been shown,
/// and a look (never blocking) at whether `text` was.
struct Shown {
    var descriptor: Int32
    var look: (String) throws -> Bool
    init(descriptor: Int32, _ look: @escaping (String) throws -> Bool) {
        self.descriptor = descriptor
        self.look = look
    }
    func shows(_ text: String) throws -> Bool { try look(text) }
}

/// A program run for the benchmark, its standard output read as it comes.
final class Watched {
    let process = Process()
    private let pipe = Pipe()
    private let input = Pipe()
    private var seen = ""
    /// What it printed and was not taken yet.
    var said: String { readAvailable(); return seen }
    var pid: Int32 { process.processIdentifier }
    var descriptor: Int32 { pipe.fileHandleForReading.fileDescriptor }

    init(_ executable: String, _ arguments: [String], in folder: String) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.environment = ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1"]) { $1 }
        process.standardInput = input
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { return }
            seen += String(decoding: buffer[0..<count], as: UTF8.self)
        }
    }

    /// Whether `text` was printed since the last text taken; what came before it is dropped.
    func take(_ text: String) -> Bool {
        readAvailable()
        guard let found = seen.range(of: text) else { return false }
        seen = String(seen[found.upperBound...])
        return true
    }

    /// Writes `line` to its standard input.
    func say(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Waits (at most `seconds`) until `text` is printed; returns the line it is on.
    @discardableResult
    func waitFor(_ text: String, seconds: Int = 60) throws -> String {
        let deadline = now() + UInt64(seconds) * 1_000_000_000
        while now() < deadline {
            readAvailable()
            if let found = seen.range(of: text) {
                let line = seen[..<found.upperBound].split(separator: "\n").last.map(String.init) ?? ""
                let rest = seen[found.upperBound...].prefix { $0 != "\n" }
                seen = String(seen[found.upperBound...])
                return line + rest
            }
            var polls = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            _ = poll(&polls, 1, 100)
        }
        throw WebBenchmark.Failure(description: "\(process.executableURL?.lastPathComponent ?? "") did not print '\(text)' within \(seconds) s: \(seen.suffix(300))")
    }

    /// The next line it prints, waited for at most `seconds`.
    func line(seconds: Int) throws -> String {
        let deadline = now() + UInt64(seconds) * 1_000_000_000
        while now() < deadline {
            readAvailable()
            if let end = seen.firstIndex(of: "\n") {
                defer { seen = String(seen[seen.index(after: end)...]) }
                return String(seen[..<end])
            }
            var polls = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            _ = poll(&polls, 1, 100)
        }
        throw WebBenchmark.Failure(description: "\(process.executableURL?.lastPathComponent ?? "") printed no line within \(seconds) s: \(seen.suffix(300))")
    }

    func stop() {
        kill(pid, SIGINT)
        process.waitUntilExit()
    }
}

/// Just enough HTTP/1.1 over a loopback socket to act as a browser tab: the token traded for a
/// cookie, pages opened, event streams read.
final class WebClient {
    let port: UInt16
    private var cookie = ""

    init(port: UInt16, token: String) throws {
        self.port = port
        let (head, _) = try request("GET /?token=\(token)")
        guard let line = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("set-cookie:") }),
              let value = line.split(separator: ":", maxSplits: 1).last?.split(separator: ";").first else {
            throw WebBenchmark.Failure(description: "no session cookie: \(head)")
        }
        cookie = value.trimmingCharacters(in: .whitespaces)
    }

    static func connect(_ port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard connected == 0 else { throw WebBenchmark.Failure(description: "cannot connect to 127.0.0.1:\(port)") }
        return fd
    }

    /// Sends `line` (method and path) with this client's headers; returns the head and body.
    func request(_ line: String) throws -> (String, String) {
        let fd = try Self.connect(port)
        defer { close(fd) }
        let text = "\(line) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\nConnection: close\r\n\r\n"
        _ = text.withCString { write(fd, $0, strlen($0)) }
        var reply = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            reply += buffer[0..<count]
        }
        let whole = String(decoding: reply, as: UTF8.self)
        guard let split = whole.range(of: "\r\n\r\n") else { return (whole, "") }
        return (String(whole[..<split.lowerBound]), String(whole[split.upperBound...]))
    }

    /// Opens a chat page; returns its id.
    func openPage(_ url: String) throws -> String {
        let encoded = url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? url
        let (_, body) = try request("GET /chat?url=\(encoded)")
        guard let start = body.range(of: "data-page=\""), let end = body[start.upperBound...].firstIndex(of: "\"") else {
            throw WebBenchmark.Failure(description: "no page opened: \(body.prefix(300))")
        }
        return String(body[start.upperBound..<end])
    }

    /// Posts an act of the person's on a page (as its script does: JSON, from the page's origin).
    func act(page: String, _ json: String) throws {
        let fd = try Self.connect(port)
        defer { close(fd) }
        let text = "POST /page/\(page) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://127.0.0.1:\(port)\r\nCookie: \(cookie)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\nConnection: close\r\n\r\n" + json
        _ = text.withCString { write(fd, $0, strlen($0)) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        let head = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
        guard head.hasPrefix("HTTP/1.1 204") else { throw WebBenchmark.Failure(description: "the act \(json) was answered: \(head.prefix(200))") }
    }

    /// A page's event stream, open.
    func events(page: String) throws -> EventReader {
        try stream("/events?page=\(page)")
    }

    /// The event stream at `path`, open.
    func stream(_ path: String) throws -> EventReader {
        let fd = try Self.connect(port)
        let text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\nAccept: text/event-stream\r\n\r\n"
        _ = text.withCString { write(fd, $0, strlen($0)) }
        return EventReader(fd: fd)
    }
}

/// Server-Sent Events read from a socket (chunked: the chunk sizes are skipped as lines that are
/// not fields).
final class EventReader {
    let descriptor: Int32
    private var buffer = ""
    private var events: [(String, String)] = []

    init(fd: Int32) {
        descriptor = fd
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { close() }

    private var closed = false

    /// Closes the stream, once (a descriptor closed twice may be another's by then).
    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(descriptor)
    }

    private func readAvailable() {
        var bytes = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &bytes, bytes.count)
            guard count > 0 else { break }
            // The chunks' size lines end in CRLF, which Swift reads as one Character, not a
            // "\n"; the page's text never holds a CR (PageHTML escapes control characters).
            buffer += String(decoding: bytes[0..<count].filter { $0 != 13 }, as: UTF8.self)
        }
        while let end = buffer.range(of: "\n\n") {
            var name = "", data: [String] = []
            for line in buffer[..<end.lowerBound].split(separator: "\n") {
                if line.hasPrefix("event: ") { name = String(line.dropFirst(7)) }
                if line.hasPrefix("data: ") { data.append(String(line.dropFirst(6))) }
            }
            if !name.isEmpty { events.append((name, data.joined(separator: "\n"))) }
            buffer = String(buffer[end.upperBound...])
        }
    }

    /// Whether an event `name` whose data holds `text` came; events before it are dropped.
    func take(event name: String, containing text: String) throws -> Bool {
        readAvailable()
        guard let index = events.firstIndex(where: { $0.0 == name && $0.1.contains(text) }) else { return false }
        events.removeFirst(index + 1)
        return true
    }

    /// The data of the first event `name` whose data holds `text`, taken with those before it;
    /// `nil` when none came yet.
    func taken(event name: String, containing text: String) throws -> String? {
        readAvailable()
        guard let index = events.firstIndex(where: { $0.0 == name && $0.1.contains(text) }) else { return nil }
        let data = events[index].1
        events.removeFirst(index + 1)
        return data
    }

    /// Waits (at most 60 s) for the next event `name`; its data.
    func next(event name: String) throws -> String {
        let deadline = now() + 60_000_000_000
        while now() < deadline {
            readAvailable()
            if let index = events.firstIndex(where: { $0.0 == name }) {
                let data = events[index].1
                events.removeFirst(index + 1)
                return data
            }
            var polls = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            _ = poll(&polls, 1, 100)
        }
        throw WebBenchmark.Failure(description: "no '\(name)' event within 60 s; the stream said: \(buffer.suffix(300))")
    }
}

/// The processes whose parent is `pid`.
func children(of pid: Int32) -> [Int32] {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name in
        guard let child = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 && Int32(fields[1]) == pid ? child : nil
    }
}

/// The chat workers an `imhost web` runs for its pages: its spare (`__worker chat … --spare`,
/// until a page takes it and it calls itself `imhost-worker`) not counted.
func pageWorkers(of server: Int32) -> [Int32] {
    children(of: server).filter { pid in
        let arguments = ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "").split(separator: "\0").dropFirst()
        return arguments.starts(with: ["__worker", "chat"])
            && (!arguments.contains("--spare") || (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) == "imhost-worker\n")
    }
}

/// Resident memory of process `pid`, in KiB.
func residentKiB(of pid: Int32) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return 0 }
    let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
}

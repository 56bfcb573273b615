import Foundation
import IMHost
import IMHostBroker
import IMKit

/// The browser's front end, measured from outside as a browser sees it: `imhost web` run as a
/// process, spoken to over HTTP and its event stream, against the terminal chat doing the same.
enum WebBenchmark {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func run(folder: String) throws -> [Row] {
        let imhost = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imhost").path
        let port = BrokerFolder.freeLoopbackPort()
        let brokerFolder = try BrokerFolder.initialize(at: folder + "/broker", users: ["alice", "bob"], listener: .port(port))
        let broker = try BrokerProcess(folder: brokerFolder)
        defer { broker.stop() }
        let address = HostConfig.Transport.Address.tcp(host: "127.0.0.1", port: port)
        let bobFolder = folder + "/bob"
        try FileManager.default.createDirectory(atPath: bobFolder + "/Plugins", withIntermediateDirectories: true)
        // 100 pages are opened below: room for them all (8 by default).
        try #"{ "user": "bob", "web": { "maxPages": 128 }, "transport": { "url": "mqtt://127.0.0.1:\#(port)", "passwordFile": "\#(brokerFolder.passwordFile(of: "bob"))" } }"#
            .write(toFile: bobFolder + "/host.json", atomically: true, encoding: .utf8)
        var rows: [Row] = []

        // Alice sends from this process; bob shows it, in a terminal chat, then in a browser page.
        let alice = try TransportBenchmark.Side("alice", folder: folder + "/alice", broker: brokerFolder, address: address)
        try TransportBenchmark.connected([alice])
        let chatURL = "im://chat?rootCateID=1&peer=alice"

        // The chat has a history: a page showing 50 messages gets the next one.
        let history = try MessageStore(dataFolder: bobFolder + "/.imhost", user: "bob")
        _ = try history.storeIncoming((0..<50).map { IncomingMessage(from: "alice", globalID: "H\($0)", seq: 1_000_000 + $0, key: "text",
                                                                       payload: MessagePayload(json: #"{"text":"earlier \#($0)"}"#), sentAt: 0) })

        progress("web: A → B shown in a terminal chat")
        let terminal = try Watched(imhost, ["chat", chatURL], in: bobFolder)
        try terminal.waitFor("connected to")
        let terminalTrips = try trips(alice, count: 40, Shown(descriptor: terminal.descriptor) { text in terminal.take("│ \(text) │") })
        terminal.stop()

        progress("web: A → B shown in a browser's page")
        let web = try Watched(imhost, ["web"], in: bobFolder)
        let printed = try web.waitFor("?token=")
        guard let start = printed.range(of: "http://127.0.0.1:"), let token = printed.range(of: "?token=") else {
            throw Failure(description: "imhost web printed no URL: \(printed)")
        }
        let webPort = UInt16(printed[start.upperBound..<token.lowerBound].prefix { $0.isNumber })!
        let secret = String(printed[token.upperBound...].prefix { $0.isHexDigit })
        let client = try WebClient(port: webPort, token: secret)
        try web.waitFor("connected to")
        let page = try client.openPage(chatURL)
        let stream = try client.events(page: page)
        do {
            _ = try stream.next(event: "page")
        } catch {
            throw Failure(description: "\(error); imhost web said: \(web.take("\u{0}") ? "" : web.said)")
        }
        // 50 shown: the 20 a page opens with, and 30 earlier.
        try client.act(page: page, #"{"do":"more","count":30}"#)
        let whole = try stream.next(event: "page")
        var changeBytes: [Double] = []
        let webTrips = try trips(alice, count: 40, Shown(descriptor: stream.descriptor) { text in
            guard let change = try stream.taken(event: "change", containing: ">\(text)<") else { return false }
            changeBytes.append(Double(change.utf8.count))
            return true
        })
        let terminalP50 = percentile(terminalTrips, 0.5), webP50 = percentile(webTrips, 0.5)
        rows.append(Row(what: "A → B, send to shown (imhost web)", measure: "p50, to the change in B's browser stream",
                        figure: "\(format(webP50 / 1e6, 2)) ms", baseline: "\(format(terminalP50 / 1e6, 2)) ms in a terminal chat",
                        ratio: "+\(format((webP50 - terminalP50) / 1e6, 2)) ms", target: "<= terminal + 3 ms",
                        met: webP50 <= terminalP50 + 3e6))
        let bytes = changeBytes.max() ?? 0
        rows.append(Row(what: "a new message on a page showing 50 (imhost web)", measure: "bytes sent to the browser, the largest of 40",
                        figure: "\(format(bytes / 1024, 2)) KB", baseline: "\(format(Double(whole.utf8.count) / 1024, 1)) KB the whole page",
                        ratio: "\(format(bytes / Double(max(1, whole.utf8.count)), 3))x", target: "<= 3 KB", met: bytes <= 3 * 1024))

        progress("web: a quick reply clicked, to its bubble shown")
        var quick: [Double] = []
        for _ in 0..<30 {
            let begin = now()
            try client.act(page: page, #"{"do":"quick","item":1}"#)
            while try stream.taken(event: "change", containing: #""op":"append","html":"<article class=\"message sent"#) == nil {
                var polls = [pollfd(fd: stream.descriptor, events: Int16(POLLIN), revents: 0)]
                guard now() - begin < 30_000_000_000 else { throw Failure(description: "a quick reply was not shown within 30 s") }
                _ = poll(&polls, 1, 100)
            }
            quick.append(Double(now() - begin))
        }
        let quickP50 = percentile(quick, 0.5)
        rows.append(Row(what: "quick reply clicked → its bubble shown (imhost web)", measure: "p50, the act posted to the change in the stream",
                        figure: "\(format(quickP50 / 1e6, 2)) ms", baseline: "-", ratio: "-", target: "<= 20 ms", met: quickP50 <= 20e6))

        progress("web: 4 windows on one chat")
        let workersBefore = pageWorkers(of: web.pid).count
        var windows: [EventReader] = []
        for _ in 0..<4 {
            let window = try WebClient(port: webPort, token: secret)
            let reader = try window.events(page: try window.openPage(chatURL))
            _ = try reader.next(event: "page")
            windows.append(reader)
        }
        defer { windows.forEach { $0.close() } }
        let workersAfter = pageWorkers(of: web.pid).count
        var spreads: [Double] = []
        for round in 0..<20 {
            let text = "windows-\(round)-\(Int.random(in: 0..<1_000_000))"
            try alice.send(#"{"text":"\#(text)"}"#, to: "bob")
            var at: [Int: UInt64] = [:]
            let deadline = now() + 30_000_000_000
            while at.count < windows.count {
                guard now() < deadline else { throw Failure(description: "'\(text)' did not reach every window within 30 s") }
                _ = alice.courier.service()
                for (index, window) in windows.enumerated() where at[index] == nil {
                    if try window.taken(event: "change", containing: ">\(text)<") != nil { at[index] = now() }
                }
                var polls = alice.courier.descriptors + windows.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
                _ = poll(&polls, nfds_t(polls.count), 5)
            }
            spreads.append(Double(at.values.max()! - at.values.min()!))
        }
        let spread = percentile(spreads, 0.5)
        rows.append(Row(what: "4 windows on one chat (imhost web)", measure: "workers added; p50 from the first window's update to the last's",
                        figure: "\(workersAfter - workersBefore) workers, \(format(spread / 1e6, 2)) ms", baseline: "-", ratio: "-",
                        target: "0 new workers, <= 5 ms", met: workersAfter == workersBefore && spread <= 5e6))

        progress("web: opening a chat of 1,000 messages")
        // Ten such chats: a chat opened again while its page is open is that page, drawn already.
        let long = try MessageStore(dataFolder: bobFolder + "/.imhost", user: "bob")
        for peer in 0..<10 {
            _ = try long.storeIncoming((0..<1000).map { IncomingMessage(from: "carol\(peer)", globalID: "C\($0)", seq: $0 + 1, key: "text",
                                                                          payload: MessagePayload(json: #"{"text":"line \#($0)"}"#), sentAt: 0) })
        }
        var opens: [Double] = []
        for peer in 0..<10 {
            // A browser keeps four pages live at most: each opening is a browser of its own.
            let browser = try WebClient(port: webPort, token: secret)
            let begin = now()
            let id = try browser.openPage("im://chat?rootCateID=1&peer=carol\(peer)")
            let events = try browser.events(page: id)
            _ = try events.next(event: "page")
            opens.append(Double(now() - begin))
            events.close()
        }
        let openP50 = percentile(opens, 0.5)
        rows.append(Row(what: "open a chat of 1,000 messages (imhost web)", measure: "p50, request to the first page drawn in the stream",
                        figure: "\(format(openP50 / 1e6, 1)) ms", baseline: "-", ratio: "-", target: "<= 100 ms", met: openP50 <= 100e6))

        progress("web: a chat of 1,000 messages in Chromium, at a phone's width and a desktop's")
        // Twenty more such chats, each opened once: a page opened again would be drawn already.
        let chromiumChats = (0..<20).map { "im://chat?rootCateID=1&peer=dave\($0)" }
        for peer in 0..<20 {
            _ = try long.storeIncoming((0..<1000).map { IncomingMessage(from: "dave\(peer)", globalID: "D\($0)", seq: $0 + 1, key: "text",
                                                                          payload: MessagePayload(json: #"{"text":"line \#($0)"}"#), sentAt: 0) })
        }
        rows.append(try BrowserBenchmark.firstScreen(server: web.pid, webPort: webPort, signIn: "http://127.0.0.1:\(webPort)/?token=\(secret)", chats: chromiumChats,
                                                     folder: folder + "/chromium"))

        progress("web: the start page while 1,000 stalled connections are held open")
        rows.append(try startPageUnderSiege(client))

        progress("web: 100 pages")
        let before = residentKiB(of: web.pid)
        var workers: [Int32] = []
        // Each page live, as in a tab of its own: its stream open (a page nobody watches is
        // closed after 30 s), four to a browser.
        var streams: [EventReader] = []
        var browser = client
        // A hundred chats: windows of one chat would share one page.
        for index in 0..<100 {
            if index % 4 == 0 { browser = try WebClient(port: webPort, token: secret) }
            streams.append(try browser.events(page: try browser.openPage("im://chat?rootCateID=1&peer=p\(index)")))
        }
        defer { streams.forEach { $0.close() } }
        // Every page's worker up and its page drawn: each sends one.
        for stream in streams { _ = try stream.next(event: "page") }
        workers = pageWorkers(of: web.pid)
        let after = residentKiB(of: web.pid)
        let workerKiB = workers.map(residentKiB(of:)).reduce(0, +) / max(1, workers.count)
        let serverShare = Double(after - before) / 100
        rows.append(Row(what: "100 pages open on one imhost web", measure: "memory a page: the server's share (its worker's beside)",
                        figure: "\(format(serverShare, 0)) KiB", baseline: "\(workerKiB) KiB a worker", ratio: "-", target: "<= 200 KiB",
                        met: serverShare <= 200))
        web.stop()
        return rows
    }

    /// The start page's time to answer, alone and while this process (the user's own: the
    /// server cannot refuse it by its owner) holds 1,000 connections that never finish a request,
    /// opening a new one for each the server closes.
    static func startPageUnderSiege(_ client: WebClient) throws -> Row {
        func answers(_ count: Int, between: () -> Void = {}) throws -> [Double] {
            try (0..<count).map { _ in
                between()
                let start = now()
                let (head, _) = try client.request("GET /")
                guard head.hasPrefix("HTTP/1.1 200") else { throw Failure(description: "the start page answered \(head.prefix(40))") }
                return Double(now() - start)
            }
        }
        let alone = try answers(50)
        var held: [Int32] = []
        func hold() {
            held.removeAll { socket in
                var byte: UInt8 = 0
                let count = recv(socket, &byte, 1, Int32(MSG_DONTWAIT))
                guard count == 0 || (count < 0 && errno != EAGAIN) else { return false }
                close(socket)
                return true
            }
            while held.count < 1000, let socket = try? WebClient.connect(client.port) {
                _ = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n".withCString { write(socket, $0, strlen($0)) }
                held.append(socket)
            }
        }
        defer { held.forEach { close($0) } }
        hold()
        let sieged = try answers(50) {
            hold()
            // A header line each, as a slow client sends to stay alive.
            for socket in held { _ = send(socket, "X-Slow: 1\r\n", 11, Int32(MSG_NOSIGNAL)) }
        }
        let p50 = percentile(sieged, 0.5), worst = sieged.max() ?? 0, base = percentile(alone, 0.5)
        return Row(what: "start page (imhost web) under 1,000 stalled connections", measure: "p50 (slowest) to answer, new ones opened as the server closes them",
                   figure: "\(format(p50 / 1e6, 2)) ms (\(format(worst / 1e6, 1)) ms)", baseline: "\(format(base / 1e6, 2)) ms alone",
                   ratio: "\(format(p50 / max(base, 1), 1))x", target: "slowest <= 1 s", met: worst <= 1e9)
    }

    /// Alice sends `count` texts, one at a time, each shown by `shown` before the next: the times
    /// from send to shown. Alice's connection is serviced while it waits.
    static func trips(_ alice: TransportBenchmark.Side, count: Int, _ shown: Shown) throws -> [Double] {
        var times: [Double] = []
        for round in 0..<count {
            let text = "trip-\(round)-\(Int.random(in: 0..<1_000_000))"
            let start = now()
            // As a chat in alice's process sends: stored, and her courier told (it would otherwise
            // find the message at its next look at the outbox, up to a second on).
            try alice.send(#"{"text":"\#(text)"}"#, to: "bob")
            let deadline = start + 30_000_000_000
            while try !shown.shows(text) {
                guard now() < deadline else { throw Failure(description: "'\(text)' was not shown within 30 s") }
                _ = alice.courier.service()
                var polls = alice.courier.descriptors + [pollfd(fd: shown.descriptor, events: Int16(POLLIN), revents: 0)]
                _ = poll(&polls, nfds_t(polls.count), 5)
            }
            times.append(Double(now() - start))
        }
        return times
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}

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
        process.standardInput = Pipe()
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

    /// Waits (at most 60 s) until `text` is printed; returns the line it is on.
    @discardableResult
    func waitFor(_ text: String) throws -> String {
        let deadline = now() + 60_000_000_000
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
        throw WebBenchmark.Failure(description: "\(process.executableURL?.lastPathComponent ?? "") did not print '\(text)' within 60 s: \(seen.suffix(300))")
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

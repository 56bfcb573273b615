import Foundation
import Testing

/// A program using an `imhost web` server as the page's script does, without a browser: signed
/// in with the token the server printed, it opens chats, keeps their event streams open and
/// posts what a page posts.
final class WebClient {
    let web: WebServing
    /// The session cookie the token was traded for (`imhost-PORT=…`).
    let cookie: String

    init(_ web: WebServing) throws {
        self.web = web
        let path = String(web.url.dropFirst(web.origin.count))
        let signedIn = try web.request("GET", path)
        guard signedIn.status == 303, let set = signedIn.header("Set-Cookie"), let pair = set.split(separator: ";").first else {
            throw Workspace.Failure("the token was not traded for a cookie: \(signedIn.status)")
        }
        cookie = String(pair)
    }

    /// Headers a request of the page carries: its session, and for a change its Origin.
    var session: [(String, String)] { [("Cookie", cookie)] }
    var change: [(String, String)] { session + [("Origin", web.origin)] }

    func get(_ path: String, headers: [(String, String)] = [], timeout: Double = 60) throws -> LoopbackHTTP.Response {
        try LoopbackHTTP.request(port: web.port, "GET", path, headers: session + headers, timeout: timeout)
    }

    /// Posts an act as the page's script does: JSON (``WebAction``).
    func post(_ path: String, json: String, timeout: Double = 60) throws -> LoopbackHTTP.Response {
        try LoopbackHTTP.request(port: web.port, "POST", path, headers: change + [("Content-Type", "application/json")],
                                 body: Data(json.utf8), timeout: timeout)
    }

    /// Types `text` into page `page` and sends it.
    func act(_ page: String, text: String, timeout: Double = 60) throws -> LoopbackHTTP.Response {
        let encoded = String(decoding: try JSONSerialization.data(withJSONObject: ["do": "text", "text": text]), as: UTF8.self)
        return try post("/page/" + page, json: encoded, timeout: timeout)
    }

    /// Asks for a chat's page frame: its page id, or the response when none came.
    func frame(_ chatURL: String) throws -> (page: String?, response: LoopbackHTTP.Response) {
        let response = try get("/chat?url=" + WebClientEncoding.query(chatURL))
        let html = String(decoding: response.body, as: UTF8.self)
        return (html.firstMatch(of: /data-page="([0-9a-f]+)"/).map { String($0.1) }, response)
    }

    /// Opens a chat as a tab does: its frame, then its event stream, waited for until the page
    /// is drawn.
    func open(_ chatURL: String) throws -> (page: String, stream: EventStreamReader) {
        let (page, response) = try frame(chatURL)
        guard let page else { throw Workspace.Failure("no page frame for \(chatURL): \(response.status)") }
        let stream = try EventStreamReader(port: web.port, path: "/events?page=" + page, cookie: cookie)
        guard stream.waitFor("event: page") else { throw Workspace.Failure("page \(page) was never drawn: \(stream.received)") }
        return (page, stream)
    }
}

enum WebClientEncoding {
    /// `text` percent-encoded for a query value.
    static func query(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}

/// One Server-Sent Events stream of a server, read as it comes.
final class EventStreamReader {
    private var socket: Int32
    private(set) var received = ""
    private var open = true

    init(port: Int, path: String, cookie: String) throws {
        socket = try LoopbackHTTP.connect(port: port)
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\nAccept: text/event-stream\r\n\r\n"
        try LoopbackHTTP.send(Data(request.utf8), to: socket)
    }

    deinit { close() }

    /// Reads until `text` has come (as many times as `occurrences` says), the stream ends, or
    /// `timeout` seconds pass. Returns whether it came.
    @discardableResult
    func waitFor(_ text: String, occurrences: Int = 1, timeout: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        func seen() -> Bool { received.components(separatedBy: text).count - 1 >= occurrences }
        while !seen(), open, Date() < deadline {
            var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 200) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = read(socket, &buffer, buffer.count)
            guard count > 0 else {
                open = false
                break
            }
            received += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        return seen()
    }

    /// Whether the server ended the stream (read until it does, at most `timeout` seconds).
    func ended(timeout: Double = 30) -> Bool {
        waitFor("\u{0}never sent\u{0}", timeout: timeout)
        return !open
    }

    /// Leaves, as a closed tab does.
    func close() {
        guard socket >= 0 else { return }
        open = false
        Glibc.close(socket)
        socket = -1
    }
}

/// Connections to a server that each send the start of a request and never finish it: what a
/// program holding a server's connections does. Opened by this process, as its user.
final class StalledConnections {
    private var sockets: [Int32] = []

    init(count: Int, port: Int) throws {
        for _ in 0..<count {
            let socket = try LoopbackHTTP.connect(port: port)
            sockets.append(socket)
            try LoopbackHTTP.send(Data("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n".utf8), to: socket)
        }
    }

    deinit { for socket in sockets { close(socket) } }

    /// Sends each still open another header line, as a slow client does to stay alive.
    func trickle() {
        for socket in sockets { _ = Glibc.send(socket, "X-Slow: 1\r\n", 11, Int32(MSG_NOSIGNAL)) }
    }

    /// How many the server has closed, waiting at most `timeout` seconds for all of them.
    func closedByServer(timeout: Double) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var closed = Set<Int32>()
        while closed.count < sockets.count, Date() < deadline {
            var polls = sockets.filter { !closed.contains($0) }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&polls, nfds_t(polls.count), 200) > 0 else { continue }
            for entry in polls where entry.revents != 0 {
                var byte: UInt8 = 0
                if recv(entry.fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 { closed.insert(entry.fd) }
            }
        }
        return closed.count
    }
}

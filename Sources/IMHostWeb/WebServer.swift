import IMHost
import IMHostWeb
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// `imhost web`'s server: one user's chats for a browser on this machine. It holds the user's
/// broker connection (as a chat would) and the HTTP server, and never calls line code: each open
/// page is a chat under its own supervisor, on a thread of its own (``PageThread``), whose worker
/// sends the page as a value; here it becomes HTML (``PageHTML``) and goes to the page's browser
/// tab over its event stream. Everything runs on one loop: libmicrohttpd's epoll descriptor, the
/// connection's, and each page's wake pipe.
final class WebServer {
    /// One open page.
    private final class Page {
        let id: String
        /// The browser session (its cookie) that opened it.
        let session: String
        let link = PageLink()
        /// The jump URL it opens.
        let url: String
        /// Its worker was started (when its first event stream opened).
        var started = false
        /// When it was made, and when its last stream ended (while it has none): the page
        /// nobody has watched longest gives way to a new one.
        let made = Clock.monotonic()
        var streams: [EventStream] = []
        /// The page as last drawn: a tab that connects (again) gets it at once.
        var view: PageView?
        /// When its last stream ended, while it has none.
        var orphanedAt: UInt64?
        var ended = false

        init(id: String, session: String, url: String) {
            self.id = id
            self.session = session
            self.url = url
        }

        var isRunning: Bool { started && !ended }
    }

    private let host: ChatHost
    private let config: HostConfig
    private let configPath: String
    private let user: String
    private let verbose: Bool
    private let workerOptions: [String]
    private let output: Output
    private var gate: WebGate
    private(set) var http: HTTPServer!
    private var pages: [String: Page] = [:]
    /// Pictures lines ship, as the pages' workers told them, by address (line, version, name).
    private var pictures: [String: ShippedPicture] = [:]
    /// The stored photos served since the server started, each decoded whole once here: photos
    /// stored before imhost decoded them had their header read only.
    private var decoded: Set<String> = []
    private var listStreams: [EventStream] = []
    private var lastHeartbeat = Clock.monotonic()
    /// Photos picked in pages, kept in files until their page has sent them: removed a minute on.
    private var uploads: [(file: String, at: UInt64)] = []
    private let hostJSON: ConfigWatcher
    private let quarantine: ConfigWatcher
    /// Whether pages carry the Content-Security-Policy (off only for the test that shows
    /// hostile text stays text without it too).
    private let csp: Bool

    /// Seconds a page whose tab went away is kept, for the tab to come back (a reload).
    static let orphanSeconds: UInt64 = 30
    /// Seconds between heartbeats on every stream, so a closed tab is noticed.
    static let heartbeatSeconds: UInt64 = 15
    /// Live pages one browser may have open: HTTP/1.1 gives a browser six connections to one
    /// server, and each live page keeps one (the list one more).
    static let livePagesPerBrowser = 4
    /// Pages asked for whose stream has not opened yet, kept at most: a request for a page costs
    /// a few bytes until its stream opens (no worker), and the oldest of these give way.
    static let waitingPages = 64
    /// Seconds a page asked for waits for its stream before it is forgotten.
    static let waitingSeconds: UInt64 = 60
    /// What the connection keeper dropped since it was last said, since when, and when it was
    /// last said.
    private var dropped = ConnectionKeeper.Dropped()
    private var droppedSince: UInt64?
    private var droppedSaidAt: UInt64?

    /// `workerOptions` go to every page's worker: a data folder and broker other than
    /// host.json's, when the host was made with them (a demo's).
    init(host: ChatHost, config: HostConfig, configPath: String, user: String, port: UInt16, verbose: Bool, workerOptions: [String] = [],
         output: Output) throws(HTTPServer.Failure) {
        self.host = host
        self.config = config
        self.configPath = configPath
        self.user = user
        self.verbose = verbose
        self.workerOptions = workerOptions
        self.output = output
        csp = Environment.value("IMHOST_WEB_CSP") != "off"
        hostJSON = ConfigWatcher(paths: [configPath])
        quarantine = ConfigWatcher(paths: [config.dataFolder + "/quarantine.json"])
        gate = WebGate(port: 0)
        // Photos picked in pages of a server that was killed, never sent: nothing else is there.
        if let left = try? FileSystem.entries(of: config.dataFolder + "/uploads/" + user) {
            for file in left { unlink(config.dataFolder + "/uploads/" + user + "/" + file) }
        }
        // The handler is set once the server exists: it needs the port for the gate.
        var handler: ((HTTPRequest) -> HTTPReply)?
        http = try HTTPServer(port: port) { request in handler?(request) ?? .text(503, "starting\n") }
        gate = WebGate(port: http.port)
        handler = { [unowned self] request in handle(request) }
        http.isSession = { [unowned self] request in gate.hasSession(request) }
        // No body is read from a request the gate refuses; a photo's may be as large as a photo.
        let photoLimit = max(HTTPServer.bodyLimit, config.limits.photoBytes + 1)
        http.admit = { [unowned self] request in
            if let (status, why) = gate.refusal(request) { return .answer(.text(status, why + "\n")) }
            let photo = request.method == "POST" && request.path.hasPrefix("/page/") && request.path.hasSuffix("/photo")
            return .read(bodyLimit: photo ? photoLimit : HTTPServer.bodyLimit)
        }
    }

    /// The URL to open: the start page, with the token.
    var url: String { gate.url }

    // MARK: The loop

    /// Serves `servers` (one a user) in one loop until a signal asks them to stop. Returns the
    /// exit code.
    static func serve(_ servers: [WebServer]) -> Int32 {
        while Interruption.signal == nil {
            var polls: [pollfd] = []
            var wait: Int32 = 500
            for server in servers {
                let (more, timeout) = server.waits()
                polls += more
                wait = min(wait, timeout)
            }
            _ = poll(&polls, nfds_t(polls.count), wait)
            for server in servers { server.step() }
        }
        for server in servers { server.stop() }
        return CommandLineTool.ExitCode.ok
    }

    /// What this server waits on, and for how long at most (milliseconds).
    private func waits() -> ([pollfd], Int32) {
        var polls = ([http.descriptor] + pages.values.map(\.link.outputWake.read)).filter { $0 >= 0 }
            .map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var wait: Int32 = 500
        if let courier = host.courier {
            polls += courier.readable.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            polls += courier.writable.map { pollfd(fd: $0, events: Int16(POLLOUT), revents: 0) }
            wait = min(wait, courier.wakeAfter())
        }
        let timeout = http.timeout()
        if timeout >= 0 { wait = min(wait, timeout) }
        return (polls, wait)
    }

    /// Does what is ready: requests, the connection, what pages said, a changed host.json or
    /// quarantine, heartbeats and pages whose tab is gone.
    private func step() {
        http.service()
        connection()
        for page in pages.values { deliver(page) }
        if hostJSON.reloadDue() || quarantine.reloadDue() {
            for page in pages.values where page.isRunning { page.link.send(.reload) }
        }
        tidy()
        http.service()
        sayDropped()
    }

    /// Says, in one line at most once a minute, which connections the server closed or refused
    /// to keep its user's page reachable: another program on the machine is at it. What comes
    /// in a burst is said together, two seconds after it began.
    private func sayDropped() {
        let more = http.takeDropped()
        let now = Clock.monotonic()
        if !more.isEmpty, droppedSince == nil { droppedSince = now }
        dropped.slow += more.slow
        dropped.overBudget += more.overBudget
        dropped.otherUsers.merge(more.otherUsers, uniquingKeysWith: +)
        guard let since = droppedSince, now - since >= 2_000_000_000, droppedSaidAt.map({ now - $0 >= 60_000_000_000 }) ?? true else { return }
        droppedSaidAt = now
        droppedSince = nil
        output.diagnostic("imhost web: " + Self.words(dropped, seconds: http.headerSeconds))
        dropped = ConnectionKeeper.Dropped()
    }

    /// What ``sayDropped()`` says.
    static func words(_ dropped: ConnectionKeeper.Dropped, seconds: Double) -> String {
        var parts: [String] = []
        let plural = { (count: Int, word: String) in "\(count) \(word)\(count == 1 ? "" : "s")" }
        if dropped.slow > 0 {
            parts.append("closed \(plural(dropped.slow, "connection")) that sent no whole request within \(Int(seconds)) s")
        }
        if dropped.overBudget > 0 {
            parts.append("closed \(plural(dropped.overBudget, "connection")) without this server's session past its budget of open connections")
        }
        if !dropped.otherUsers.isEmpty {
            let users = dropped.otherUsers.keys.sorted().map { "uid \($0)" }.joined(separator: ", ")
            parts.append("refused \(plural(dropped.otherUsers.values.reduce(0, +), "connection")) from other users of this machine (\(users))")
        }
        return parts.joined(separator: "; ") + ": another program on this machine is holding connections open; your pages are kept (said at most once a minute)"
    }

    /// What the connection did: arrivals and receipts refresh the pages of their conversation and
    /// the list; a fleet configuration applied reopens every page.
    private func connection() {
        guard host.courier != nil else { return }
        var changed: Set<String> = [], all = false
        for event in host.serviceConnection() {
            switch event {
            case .arrived(let peer, _): changed.insert(peer)
            case .changed(let peers): changed.formUnion(peers)
            case .fleetApplied: all = true
            case .notice(let notice):
                output.diagnostic("imhost web: " + ConnectionWords.notice(notice))
            case .fleet: break
            }
        }
        guard all || !changed.isEmpty else { return }
        for page in pages.values where page.isRunning && (all || page.view.map({ changed.contains($0.conversation) }) == true) {
            page.link.send(.refresh)
        }
        sendList()
    }

    /// Passes on what a page said: its drawing, its lines, its crashes, its end.
    private func deliver(_ page: Page) {
        for said in page.link.takeOutputs() {
            switch said {
            case .page(let view):
                page.view = view
                let html = PageHTML.body(view)
                for stream in page.streams { stream.send("page", data: html) }
            case .pictures(let shipped):
                // A worker runs line code: what it hands over is decoded again before it is served.
                for picture in shipped {
                    do throws(Photo.Refusal) {
                        guard try PhotoDecoder.shared.check(picture.bytes, limit: LineRegistrar.pictureBytesLimit) == picture.photo else {
                            throw Photo.Refusal("it is not the picture the page's worker said it was", code: .sizeMismatch)
                        }
                    } catch {
                        output.diagnostic("imhost web: line \(picture.line)'s picture \(TerminalText.safe(picture.name)) is not served: \(error)")
                        continue
                    }
                    // By the path as the server reads it (percent-decoded), not as the page writes it.
                    pictures["/picture/" + picture.line + "/" + picture.version + "/" + picture.name] = picture
                }
            case .text(let text):
                let lines = text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
                for stream in page.streams { for line in lines { stream.send("say", data: line) } }
            case .diagnostic(let text):
                for stream in page.streams { stream.send("crash", data: text.trimmingSpaces) }
                output.err(text)
            case .ended(let code):
                page.ended = true
                for stream in page.streams {
                    stream.send("ended", data: "this chat stopped\(code == 0 ? "" : " (exit \(code))"); open it again from the list")
                    stream.close()
                }
            }
        }
    }

    /// Heartbeats, and pages whose tab has been gone a while are closed.
    private func tidy() {
        let now = Clock.monotonic()
        // A page's /photo reads its file at once; a minute is far past that.
        while let first = uploads.first, now - first.at > 60_000_000_000 {
            unlink(first.file)
            uploads.removeFirst()
        }
        if now - lastHeartbeat > Self.heartbeatSeconds * 1_000_000_000 {
            lastHeartbeat = now
            for stream in listStreams + pages.values.flatMap(\.streams) { stream.heartbeat() }
        }
        listStreams.removeAll(where: Self.gone)
        for page in pages.values {
            page.streams.removeAll(where: Self.gone)
            guard page.started else {
                // Asked for, and its stream never came.
                if now - page.made > Self.waitingSeconds * 1_000_000_000 { pages[page.id] = nil }
                continue
            }
            if page.streams.isEmpty {
                if page.orphanedAt == nil { page.orphanedAt = now }
            } else {
                page.orphanedAt = nil
            }
            if page.ended || (page.orphanedAt.map { now - $0 > Self.orphanSeconds * 1_000_000_000 } ?? false) {
                close(page)
            }
        }
    }

    /// Whether a stream has ended, or its browser left (then it is ended here).
    private static func gone(_ stream: EventStream) -> Bool {
        if stream.browserLeft { stream.close() }
        return stream.isClosed
    }

    /// Ends a page's worker (unless it ended) and forgets the page.
    private func close(_ page: Page) {
        if page.isRunning { page.link.send(.close) }
        pages[page.id] = nil
    }

    /// Ends every page's worker and every stream, then the HTTP server.
    func stop() {
        pages = pages.filter(\.value.started)
        for page in pages.values { page.link.send(.close) }
        // Each page's thread ends its worker (at most a few seconds each, in parallel).
        let deadline = Clock.monotonic() + 5_000_000_000
        while pages.values.contains(where: { !$0.ended }), Clock.monotonic() < deadline {
            var polls = pages.values.map { pollfd(fd: $0.link.outputWake.read, events: Int16(POLLIN), revents: 0) }
            _ = poll(&polls, nfds_t(polls.count), 100)
            for page in pages.values { deliver(page) }
        }
        http.stop()
        for upload in uploads { unlink(upload.file) }
        uploads = []
    }

    // MARK: Requests

    private func handle(_ request: HTTPRequest) -> HTTPReply {
        switch gate.judge(request) {
        case .refused(let status, let why):
            return .text(status, why + "\n")
        case .newSession(let session):
            // The token leaves the address bar: the same page again, without it.
            let rest = request.query.filter { $0.name != "token" }.map { $0.name + "=" + WebDocument.percentEncoded($0.value) }
            let location = request.path + (rest.isEmpty ? "" : "?" + rest.joined(separator: "&"))
            return HTTPReply(status: 303, headers: [("Location", location), ("Set-Cookie", gate.cookie(session))] + WebGate.pageHeaders(csp: csp),
                             body: .bytes([]))
        case .allowed:
            break
        }
        switch (request.method, request.path) {
        case ("GET", "/"):
            return html(WebDocument.start(user: user, conversations: conversations()))
        case ("GET", "/chat"):
            return open(request.argument("url") ?? "", session: request.cookie(gate.cookieName) ?? "")
        case ("GET", "/events"):
            return events(request)
        case ("POST", let path) where path.hasPrefix("/page/") && path.hasSuffix("/photo"):
            return photo(page: String(path.dropFirst("/page/".count).dropLast("/photo".count)), request)
        case ("POST", let path) where path.hasPrefix("/page/") && path.hasSuffix("/seen"):
            return seen(page: String(path.dropFirst("/page/".count).dropLast("/seen".count)), request)
        case ("POST", let path) where path.hasPrefix("/page/"):
            return command(page: String(path.dropFirst("/page/".count)), request)
        case ("GET", "/photo"):
            return photo(request)
        case ("GET", let path) where path.hasPrefix("/picture/"):
            guard let picture = pictures[path] else { return .text(404, "not found: no line open here ships that picture\n") }
            return image(picture.photo, picture.bytes)
        case ("GET", let path) where path.hasPrefix("/static/"):
            guard let asset = WebAssets.all[path] else { return .text(404, "not found: \(path)\n") }
            return HTTPReply(status: 200, headers: [("Content-Type", asset.contentType), ("Cache-Control", "no-cache")], body: .bytes(asset.bytes))
        default:
            return .text(404, "not found: \(request.method) \(request.path)\n")
        }
    }

    private func html(_ text: String, status: Int = 200) -> HTTPReply {
        HTTPReply(status: status, headers: [("Content-Type", "text/html; charset=utf-8")] + WebGate.pageHeaders(csp: csp), body: .bytes(Array(text.utf8)))
    }

    /// A new page for the chat a jump URL names: the tab gets the frame, and the page by its
    /// stream; the page's worker starts when the stream opens (``start(_:)``), never for a
    /// request that cannot show it.
    private func open(_ url: String, session: String) -> HTTPReply {
        guard !url.isEmpty else { return .text(400, "refused: no jump URL; open /chat?url=im://chat?rootCateID=...&peer=...\n") }
        let live = pages.values.filter { $0.session == session && !$0.streams.isEmpty }.count
        guard live < Self.livePagesPerBrowser else {
            return .text(429, "refused: \(live) chats are open and live in this browser, the most one browser can keep live (it gives a server six connections); close one, then open this again\n")
        }
        if let full = roomRefusal(making: false) { return html(WebDocument.refusal(title: "Too many chats open", text: full), status: 503) }
        let waiting = pages.values.filter { !$0.started }.sorted { $0.made < $1.made }
        for page in waiting.prefix(max(0, waiting.count - Self.waitingPages + 1)) { pages[page.id] = nil }
        let id = String(WebGate.randomSecret().prefix(16))
        pages[id] = Page(id: id, session: session, url: url)
        return html(WebDocument.chat(page: id, url: url))
    }

    /// Why a new chat is refused, when `config.web.maxPages` pages run and every one is watched;
    /// `nil` when there is room (`making`: the room is made, closing the page nobody has watched
    /// longest).
    private func roomRefusal(making: Bool) -> String? {
        let running = pages.values.filter(\.isRunning)
        guard running.count >= config.web.maxPages else { return nil }
        for page in running { page.streams.removeAll(where: Self.gone) }
        let unwatched = running.filter { $0.streams.isEmpty }.sorted { ($0.orphanedAt ?? $0.made) < ($1.orphanedAt ?? $1.made) }
        guard unwatched.isEmpty else {
            if making { for page in unwatched.prefix(running.count - config.web.maxPages + 1) { close(page) } }
            return nil
        }
        return "\(running.count) chats are open in windows now, the most this server runs at once (web.maxPages in host.json). Close one of them, then open this chat again."
    }

    /// Starts the page's worker as its first stream opens; a refusal when there is no room.
    private func start(_ page: Page) -> String? {
        guard !page.started else { return nil }
        if let refused = roomRefusal(making: true) { return refused }
        let opening = PageThread.Opening(url: page.url, config: config, configPath: configPath, user: user, verbose: verbose,
                                         workerOptions: workerOptions)
        guard PageThread.start(opening, link: page.link) else { return "No thread could be made for a new page; close some pages, then open this chat again." }
        page.started = true
        return nil
    }

    private func events(_ request: HTTPRequest) -> HTTPReply {
        let stream = EventStream()
        if request.argument("list") != nil {
            listStreams.append(stream)
            stream.send("list", data: WebDocument.list(conversations()))
        } else {
            guard let id = request.argument("page"), let page = pages[id], !page.ended else {
                return .text(404, "not found: that page is closed; open the chat again from the list\n")
            }
            if let refused = start(page) {
                pages[id] = nil
                stream.send("refused", data: refused)
                stream.close()
            } else {
                page.streams.append(stream)
                if let view = page.view { stream.send("page", data: PageHTML.body(view)) }
            }
        }
        // A stream ends only when its page is gone: the connection goes with it, never reused.
        return HTTPReply(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no"),
                                                ("Connection", "close")],
                         body: .stream(stream))
    }

    /// The page's script saw the messages up to number `through` in a visible window: reading is
    /// its act, never a side effect of drawing.
    private func seen(page id: String, _ request: HTTPRequest) -> HTTPReply {
        guard let page = pages[id], page.isRunning else { return .text(404, "not found: that page is closed; open the chat again from the list\n") }
        guard let through = Self.form(request.body)["through"].flatMap(Int.init), through >= 1 else {
            return .text(400, "refused: say which message was seen last (through=N, a message's number from 1)\n")
        }
        page.link.send(.seen(through))
        return HTTPReply(status: 204, body: .bytes([]))
    }

    /// A click or a typed line for a page: the chat verb it names, as `imhost chat` takes it.
    private func command(page id: String, _ request: HTTPRequest) -> HTTPReply {
        guard let page = pages[id], page.isRunning else { return .text(404, "not found: that page is closed; open the chat again from the list\n") }
        guard let command = Self.form(request.body)["command"], !command.isEmpty else {
            return .text(400, "refused: no command in the request (command=...)\n")
        }
        guard command.utf8.count <= config.limits.inputLineBytes else {
            return .text(413, "refused: a line of \(command.utf8.count) bytes; the limit is \(config.limits.inputLineBytes) (limits.inputLineBytes in host.json)\n")
        }
        page.link.send(.command(command))
        return HTTPReply(status: 204, body: .bytes([]))
    }

    /// A photo of a message, from the store: `?peer=P&n=N&i=I` (message #N of the chat with P,
    /// its photo I from 0).
    private func photo(_ request: HTTPRequest) -> HTTPReply {
        guard let peer = request.argument("peer"), let number = request.argument("n").flatMap(Int.init), number >= 1,
              let index = request.argument("i").flatMap(Int.init), index >= 0 else {
            return .text(400, "refused: a photo is asked for as /photo?peer=P&n=N&i=I\n")
        }
        guard let found = (try? host.store?.photo(peer: peer, number: number, index: index)) ?? nil else {
            return .text(404, "not found: no such photo\n")
        }
        let key = "\(peer)\n\(number)\n\(index)\n\(found.bytes.count)"
        if !decoded.contains(key) {
            do throws(Photo.Refusal) {
                _ = try PhotoDecoder.shared.check(found.bytes, limit: max(found.bytes.count, 1))
            } catch {
                return .text(422, "refused: the photo is not shown: \(error)\n")
            }
            decoded.insert(key)
        }
        return image(found.photo, found.bytes)
    }

    /// A picture's bytes, as the type its bytes say (never guessed again by the browser).
    private func image(_ photo: Photo, _ bytes: [UInt8]) -> HTTPReply {
        HTTPReply(status: 200, headers: [("Content-Type", photo.kind.mediaType), ("X-Content-Type-Options", "nosniff"),
                                         ("Cache-Control", "private, no-cache"), ("Content-Security-Policy", "default-src 'none'")],
                  body: .bytes(bytes))
    }

    /// A photo picked in the page (the Photo item): its bytes are checked here, kept in a file
    /// of the data folder, and the page sends them as `/photo FILE` would in the terminal.
    private func photo(page id: String, _ request: HTTPRequest) -> HTTPReply {
        guard let page = pages[id], page.isRunning else { return .text(404, "not found: that page is closed; open the chat again from the list\n") }
        do throws(Photo.Refusal) {
            _ = try PhotoDecoder.shared.check(request.body, limit: config.limits.photoBytes)
        } catch {
            return .text(415, "refused: not sent: the file is not a photo this host sends: \(error)\n")
        }
        let folder = config.dataFolder + "/uploads/" + user
        let file = folder + "/" + String(WebGate.randomSecret().prefix(16))
        do throws(FileSystem.Failure) {
            try FileSystem.makeFolders(folder)
            try FileSystem.writeAtomically(request.body, to: file)
        } catch {
            return .text(500, "refused: not sent: the photo could not be kept for sending: \(error)\n")
        }
        uploads.append((file, Clock.monotonic()))
        page.link.send(.command("/photo " + file))
        return HTTPReply(status: 204, body: .bytes([]))
    }

    /// The user's conversations for the start page, newest first.
    private func conversations() -> [WebDocument.Conversation] {
        ((try? host.store?.conversations()) ?? nil ?? []).map { summary in
            let url = StoreViews.url(summary.peer, page: summary.page)
            let line: String? = if case .line(let id)? = try? host.converter.decide(chatURL: url).target { id } else { nil }
            return WebDocument.Conversation(peer: summary.peer, url: url, line: line, lastText: summary.lastText,
                                            lastFromPeer: summary.lastFromPeer, unread: summary.unread, updatedAt: summary.updatedAt)
        }
    }

    private func sendList() {
        guard !listStreams.isEmpty else { return }
        let html = WebDocument.list(conversations())
        for stream in listStreams { stream.send("list", data: html) }
    }

    /// An `application/x-www-form-urlencoded` body's fields.
    static func form(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]) else { continue }
            fields[name] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }

    /// Percent-decoded, `+` as a space; `nil` when it is not UTF-8 once decoded.
    private static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex, let value = UInt8(String(decoding: bytes[index + 1...index + 2], as: UTF8.self), radix: 16) {
                out.append(value)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(validating: out, as: UTF8.self)
    }
}

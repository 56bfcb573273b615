import IMHost
import IMHostRuntime
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
package final class WebServer {
    /// A tab's way of hearing a page: a stream of its own, or the one stream its browser's tabs
    /// share, where each of the page's events comes wrapped with the page's id (`for`:
    /// `{"page":ID,"event":NAME,"data":TEXT}`), to be handed to the tabs that show it.
    struct Watcher {
        let stream: EventStream
        let shared: Bool
        let page: String

        func send(_ event: String, data: String) {
            guard shared else { return stream.send(event, data: data) }
            stream.send("for", data: "{\"page\":" + JSONNode.quoted(page) + ",\"event\":" + JSONNode.quoted(event) + ",\"data\":" + JSONNode.quoted(data) + "}")
        }
    }

    /// One open chat: one worker, however many windows and tabs show it (each its own stream,
    /// or its browser's shared one).
    final class Page {
        let id: String
        /// The browser session (its cookie) that opened it.
        let session: String
        let link = PageLink()
        /// The jump URL it opens.
        let url: String
        /// The language it speaks: that of the request that opened it.
        let say: WebLanguage
        /// Its worker was started (when its first event stream opened).
        var started = false
        /// When it was made, and when its last stream ended (while it has none): the page
        /// nobody has watched longest gives way to a new one.
        let made = Clock.monotonic()
        var streams: [Watcher] = []
        /// The page as last drawn: a tab that connects (again) gets it at once.
        var view: PageView?
        /// When its last stream ended, while it has none.
        var orphanedAt: UInt64?
        var ended = false

        init(id: String, session: String, url: String, say: WebLanguage) {
            self.id = id
            self.session = session
            self.url = url
            self.say = say
        }

        var isRunning: Bool { started && !ended }
    }

    let host: ChatHost
    let config: HostConfig
    let configPath: String
    let user: String
    let verbose: Bool
    let workerOptions: [String]
    let output: Output
    var gate: WebGate
    private(set) var http: HTTPServer!
    var pages: [String: Page] = [:]
    /// Pictures lines ship, as the pages' workers told them, by address (line, version, name).
    var pictures: [String: ShippedPicture] = [:]
    /// The stored photos served since the server started, each decoded whole once here: photos
    /// stored before imhost decoded them had their header read only.
    var decoded: Set<String> = []
    var listStreams: [(stream: EventStream, say: WebLanguage)] = []
    /// The streams browsers share between their tabs, by the id a browser gave its own.
    var sharedStreams: [String: EventStream] = [:]
    private var lastHeartbeat = Clock.monotonic()
    /// A worker started before a tab asks for a page, taken by the next page that starts: its
    /// first drawing then waits for no process to start (``SpareWorker``).
    let spares: SpareKeeper
    private let hostJSON: ConfigWatcher
    private let quarantine: ConfigWatcher
    /// Whether pages carry the Content-Security-Policy (off only for the test that shows
    /// hostile text stays text without it too).
    let csp: Bool
    /// `--dev`: pages draw what a developer needs too (``PageHTML``), and notices carry the
    /// terminal's words beside the person's.
    let dev: Bool
    /// `--lang`: the language every page speaks; `nil`: each browser's own (`Accept-Language`).
    let language: WebLanguage?
    /// The line author's workbench, when this server serves one (`imhost preview`): its chat
    /// pages may then be framed by its own page.
    package var workbench: Workbench? {
        didSet { gate.framing = workbench != nil }
    }
    /// The command this server serves, as its words to the terminal begin.
    var speaker: String { workbench == nil ? "imhost web: " : "imhost preview: " }
    /// Called at every turn of the loop, at least every ``stepMilliseconds`` (`imhost preview`
    /// looks at the line's build there).
    package var onStep: (() -> Void)?
    package var stepMilliseconds: Int32 = 500

    /// Seconds a page whose tab went away is kept, for the tab to come back (a reload).
    static let orphanSeconds: UInt64 = 30
    /// Seconds between heartbeats on every stream, so a closed tab is noticed.
    static let heartbeatSeconds: UInt64 = 15
    /// Live pages one browser may have open each on a stream of its own (a browser that cannot
    /// share one between its tabs): HTTP/1.1 gives a browser six connections to one server, and
    /// each such page keeps one (the list one more). Pages on the shared stream cost none.
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
    ///
    /// `keep`: the port, token and sessions are kept in the data folder (``WebKept``), and taken
    /// up by the next server that keeps them, so an open tab goes on after a restart; with `port`
    /// 0 the kept port is tried first (``portNote`` says when it was taken).
    package init(host: ChatHost, config: HostConfig, configPath: String, user: String, port: UInt16, verbose: Bool, workerOptions: [String] = [],
         dev: Bool = false, language: WebLanguage? = nil, keep: Bool = false, output: Output) throws(HTTPServer.Failure) {
        self.host = host
        self.dev = dev
        self.language = language
        self.config = config
        self.configPath = configPath
        self.user = user
        self.verbose = verbose
        self.workerOptions = workerOptions
        self.output = output
        csp = getenv("IMHOST_WEB_CSP").map { String(cString: $0) } != "off"
        hostJSON = ConfigWatcher(paths: [configPath])
        quarantine = ConfigWatcher(paths: [config.dataFolder + "/quarantine.json"])
        // Its chat is told later: the place holder is never opened.
        let spareOpening = PageThread.Opening(url: "-", config: config, configPath: configPath, user: user, verbose: verbose, workerOptions: workerOptions)
        spares = SpareKeeper(pluginsFolder: config.pluginsFolder) { spareOpening.startSpare() }
        gate = WebGate(port: 0)
        // Photos an older imhost kept in files for its pages (now they travel in the act):
        // any left by one that was killed were never sent, and nothing else is there.
        if let left = try? FileSystem.entries(of: config.dataFolder + "/uploads/" + user) {
            for file in left { unlink(config.dataFolder + "/uploads/" + user + "/" + file) }
        }
        // The handler is set once the server exists: it needs the port for the gate.
        var handler: ((HTTPRequest) -> HTTPReply)?
        let respond: (HTTPRequest) -> HTTPReply = { request in handler?(request) ?? .text(503, "starting\n") }
        keptAt = keep ? WebKept.path(dataFolder: config.dataFolder, user: user) : nil
        let kept = keptAt.flatMap(WebKept.read)
        if port == 0, let kept {
            do {
                http = try HTTPServer(port: kept.port, handler: respond)
            } catch {
                http = try HTTPServer(port: 0, handler: respond)
                portNote = "imhost web: port \(kept.port), where the last one served, is taken (\(error)); serving on \(http.port): open the new URL"
            }
        } else {
            http = try HTTPServer(port: port, handler: respond)
        }
        // The same port: the same cookie name, so the tabs' sessions are good again.
        gate = kept.map { WebGate(port: http.port, token: $0.token, sessions: $0.port == http.port ? $0.sessions : []) } ?? WebGate(port: http.port)
        saveKept()
        handler = { [unowned self] request in handle(request) }
        http.isSession = { [unowned self] request in gate.hasSession(request) }
        // No body is read from a request the gate refuses; a photo's may be as large as a photo.
        let photoLimit = max(HTTPServer.bodyLimit, config.limits.photoBytes + 1)
        let actLimit = max(HTTPServer.bodyLimit, config.limits.payloadBytes * 6 + 1024)
        let fileLimit = max(HTTPServer.bodyLimit, config.limits.fileBytes + 1)
        http.admit = { [unowned self] request in
            if let (status, why) = gate.refusal(request) { return .answer(.text(status, why + "\n")) }
            let photo = request.method == "POST" && request.path.hasPrefix("/page/") && request.path.hasSuffix("/photo")
            // A text may be as long as the store takes a message, its JSON escapes included.
            let act = request.method == "POST" && request.path.hasPrefix("/page/")
            let file = request.method == "POST" && request.path.hasPrefix("/page/") && request.path.hasSuffix("/file")
            return .read(bodyLimit: photo ? photoLimit : file ? fileLimit : act ? actLimit : HTTPServer.bodyLimit)
        }
    }

    /// The URL to open: the start page, with the token.
    package var url: String { gate.url }

    /// Where the port, token and sessions are kept (`keep`), and why the kept port was not used.
    private let keptAt: String?
    package private(set) var portNote: String?

    /// Keeps the port, token and sessions for the next server; a failure is said in one line and
    /// costs only that: the next server starts afresh.
    func saveKept() {
        guard let keptAt else { return }
        do throws(FileSystem.Failure) {
            try WebKept(port: http.port, token: gate.token, sessions: gate.sessions).write(keptAt)
        } catch {
            output.diagnostic("imhost web: cannot keep the session for the next start in \(TerminalText.safe(keptAt)): \(error); a restart will need the new URL")
        }
    }

    // MARK: The loop

    /// Serves `servers` (one a user) in one loop until a signal asks them to stop. Returns the
    /// exit code.
    package static func serve(_ servers: [WebServer]) -> Int32 {
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
        return ExitCode.ok
    }

    /// What this server waits on, and for how long at most (milliseconds).
    private func waits() -> ([pollfd], Int32) {
        var polls = ([http.descriptor] + pages.values.map(\.link.outputWake.read)).filter { $0 >= 0 }
            .map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var wait: Int32 = min(500, stepMilliseconds)
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
            // The server's own host takes the quarantine as it is now: its receipts say the lines it draws.
            host.apply(host.config)
            for page in pages.values where page.isRunning { page.link.send(.reload) }
            // The spare read the old ones: another reads the new.
            spares.retire(again: true)
        }
        spares.keep(pageWaiting: pages.values.contains { $0.started && !$0.ended && $0.view == nil })
        tidy()
        onStep?()
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
        output.diagnostic(speaker + Self.words(dropped, seconds: http.headerSeconds))
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
            case .fleetApplied:
                all = true
                // The spare drew nothing yet, but read the fleet's configuration as it started.
                spares.retire()
            case .typing(let peer):
                // Never stored, never drawn into the page value: straight to the tabs of its chat.
                for page in pages.values where page.view?.conversation == peer {
                    for watcher in page.streams { watcher.send("typing", data: JSONNode.quoted(peer)) }
                }
            case .seen(let peer):
                guard let json = seenJSON(peer) else { break }
                for page in pages.values where page.view?.conversation == peer {
                    for watcher in page.streams { watcher.send("seen", data: json) }
                }
            case .notice(let notice):
                output.diagnostic(speaker + ConnectionWords.notice(notice))
            case .fleet: break
            }
        }
        guard all || !changed.isEmpty else { return }
        for page in pages.values where page.isRunning && (all || page.view.map({ changed.contains($0.conversation) }) == true) {
            page.link.send(.refresh)
        }
        sendList()
    }

    /// Where `peer` stands, for a page's header: `{"online":true,"lastSeen":MS}` (`lastSeen`
    /// `null` when nothing was ever heard); `nil` when the person shows no one's
    /// (`privacy.onlineStatus`).
    func seenJSON(_ peer: String) -> String? {
        guard host.config.onlineStatus == .everyone, let seen = host.seen(peer) else { return nil }
        return "{\"online\":\(seen.online),\"lastSeen\":" + (seen.lastSeen.map(String.init) ?? "null") + "}"
    }

    /// Passes on what a page said: its drawing, its lines, its crashes, its end.
    private func deliver(_ page: Page) {
        for said in page.link.takeOutputs() {
            switch said {
            case .page(let view):
                // Every tab showing the page has the last drawing: what changed goes, by message.
                let last = page.view
                page.view = view
                drawn(page)
                guard !page.streams.isEmpty else { break }
                // A page drawn the first time says where its peer stands.
                if last == nil, let json = seenJSON(view.conversation) { for watcher in page.streams { watcher.send("seen", data: json) } }
                switch last.map({ PageChanges.between($0, view) }) ?? .replaced {
                case .replaced:
                    let html = PageHTML.body(view, dev: dev, say: page.say)
                    for watcher in page.streams { watcher.send("page", data: html) }
                case .messages(let changes) where !changes.isEmpty:
                    let json = PageHTML.changes(changes, peer: view.conversation, dev: dev, say: page.say)
                    for watcher in page.streams { watcher.send("change", data: json) }
                case .messages:
                    break
                }
            case .pictures(let shipped):
                // A worker runs line code: what it hands over is decoded again before it is served.
                for picture in shipped {
                    do throws(Photo.Refusal) {
                        guard try PhotoDecoder.shared.check(picture.bytes, limit: LineRegistrar.pictureBytesLimit) == picture.photo else {
                            throw Photo.Refusal("it is not the picture the page's worker said it was", code: .sizeMismatch)
                        }
                    } catch {
                        output.diagnostic(speaker + "line \(picture.line)'s picture \(TerminalText.safe(picture.name)) is not served: \(error)")
                        continue
                    }
                    // By the path as the server reads it (percent-decoded), not as the page writes it.
                    pictures["/picture/" + picture.line + "/" + picture.version + "/" + picture.name] = picture
                }
            case .reply(let reply):
                notify(page, WebWords.notice(reply, page.say))
            case .text(let text):
                // A line's new build taken: the page is drawn again by it.
                notify(page, WebWords.Notice(text: nil, dev: text.trimmingSpaces, alert: false))
            case .crash(let text):
                notify(page, WebWords.Notice(text: page.say("Part of this chat stopped working and was started again."), dev: text.trimmingSpaces, alert: true))
                output.err(text + "\n")
            case .diagnostic(let text):
                notify(page, WebWords.Notice(text: nil, dev: text.trimmingSpaces, alert: false))
                output.err(text)
            case .replaced:
                replaced(page)
            case .ended(let code):
                page.ended = true
                let ended = WebWords.Notice(text: page.say("This chat stopped. Open it again from your chats."), dev: "the chat's worker ended (exit \(code))", alert: code != 0)
                for watcher in page.streams {
                    watcher.send("ended", data: ended.json)
                    // A tab's own stream ends with its page; the shared one serves other pages.
                    if !watcher.shared { watcher.stream.close() }
                }
                page.streams = []
            }
        }
    }

    /// Sends a notice to the page's tabs: one the person would not read (and a developer is not
    /// shown) is not sent.
    private func notify(_ page: Page, _ notice: WebWords.Notice) {
        guard notice.text != nil || dev else { return }
        for watcher in page.streams { watcher.send("notice", data: notice.json) }
    }

    /// Heartbeats, and pages whose tab has been gone a while are closed.
    private func tidy() {
        let now = Clock.monotonic()
        if now - lastHeartbeat > Self.heartbeatSeconds * 1_000_000_000 {
            lastHeartbeat = now
            for stream in listStreams.map(\.stream) + sharedStreams.values + pages.values.flatMap(\.streams).filter({ !$0.shared }).map(\.stream)
                + (workbench?.streams ?? []) { stream.heartbeat() }
        }
        listStreams.removeAll { Self.gone($0.stream) }
        sharedStreams = sharedStreams.filter { !Self.gone($0.value) }
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
    static func gone(_ stream: EventStream) -> Bool {
        if stream.browserLeft { stream.close() }
        return stream.isClosed
    }

    /// Whether a tab's stream has ended.
    static func gone(_ watcher: Watcher) -> Bool { gone(watcher.stream) }

    /// Ends a page's worker (unless it ended) and forgets the page.
    func close(_ page: Page) {
        if page.isRunning { page.link.send(.close) }
        pages[page.id] = nil
    }

    /// Ends every page's worker and every stream, then the HTTP server.
    func stop() {
        spares.stop()
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
    }
}

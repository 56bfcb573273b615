#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMHostRuntime
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// What `imhost web` answers: the gate's verdict, the start page, a chat's page, its event
/// stream, a posted act, a photo going out or shown.
extension WebServer {
    func handle(_ request: HTTPRequest) -> HTTPReply {
        let reply = answer(request)
        // A person's browser that asked for a page gets a page back, not a line of text.
        guard reply.status >= 400, Self.asksForPage(request), case .bytes(let body) = reply.body,
              reply.headers.contains(where: { $0.0 == "Content-Type" && $0.1.hasPrefix("text/plain") }) else { return reply }
        let reason = String(decoding: body, as: UTF8.self).trimmingSpaces
        return html(WebDocument.error(status: reply.status, reason: reason, say: language(of: request)), status: reply.status)
    }

    /// Whether the request is a browser's for a page to show: a navigation (`Sec-Fetch-Dest:
    /// document`), or, from a browser that does not say, a GET that takes HTML.
    static func asksForPage(_ request: HTTPRequest) -> Bool {
        if let dest = request.header("Sec-Fetch-Dest") { return dest == "document" }
        return request.method == "GET" && (request.header("Accept") ?? "").contains("text/html")
    }

    private func answer(_ request: HTTPRequest) -> HTTPReply {
        switch gate.judge(request) {
        case .refused(let status, let why):
            return .text(status, why + "\n")
        case .newSession(let session):
            saveKept()
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
            return html(WebDocument.start(user: user, conversations: conversations(), dev: dev, say: language(of: request)))
        case ("GET", "/search"):
            return search(request.argument("q") ?? "", say: language(of: request))
        case ("GET", "/chat"):
            return open(request.argument("url") ?? "", session: request.cookie(gate.cookieName) ?? "", say: language(of: request),
                        frame: workbench == nil ? nil : WebDocument.Frame(request))
        case ("GET", "/workbench"):
            guard let workbench else { return .text(404, "not found: this server has no workbench (imhost preview serves one)\n") }
            return html(WebDocument.workbench(chat: workbench.chat, axe: workbench.axe != nil))
        case ("GET", "/workbench/axe.js"):
            guard let axe = workbench?.axe else { return .text(404, "not found: axe-core is not on this machine\n") }
            return HTTPReply(status: 200, headers: [("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "private, max-age=3600")], body: .bytes(axe))
        case ("GET", "/events"):
            return events(request)
        case ("POST", let path) where path.hasPrefix("/stream/") && (path.hasSuffix("/watch") || path.hasSuffix("/unwatch")):
            let watching = path.hasSuffix("/watch")
            return watch(stream: String(path.dropFirst("/stream/".count).dropLast(watching ? "/watch".count : "/unwatch".count)), request, watching: watching)
        case ("POST", let path) where path.hasPrefix("/page/") && path.hasSuffix("/voice"):
            return voice(page: String(path.dropFirst("/page/".count).dropLast("/voice".count)), request)
        case ("GET", "/voice"):
            return voice(request)
        case ("POST", let path) where path.hasPrefix("/page/") && path.hasSuffix("/open"):
            return openEarly(page: String(path.dropFirst("/page/".count).dropLast("/open".count)))
        case ("POST", let path) where path.hasPrefix("/page/") && path.hasSuffix("/file"):
            return file(page: String(path.dropFirst("/page/".count).dropLast("/file".count)), request)
        case ("GET", "/file"):
            return file(request)
        case ("POST", let path) where path.hasPrefix("/page/") && path.hasSuffix("/photo"):
            return photo(page: String(path.dropFirst("/page/".count).dropLast("/photo".count)), request)
        case ("POST", let path) where path.hasPrefix("/page/"):
            return act(page: String(path.dropFirst("/page/".count)), request)
        case ("GET", "/photo"):
            return photo(request)
        case ("GET", let path) where path.hasPrefix("/picture/"):
            guard let picture = pictures[path] else { return .text(404, "not found: no line open here ships that picture\n") }
            return image(picture.photo, picture.bytes)
        case ("GET", let path) where path.hasPrefix("/static/"):
            guard let asset = WebAssets.all[path] else { return .text(404, "not found: \(path)\n") }
            let caching = WebAssets.cacheControl(asset, version: request.argument("v"))
            // Asked again (a page naming it without its version): unchanged is said without it.
            if request.header("If-None-Match") == "\"\(asset.version)\"" {
                return HTTPReply(status: 304, headers: [("Cache-Control", caching), ("ETag", "\"\(asset.version)\"")], body: .bytes([]))
            }
            return HTTPReply(status: 200, headers: [("Content-Type", asset.contentType), ("Cache-Control", caching), ("ETag", "\"\(asset.version)\"")],
                             body: .bytes(asset.bytes))
        default:
            return .text(404, "not found: \(request.method) \(request.path)\n")
        }
    }

    private func html(_ text: String, status: Int = 200) -> HTTPReply {
        HTTPReply(status: status, headers: [("Content-Type", "text/html; charset=utf-8")] + WebGate.pageHeaders(csp: csp, framing: workbench != nil),
                  body: .bytes(Array(text.utf8)))
    }

    /// A page for the chat a jump URL names: the tab gets the frame, and the page by its
    /// stream; the page's worker starts when the stream opens (``start(_:)``), never for a
    /// request that cannot show it. A chat already open in another window or tab is the same
    /// page: one worker draws it, and every tab gets what changes.
    private func open(_ url: String, session: String, say: WebLanguage, frame: WebDocument.Frame? = nil) -> HTTPReply {
        guard !url.isEmpty else { return .text(400, "refused: no jump URL; open /chat?url=im://chat?rootCateID=...&peer=...\n") }
        if let open = pages.values.first(where: { $0.url == url && !$0.ended }) {
            return html(WebDocument.chat(page: open.id, url: url, dev: dev, textLimit: config.limits.payloadBytes, say: open.say, frame: frame))
        }
        let live = pages.values.filter { $0.session == session && $0.streams.contains { !$0.shared } }.count
        guard live < Self.livePagesPerBrowser else {
            return .text(429, "refused: \(live) chats are open and live in this browser, the most one browser can keep live (it gives a server six connections); close one, then open this again\n")
        }
        if let full = roomRefusal(making: false) { return html(WebDocument.refusal(title: say("Too many chats open"), text: full, say: say), status: 503) }
        let waiting = pages.values.filter { !$0.started }.sorted { $0.made < $1.made }
        for page in waiting.prefix(max(0, waiting.count - Self.waitingPages + 1)) { pages[page.id] = nil }
        let id = String(WebGate.randomSecret().prefix(16))
        pages[id] = Page(id: id, session: session, url: url, say: say)
        return html(WebDocument.chat(page: id, url: url, dev: dev, textLimit: config.limits.payloadBytes, say: say, frame: frame))
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
        var opening = PageThread.Opening(url: page.url, config: config, configPath: configPath, user: user, verbose: verbose,
                                         workerOptions: workerOptions)
        opening.spare = spares.take()
        guard PageThread.start(opening, link: page.link) else {
            // Nobody would wait for one asked to end.
            opening.spare?.kill()
            return "No thread could be made for a new page; close some pages, then open this chat again."
        }
        page.started = true
        return nil
    }

    private func events(_ request: HTTPRequest) -> HTTPReply {
        let stream = EventStream()
        if let id = request.argument("stream") {
            // The stream a browser's tabs share: pages join it as tabs ask (``watch(stream:_:)``).
            guard Self.isStreamID(id) else { return .text(400, "refused: a shared stream's id is 16 to 64 letters and digits\n") }
            // The same browser again (its stream reconnected): the old one is over.
            sharedStreams[id]?.close()
            sharedStreams[id] = stream
            stream.send("joined", data: id)
            // The pages its tabs showed as it opened come with it (`&watch=PAGE`): drawn without
            // waiting for the tab to hear "joined" and ask.
            for page in request.query where page.name == "watch" { watch(page.value, on: stream) }
        } else if request.argument("workbench") != nil {
            if let refused = workbenchStream(stream) { return refused }
        } else if request.argument("list") != nil {
            let say = language(of: request)
            listStreams.append((stream, say))
            stream.send("list", data: WebDocument.list(conversations(), dev: dev, say: say))
        } else {
            guard let id = request.argument("page"), let page = pages[id], !page.ended else {
                return .text(404, "not found: that page is closed; open the chat again from the list\n")
            }
            if let refused = start(page) {
                pages[id] = nil
                stream.send("refused", data: refused)
                stream.close()
            } else {
                page.streams.append(Watcher(stream: stream, shared: false, page: id))
                if let view = page.view {
                    stream.send("page", data: PageHTML.body(view, dev: dev, say: page.say))
                    if let json = seenJSON(view.conversation) { stream.send("seen", data: json) }
                }
            }
        }
        // A stream ends only when its page is gone: the connection goes with it, never reused.
        return HTTPReply(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no"),
                                                ("Connection", "close")],
                         body: .stream(stream))
    }

    /// Whether `id` can name a shared stream.
    static func isStreamID(_ id: String) -> Bool {
        (16...64).contains(id.utf8.count) && id.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
    }

    /// A tab of the browser whose shared stream is `streamID` shows page `?page=ID` (`watching`),
    /// or no longer does: the page's events go on that stream, and a page that joins gets its
    /// drawing at once. A page that is gone is 404 (the tab opens its chat again).
    private func watch(stream streamID: String, _ request: HTTPRequest, watching: Bool) -> HTTPReply {
        guard let stream = sharedStreams[streamID], !stream.isClosed else {
            // Not "gone" (404): the browser's stream is reconnecting, and asks again when it joins.
            return .text(409, "refused: that stream is closed; the page opens it again\n")
        }
        guard let id = request.argument("page"), let page = pages[id], !page.ended else {
            return .text(404, "not found: that page is closed; open the chat again from the list\n")
        }
        guard watching else {
            page.streams.removeAll { $0.stream === stream }
            return HTTPReply(status: 204, body: .bytes([]))
        }
        watch(id, on: stream)
        return HTTPReply(status: 204, body: .bytes([]))
    }

    /// Page `id` goes on the shared `stream` (again): started if it was not, drawn at once if it
    /// has been; a page that is gone is said so on the stream (its tab opens the chat again).
    private func watch(_ id: String, on stream: EventStream) {
        let watcher = Watcher(stream: stream, shared: true, page: id)
        guard let page = pages[id], !page.ended else { return watcher.send("gone", data: "") }
        page.streams.removeAll { $0.stream === stream }
        if let refused = start(page) {
            pages[id] = nil
            return watcher.send("refused", data: refused)
        }
        page.streams.append(watcher)
        if let view = page.view {
            watcher.send("page", data: PageHTML.body(view, dev: dev, say: page.say))
            if let json = seenJSON(view.conversation) { watcher.send("seen", data: json) }
        }
    }

    /// The page's own script, as it starts (before its stream can): the page's worker starts now,
    /// so its drawing is ready when the stream asks for it. Only this server's pages can ask (the
    /// gate); a page with no room is left to be refused on its stream, and one never streamed
    /// is closed as a page whose tab went away.
    private func openEarly(page id: String) -> HTTPReply {
        guard let page = pages[id], !page.ended else { return .text(404, "not found: that page is closed; open the chat again from the list\n") }
        _ = start(page)
        return HTTPReply(status: 204, body: .bytes([]))
    }

    /// An act of the person's on a page (``WebAction``): its worker does it. Reading is one
    /// too: the page's script says which message it showed last in a visible window, never
    /// because HTML was drawn.
    private func act(page id: String, _ request: HTTPRequest) -> HTTPReply {
        guard let page = pages[id], page.isRunning else { return .text(404, "not found: that page is closed; open the chat again from the list\n") }
        switch WebAction.decode(request.body) {
        case .failure(let refusal):
            return .text(400, "refused: \(refusal)\n")
        case .success(let action):
            page.link.send(.act(action))
            return HTTPReply(status: 204, body: .bytes([]))
        }
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

    /// A photo picked in the page (the Photo item): its bytes are checked here, and go to the
    /// page's worker in the act itself (kept as a draft with it until it is queued).
    private func photo(page id: String, _ request: HTTPRequest) -> HTTPReply {
        guard let page = pages[id], page.isRunning else { return .text(404, "not found: that page is closed; open the chat again from the list\n") }
        do throws(Photo.Refusal) {
            _ = try PhotoDecoder.shared.check(request.body, limit: config.limits.photoBytes)
        } catch {
            return .text(415, language(of: request)("Not sent: this file is not a photo that can be sent ({0}).", "\(error)") + "\n")
        }
        page.link.send(.act(.photo(Data(request.body))))
        return HTTPReply(status: 204, body: .bytes([]))
    }

    /// A voice message's recording, from the store: `?peer=P&n=N`, as the type its bytes are
    /// (decoded whole when it was stored), never sniffed, never a page.
    private func voice(_ request: HTTPRequest) -> HTTPReply {
        guard let peer = request.argument("peer"), let number = request.argument("n").flatMap(Int.init), number >= 1 else {
            return .text(400, "refused: a recording is asked for as /voice?peer=P&n=N\n")
        }
        guard let found = (try? host.store?.voice(peer: peer, number: number)) ?? nil else {
            return .text(404, "not found: no such recording\n")
        }
        return HTTPReply(status: 200, headers: [("Content-Type", found.voice.kind.mediaType), ("X-Content-Type-Options", "nosniff"),
                                               ("Cache-Control", "private, no-cache"), ("Content-Security-Policy", "default-src 'none'")],
                         body: .bytes(found.bytes))
    }

    /// A file message's file, from the store: `?peer=P&n=N`, always as a download
    /// (`Content-Disposition: attachment`), as the type its bytes are, never sniffed, in a
    /// sandbox if a browser opened it anyway.
    private func file(_ request: HTTPRequest) -> HTTPReply {
        guard let peer = request.argument("peer"), let number = request.argument("n").flatMap(Int.init), number >= 1 else {
            return .text(400, "refused: a file is asked for as /file?peer=P&n=N\n")
        }
        guard let found = (try? host.store?.file(peer: peer, number: number)) ?? nil else {
            return .text(404, "not found: no such file\n")
        }
        return HTTPReply(status: 200, headers: [("Content-Type", found.file.type), ("X-Content-Type-Options", "nosniff"),
                                               ("Content-Disposition", Self.attachment(found.file.name)),
                                               ("Cache-Control", "private, no-cache"), ("Content-Security-Policy", "default-src 'none'; sandbox")],
                         body: .bytes(found.bytes))
    }

    /// A `Content-Disposition` that downloads a file as `name` (RFC 6266): an ASCII fallback
    /// (other characters as `_`), and the name itself percent-encoded as UTF-8.
    static func attachment(_ name: String) -> String {
        let ascii = String(name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" && $0 != "%" ? Character($0) : "_" })
        let encoded = name.utf8.map { byte -> String in
            let safe = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || "-._~".utf8.contains(byte)
            let hex = Array("0123456789ABCDEF")
            return safe ? String(UnicodeScalar(byte)) : "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
        }.joined()
        return "attachment; filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
    }

    /// A file picked in the page: its name in `X-File-Name` (percent-encoded), its bytes the
    /// body, sent as the chat's /file would (kept as a draft with them until it is queued).
    private func file(page id: String, _ request: HTTPRequest) -> HTTPReply {
        guard let page = pages[id], page.isRunning else { return .text(404, "not found: that page is closed; open the chat again from the list\n") }
        let name = request.header("X-File-Name").flatMap { $0.removingPercentEncoding } ?? ""
        do throws(SharedFile.Refusal) {
            _ = try SharedFile.read(name: name, bytes: request.body, limit: config.limits.fileBytes)
        } catch {
            return .text(error.code == .tooLarge ? 413 : 415, language(of: request)("Not sent: this file cannot be sent ({0}).", "\(error)") + "\n")
        }
        page.link.send(.act(.file(name: name, Data(request.body))))
        return HTTPReply(status: 204, body: .bytes([]))
    }

    /// A voice message recorded in the page: its bytes are decoded whole here, and go to the
    /// page's worker in the act itself (kept as a draft with them until it is queued).
    private func voice(page id: String, _ request: HTTPRequest) -> HTTPReply {
        guard let page = pages[id], page.isRunning else { return .text(404, "not found: that page is closed; open the chat again from the list\n") }
        do throws(Voice.Refusal) {
            _ = try PhotoDecoder.shared.checkVoice(request.body, limit: min(Voice.byteLimit, config.limits.photoBytes))
        } catch {
            return .text(415, language(of: request)("Not sent: this recording cannot be sent ({0}).", "\(error)") + "\n")
        }
        page.link.send(.act(.voice(Data(request.body))))
        return HTTPReply(status: 204, body: .bytes([]))
    }

    /// Messages holding every word of `query`, through the store's index (Chinese words too),
    /// newest first: each with its chat, and a link that opens the chat at it.
    private func search(_ query: String, say: WebLanguage) -> HTTPReply {
        let words = query.split(whereSeparator: \.isWhitespace).map(String.init).filter { !$0.isEmpty }
        guard query.count <= WebDocument.searchLength else {
            return html(WebDocument.refusal(title: say("Search"), text: say("Search for at most {0} characters.", "\(WebDocument.searchLength)"), say: say), status: 400)
        }
        var hits: [SearchHit] = []
        if !words.isEmpty {
            do throws(StoreError) {
                hits = try host.store?.search(words, peer: nil, limit: WebDocument.searchHits) ?? []
            } catch {
                return html(WebDocument.refusal(title: say("Search"), text: say("The messages could not be searched: {0}", "\(error)"), say: say), status: 500)
            }
        }
        let urls = Dictionary(conversations().map { ($0.peer, $0.url) }, uniquingKeysWith: { first, _ in first })
        return html(WebDocument.search(user: user, query: query, words: words, hits: hits.map { hit in
            (hit, urls[hit.peer] ?? StoreViews.url(hit.peer, page: nil))
        }, say: say))
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

    func sendList() {
        guard !listStreams.isEmpty else { return }
        let now = conversations()
        var drawn: [WebLanguage: String] = [:]
        for (stream, say) in listStreams {
            if drawn[say] == nil { drawn[say] = WebDocument.list(now, dev: dev, say: say) }
            stream.send("list", data: drawn[say]!)
        }
    }

    /// The language the page speaks to the browser that sent `request`: `--lang`'s, or the
    /// first its `Accept-Language` prefers that the page speaks.
    func language(of request: HTTPRequest) -> WebLanguage {
        language ?? WebLanguage.preferred(by: request.header("Accept-Language"))
    }
}

import Foundation
import Testing

/// What another program on the machine cannot take from `imhost web`'s user: their page, their
/// workers, their unread counts.
@Suite("imhost web keeps its page for its user", .heavy(.broker))
struct WebServerLimitsTests {
    /// Whether the tests run as root, and so can make a second Unix user.
    static let canMakeAnotherUser = geteuid() == 0

    /// The unread count of the conversation with `peer` in `workspace`'s store (`imhost chats --json`).
    func unread(_ workspace: Workspace, with peer: String) throws -> Int? {
        let chats = try JSONSerialization.jsonObject(with: Data(try imhost(["chats", "--json"], in: workspace).stdout.utf8)) as? [[String: Any]]
        return chats?.first { $0["peer"] as? String == peer }?["unread"] as? Int
    }

    @Test("1,000 connections another user of the machine holds open, a header line every 2 s, are refused as they come: the start page, an open chat's stream and a send still answer; the server says so in one line",
          .enabled(if: canMakeAnotherUser, "needs a second Unix user, which only root can make"))
    func anotherUsersConnections() throws {
        let mallory = try #require(OtherUserTests.mallory)
        let workspace = try Workspace.standard()
        let web = try WebServing(workspace)
        let client = try WebClient(web)
        let (page, stream) = try client.open(houseChatURL)

        // Python as the other user: opens the connections, says how many, and trickles a header
        // line into each every 2 s until it is killed.
        let attack = """
            import resource, socket, sys, time
            resource.setrlimit(resource.RLIMIT_NOFILE, (1200, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
            held = []
            for _ in range(1000):
                s = socket.create_connection(("127.0.0.1", \(web.port)))
                s.sendall(b"GET / HTTP/1.1\\r\\nHost: 127.0.0.1:\(web.port)\\r\\n")
                held.append(s)
            print("holding", len(held), flush=True)
            while True:
                time.sleep(2)
                for s in held:
                    try: s.sendall(b"X-Slow: 1\\r\\n")
                    except OSError: pass
            """
        let attacker = try RunningProcess("/usr/bin/setpriv", ["--reuid=\(mallory.uid)", "--regid=\(mallory.gid)", "--clear-groups",
                                                               "/usr/bin/python3", "-u", "-c", attack], in: "/")
        defer {
            attacker.signal(SIGKILL)
            _ = attacker.finish()
        }
        #expect(attacker.waitFor("holding 1000"), "\(attacker.stdout)\(attacker.stderr)")

        let start = try client.get("/", timeout: 10)
        #expect(start.status == 200)
        let sent = try client.act(page, text: "still here", timeout: 10)
        #expect(sent.status == 204)
        #expect(stream.waitFor("still here", timeout: 10), "the open chat's stream did not show the send")
        #expect(web.process.waitFor("from other users of this machine (uid \(mallory.uid))"), "\(web.process.stderr)")
        let said = web.process.stderr.split(separator: "\n").filter { $0.contains("other users of this machine") }
        #expect(said.count == 1, "one line, at most once a minute: \(said)")
    }

    @Test("connections of the user's own programs that send no whole request are closed after 5 s, and past the budget the oldest first; the page stays reachable and the server says it once")
    func stalledConnections() throws {
        let workspace = try Workspace.standard()
        let web = try WebServing(workspace)
        let client = try WebClient(web)
        let (page, stream) = try client.open(houseChatURL)

        // More than the 512 the server keeps: the oldest go at once, the rest at their deadline.
        let stalled = try StalledConnections(count: 600, port: web.port)
        stalled.trickle()
        #expect(try client.get("/", timeout: 10).status == 200)
        #expect(try client.act(page, text: "through the crowd", timeout: 10).status == 204)
        #expect(stream.waitFor("through the crowd", timeout: 10))
        stalled.trickle()
        #expect(stalled.closedByServer(timeout: 30) == 600, "every stalled connection is closed, however often it trickles")
        #expect(web.process.waitFor("sent no whole request within 5 s"), "\(web.process.stderr)")
        #expect(web.process.stderr.contains("past its budget of open connections"), "\(web.process.stderr)")
        // The page's own connection, which showed the session, is kept.
        #expect(try client.act(page, text: "still open", timeout: 10).status == 204)
        #expect(stream.waitFor("still open", timeout: 10))
    }

    @Test("a page asked for starts no worker until its page's script or its stream says it is shown; past web.maxPages the page nobody watches gives way, and while every page is watched a new one is refused with a page that says why")
    func pagesHaveABound() throws {
        let workspace = try Workspace.standard()
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""plugins": "Plugins","#,
                                                                               with: #""plugins": "Plugins", "web": { "maxPages": 2 },"#))
        let web = try WebServing(workspace)
        let client = try WebClient(web)

        // Frames asked for by the hundred: no worker for any of them.
        for _ in 0..<300 { #expect(try client.frame(houseChatURL).page != nil) }
        #expect(pageWorkers(of: web.process.pid).isEmpty, "a worker was started for a page nobody streamed")

        let (first, firstStream) = try client.open(houseChat(with: "u1"))
        let (second, secondStream) = try client.open(houseChat(with: "u2"))
        #expect(pageWorkers(of: web.process.pid).count == 2)

        let refused = try client.frame(houseChat(with: "u3"))
        #expect(refused.page == nil && refused.response.status == 503)
        let words = String(decoding: refused.response.body, as: UTF8.self)
        #expect(words.contains("web.maxPages") && words.contains("<a href=\"/\">"), "\(words)")

        // The first tab closes: its page gives way to the next.
        firstStream.close()
        // The server knows the tab left once it looks at the connection again (a busy machine may
        // take a moment): until then every page is watched, and a new one is refused.
        #expect(waitUntil { (try? client.frame(houseChat(with: "u3")))?.page != nil }, "the closed tab's page never gave way")
        let (third, thirdStream) = try client.open(houseChat(with: "u3"))
        #expect(firstStream.ended() && waitUntil { pageWorkers(of: web.process.pid).count == 2 }, "the unwatched page's worker did not end")
        #expect(try client.act(first, text: "hello").status == 404, "the page that gave way is closed")
        #expect(try client.act(second, text: "second lives").status == 204)
        #expect(secondStream.waitFor("second lives"))

        // A frame taken while there was room, streamed once every page is watched: refused on
        // its stream, in words the page shows.
        thirdStream.close()
        let (late, _) = try client.frame(houseChat(with: "u4"))
        let lateID = try #require(late)
        let back = try EventStreamReader(port: web.port, path: "/events?page=" + third, cookie: client.cookie)
        #expect(back.waitFor("event: page"))
        let lateStream = try EventStreamReader(port: web.port, path: "/events?page=" + lateID, cookie: client.cookie)
        #expect(lateStream.waitFor("event: refused") && lateStream.received.contains("web.maxPages") && lateStream.ended())
        #expect(pageWorkers(of: web.process.pid).count == 2)
    }

    @Test("the page names its script and style by a digest of their bytes: that address is kept by the browser for a year, the bare one and an old digest are asked again each time, and unchanged bytes are a 304")
    func assetsKept() throws {
        let workspace = try Workspace.standard()
        let web = try WebServing(workspace)
        let client = try WebClient(web)
        let document = String(decoding: try client.frame(houseChatURL).response.body, as: UTF8.self)
        for name in ["app.js", "app.css", "icon.svg"] {
            let escaped = name.replacingOccurrences(of: ".", with: "\\.")
            let match = try #require(document.firstMatch(of: try Regex("/static/\(escaped)\\?v=([0-9a-f]{16})\"")), "\(name) not named by its digest: \(document)")
            let digest = String(try #require(match.output[1].substring))
            let kept = try client.get("/static/\(name)?v=\(digest)")
            #expect(kept.status == 200 && kept.header("Cache-Control") == "public, max-age=31536000, immutable" && kept.header("ETag") == "\"\(digest)\"",
                    "\(name): \(kept.status) \(kept.header("Cache-Control") ?? "-")")
            for path in ["/static/\(name)", "/static/\(name)?v=0123456789abcdef"] {
                let asked = try client.get(path)
                #expect(asked.status == 200 && asked.header("Cache-Control") == "no-cache" && asked.body == kept.body, "\(path): \(asked.status)")
            }
            let unchanged = try client.get("/static/\(name)", headers: [("If-None-Match", "\"\(digest)\"")])
            #expect(unchanged.status == 304 && unchanged.body.isEmpty, "\(name): \(unchanged.status)")
            let changed = try client.get("/static/\(name)", headers: [("If-None-Match", "\"0123456789abcdef\"")])
            #expect(changed.status == 200 && changed.body == kept.body)
        }
    }

    @Test("imhost web keeps one spare worker: the next page a tab opens takes it (no process started for it), and another is kept once that page is drawn; one killed is not a crash and the next page starts its own; a changed host.json or plugin folder gives a new one; the server ends it as it stops")
    func spareWorker() throws {
        let workspace = try Workspace.standard()
        let web = try WebServing(workspace)
        let client = try WebClient(web)
        let server = web.process.pid
        #expect(waitUntil { spareWorkers(of: server).count == 1 }, "no spare worker")
        let first = try #require(spareWorkers(of: server).first)
        let (_, one) = try client.open(houseChat(with: "u1"))
        defer { one.close() }
        #expect(pageWorkers(of: server) == [first], "the page did not take the spare")
        let second = try #require(spare(of: server, replacing: first), "no new spare after the page was drawn")
        kill(second, SIGKILL)
        // Dead before the next page is asked for (one killed as a page takes it is that page's
        // worker dying as it opens: recorded, and the chat started again, as for any worker).
        #expect(waitUntil { [nil, "Z"].contains(processState(second)) })
        // Opened and drawn all the same (``WebClient/open(_:)`` waits for its drawing).
        let (_, two) = try client.open(houseChat(with: "u2"))
        defer { two.close() }
        #expect(pageWorkers(of: server).count == 2 && !pageWorkers(of: server).contains(second))
        #expect(!FileManager.default.fileExists(atPath: workspace.data + "/crashes.log"), "the spare's end was taken for a crash: \((try? String(contentsOfFile: workspace.data + "/crashes.log", encoding: .utf8)) ?? "")")

        // A spare that ended on its own is not replaced for a minute, unless what it read changes.
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""plugins": "Plugins","#,
                                                                               with: #""plugins": "Plugins", "web": { "maxPages": 9 },"#))
        let afterConfig = try #require(spare(of: server, replacing: second), "no spare for the new host.json")
        // A file put in the plugin folder: the spare read the folder as it started, and gives way.
        try "".write(toFile: workspace.plugins + "/notes.txt", atomically: false, encoding: .utf8)
        let last = try #require(spare(of: server, replacing: afterConfig), "the spare that read the plugin folder before the change stayed")
        #expect(waitUntil { processState(afterConfig) == nil }, "the spare that gave way was not ended")

        // Stopped, the server ends its spare as it ends its pages: signed out, its breadcrumb
        // gone (one killed with the server would leave it for the next start to find).
        web.process.signal(SIGINT)
        #expect(web.process.finish().status == 0)
        #expect(processState(last) == nil)
        let left = try FileManager.default.contentsOfDirectory(atPath: workspace.data + "/run").filter { $0.hasPrefix("\(server)-") && $0.hasSuffix(".crumb") }
        #expect(left.isEmpty, "breadcrumbs left: \(left)")
    }

    /// The spare `server` keeps once it is another than `old`.
    func spare(of server: Int32, replacing old: Int32) -> Int32? {
        var found: Int32?
        _ = waitUntil {
            found = spareWorkers(of: server).first { $0 != old }
            return found != nil
        }
        return found
    }

    @Test("the page's own script starts its chat's worker as it runs (POST /page/ID/open), before its stream opens: the stream then gets the drawing at once; another site's page cannot, nor a form")
    func openedEarly() throws {
        let workspace = try Workspace.standard()
        let web = try WebServing(workspace)
        let client = try WebClient(web)
        let server = web.process.pid
        let page = try #require(try client.frame(houseChat(with: "u1")).page)
        for foreign in [[("Origin", "http://127.0.0.1:1")], [("Origin", web.origin), ("Sec-Fetch-Site", "same-site"), ("Sec-Fetch-Dest", "empty")],
                        [("Origin", web.origin), ("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Dest", "document")]] {
            let refused = try LoopbackHTTP.request(port: web.port, "POST", "/page/\(page)/open", headers: client.session + foreign, timeout: 10)
            #expect(refused.status == 403, "\(foreign): \(refused.status)")
        }
        #expect(pageWorkers(of: server).isEmpty)
        #expect(try client.post("/page/\(page)/open", json: "").status == 204)
        #expect(waitUntil { pageWorkers(of: server).count == 1 }, "the page's worker did not start")
        #expect(try client.post("/page/\(String(repeating: "0", count: 16))/open", json: "").status == 404)
        let stream = try EventStreamReader(port: web.port, path: "/events?page=" + page, cookie: client.cookie)
        defer { stream.close() }
        #expect(stream.waitFor("event: page"))
        #expect(pageWorkers(of: server).count == 1)
    }

    @Test("a browser's shared stream opened with the pages its tabs show (&watch=) draws them at once, with no question after; a page that is gone is said gone on it")
    func streamOpensWithPages() throws {
        let workspace = try Workspace.standard()
        let web = try WebServing(workspace)
        let client = try WebClient(web)
        let page = try #require(try client.frame(houseChat(with: "u1")).page)
        let gone = String(repeating: "0", count: 16)
        let stream = try EventStreamReader(port: web.port, path: "/events?stream=\(String(repeating: "ab12", count: 6))&watch=\(page)&watch=\(gone)",
                                           cookie: client.cookie)
        defer { stream.close() }
        #expect(stream.waitFor("event: joined") && stream.waitFor(#"{"page":"\#(page)","event":"page","data":"#), "\(stream.received)")
        #expect(stream.received.contains(#"{"page":"\#(gone)","event":"gone","data":""}"#), "\(stream.received)")
        #expect(pageWorkers(of: web.process.pid).count == 1)
        #expect(try client.act(page, text: "hello on the shared stream").status == 204)
        #expect(stream.waitFor("hello on the shared stream"))
    }

    @Test("a request the browser says another site's page made (another port of this machine), or one fetched as what its route does not serve, is refused; a program's request without those headers is judged as before")
    func fetchMetadata() throws {
        let workspace = try Workspace.standard()
        let web = try WebServing(workspace)
        let client = try WebClient(web)
        let chat = "/chat?url=" + WebClientEncoding.query(houseChatURL)
        for (site, destination, path, status) in [("same-site", "image", chat, 403), ("cross-site", "document", "/", 403),
                                                  ("same-origin", "image", chat, 403), ("same-origin", "document", "/events?list=1", 403),
                                                  ("none", "document", "/", 200), ("same-origin", "document", chat, 200),
                                                  ("same-origin", "style", "/static/app.css", 200), ("same-origin", "script", "/static/app.css", 403)] {
            let response = try client.get(path, headers: [("Sec-Fetch-Site", site), ("Sec-Fetch-Dest", destination)])
            #expect(response.status == status, "\(site) \(destination) \(path): \(response.status)")
        }
        let posted = try LoopbackHTTP.request(port: web.port, "POST", "/page/0", headers: client.change + [("Sec-Fetch-Site", "same-site"), ("Sec-Fetch-Dest", "empty")],
                                              body: Data(#"{"do":"text","text":"x"}"#.utf8))
        #expect(posted.status == 403)
        #expect(try client.get(chat).status == 200, "a program that sends no Fetch Metadata is judged on the rest")
        #expect(pageWorkers(of: web.process.pid).isEmpty, "a refused or streamless page started a worker")
    }

    @Test("drawing a page marks nothing read; the page's word that it was seen in a visible window does, and the sender is told")
    func readingIsAnAct() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob")
        // Sent while bob is away: the broker keeps it for him.
        let aliceChat = try broker.chat(alice, with: "bob")
        aliceChat.send("are you there?")
        #expect(aliceChat.waitFor("· sent"), "\(aliceChat.stdout)")
        let web = try WebServing(bob)
        #expect(web.process.waitFor("connected to"), "\(web.process.stderr)")
        let client = try WebClient(web)
        let (page, stream) = try client.open(houseChat(with: "alice"))
        #expect(stream.waitFor("are you there?"), "the message did not come: \(stream.received)")
        let unreadNow = try unread(bob, with: "alice")
        #expect(unreadNow == 1, "drawn, and not seen: still unread (\(String(describing: unreadNow)))")

        #expect(try client.post("/page/\(page)", json: #"{"do":"seen","through":1}"#).status == 204)
        #expect(waitUntil { (try? unread(bob, with: "alice")) == 1 ? false : true }, "seen, and still unread")
        #expect(aliceChat.waitFor("read ✓✓"), "alice's page never showed it read: \(aliceChat.stdout)")
        aliceChat.send("/quit")
        _ = aliceChat.finish()
        #expect(try client.post("/page/\(page)", json: #"{"do":"seen","through":"x"}"#).status == 400)
    }
}

extension BrowserSuites {
    @Suite("A page on another port of the machine, in the same browser")
    struct CrossPortTests {
        @Test("200 <img> tags on a page served from another 127.0.0.1 port, pointing at a chat, start no worker and mark nothing read, though the browser holds the session; the chat opened as a person does is read once shown")
        func imagesFromAnotherPort() throws {
            let root = try Workspace()
            let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
            let alice = try broker.workspace(for: "alice")
            let bob = try broker.workspace(for: "bob")
            let aliceChat = try broker.chat(alice, with: "bob")
            aliceChat.send("the flat is still free")
            #expect(aliceChat.waitFor("· sent"), "\(aliceChat.stdout)")
            let web = try WebServing(bob)
            #expect(waitUntil { (try? WebServerLimitsTests().unread(bob, with: "alice")) == 1 }, "the message never reached bob's store")

            let browser = try Browser()
            try browser.navigate(web.url)
            #expect(try browser.waitFor("form.open input") != nil, "the browser holds no session")
            let chat = web.origin + "/chat?url=" + WebClientEncoding.query(houseChat(with: "alice"))
            let images = (0..<200).map { #"<img src="\#(chat)&n=\#($0)" width="1" height="1">"# }.joined()
            let site = try StaticSite(["index.html": "<!doctype html><html><body>\(images)</body></html>"])
            try browser.navigate(site.url)
            #expect(try browser.waitUntil("document.images.length === 200 && Array.from(document.images).every((image) => image.complete)"))
            #expect(pageWorkers(of: web.process.pid).isEmpty, "a page of another port started a chat's worker")
            #expect(try WebServerLimitsTests().unread(bob, with: "alice") == 1, "a page of another port marked the message read")

            try browser.open(chat: houseChat(with: "alice"), on: web)
            #expect(try browser.waitFor(".message.received", containing: "the flat is still free"))
            #expect(aliceChat.waitFor("read ✓✓"), "shown in a visible window, and alice was never told it was read")
            #expect(try WebServerLimitsTests().unread(bob, with: "alice") == 0)
            aliceChat.send("/quit")
            _ = aliceChat.finish()
        }
    }
}

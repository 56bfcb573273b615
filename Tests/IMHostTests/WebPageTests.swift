import Foundation
import Testing
@testable import IMHost

/// A listing card as the house line draws it, as it arrives (``Workspace/receive(_:_:in:photos:)``).
let listingArrival = (key: "house.listing", payload: #"{"id":"L1001","title":"Sunny flat","price":4200,"area":56,"rooms":2}"#)

extension BrowserSuites {
    @Suite("The chat page in a browser")
    struct WebPageTests {
        @Test("a jump URL pasted on the start page opens the line's page, which says why; a card, a quick reply, a bar item and a menu item clicked and text sent answer as in the terminal")
        func openAndClick() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace, arguments: ["--dev"])
            let browser = try Browser()
            try browser.navigate(web.url)
            #expect(try browser.currentURL() == web.origin + "/", "the token leaves the address bar")
            #expect(try browser.waitFor("#conversations", containing: "No conversations yet"))

            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor("#page .tag", containing: "house page"))
            #expect(try browser.textContent("#page .title h1")?.contains("u42") == true)
            let why = try #require(try browser.textContent("#page .route"))
            #expect(why.contains("rootCateID 1") && why.contains("house"), "\(why)")
            #expect(try browser.waitFor("#page .top-post", containing: "📌"))
            // Every control does something: Video is not drawn until it does.
            #expect(try browser.findAll("#page .bottom-bar button.platform").map { try $0.text() } == ["Photo", "Voice", "Location"])
            #expect(try browser.execute("return Array.from(document.querySelectorAll('#page .menu button.platform'), b => b.textContent)") as? [String] == ["Report", "Block", "Clear"])
            #expect(try browser.textContent("#page .menu button.line") == "Report a fake listing")

            // A card arrives; clicked, the line's tap opens the listing, as /tap does.
            try workspace.receive(listingArrival.key, listingArrival.payload)
            #expect(try browser.waitFor(".message.received .card .card-title", containing: "🏠 Sunny flat"))
            try browser.click(".message.received .card .card-title")
            #expect(try browser.waitFor("#notice-log", containing: "tap #1: opened listing L1001 detail: Sunny flat"))

            try browser.click("#page .quick-replies button[data-item='4']")
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "Is it still available?"))
            #expect(try browser.waitFor("#notice-log", containing: #"quick reply 4: sent "Is it still available?""#))
            #expect(try browser.waitFor(".message.sent .state", containing: "queued"), "no broker: what is sent stays queued")

            try browser.click("#page .menu summary")
            try browser.click("#page .menu button.line")
            #expect(try browser.waitFor("#notice-log", containing: "menu: reported listing L1001 as fake"))

            try browser.send("hello from the browser")
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "hello from the browser"))
            #expect(try browser.findAll(".message.sent").count == 2)
            // What was typed left the field; the page kept its history through every drawing.
            #expect(try browser.execute("return document.querySelector('form[data-send] input').value") as? String == "")
            #expect(try browser.findAll(".message.received").count == 1)
            let console = try browser.consoleLog()
            #expect(console.filter { $0.level == "SEVERE" }.isEmpty, "the page broke no rule of its own policy and missed nothing: \(console)")

            // The start page lists the conversation, with the last message.
            try browser.click("nav.back a")
            #expect(try browser.waitFor("#conversations li", containing: "u42"))
            #expect(try browser.waitFor("#conversations li", containing: "me: hello from the browser"))
        }

        @Test("a placeholder says why in a word and in full when clicked; older messages come on scrolling up; what the reader sends from there shows at the end, where the list goes")
        func placeholderAndOlder() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace, arguments: ["--dev"])
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            try workspace.receive("cars.offer", #"{"model":"Civic"}"#)
            #expect(try browser.waitFor(".message.received .placeholder summary", containing: "unknown key"))
            #expect(try browser.execute("return document.querySelector('.placeholder').open") as? Bool == false)
            try browser.click(".message.received .placeholder summary")
            #expect(try browser.execute("return document.querySelector('.placeholder').open") as? Bool == true)
            let full = try #require(try browser.textContent(".placeholder p"))
            #expect(full.contains("no builder is registered for its key"), "\(full)")

            for index in 1...24 { try browser.send("message \(index)") }
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "message 24"))
            #expect(try browser.waitFor("button.older", containing: "earlier message"))
            let shown = try browser.findAll(".message").count
            try browser.execute("document.querySelector('.messages').scrollTop = 0")
            #expect(try browser.waitUntil("document.querySelectorAll('.message').length > \(shown)"), "scrolling up brought no older message")
            #expect(try browser.waitFor(".message.received .placeholder", containing: "unknown key"))
            // Reading far up, the reader sends: the list goes to its end, where what they sent is.
            try browser.send("message 25")
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "message 25"))
            let atEnd = try browser.waitUntil("(l => l.scrollHeight - l.scrollTop - l.clientHeight < 8)(document.querySelector('.messages'))")
            let position = try browser.execute("const l = document.querySelector('.messages'); return [l.scrollTop, l.scrollHeight, l.clientHeight]")
            #expect(atEnd, "the list stayed where the reader was: \(String(describing: position))")
        }

        @Test("without the token nothing is served; a forged Host and a foreign Origin are refused; the session cookie is HttpOnly, SameSite=Strict and named for the port")
        func tokenAndHeaders() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace, arguments: ["--dev"])
            let browser = try Browser()
            try browser.navigate(web.origin + "/")
            #expect(try browser.waitFor("body", containing: "refused: no session; open the URL imhost web printed"))
            #expect(try browser.find("form.open") == nil)
            try browser.navigate(web.origin + "/?token=" + String(repeating: "0", count: 64))
            #expect(try browser.waitFor("body", containing: "refused: that token is not this server's"))

            try browser.navigate(web.url)
            #expect(try browser.waitFor("form.open input") != nil)
            let cookie = try #require(try browser.cookies().first { $0.name == "imhost-\(web.port)" })
            #expect(cookie.httpOnly && cookie.sameSite == "Strict" && cookie.path == "/")
            #expect(try browser.execute("return document.cookie") as? String == "", "a script on the page cannot read the session")

            for path in ["/", "/chat?url=im%3A%2F%2Fchat%3FrootCateID%3D1%26peer%3Du42", "/events?list=1", "/static/app.js"] {
                #expect(try web.request("GET", path).status == 403, "\(path) served without a session")
            }
            let session = [("Cookie", "\(cookie.name)=\(cookie.value)")]
            #expect(try web.request("GET", "/", headers: session).status == 200)
            let rebound = try web.request("GET", "/", headers: session + [("Host", "attacker.example:\(web.port)")])
            #expect(rebound.status == 421 && String(decoding: rebound.body, as: UTF8.self).contains("answers only http://127.0.0.1:\(web.port)"))
            let foreign = try web.request("POST", "/page/0", headers: session + [("Origin", "http://attacker.example")], body: #"{"do":"text","text":"hello"}"#)
            #expect(foreign.status == 403 && String(decoding: foreign.body, as: UTF8.self).contains("must come from this server's own pages"))
            // A body the gate would refuse is never read: the refusal comes on the headers alone,
            // while the 16 MB the request announces are still to come.
            let announced = try LoopbackHTTP.request(port: web.port, "POST", "/page/0/photo", headers: [("Origin", web.origin)],
                                                     claimedLength: 16_000_000, timeout: 10)
            #expect(announced.status == 403, "\(announced.status)")
            let page = try web.request("GET", "/", headers: session)
            let policy = try #require(page.header("Content-Security-Policy"))
            #expect(policy.contains("script-src 'self'") && policy.contains("default-src 'none'") && !policy.contains("unsafe-inline"))
        }

        @Test("the second chat opened takes the page's script and style from the browser's cache: nothing of them comes over the connection again")
        func assetsFromCache() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChat(with: "u1"), on: web)
            #expect(try browser.waitFor("#page .title h1", containing: "u1"))
            try browser.open(chat: houseChat(with: "u2"), on: web)
            #expect(try browser.waitFor("#page .title h1", containing: "u2"))
            // Resource timing names every asset the document used; a cached one was not sent
            // again (its transferSize is 0), one asked again would be its header's size at least.
            let sizes = try browser.execute("""
                return ['app.js', 'app.css'].map((name) => performance.getEntriesByType('resource')
                  .filter((entry) => new URL(entry.name).pathname === '/static/' + name).map((entry) => entry.transferSize));
                """) as? [[Int]]
            #expect(sizes == [[0], [0]], "bytes sent for app.js and app.css on the second chat: \(String(describing: sizes))")
        }

        @Test("a failed message says why in a person's words, read from its code, a peer's words in it escaped; its retry button queues it again")
        func failedMessage() throws {
            let workspace = try Workspace.standard()
            try workspace.sendAndFail("hello", reason: #"{"code":"refused-by-peer","peer":"u42","refusal":"too-large","said":"over 1 KB \u001b[2J\u202e"}"#)
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor(".message.sent .state.failed", containing: #"not sent: too large for u42's imhost (over 1 KB \x1b[2J\u{202e})"#))
            let said = try #require(try browser.textContent(".message.sent .state"))
            #expect(!said.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E }, "nothing raw reaches the page: \(said)")
            try browser.click(".message.sent .state button[data-do='retry']")
            #expect(try browser.waitFor(".message.sent .state.queued", containing: "queued"))
        }

        @Test("a jump URL's control and bidirectional characters reach the page escaped: its refusal says so in one line")
        func hostileURLRefused() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace, arguments: ["--dev"])
            let browser = try Browser()
            try browser.navigate(web.url)
            try #require(try browser.waitFor("form.open input")).type("im://chat?rootCateID=1&peer=a%1B%5B2J%E2%80%AE")
            try browser.click("form.open button")
            // The refusal comes from the page's worker: on a busy machine its start takes a while.
            #expect(try browser.waitFor("#notice-log", containing: #"peer id has control or bidirectional characters (a\x1b[2J\u{202e}); ids are plain text"#, timeout: 60))
            let said = try #require(try browser.textContent("#notice-log"))
            #expect(!said.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E }, "\(said)")
        }

        @Test("script and markup a peer sends through the broker show verbatim as text and add no element, with the Content-Security-Policy on and off", arguments: [true, false])
        func hostileTextInert(policy: Bool) throws {
            let root = try Workspace()
            let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
            let alice = try broker.workspace(for: "alice")
            let bob = try broker.workspace(for: "bob")
            let web = try WebServing(bob, environment: policy ? [:] : ["IMHOST_WEB_CSP": "off"])
            #expect(web.process.waitFor("connected to"), "\(web.process.stdout)\(web.process.stderr)")
            let browser = try Browser()
            try browser.open(chat: houseChat(with: "alice"), on: web)

            let hostile = #"<img src=x onerror="document.body.dataset.owned='img'"><script>document.body.dataset.owned='script'</script><b>bold</b> & "quoted" 'single'"#
            let sent = try transcript(alice, with: "bob", [hostile])
            #expect(sent.status == 0, "\(sent.stderr)")
            #expect(try browser.waitFor(".message.received .bubble.text", containing: "<b>bold</b>"), "the message did not arrive")
            // Verbatim: every character as sent, nothing inserted (the browser wraps it).
            let bubble = try #require(try browser.textContent(".message.received .bubble.text"))
            #expect(bubble == hostile, "\(bubble)")
            #expect(try browser.execute("return document.querySelectorAll('#page img, #page script, #page b').length") as? Int == 0)
            #expect(try browser.execute("return document.body.dataset.owned ?? null") == nil)
            // The peer's name and the conversation list are text too.
            try browser.click("nav.back a")
            #expect(try browser.waitFor("#conversations li", containing: "<script>"))
            #expect(try browser.execute("return document.querySelectorAll('#conversations img, #conversations script, #conversations b').length") as? Int == 0)
            #expect(try browser.execute("return document.body.dataset.owned ?? null") == nil)
        }

        @Test("two people, each with their own imhost web, in two windows of one browser: what alice sends arrives on bob's open page, and her page shows it delivered, then read")
        func twoPeople() throws {
            let people = try TwoPeopleInABrowser()
            let (alice, bob, aliceWeb, bobWeb) = (people.alice, people.bob, people.aliceWeb, people.bobWeb)
            #expect(try alice.cookies().map(\.name).sorted() == ["imhost-\(aliceWeb.port)", "imhost-\(bobWeb.port)"].sorted(),
                    "one profile holds both sessions, kept apart by the port in their names")

            try alice.send("hi bob, from a browser")
            #expect(try bob.waitFor(".message.received .bubble.text", containing: "hi bob, from a browser"), "bob's page did not show the arrival")
            #expect(try alice.waitFor(".message.sent .state", containing: "read ✓✓"), "alice's page did not show it read")

            try bob.send("hello alice")
            #expect(try alice.waitFor(".message.received .bubble.text", containing: "hello alice"))
            #expect(try bob.waitFor(".message.sent .state", containing: "read ✓✓"))
            #expect(try alice.findAll(".message").count == 2 && bob.findAll(".message").count == 2)
        }
    }

    @Suite("The open page follows the host live")
    struct WebLiveTests {
        @Test("a kill switch set in host.json moves the open page to the legacy page with its history, and lifted, back")
        func killSwitch() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace, arguments: ["--dev"])
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            try browser.send("before the switch")
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "before the switch"))

            try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""killSwitch": { "lines": []"#, with: #""killSwitch": { "lines": ["house"]"#))
            #expect(try browser.waitFor("#page .tag", containing: "legacy page"), "the page did not follow host.json")
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "before the switch"), "the history stays")
            try workspace.writeConfig()
            #expect(try browser.waitFor("#page .tag", containing: "house page"))
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "before the switch"))
        }

        @Test("a fleet kill the operator publishes moves the open page to the legacy page without a reload")
        func fleetKill() throws {
            let root = try Workspace()
            let broker = try TestBroker(in: root.root, users: ["alice"])
            let op = try operatorWorkspace(broker)
            let alice = try broker.workspace(for: "alice")
            let web = try WebServing(alice, arguments: ["--dev"])
            #expect(web.process.waitFor("connected to"))
            let browser = try Browser()
            try browser.open(chat: houseChat(with: "bob"), on: web)
            #expect(try browser.waitFor("#page .tag", containing: "house page"))
            try browser.execute("window.sameDocument = true")
            var status = ""
            try #require(waitUntil {
                status = (try? fleet(["status"], op))?.stdout ?? ""
                return status.contains("1 host: 1 running")
            }, "\(status)")

            let killed = try fleet(["kill", "house", "--init"], op)
            #expect(killed.status == 0, "\(killed.stderr)")
            #expect(try browser.waitFor("#page .tag", containing: "legacy page"), "the page did not follow the fleet")
            #expect(try browser.waitFor("#page .route", containing: "fleet"))
            #expect(try browser.execute("return window.sameDocument === true") as? Bool == true, "the page was not reloaded")
        }

        @Test("a line that crashes on a click: the page says which line crashed and reopens on the page the converter now chooses; other pages go on")
        func crashOnClick() throws {
            let workspace = try crashyWorkspace()
            let web = try WebServing(workspace, arguments: ["--dev"], environment: ["IMHOST_CRASHY": "menu:abort"])
            let browser = try Browser()
            try browser.open(chat: crashyURL, on: web)
            #expect(try browser.waitFor("#page .title h1", containing: "Crashy chat with tester"))
            try browser.send("before the crash")
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "before the crash"))
            try browser.execute("window.sameDocument = true")

            try browser.click("#page .menu summary")
            try browser.click("#page .menu button.line")
            let crashSaid = try browser.waitFor("#notice-log .alert", containing: "crashy")
            let said = try browser.textContent("#notice-log") ?? ""
            #expect(crashSaid, "\(said)")
            #expect(try browser.waitFor("#page .tag", containing: "legacy page"), "the page did not reopen on what the converter now chooses")
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "before the crash"))
            #expect(try browser.execute("return window.sameDocument === true") as? Bool == true)
            #expect(workspace.crashes.contains { $0.line == "crashy" })

            // The server goes on serving: another chat opens and works.
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor("#page .tag", containing: "house page"))
            try browser.send("after the crash")
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "after the crash"))
        }

        @Test("a new build of the line installed under an open page reaches it, with its history, and says so")
        func rebuiltLine() throws {
            let workspace = try rentWorkspace()
            let web = try WebServing(workspace, arguments: ["--dev"])
            let browser = try Browser()
            try browser.open(chat: rentURL, on: web)
            #expect(try browser.waitFor("#page .title h1", containing: "Rent 0.2.0 with u42"))
            try browser.send("before the new build")
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "before the new build"))
            try browser.execute("window.sameDocument = true")

            try workspace.installOver("rent.so", product: "FixtureRentNew")
            #expect(try browser.waitFor("#page .title h1", containing: "Rent 0.3.0 with u42"), "the new build did not reach the page")
            #expect(try browser.waitFor("#notice-log", containing: "line rent reloaded: 0.2.0 → 0.3.0"))
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "before the new build"))
            #expect(try browser.execute("return window.sameDocument === true") as? Bool == true)
            #expect(!FileManager.default.fileExists(atPath: workspace.data + "/crashes.log"), "a new build is not a crash")
        }
    }
}

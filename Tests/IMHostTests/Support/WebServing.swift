import Foundation
import Testing

/// `imhost web` run in a workspace as a person runs it: the address read from what it prints,
/// stopped with Ctrl-C (SIGINT) when released.
final class WebServing {
    let process: RunningProcess
    /// The address it printed, token included.
    let url: String
    let port: Int
    var origin: String { "http://127.0.0.1:\(port)" }

    init(_ workspace: Workspace, arguments: [String] = [], environment: [String: String] = [:]) throws {
        process = try RunningProcess(BuildProducts.imhost, ["web"] + arguments, in: workspace.root, environment: environment)
        guard process.waitFor("?token="),
              let match = process.stdout.firstMatch(of: /http:\/\/127\.0\.0\.1:(\d+)\/\?token=[0-9a-f]+/), let port = Int(match.1) else {
            process.signal(SIGKILL)
            throw Workspace.Failure("imhost web printed no address: \(process.stdout)\(process.stderr)")
        }
        url = String(match.0)
        self.port = port
    }

    deinit {
        process.signal(SIGINT)
        _ = process.finish()
    }

    /// A request to this server as a program (not a browser) makes it, every header the test's.
    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil) throws -> LoopbackHTTP.Response {
        try LoopbackHTTP.request(port: port, method, path, headers: headers, body: body.map { Data($0.utf8) })
    }
}

extension Browser {
    /// Opens `chatURL` as a person does: the server's address (which signs the browser in, the
    /// first time), the jump URL pasted into the start page's form, Open. Waits for the page.
    func open(chat chatURL: String, on web: WebServing) throws {
        try navigate(web.url)
        let field = try #require(try waitFor("form.open input"), "no start page at \(web.origin)")
        try field.type(chatURL)
        try click("form.open button")
        if try waitFor("#page .title h1") == nil {
            let shown = try execute("return document.body.innerText") as? String ?? ""
            Issue.record("the page did not come: \(shown)")
        }
    }

    /// Clicks what `selector` finds first. A live page is drawn anew when something changes: an
    /// element found just before a drawing is gone by the click, so it is found again.
    func click(_ selector: String) throws {
        for attempt in 1...5 {
            let element = try #require(try waitFor(selector), "nothing on the page matches \(selector)")
            do {
                try element.click()
                return
            } catch let error as WebDriverError where Self.redrawn(error) && attempt < 5 {
                continue
            }
        }
    }

    /// Whether WebDriver refused an element because the page was drawn anew under it: the
    /// element is gone ("stale") or, in the middle of the drawing, not yet where it can be used.
    private static func redrawn(_ error: WebDriverError) -> Bool {
        error.code == "stale element reference" || error.code == "element not interactable"
    }

    /// Types `text` into the chat's input bar and presses Send.
    func send(_ text: String) throws {
        for attempt in 1...5 {
            let field = try #require(try waitFor("form[data-send] input"), "the page has no input bar")
            do {
                try field.type(text)
                break
            } catch let error as WebDriverError where Self.redrawn(error) && attempt < 5 {
                continue
            }
        }
        try click("form[data-send] button[type=submit]")
    }

    /// Opens the page's menu and picks the platform item that asks first (`kind`: clear,
    /// report); its dialog opens, and `answer` (`cancel`, or `kind` itself) closes it.
    func answerMenuQuestion(_ kind: String, _ answer: String) throws {
        if try execute("return document.querySelector('#page details.menu').open") as? Bool != true { try click("#page .menu summary") }
        try click("#page .menu button[data-ask=\(kind)]")
        #expect(try waitUntil("document.getElementById('\(kind)-dialog').open"))
        try click("#\(kind)-dialog button[value=\(answer)]")
        #expect(try waitUntil("!document.getElementById('\(kind)-dialog').open"))
    }

    /// The text of what `selector` finds first, hidden parts too (a closed `<details>`).
    func textContent(_ selector: String) throws -> String? {
        try execute("const found = document.querySelector(arguments[0]); return found ? found.textContent : null", [selector]) as? String
    }
}

extension Workspace {
    /// Stores a message `key` with `payload` (JSON) from the peer of `chat`, as `imhost play`
    /// stores a scenario's `receive` (with `photos`, the pictures it carries): how a test has a
    /// message arrive on a page, which has no verb for it (a typed "/recv" is text).
    func receive(_ key: String, _ payload: String, in chat: String = houseChatURL, photos: [String] = []) throws {
        try receive([Arrival(key: key, payload: payload, photos: photos)], in: chat)
    }

    /// A message to store as received: its key, its payload (JSON) and the pictures it carries.
    struct Arrival {
        var key: String
        var payload: String
        var photos: [String] = []
    }

    /// Stores `arrivals` from the peer of `chat`, in order, with one `imhost play`.
    func receive(_ arrivals: [Arrival], in chat: String) throws {
        let scenario = root + "/receive-\(UUID().uuidString).json"
        let steps = arrivals.map { arrival in
            let pictures = arrival.photos.map { "\"\($0)\"" }.joined(separator: ",")
            return #"{ "receive": "\#(arrival.key)", "payload": \#(arrival.payload), "photos": [\#(pictures)] }"#
        }
        try "[ { \"open\": \"\(chat)\" },\n  \(steps.joined(separator: ",\n  ")) ]\n".write(toFile: scenario, atomically: true, encoding: .utf8)
        let played = try imhost(["play", scenario, "--data", data], in: self)
        #expect(played.status == 0, "\(played.stdout)\(played.stderr)")
    }

    /// Sends `text` in the house chat with u42 (through `imhost chat`, no broker) and marks the
    /// newest message failed for `reason` (its JSON), as a courier stores a refusal: the code,
    /// the peer, and the peer's words as they came.
    func sendAndFail(_ text: String, reason: String) throws {
        _ = try imhost(["chat", houseChatURL], input: text + "\n/quit\n", in: self)
        let stored = try run("/usr/bin/sqlite3", [data + "/users/me/messages.sqlite3",
                                                  "UPDATE messages SET state = 'failed', reason = '\(reason)' WHERE id = (SELECT max(id) FROM messages)"])
        #expect(stored.status == 0, "\(stored.stderr)")
    }

    /// Stores a house listing from u42 with the flat's photo: a listing card that shows a photo.
    func receiveListingWithPhoto(title: String) throws {
        try receive("house.listing", #"{"id":"L1001","title":"\#(title)","price":4200,"area":56,"rooms":2,"status":"available"}"#,
                    photos: [PhotoFixtures.path("flat.jpg")])
    }
}

/// alice and bob, each with their own `imhost web` on one private broker, connected, and each
/// with the house chat with the other open in a window of one browser.
struct TwoPeopleInABrowser {
    let root: Workspace
    let broker: TestBroker
    /// Their folders (a workspace's folder goes with it).
    let aliceHome: Workspace, bobHome: Workspace
    let aliceWeb: WebServing
    let bobWeb: WebServing
    let alice: Browser
    let bob: Browser

    init(dev: Bool = true) throws {
        root = try Workspace()
        broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        aliceHome = try broker.workspace(for: "alice")
        bobHome = try broker.workspace(for: "bob")
        aliceWeb = try WebServing(aliceHome, arguments: dev ? ["--dev"] : [])
        bobWeb = try WebServing(bobHome, arguments: dev ? ["--dev"] : [])
        for web in [aliceWeb, bobWeb] { #expect(web.process.waitFor("connected to"), "\(web.process.stdout)\(web.process.stderr)") }
        alice = try Browser()
        bob = try alice.secondSession()
        try alice.open(chat: houseChat(with: "bob"), on: aliceWeb)
        try bob.open(chat: houseChat(with: "alice"), on: bobWeb)
    }
}

import Foundation
import Testing

/// Every suite that drives a browser is nested in this one, so they run one at a time: Chromium
/// takes a core or more while a page loads, and two cores are shared by the whole test run.
/// Join it with `extension BrowserSuites { @Suite("…") struct MyTests { … } }`.
@Suite("In a headless browser", .serialized, .heavy(.browser))
enum BrowserSuites {}

/// A headless Chromium driven over WebDriver, as a person would use it: open an address, find
/// what the page shows, click, type, read. Its profile is a temporary folder of its own; its
/// chromedriver is private. Released, it ends its session, chromedriver and every Chromium
/// process, and removes its folder.
///
/// Waiting is for the page to show something (`waitUntil`, `waitFor`), never for time to pass.
final class Browser {
    /// This browser's temporary folder: the Chromium profile (`profile/`), and screenshots if a
    /// test writes them here.
    let folder: String
    private let sessionID: String
    private let driver: ChromeDriver
    /// The browser a second session attached to, kept alive while this session lives.
    private let attachedTo: Browser?
    /// Chromium's browser process, and the address its DevTools listen on (what a second
    /// session attaches to).
    private let browserPID: Int32?
    private let debuggerAddress: String?

    /// What every test's Chromium runs with. `--no-sandbox`: the tests run as root, where
    /// Chromium's sandbox refuses to start. A proxy that is not there: Chromium goes straight to
    /// loopback addresses (127.0.0.1, localhost) and reaches nothing else, so a page that asks
    /// the internet for anything gets an error in the console, and Chromium's own background
    /// requests go nowhere.
    private static func options(profile: String) -> [String: Any] {
        ["args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile, "--window-size=1200,900",
                  "--proxy-server=http://127.0.0.1:9",
                  // A microphone that plays a tone, granted without asking: the Voice item records.
                  "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"],
         // The first window shows about:blank, not the new tab page Debian's Chromium fetches from
         // the default search engine's site.
         "prefs": ["session.restore_on_startup": 4, "session.startup_urls": ["about:blank"]]]
    }

    /// Starts chromedriver and a Chromium with a new profile, and opens a session.
    init() throws {
        Heavy.require(.browser)
        var template = Array(URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("imhost-browser-XXXXXX").path.utf8CString)
        guard let made = mkdtemp(&template) else { throw ChromeDriver.Failure(description: "mkdtemp failed") }
        folder = String(cString: made)
        var started: ChromeDriver?
        do {
            let driver = try ChromeDriver(in: folder)
            started = driver
            let capabilities: [String: Any] = [
                "goog:chromeOptions": Self.options(profile: folder + "/profile"),
                // The console's messages, for `consoleLog()`.
                "goog:loggingPrefs": ["browser": "ALL"],
                "timeouts": Self.timeouts,
            ]
            let created = try driver.command("POST", "/session", ["capabilities": ["alwaysMatch": capabilities]], timeout: 60) as? [String: Any]
            sessionID = try Self.sessionID(of: created)
            let granted = created?["capabilities"] as? [String: Any]
            browserPID = (granted?["goog:processID"] as? Int).map { Int32($0) }
            debuggerAddress = (granted?["goog:chromeOptions"] as? [String: Any])?["debuggerAddress"] as? String
            attachedTo = nil
            self.driver = driver
        } catch {
            // Chromium first, or it writes into the profile while it is removed.
            started?.stop()
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// A page that does not load in a minute fails its command. A wait ends at its own deadline:
    /// the script timeout only bounds a script that never answers.
    private static let timeouts = ["script": 600_000, "pageLoad": 60_000]

    /// A second session in the same Chromium, so in the same profile (its cookies and storage),
    /// in a window of its own: two people's pages open side by side in one browser. Chromium
    /// keeps one process a profile, so a second session cannot start its own Chromium on this
    /// profile (the new one hands over to the running one and exits); it attaches to the running
    /// one through its DevTools address instead.
    func secondSession() throws -> Browser {
        guard let debuggerAddress else { throw ChromeDriver.Failure(description: "this session has no DevTools address to attach to") }
        return try Browser(attachingTo: self, at: debuggerAddress)
    }

    private init(attachingTo browser: Browser, at debuggerAddress: String) throws {
        folder = browser.folder
        driver = browser.driver
        attachedTo = browser
        browserPID = nil
        self.debuggerAddress = nil
        let created = try driver.command("POST", "/session", ["capabilities": ["alwaysMatch": [
            "goog:chromeOptions": ["debuggerAddress": debuggerAddress],
            "timeouts": Self.timeouts,
        ]]], timeout: 60) as? [String: Any]
        sessionID = try Self.sessionID(of: created)
        let window = try driver.command("POST", "/session/\(sessionID)/window/new", ["type": "window"]) as? [String: Any]
        guard let handle = window?["handle"] as? String else { throw ChromeDriver.Failure(description: "no window handle in \(String(describing: window))") }
        try driver.command("POST", "/session/\(sessionID)/window", ["handle": handle])
    }

    private static func sessionID(of created: [String: Any]?) throws -> String {
        guard let id = created?["sessionId"] as? String else { throw ChromeDriver.Failure(description: "no session id in \(String(describing: created))") }
        return id
    }

    deinit {
        if attachedTo != nil {
            // An attached session leaves the browser running when it ends: close its window.
            _ = try? command("DELETE", "/window")
            _ = try? driver.command("DELETE", "/session/\(sessionID)", timeout: 30)
        } else {
            _ = try? driver.command("DELETE", "/session/\(sessionID)", timeout: 30)
            driver.stop(alsoKilling: browserPID)
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// A command of this session, e.g. `command("GET", "/title")`.
    @discardableResult
    func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> Any? {
        try driver.command(method, "/session/\(sessionID)\(path)", body)
    }

    // MARK: The page

    /// Opens `url` and returns once it has loaded.
    func navigate(_ url: String) throws { try command("POST", "/url", ["url": url]) }

    /// The address in the address bar.
    func currentURL() throws -> String { try command("GET", "/url") as? String ?? "" }

    func title() throws -> String { try command("GET", "/title") as? String ?? "" }

    /// Minimizes this session's window: its page is no longer in view (its document is hidden).
    func minimize() throws { try command("POST", "/window/minimize", [:]) }

    /// Brings a minimized window back, at the size the browser starts with.
    func restore() throws { try command("POST", "/window/rect", ["width": 1200, "height": 900]) }

    /// The first element `selector` (CSS) matches, or nil.
    func find(_ selector: String) throws -> PageElement? {
        do {
            return PageElement(try command("POST", "/element", ["using": "css selector", "value": selector]), in: self)
        } catch let error as WebDriverError where error.code == "no such element" {
            return nil
        }
    }

    /// Every element `selector` (CSS) matches, in document order.
    func findAll(_ selector: String) throws -> [PageElement] {
        (try command("POST", "/elements", ["using": "css selector", "value": selector]) as? [Any] ?? []).compactMap { PageElement($0, in: self) }
    }

    /// Runs `script` as the body of a function in the page (`arguments` holds `arguments`;
    /// a `PageElement` goes as the element) and returns what it returns, as JSON (`nil` for null
    /// or undefined). Scripts run this way are not held to the page's Content-Security-Policy.
    @discardableResult
    func execute(_ script: String, _ arguments: [Any] = []) throws -> Any? {
        try command("POST", "/execute/sync", ["script": script, "args": arguments.map(PageElement.json)])
    }

    // MARK: Waiting for the page

    /// Waits until `condition`, a JavaScript expression (it may use `args`, which holds
    /// `arguments`), is truthy in the page, or `timeout` seconds pass; returns whether it held.
    /// The page checks it at each change of its document (a MutationObserver) and every 50 ms
    /// for what changes no element (the address, cookies); a condition that throws counts as
    /// not yet. When the page navigates meanwhile, the new page is waited on.
    @discardableResult
    func waitUntil(_ condition: String, _ arguments: [Any] = [], timeout: Double = 20) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        let script = """
            const args = Array.from(arguments).slice(0, -2);
            const [milliseconds, done] = Array.from(arguments).slice(-2);
            const holds = () => { try { return Boolean(\(condition)); } catch (error) { return false; } };
            if (holds()) return done(true);
            const observer = new MutationObserver(() => { if (holds()) finish(true); });
            const poll = setInterval(() => { if (holds()) finish(true); }, 50);
            const giveUp = setTimeout(() => finish(holds()), milliseconds);
            function finish(result) { observer.disconnect(); clearInterval(poll); clearTimeout(giveUp); done(result); }
            observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
            """
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            do {
                return try command("POST", "/execute/async", ["script": script, "args": arguments.map(PageElement.json) + [Int(left * 1000)]]) as? Bool == true
            } catch let error as WebDriverError where error.code == "script timeout" {
                // chromedriver says so when the page navigates away under the script: the
                // session's own script timeout is far beyond any wait.
                continue
            }
        }
    }

    /// Waits until an element matches `selector`, and returns it (nil if none came in time).
    func waitFor(_ selector: String, timeout: Double = 20) throws -> PageElement? {
        try waitUntil("document.querySelector(args[0]) !== null", [selector], timeout: timeout) ? find(selector) : nil
    }

    /// Waits until an element matching `selector` shows `text` in its text.
    @discardableResult
    func waitFor(_ selector: String, containing text: String, timeout: Double = 20) throws -> Bool {
        try waitUntil("Array.from(document.querySelectorAll(args[0])).some(element => element.textContent.includes(args[1]))",
                      [selector, text], timeout: timeout)
    }

    // MARK: What a test checks besides the page

    struct Cookie {
        var name: String
        var value: String
        var domain: String
        var path: String
        var httpOnly: Bool
        var secure: Bool
        /// "Strict", "Lax" or "None".
        var sameSite: String?
    }

    /// The cookies the browser holds for the current page.
    func cookies() throws -> [Cookie] {
        (try command("GET", "/cookie") as? [[String: Any]] ?? []).map {
            Cookie(name: $0["name"] as? String ?? "", value: $0["value"] as? String ?? "", domain: $0["domain"] as? String ?? "",
                   path: $0["path"] as? String ?? "", httpOnly: $0["httpOnly"] as? Bool ?? false, secure: $0["secure"] as? Bool ?? false,
                   sameSite: $0["sameSite"] as? String)
        }
    }

    /// Makes the window `width` by `height` CSS pixels (the page's view, for a screenshot).
    func resize(width: Int, height: Int) throws {
        try command("POST", "/window/rect", ["width": width, "height": height])
    }

    /// Writes what the window shows to a PNG file at `path`.
    func screenshot(to path: String) throws {
        guard let encoded = try command("GET", "/screenshot") as? String, let png = Data(base64Encoded: encoded) else {
            throw ChromeDriver.Failure(description: "the screenshot was not base64")
        }
        try png.write(to: URL(fileURLWithPath: path))
    }

    struct ConsoleEntry {
        /// "SEVERE", "WARNING", "INFO" or "DEBUG".
        var level: String
        var message: String
    }

    /// What the pages wrote to the console (errors, a refused script, `console.log`) since the
    /// last call: chromedriver hands each entry out once.
    func consoleLog() throws -> [ConsoleEntry] {
        (try command("POST", "/se/log", ["type": "browser"]) as? [[String: Any]] ?? []).map {
            ConsoleEntry(level: $0["level"] as? String ?? "", message: $0["message"] as? String ?? "")
        }
    }
}

/// An element of the page, as WebDriver names it.
struct PageElement {
    /// The key WebDriver names an element under in JSON.
    static let key = "element-6066-11e4-a52e-4f735466cecf"

    let id: String
    let browser: Browser

    init?(_ json: Any?, in browser: Browser) {
        guard let id = (json as? [String: Any])?[Self.key] as? String else { return nil }
        self.id = id
        self.browser = browser
    }

    /// An argument of a script as JSON: an element as WebDriver names it, the rest as it is.
    static func json(_ argument: Any) -> Any {
        (argument as? PageElement).map { [key: $0.id] } ?? argument
    }

    @discardableResult
    private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> Any? {
        try browser.command(method, "/element/\(id)\(path)", body)
    }

    /// The text as the page shows it (hidden text left out).
    func text() throws -> String { try command("GET", "/text") as? String ?? "" }

    /// The attribute `name`, or nil if the element has none.
    func attribute(_ name: String) throws -> String? { try command("GET", "/attribute/\(name)") as? String }

    func click() throws { try command("POST", "/click", [:]) }

    /// Types `text` into the element, as keys pressed.
    func type(_ text: String) throws { try command("POST", "/value", ["text": text]) }
}

import Foundation
import IMHost

/// The chat page in a real headless Chromium (Debian's `chromium` and `chromium-driver`, as the
/// browser tests use them): how long a chat of 1,000 messages takes to show its first screen at a
/// phone's width against a desktop's, in the same run. axe-core is never run here.
enum BrowserBenchmark {
    /// Marks, in the page, when the first messages are painted: the first drawing that holds one,
    /// two animation frames later (the frame they are painted in has gone). Milliseconds from
    /// the navigation's start (`performance.now()`).
    static let firstScreen = """
        (() => {
          const look = () => {
            if (window.__firstScreen || !document.querySelector('.messages .message')) return false;
            window.__inserted = performance.now();
            requestAnimationFrame(() => requestAnimationFrame(() => { window.__firstScreen = window.__firstScreen || performance.now(); }));
            return true;
          };
          new MutationObserver((_, observer) => { if (look()) observer.disconnect(); }).observe(document, { subtree: true, childList: true });
        })();
        """

    /// `chats` are chats of 1,000 messages each, none opened yet; `signIn` the address `imhost
    /// web` printed. Each is opened once from the list of chats, alternately at 375 and at 1280
    /// CSS pixels.
    static func firstScreen(server: Int32, webPort: UInt16, signIn: String, chats: [String], folder: String) throws -> Row {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") else {
            return Row(what: "a chat of 1,000 messages, first screen in Chromium", measure: "not measured: no /usr/bin/chromedriver (make deps installs it)",
                       figure: "-", baseline: "-", ratio: "-", target: "-", met: nil)
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Its output (and Chromium's, which it passes on) goes to a file: a pipe nobody reads
        // while the pages load would fill, and stop them both.
        let log = folder + "/chromedriver.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let driver = Process()
        driver.executableURL = URL(fileURLWithPath: "/usr/bin/chromedriver")
        driver.arguments = ["--port=0"]
        driver.currentDirectoryURL = URL(fileURLWithPath: folder)
        driver.environment = ProcessInfo.processInfo.environment.merging(["HOME": folder]) { $1 }
        let output = FileHandle(forWritingAtPath: log)
        driver.standardOutput = output
        driver.standardError = output
        try driver.run()
        defer {
            kill(driver.processIdentifier, SIGTERM)
            driver.waitUntilExit()
        }
        var port: UInt16?
        let deadline = now() + 30_000_000_000
        while port == nil, now() < deadline {
            let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            port = said.firstMatch(of: /started successfully on port (\d+)/).flatMap { UInt16($0.output.1) }
            if port == nil { usleep(20_000) }
        }
        guard let port else {
            throw WebBenchmark.Failure(description: "chromedriver named no port within 30 s: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        let session = try WebDriver(port: port, profile: folder + "/profile")
        defer { session.end() }
        progress("web: Chromium started")
        try session.cdp("Page.addScriptToEvaluateOnNewDocument", ["source": firstScreen])
        try session.navigate(signIn)
        var times: [Int: [Double]] = [375: [], 1280: []]
        // Per opening: painted, the document received, its script run (DOMContentLoaded), the
        // first drawing put in the page; the page's own marks: the shared stream's lock held, the
        // stream joined, its first event heard.
        var parts: [Int: [[Double]]] = [:]
        for (index, chat) in chats.enumerated() {
            // Alternately first: neither width always meets a warmer browser.
            let width = index % 2 == 0 ? 375 : 1280
            try session.cdp("Emulation.setDeviceMetricsOverride", ["width": width, "height": width == 375 ? 812 : 800,
                                                                   "deviceScaleFactor": 1, "mobile": width == 375])
            let address = "http://127.0.0.1:\(webPort)/chat?url=" + (chat.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? chat)
            // From the list of chats, as a person opens one (WebDriver waits for it to load).
            // Straight from another chat, the new page waits besides for the old one to let go
            // of the shared stream's lock as it goes (110-140 ms in all here: docs/performance.md).
            try session.navigate("http://127.0.0.1:\(webPort)/")
            // As a person opens a chat from the list: the server has had the moment since the
            // last chat to make its spare worker ready (it starts one once a page is drawn).
            waitForSpare(of: server)
            try session.navigate(address)
            let shown = try session.executeAsync("""
                const done = arguments[arguments.length - 1];
                const started = Date.now();
                (function wait() {
                  const loaded = performance.getEntriesByType('navigation')[0];
                  if (window.__firstScreen) return done([window.__firstScreen, loaded.responseEnd, loaded.domContentLoadedEventEnd, window.__inserted, ...['imhost:stream-lock', 'imhost:stream-joined', 'imhost:stream-first-event'].map((name) => (performance.getEntriesByName(name)[0] || { startTime: 0 }).startTime)]);
                  if (Date.now() - started > 30000) return done(-1);
                  setTimeout(wait, 5);
                })();
                """)
            guard let marks = shown as? [Double], marks.count == 7 else {
                throw WebBenchmark.Failure(description: "the chat \(chat) showed no message in Chromium within 30 s")
            }
            times[width, default: []].append(marks[0])
            parts[width, default: []].append(marks)
        }
        let phone = WebBenchmark.percentile(times[375]!, 0.5), desktop = WebBenchmark.percentile(times[1280]!, 0.5)
        let p50 = { (index: Int) in format(WebBenchmark.percentile(parts[375]!.map { $0[index] }, 0.5), 0) }
        progress("web: Chromium at 375 px, p50 from the navigation: document \(p50(1)) ms, script run \(p50(2)) ms, first drawing in \(p50(3)) ms, painted \(p50(0)) ms, the stream's lock held \(p50(4)) ms, joined \(p50(5)) ms, its first event \(p50(6)) ms")
        return Row(what: "a chat of 1,000 messages, first screen in Chromium", measure: "p50, from the list: navigation to the first messages painted, at 375 px",
                   figure: "\(format(phone, 1)) ms", baseline: "\(format(desktop, 1)) ms at 1280 px", ratio: "\(format(phone / desktop, 2))x",
                   target: "<= 1.2x and <= 100 ms", met: phone <= desktop * 1.2 && phone <= 100)
    }
}

/// Waits, at most 5 s, until `server` keeps a spare worker that has finished starting: its CPU
/// time stays the same over 50 ms.
func waitForSpare(of server: Int32) {
    func cpu(_ pid: Int32) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After "pid (comm) ": state is field 0, utime 11, stime 12.
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }
    let deadline = now() + 5_000_000_000
    while now() < deadline {
        let spares = children(of: server).filter { !pageWorkers(of: server).contains($0) }
        if let spare = spares.first, let before = cpu(spare) {
            usleep(50_000)
            if cpu(spare) == before { return }
        } else {
            usleep(10_000)
        }
    }
}

/// Just enough of WebDriver, over chromedriver's loopback port, for the benchmark: one headless
/// session, pages opened, scripts run, DevTools commands sent.
final class WebDriver {
    let port: UInt16
    private var session = ""

    init(port: UInt16, profile: String) throws {
        self.port = port
        // As the browser tests run it (Tests/IMHostTests/Support/Browser.swift): the first window
        // on about:blank (Debian's new tab page would fetch from the internet, through a proxy
        // that is not there, and the first navigation wait for it), nothing reached but loopback.
        let created = try command("POST", "/session", ["capabilities": ["alwaysMatch": [
            "goog:chromeOptions": [
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile, "--proxy-server=http://127.0.0.1:9"],
                "prefs": ["session.restore_on_startup": 4, "session.startup_urls": ["about:blank"]],
            ],
            "timeouts": ["script": 60_000, "pageLoad": 60_000],
        ]]]) as? [String: Any]
        guard let id = created?["sessionId"] as? String else { throw WebBenchmark.Failure(description: "chromedriver made no session: \(String(describing: created))") }
        session = id
    }

    func end() { _ = try? command("DELETE", "/session/\(session)", nil) }

    func navigate(_ url: String) throws { try command("POST", "/session/\(session)/url", ["url": url]) }

    func executeAsync(_ script: String) throws -> Any? {
        try command("POST", "/session/\(session)/execute/async", ["script": script, "args": []])
    }

    func cdp(_ name: String, _ parameters: [String: Any]) throws {
        try command("POST", "/session/\(session)/goog/cdp/execute", ["cmd": name, "params": parameters])
    }

    /// A WebDriver command; its `value`, or the error it answered thrown.
    @discardableResult
    func command(_ method: String, _ path: String, _ body: [String: Any]?) throws -> Any? {
        let json = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let fd = try WebClient.connect(port)
        defer { close(fd) }
        // No command waits for ever: past two minutes the benchmark says so and stops.
        var limit = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: \(json.count)\r\nConnection: close\r\n\r\n"
        let request = Array(head.utf8) + [UInt8](json)
        _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        // Read to the end its Content-Length says: chromedriver may keep the connection open.
        var reply = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        var split: Range<Int>?
        var length = Int.max
        while reply.count < (split?.upperBound ?? 0) + length || split == nil {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            reply += buffer[0..<count]
            if split == nil, let found = reply.firstRange(of: Array("\r\n\r\n".utf8)) {
                split = found
                let head = String(decoding: reply[..<found.lowerBound], as: UTF8.self).lowercased()
                length = head.firstMatch(of: /content-length:\s*(\d+)/).flatMap { Int($0.output.1) } ?? Int.max
            }
        }
        guard let split else {
            throw WebBenchmark.Failure(description: "chromedriver did not answer \(method) \(path) within 2 minutes")
        }
        let answer = try JSONSerialization.jsonObject(with: Data(reply[split.upperBound...])) as? [String: Any]
        if let value = answer?["value"] as? [String: Any], let error = value["error"] as? String {
            throw WebBenchmark.Failure(description: "WebDriver \(path): \(error): \(value["message"] ?? "")")
        }
        return answer?["value"]
    }
}

import Foundation

/// A private chromedriver (Debian's chromium-driver) for one test's browser: started on a loopback
/// port it picks itself, spoken to in WebDriver's JSON over HTTP, stopped with every Chromium
/// process it started. Nothing else shares it, so a test never meets another test's browser.
final class ChromeDriver {
    static let executable = "/usr/bin/chromedriver"

    private let port: Int
    private let process: RunningProcess
    private var stopped = false

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts chromedriver in `folder` and waits until it says which port it listens on.
    init(in folder: String) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw Failure(description: "no \(Self.executable): the browser tests need Debian's chromium and chromium-driver; run make deps as root to install them")
        }
        // Port 0 has chromedriver bind a free port and print it, so no other program can take
        // the port between its choice and its use. HOME is the folder: what Chromium keeps
        // outside its profile (its crash reports, its certificate store) stays in it too.
        // With port 0, chromedriver binds the port it drew once for each address family; in a
        // full run beside another (thousands of loopback ports in use) its IPv4 bind failed once
        // ("IPv4 port not available") and it ended. A new start draws another port.
        var attempt = 1
        while true {
            let started = try RunningProcess(Self.executable, ["--port=0"], in: folder, environment: ["HOME": folder])
            do {
                port = try Self.announcedPort(of: started)
                process = started
                return
            } catch let failure as Failure where failure.description.contains("port not available") && attempt < 5 {
                attempt += 1
            }
        }
    }

    /// Waits for chromedriver's "ChromeDriver was started successfully on port N." and reads N.
    private static func announcedPort(of process: RunningProcess) throws -> Int {
        while true {
            if let port = announcedPort(in: process.stdout + process.stderr) { return port }
            // The port ends its line with a period: wait for one more period than is in yet.
            let periods = (process.stdout + process.stderr).count { $0 == "." }
            guard process.waitFor(".", occurrences: periods + 1, timeout: 30) else {
                process.signal(SIGKILL)
                let result = process.finish()
                throw Failure(description: "chromedriver did not start: \(result.stdout)\(result.stderr)")
            }
        }
    }

    /// N in "started successfully on port N.", once the line is in whole.
    private static func announcedPort(in output: String) -> Int? {
        guard let start = output.range(of: "started successfully on port ") else { return nil }
        let rest = output[start.upperBound...]
        guard let end = rest.firstIndex(of: ".") else { return nil }
        return Int(rest[..<end])
    }

    deinit { stop() }

    /// Sends one WebDriver command and returns its `value` (JSON as JSONSerialization reads it;
    /// `nil` for JSON null). A refusal throws `WebDriverError` with chromedriver's error code.
    @discardableResult
    func command(_ method: String, _ path: String, _ body: [String: Any]? = nil, timeout: Double = 120) throws -> Any? {
        let body = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let response = try LoopbackHTTP.request(port: port, method, path, headers: body == nil ? [] : [("Content-Type", "application/json; charset=utf-8")],
                                                body: body, timeout: timeout)
        guard let reply = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
            throw WebDriverError(command: "\(method) \(path)", code: "HTTP \(response.status)", message: String(decoding: response.body, as: UTF8.self))
        }
        let value = reply["value"]
        if let refusal = value as? [String: Any], let code = refusal["error"] as? String {
            throw WebDriverError(command: "\(method) \(path)", code: code, message: refusal["message"] as? String ?? "")
        }
        return value is NSNull ? nil : value
    }

    /// Ends chromedriver and the Chromium it started, and waits until the last of their processes
    /// is gone: every Chromium process holds chromedriver's standard output, which it inherited,
    /// so the end of that output is the end of them all.
    func stop(alsoKilling browser: Int32? = nil) {
        guard !stopped else { return }
        stopped = true
        do {
            try command("GET", "/shutdown", timeout: 30)
        } catch {
            // chromedriver did not answer: end it and its browser by force.
            process.signal(SIGKILL)
            if let browser { kill(browser, SIGKILL) }
        }
        _ = process.finish()
    }
}

/// A refusal from chromedriver: the W3C error code ("no such element", "javascript error", …)
/// and its message, with the command that drew it.
struct WebDriverError: Error, CustomStringConvertible {
    var command: String
    var code: String
    var message: String
    var description: String { "\(command): \(code): \(message)" }
}

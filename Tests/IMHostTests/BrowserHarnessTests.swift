import Foundation
import Testing

/// A folder of files served over loopback HTTP by Python's http.server, as any web server would
/// serve them. Stopped when released.
final class StaticSite {
    let workspace: Workspace
    let url: String
    private let server: RunningProcess

    init(_ files: [String: String]) throws {
        workspace = try Workspace()
        for (name, contents) in files { try contents.write(toFile: workspace.root + "/" + name, atomically: true, encoding: .utf8) }
        // -u: Python buffers what it prints into a pipe, and the port is in its first line.
        server = try RunningProcess("/usr/bin/python3", ["-u", "-m", "http.server", "--bind", "127.0.0.1", "0", "--directory", workspace.root],
                                    in: workspace.root)
        guard server.waitFor(") ..."), let port = server.stdout.firstMatch(of: /127\.0\.0\.1 port (\d+)/)?.1 else {
            throw Workspace.Failure("python3 -m http.server did not start: \(server.stdout)\(server.stderr)")
        }
        url = "http://127.0.0.1:\(port)/"
    }

    deinit {
        // It inherits the test runner's blocked SIGTERM and SIGINT.
        server.signal(SIGKILL)
        _ = server.finish()
    }
}

/// A page with a name field, a button whose script (page.js, from the page's own origin) adds a
/// greeting to a list, and an inline script that marks the body if it runs. `csp` puts a
/// Content-Security-Policy meta allowing scripts from the page's origin only.
func harnessPage(csp: Bool) -> String {
    """
    <!doctype html>
    <html><head><meta charset="utf-8">
    \(csp ? #"<meta http-equiv="Content-Security-Policy" content="script-src 'self'">"# : "")
    <title>Harness page</title>
    <script src="page.js" defer></script>
    </head><body>
    <input id="name"> <button id="add">Add</button>
    <ul id="greetings"></ul>
    <script>document.body.dataset.inline = "ran";</script>
    </body></html>
    """
}

let harnessScript = """
    document.getElementById("add").addEventListener("click", () => {
      const item = document.createElement("li");
      item.className = "greeting";
      item.textContent = "Hello, " + document.getElementById("name").value;
      document.getElementById("greetings").append(item);
    });
    document.cookie = "visited=yes; SameSite=Strict; path=/";
    """

/// The PNG signature and the width and height in its IHDR chunk.
func pngSize(_ data: Data) -> (width: Int, height: Int)? {
    let bytes = [UInt8](data.prefix(24))
    guard bytes.count == 24, bytes.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], bytes[12..<16] == [0x49, 0x48, 0x44, 0x52] else { return nil }
    let number = { (at: Int) in bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
    return (number(16), number(20))
}

/// The processes whose working folder or command line is `folder`: chromedriver starts in the
/// browser's folder, and Chromium and its helpers inherit that folder or name the profile in it.
func processes(using folder: String) -> [Int32] {
    let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return pids.compactMap { Int32($0) }.filter { pid in
        let cwd = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd")) ?? ""
        let commandLine = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return cwd.hasPrefix(folder) || commandLine.contains(folder)
    }
}

extension BrowserSuites {
    @Suite("The browser the tests drive, on a page of its own")
    struct BrowserHarnessTests {
        let site: StaticSite

        init() throws {
            site = try StaticSite(["csp.html": harnessPage(csp: true), "open.html": harnessPage(csp: false), "page.js": harnessScript])
        }

        @Test("typing a name and clicking the button shows the greeting the page's script adds; its scripts are counted; a wait outlasts a navigation")
        func clickAddsElement() throws {
            let browser = try Browser()
            try browser.navigate(site.url + "csp.html")
            #expect(try browser.title() == "Harness page")
            #expect(try browser.currentURL() == site.url + "csp.html")
            #expect(try browser.find(".greeting") == nil)

            let name = try #require(try browser.find("#name"))
            try name.type("Ada")
            try #require(try browser.find("#add")).click()
            let greeting = try #require(try browser.waitFor(".greeting"), "the click added no greeting")
            #expect(try greeting.text() == "Hello, Ada")
            #expect(try greeting.attribute("class") == "greeting")
            #expect(try greeting.attribute("title") == nil)
            try #require(try browser.find("#add")).click()
            #expect(try browser.waitUntil("document.querySelectorAll('.greeting').length === 2"))
            #expect(try browser.findAll(".greeting").map { try $0.text() } == ["Hello, Ada", "Hello, Ada"])
            #expect(try browser.execute("return document.querySelectorAll('script').length") as? Int == 2)
            #expect(try browser.execute("return arguments[0].textContent", [greeting]) as? String == "Hello, Ada")
            // A wait that cannot be met says so when its time is up.
            #expect(try browser.waitFor("#greetings", containing: "Goodbye", timeout: 0.5) == false)
            // A wait goes on across the page changing under it: the page leaves for open.html
            // while the wait runs, and its inline script (no CSP there) marks the body.
            try browser.execute("setTimeout(() => { location.href = 'open.html'; }, 200)")
            #expect(try browser.waitUntil("document.body.dataset.inline === 'ran'"))
            #expect(try browser.currentURL() == site.url + "open.html")
        }

        @Test("a Content-Security-Policy of script-src 'self' stops the page's inline script and the console says so; without it the script runs")
        func cspBlocksInlineScript() throws {
            let browser = try Browser()
            try browser.navigate(site.url + "open.html")
            #expect(try browser.execute("return document.body.dataset.inline ?? null") as? String == "ran")
            #expect(try browser.consoleLog().filter { $0.message.contains("Content Security Policy") }.isEmpty)

            try browser.navigate(site.url + "csp.html")
            #expect(try browser.execute("return document.body.dataset.inline ?? null") == nil)
            let console = try browser.consoleLog()
            // "Executing inline script violates the following Content Security Policy directive …"
            let refusals = console.filter { $0.message.contains("inline script") && $0.message.contains("Content Security Policy") }
            #expect(refusals.map(\.level) == ["SEVERE"], "\(console)")
            // page.js, from the page's own origin, ran.
            try #require(try browser.find("#add")).click()
            #expect(try browser.waitFor(".greeting") != nil)
        }

        @Test("the cookie the page set is held SameSite=Strict and readable by scripts (not HttpOnly)")
        func cookies() throws {
            let browser = try Browser()
            try browser.navigate(site.url + "csp.html")
            let visited = try #require(try browser.cookies().first { $0.name == "visited" })
            #expect(visited.value == "yes" && visited.sameSite == "Strict" && !visited.httpOnly && !visited.secure)
            #expect(visited.domain == "127.0.0.1" && visited.path == "/")
        }

        @Test("a screenshot is a PNG of the 1200-pixel-wide window")
        func screenshot() throws {
            let browser = try Browser()
            try browser.navigate(site.url + "csp.html")
            let path = browser.folder + "/page.png"
            try browser.screenshot(to: path)
            let size = try #require(pngSize(try Data(contentsOf: URL(fileURLWithPath: path))), "not a PNG")
            #expect(size.width == 1200 && size.height > 0)
        }

        @Test("two sessions in one profile: each drives its own window, both see the profile's cookie; released, no process is left")
        func twoSessionsOneProfile() throws {
            var alice: Browser? = try Browser()
            let folder = try #require(alice?.folder)
            var bob: Browser? = try #require(try alice?.secondSession())
            try alice?.navigate(site.url + "csp.html")
            try bob?.navigate(site.url + "open.html")
            #expect(try bob?.execute("return document.cookie") as? String == "visited=yes", "the cookie alice's page set is in the shared profile")
            try #require(try alice?.find("#add")).click()
            #expect(try alice?.waitFor(".greeting") != nil)
            #expect(try bob?.find(".greeting") == nil, "bob's window is another page")
            #expect(try alice?.currentURL() == site.url + "csp.html")
            #expect(try bob?.currentURL() == site.url + "open.html")
            #expect(try bob?.execute("return document.visibilityState") as? String == "visible")
            #expect(try alice?.execute("return document.visibilityState") as? String == "visible")

            bob = nil
            #expect(try alice?.currentURL() == site.url + "csp.html", "alice's session outlives bob's")
            let running = processes(using: folder)
            #expect(running.count > 2, "chromedriver and Chromium's processes run in the browser's folder: \(running)")
            alice = nil
            #expect(processes(using: folder).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: folder))
        }
    }
}

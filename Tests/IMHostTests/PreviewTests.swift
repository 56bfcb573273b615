import Foundation
import Testing

/// `imhost preview` run as a line author runs it: the workbench's address read from what it
/// prints, stopped with Ctrl-C (SIGINT) when released.
final class Previewing {
    let process: RunningProcess
    let url: String

    /// The scratch folder it works in (`/tmp/imhost-play-PID-…`).
    var scratch: String {
        let prefix = "imhost-play-\(process.pid)-"
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []).first { $0.hasPrefix(prefix) }.map { "/tmp/" + $0 } ?? "/nonexistent"
    }

    init(_ arguments: [String], in folder: String, environment: [String: String] = [:]) throws {
        process = try RunningProcess(BuildProducts.imhost, ["preview"] + arguments, in: folder, environment: environment)
        guard process.waitFor("/workbench?token="),
              let match = process.stdout.firstMatch(of: /http:\/\/127\.0\.0\.1:\d+\/workbench\?token=[0-9a-f]+/) else {
            process.signal(SIGKILL)
            throw Workspace.Failure("imhost preview printed no address: \(process.stdout)\(process.stderr)")
        }
        url = String(match.0)
    }

    deinit {
        process.signal(SIGINT)
        _ = process.finish()
    }
}

/// Replaces `target` with a copy of `source` as a linker does: written beside it, then renamed
/// over it (a new file: the workbench sees a new build).
func replaceBuild(_ target: String, with source: String) throws {
    let part = target + ".part"
    try? FileManager.default.removeItem(atPath: part)
    try FileManager.default.copyItem(atPath: source, toPath: part)
    #expect(rename(part, target) == 0)
}

extension Browser {
    /// Script for the workbench's frame `index` (in document order) of the sample section `section`.
    static func frame(_ section: Int, _ index: Int) -> String {
        "document.querySelectorAll('section.sample:not(.chat)')[\(section)].querySelectorAll('iframe')[\(index)]"
    }
}

extension BrowserSuites {
    @Suite("The workbench (imhost preview)")
    struct PreviewTests {
        @Test("each sample is drawn alone in live frames (phone and desktop, light and dark) beside the terminal's drawing, its rule errors and axe's findings; a new build shows in place, keeping the author's place; a build of another line is refused in one line")
        func workbench() throws {
            let workspace = try Workspace()
            let library = workspace.root + "/libTasks.so"
            try FileManager.default.copyItem(atPath: BuildProducts.library("FixtureCards"), toPath: library)
            let preview = try Previewing(["--library", library], in: workspace.root)
            let browser = try Browser()
            try browser.resize(width: 1500, height: 1400)
            try browser.navigate(preview.url)
            #expect(try browser.waitUntil("document.querySelectorAll('section.sample:not(.chat)').length === 3"))
            let names = try browser.findAll("section.sample:not(.chat) h2 .name").map { try $0.text() }
            #expect(names == ["asking", "answered", "a space in an id"], "the samples, in the order the builders give them")
            #expect(try browser.waitFor("header .build", containing: "tasks 1.0.0 · build 1"))

            // Four frames a sample, each the chat page drawing that sample alone, in the scheme asked.
            for section in 0..<3 {
                let sources = try #require(try browser.execute(
                    "return Array.from(document.querySelectorAll('section.sample:not(.chat)')[\(section)].querySelectorAll('iframe'), f => f.getAttribute('src'))") as? [String])
                #expect(sources.count == 4)
                #expect(sources.allSatisfy { $0.contains("&only=\(section + 1)&") }, "\(sources)")
                #expect(sources.map { $0.hasSuffix("scheme=dark") } == [false, true, false, true], "\(sources)")
            }
            let drawn = "(f => f.contentDocument && f.contentDocument.querySelector('#m1 .card .card-title') && f.contentDocument.querySelectorAll('.message:not([hidden])').length === 1)"
            for index in 0..<4 { #expect(try browser.waitUntil(drawn + "(\(Browser.frame(0, index)))"), "frame \(index) shows the sample alone") }
            let background = "return getComputedStyle(\(Browser.frame(0, 1)).contentDocument.body).backgroundColor"
            #expect(try browser.execute(background) as? String == "rgb(15, 17, 21)", "the dark frame is dark whatever the system prefers")
            #expect(try browser.execute(background.replacingOccurrences(of: "[1]", with: "[0]")) as? String == "rgb(238, 240, 243)")
            #expect(try browser.execute("return \(Browser.frame(2, 0)).offsetWidth") as? Int == 375 + 2, "a phone's width, and its border")

            // The terminal's drawing, and the rules each card keeps or breaks, with the path.
            #expect(try browser.waitFor("section.sample:nth-of-type(1) pre.terminal", containing: "❓ Which day suits you?"))
            #expect(try browser.waitFor("section.sample:nth-of-type(1) pre.terminal", containing: "/tap 1 send"))
            #expect(try browser.find("section.sample:nth-of-type(1) .findings.rules.ok") != nil)
            #expect(try browser.waitFor("section.sample:nth-of-type(3) .findings.rules.bad .path", containing: "buttons[0].id"))
            // axe over each card, light and dark: two findings' lines a sample.
            let checked = try browser.waitUntil("document.querySelectorAll('.findings.axe li').length === 6", timeout: 60)
            let shown = try browser.execute("return document.querySelector('main').innerText") as? String ?? ""
            #expect(checked, "\(shown)")
            let findings = try browser.findAll(".findings.axe li.bad").map { try $0.text() }
            #expect(findings.isEmpty, "\(findings)")

            // The inputs fill and the button presses, as in a chat: the line's answer revises the
            // card, in every frame of the sample.
            _ = try browser.execute("const doc = \(Browser.frame(0, 0)).contentDocument; doc.getElementById('in-1-answer').value = 'Sunday'; doc.querySelector(\"#m1 button[data-button='send']\").click()")
            let answered = "(f => (f.contentDocument.querySelector('#m1 .card') || {}).textContent.includes('Sunday'))"
            #expect(try browser.waitUntil(answered + "(\(Browser.frame(0, 3)))"), "the revised card shows in the desktop dark frame")
            #expect(try browser.waitUntil("\(Browser.frame(0, 0)).contentDocument.querySelector('#notices').textContent.includes('answered \"Sunday\"')"))

            // A new build: the samples are drawn again in the same frames, the author's place kept.
            _ = try browser.execute("document.querySelectorAll('section.sample:not(.chat)')[1].scrollIntoView(); \(Browser.frame(1, 0)).dataset.kept = 'yes'")
            let top = try #require(try browser.execute("return Math.round(document.querySelectorAll('section.sample:not(.chat)')[1].getBoundingClientRect().top)") as? Int)
            try replaceBuild(library, with: BuildProducts.library("FixtureCards"))
            #expect(try browser.waitUntil("document.getElementById('workbench').dataset.drawnBy === '2'"))
            #expect(preview.process.waitFor("took build 2 of line tasks"))
            #expect(try browser.execute("return \(Browser.frame(1, 0)).dataset.kept") as? String == "yes", "the frames stay")
            #expect(try browser.execute("return Math.round(document.querySelectorAll('section.sample:not(.chat)')[1].getBoundingClientRect().top)") as? Int == top)
            #expect(try browser.waitUntil("!" + answered + "(\(Browser.frame(0, 3)))"), "the new build's samples are the samples as the line gives them")

            // A build of another line is not taken: the page says why, and keeps build 2.
            try replaceBuild(library, with: BuildProducts.library("House"))
            #expect(try browser.waitFor("p.build-problem[role=alert]", containing: "'house'"))
            #expect(try browser.waitFor("header .build", containing: "build 2"))
            #expect(try browser.execute("return document.querySelectorAll('section.sample:not(.chat)').length") as? Int == 3)
        }
    }
}

extension BrowserSuites.PreviewTests {
    /// `swift build` in `folder`, with the toolchain imhost names.
    static func build(_ folder: String) throws {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") + ":/opt/swift/usr/bin"
        let built = try run("/bin/sh", ["-c", "swift build 2>&1"], currentDirectory: folder, environment: ["PATH": path, "NO_COLOR": "1"])
        try #require(built.status == 0, "swift build failed: \(built.stdout.suffix(3000))")
    }

    @Test("a line new-line wrote: its samples show; its sources changed and built again, the changed sample shows in place", .heavy(.compiler))
    func rebuiltLine() throws {
        let workspace = try Workspace()
        let folder = workspace.root + "/shop"
        let made = try imhost(["new-line", "shop", "--path", folder], in: workspace)
        #expect(made.status == 0, "\(made.stderr)")
        try Self.build(folder)
        let preview = try Previewing([folder], in: workspace.root)
        let browser = try Browser()
        try browser.navigate(preview.url)
        #expect(try browser.waitUntil("document.querySelectorAll('section.sample:not(.chat)').length === 2"))
        #expect(try browser.findAll("section.sample:not(.chat) h2 .name").map { try $0.text() } == ["short", "long text"])
        #expect(try browser.waitUntil("(f => f.contentDocument && (f.contentDocument.querySelector('#m1 .card-title') || {}).textContent === '📝 Hello from Shop')(\(Browser.frame(0, 0)))"))

        let source = folder + "/Sources/Shop/NoteBuilder.swift"
        let text = try String(contentsOfFile: source, encoding: .utf8)
        try text.replacingOccurrences(of: "Hello from \\(type)", with: "Hello again").replacingOccurrences(of: "Hello from Shop", with: "Hello again")
            .write(toFile: source, atomically: true, encoding: .utf8)
        try Self.build(folder)
        #expect(try browser.waitUntil("document.getElementById('workbench').dataset.drawnBy === '2'", timeout: 30))
        #expect(try browser.waitUntil("(f => (f.contentDocument.querySelector('#m1 .card-title') || {}).textContent === '📝 Hello again')(\(Browser.frame(0, 0)))"),
                "the new build's sample, in the frame that was there")
    }
}

@Suite("imhost preview and plugins --samples")
struct SampleCheckTests {
    @Test("plugins --samples draws each line's samples in a child and says each card that breaks a rule, with its path and code, and exits 1")
    func pluginsSamples() throws {
        let workspace = try Workspace.standard()
        try workspace.install("FixtureCards", as: "tasks.so")
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""jobs": { "enabled": true } }"#, with: #""jobs": { "enabled": true }, "tasks": {} }"#))
        let plain = try imhost(["plugins"], in: workspace)
        #expect(plain.status == 0, "\(plain.stdout)")
        #expect(!plain.stdout.contains("samples"), "without --samples, nothing is drawn")

        let text = try imhost(["plugins", "--samples"], in: workspace)
        #expect(text.status == 1, "a card that breaks a rule fails the check")
        #expect(text.stdout.contains("samples: 3, every card keeps the card rules"), "\(text.stdout)")
        #expect(text.stdout.contains(#"      tasks.broken "a space in an id": buttons[0].id: "do it" has a space"#), "\(text.stdout)")

        let json = try imhost(["plugins", "--samples", "--json"], in: workspace)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])["plugins"] as? [[String: Any]]
        let tasks = try #require(rows?.first { $0["line"] as? String == "tasks" }?["samples"] as? [[String: Any]])
        #expect(tasks.map { $0["name"] as? String } == ["asking", "answered", "a space in an id"])
        let problems = try #require(tasks.last?["problems"] as? [[String: Any]])
        #expect(problems.map { $0["code"] as? String } == ["not-an-id"])
        #expect(problems.map { $0["path"] as? String } == ["buttons[0].id"])
        let house = try #require(rows?.first { $0["line"] as? String == "house" }?["samples"] as? [[String: Any]])
        #expect(house.count == 3 && house.allSatisfy { ($0["problems"] as? [Any])?.isEmpty == true && $0["failure"] == nil })
    }

    @Test("a sample whose builder crashes costs the drawing child only: the sample says it crashed, and the other lines are listed")
    func crashingSample() throws {
        let workspace = try Workspace.standard()
        try workspace.install("FixtureCrashy", as: "crashy.so")
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""jobs": { "enabled": true } }"#, with: #""jobs": { "enabled": true }, "crashy": {} }"#))
        // Names given twice, or holding a control character, are refused, each on its sample.
        let calm = try imhost(["plugins", "--samples", "--json"], in: workspace)
        #expect(calm.status == 1)
        let drawn = try #require(try samples(of: "crashy", in: calm.stdout))
        #expect(drawn.map { $0["name"] as? String } == ["ticking", "plain", "plain", "tab\there"])
        #expect(drawn.map { $0["failure"] == nil } == [true, true, false, false], "\(drawn)")

        // A crash costs its own sample: a new child draws the ones after it.
        let crashed = try imhost(["plugins", "--samples"], in: workspace, environment: ["IMHOST_CRASHY": "builder:segv"])
        #expect(crashed.status == 1)
        #expect(crashed.stdout.contains(#"crashy.bomb "ticking": drawing it crashed (SIGSEGV)"#), "\(crashed.stdout)")
        #expect(crashed.stdout.contains("samples: 4, 3 with mistakes or not drawn"), "the samples after the crash are drawn: \(crashed.stdout)")
        #expect(crashed.stdout.contains("house        loaded"), "\(crashed.stdout)")
        // One that never ends costs its own sample after its time, and the server's loop nothing.
        let hung = try imhost(["plugins", "--samples", "--json"], in: workspace, environment: ["IMHOST_CRASHY": "builder:loop"])
        let waited = try #require(try samples(of: "crashy", in: hung.stdout))
        #expect((waited.first?["failure"] as? String)?.hasPrefix("drawing it took more than") == true, "\(waited)")
        #expect(waited.count == 4)
        let plugins = try imhost(["plugins"], in: workspace)
        #expect(plugins.stdout.contains("crashy       loaded"), "a sample's crash is not held against the line: \(plugins.stdout)")
    }

    @Test("a build whose sample never ends is drawn off the server's loop: the workbench answers meanwhile, and the build is taken with that sample said")
    func hangingSample() throws {
        let workspace = try Workspace()
        let library = workspace.root + "/libCrashy.so"
        try FileManager.default.copyItem(atPath: BuildProducts.library("FixtureCrashy"), toPath: library)
        // Every drawing of the bomb's sample never ends (the drawer is killed after its time).
        let preview = try Previewing(["--library", library], in: workspace.root, environment: ["IMHOST_CRASHY": "builder:loop"])
        let match = try #require(preview.url.firstMatch(of: /:(\d+)\/workbench\?token=([0-9a-f]+)/))
        let port = Int(match.1)!
        let signIn = try LoopbackHTTP.request(port: port, "GET", "/workbench?token=\(match.2)")
        let cookie = try #require(signIn.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        try replaceBuild(library, with: BuildProducts.library("FixtureCrashy"))
        // The new build is seen (it settles in 100 ms) and its bomb hangs its drawer for seconds:
        // the page is served meanwhile.
        #expect(waitUntil(timeout: 10) { (try? FileManager.default.contentsOfDirectory(atPath: preview.scratch + "/Plugins").contains { $0.hasSuffix(".part") }) == true })
        let page = try LoopbackHTTP.request(port: port, "GET", "/workbench", headers: [("Cookie", cookie)])
        #expect(page.status == 200)
        #expect(!preview.process.stdout.contains("took build 2"), "answered while the samples were being drawn")
        #expect(preview.process.waitFor("took build 2 of line crashy", timeout: 30))
    }

    /// The samples `plugins --samples --json` drew for `line`.
    func samples(of line: String, in json: String) throws -> [[String: Any]]? {
        let rows = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return (rows?["plugins"] as? [[String: Any]])?.first { $0["line"] as? String == line }?["samples"] as? [[String: Any]]
    }

    @Test("imhost preview refuses, in one line, a folder that is no package, a package not built, and a library that is no line")
    func refusals() throws {
        let workspace = try Workspace()
        let none = try imhost(["preview", workspace.root], in: workspace)
        #expect(none.status == 2)
        #expect(none.stderr.contains("has no Package.swift"), "\(none.stderr)")
        try "// swift-tools-version: 6.1\n".write(toFile: workspace.root + "/Package.swift", atomically: true, encoding: .utf8)
        let unbuilt = try imhost(["preview", workspace.root], in: workspace)
        #expect(unbuilt.status == 2)
        #expect(unbuilt.stderr.contains("run swift build in"), "\(unbuilt.stderr)")
        try "not a library".write(toFile: workspace.root + "/libJunk.so", atomically: true, encoding: .utf8)
        let junk = try imhost(["preview", "--library", workspace.root + "/libJunk.so"], in: workspace)
        #expect(junk.status == 1)
        #expect(junk.stderr.split(separator: "\n").count == 1, "\(junk.stderr)")
        #expect(junk.stderr.contains("cannot be previewed"), "\(junk.stderr)")
    }
}

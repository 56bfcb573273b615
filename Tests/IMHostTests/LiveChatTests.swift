import Foundation
import Testing
@testable import IMHostRuntime
@testable import IMHost

/// A chat on the rent line (build 0.2.0 installed), whose newer build 0.3.0 is installed over it.
let rentURL = "im://chat?rootCateID=7&peer=u42"

func rentWorkspace() throws -> Workspace {
    let workspace = try Workspace()
    try workspace.install("FixtureRentOld", as: "rent.so")
    try workspace.writeConfig("""
        { "plugins": "Plugins", "lines": { "rent": { "enabled": true } },
          "routes": [ { "rootCateID": 7, "cateID": "*", "line": "rent" } ] }
        """)
    return workspace
}

extension Workspace {
    /// Installs a plugin product, or `contents`, over `name` as an installer does: written under
    /// a temporary name, then renamed over the file.
    func installOver(_ name: String, product: String? = nil, contents: String? = nil) throws {
        let temporary = ".\(name).new"
        if let product { try install(product, as: temporary) } else { try writePlugin(temporary, contents: contents ?? "") }
        guard rename(plugins + "/" + temporary, plugins + "/" + name) == 0 else { throw Failure("rename: \(String(cString: strerror(errno)))") }
    }

    /// The open chats `imhost plugins --json` lists on the row of `file`.
    func openChats(onRowOf file: String) throws -> [[String: Any]] {
        let json = try imhost(["plugins", "--json"], in: self)
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let row = (report?["plugins"] as? [[String: Any]])?.first { ($0["file"] as? String)?.hasSuffix("/" + file) == true }
        return try #require(row?["openChats"] as? [[String: Any]])
    }
}

@Suite("A rebuilt line reaches the open chat", .heavy(.broker))
struct RebuiltLineTests {
    @Test("a new build installed under an open chat: the chat moves to it, with its history, says so, and counts no crash")
    func movesToNewBuild() throws {
        let workspace = try rentWorkspace()
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", rentURL], in: workspace.root)
        chat.send("before the new build")
        try #require(chat.waitFor("│ before the new build │"), "\(chat.stdout)\(chat.stderr)")
        #expect(chat.stdout.contains("Rent 0.2.0 with u42"))
        #expect(try workspace.openChats(onRowOf: "rent.so").map { $0["version"] as? String } == ["0.2.0"])

        try workspace.installOver("rent.so", product: "FixtureRentNew")
        #expect(chat.waitFor("line rent reloaded: 0.2.0 → 0.3.0"), "\(chat.stdout)\(chat.stderr)")
        // The new build drew the page again, with the history, just before the notice.
        let reopened = try #require(chat.stdout.range(of: "Rent 0.3.0 with u42").map { chat.stdout[$0.lowerBound...] })
        #expect(reopened.contains("│ before the new build │\n") && reopened.hasSuffix("line rent reloaded: 0.2.0 → 0.3.0\n"))
        chat.send(#"/recv rent.offer {"price":3200}"#)
        #expect(chat.waitFor("│ 🏠 ¥3200 a month │"), "the new build's builder draws the offer")
        chat.send("after the new build")
        #expect(chat.waitFor("│ after the new build │"))
        let running = try workspace.openChats(onRowOf: "rent.so")
        #expect(running.count == 1 && running.first?["pid"] as? Int == Int(chat.pid))
        #expect(running.first?["version"] as? String == "0.3.0" && running.first?["current"] as? Bool == true)

        chat.send("/quit")
        let result = chat.finish()
        #expect(result.status == 0)
        #expect(!result.stderr.contains("crash") && !result.stdout.contains("crash"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.data + "/crashes.log"), "a new build is not a crash")
        #expect(try workspace.openChats(onRowOf: "rent.so").isEmpty, "a chat that ended runs nothing")
    }

    @Test("a build that does not load keeps the chat on the one it runs, says why once, and imhost plugins shows the build the chat runs")
    func brokenBuildKept() throws {
        let workspace = try rentWorkspace()
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", rentURL], in: workspace.root)
        chat.send("one")
        try #require(chat.waitFor("│ one │"), "\(chat.stdout)\(chat.stderr)")

        try workspace.installOver("rent.so", contents: "not a plugin\n")
        let refusal = "imhost: line rent stays on 0.2.0 in this chat: the new rent.so is not loaded: not an ELF shared object (the file starts with \"not a pl\"); build the plugin as a dynamic library"
        #expect(chat.waitFor(refusal), "\(chat.stdout)\(chat.stderr)")
        chat.send(#"/recv rent.offer {"price":3200}"#)
        #expect(chat.waitFor("│ rent 3200 │"), "the build it runs still draws")
        let plugins = try imhost(["plugins"], in: workspace)
        #expect(plugins.status == 1)
        #expect(plugins.stdout.contains("rent.so              -            refused\n    not an ELF shared object"))
        #expect(plugins.stdout.contains("    open chats run 0.2.0 (pid \(chat.pid))\n"), "\(plugins.stdout)")

        // A build that loads, installed next, is taken.
        try workspace.installOver("rent.so", product: "FixtureRentNew")
        #expect(chat.waitFor("line rent reloaded: 0.2.0 → 0.3.0"))
        #expect(chat.stderr.components(separatedBy: refusal).count == 2, "said once: \(chat.stderr)")
        #expect(!(try imhost(["plugins"], in: workspace).stdout.contains("open chats run")), "the chat runs the file as it is")

        // A chat killed outright leaves its record behind; nobody takes it for an open chat.
        chat.signal(SIGKILL)
        _ = chat.finish()
        #expect(FileManager.default.fileExists(atPath: workspace.data + "/run/\(chat.pid).lines"))
        #expect(try workspace.openChats(onRowOf: "rent.so").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: workspace.data + "/run/\(chat.pid).lines"), "the next start removed it")
    }

    @Test("a plugin file still being written is taken only once it stays the same")
    func settles() throws {
        let workspace = try rentWorkspace()
        let path = workspace.plugins + "/rent.so"
        let identity = try #require(FileIdentity.of(path))
        let build = LineBuild(line: "rent", version: "0.2.0", file: path, identity: identity, opened: true)
        let watch = LineBuildWatch()
        #expect(watch.look(at: [build]).isEmpty && !watch.isSettling, "unchanged")
        let deadline = Date().addingTimeInterval(10)
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try file.seekToEnd()
        try file.write(contentsOf: Data("half".utf8))
        var early: [LineBuildWatch.Change] = []
        while !watch.isSettling, Date() < deadline { early += watch.look(at: [build]) }
        #expect(early.isEmpty && watch.isSettling, "a change seen once is not taken")
        try file.write(contentsOf: Data(" and the rest".utf8))
        try file.close()
        let written = try #require(FileIdentity.of(path))
        var changes: [LineBuildWatch.Change] = []
        while changes.isEmpty, Date() < deadline { changes = watch.look(at: [build]) }
        #expect(changes.map(\.identity) == [written], "taken as it stayed, not as it was half-way")
    }
}

@Suite("Typing on a terminal", .heavy(.broker))
struct TerminalTypingTests {
    @Test("a message that arrives while the user types leaves the half-typed line on the screen, and Enter sends it whole")
    func halfTypedSurvivesArrival() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice"), bob = try broker.workspace(for: "bob")
        let terminal = try PseudoTerminal()
        try terminal.run(BuildProducts.imhost, ["chat", houseChat(with: "alice")], in: bob.root)
        try #require(terminal.waitFor("connected to \(broker.url) as bob"), "\(terminal.output)")
        try #require(terminal.waitUntil { $0.hasSuffix("> ") }, "the prompt: \(terminal.output)")
        #expect(!terminal.isCanonical, "the chat reads keys one at a time, and echoes them itself")
        let aliceChat = try broker.chat(alice, with: "bob")
        try #require(aliceChat.waitFor("connected to \(broker.url) as alice"))

        terminal.type("half typ")
        try #require(terminal.waitFor("> half typ"), "echoed as typed")
        aliceChat.send("hello bob")
        #expect(terminal.waitFor("│ hello bob │"), "\(terminal.output)")
        #expect(terminal.waitUntil { _ in terminal.after("│ hello bob │")?.hasSuffix("> half typ") == true },
                "the input line is drawn again below what arrived: \(terminal.after("│ hello bob │") ?? "")")
        terminal.type("ed, then sent\r")
        #expect(aliceChat.waitFor("│ half typed, then sent │"), "sent as one message with the whole text")
        #expect(terminal.waitFor("│ half typed, then sent │"))

        terminal.type("/quit\r")
        #expect(terminal.finish() == 0)
        #expect(terminal.isCanonical, "the terminal is given back as it was")
        aliceChat.send("/quit")
        #expect(aliceChat.finish().status == 0)
    }

    @Test("keys edit the line: Backspace takes a whole character, Ctrl-U clears, arrows are skipped, the limit holds, Ctrl-D ends")
    func lineEditing() throws {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""plugins": "Plugins","#,
                                                                                with: #""plugins": "Plugins", "limits": { "inputLineBytes": 1024 },"#))
        let terminal = try PseudoTerminal()
        try terminal.run(BuildProducts.imhost, ["chat", houseChatURL], in: workspace.root)
        try #require(terminal.waitUntil { $0.hasSuffix("> ") }, "\(terminal.output)")
        // "abc", two Backspaces (DEL, then ^H), Ctrl-U; then a flag and an accented letter
        // taken away with one Backspace each, and an arrow key in between.
        terminal.type("abc\u{7F}\u{8}")
        #expect(terminal.waitUntil { $0.hasSuffix("> a") })
        terminal.type("\u{15}日本語🇯🇵e\u{301}\u{1B}[A\u{7F}\u{7F}\r")
        #expect(terminal.waitFor("│ 日本語 │"), "\(terminal.output)")
        #expect(!terminal.output.contains("[A"))

        terminal.type(String(repeating: "x", count: 1030) + "\r")
        #expect(terminal.waitFor("imhost chat: refused an input line of 1030 bytes: the limit is 1024 (limits.inputLineBytes in host.json); nothing was sent"))
        terminal.type("more\u{4}")
        #expect(terminal.waitUntil { $0.hasSuffix("> more") }, "Ctrl-D on a line that is not empty does nothing")
        terminal.type("\u{15}\u{4}")
        #expect(terminal.finish() == 0)
        #expect(terminal.isCanonical)
    }

    @Test("a worker that crashes leaves the terminal to the chat, and SIGTERM gives it back as it was")
    func terminalGivenBack() throws {
        let workspace = try Workspace.standard()
        let terminal = try PseudoTerminal()
        try terminal.run(BuildProducts.imhost, ["chat", houseChatURL], in: workspace.root)
        try #require(terminal.waitUntil { $0.hasSuffix("> ") }, "\(terminal.output)")
        terminal.type("before")
        try #require(terminal.waitFor("> before"))
        let worker = try #require(children(of: terminal.pid).first)
        kill(worker, SIGSEGV)
        #expect(terminal.waitFor("it was restarted"), "\(terminal.output)")
        #expect(terminal.waitUntil { _ in terminal.after("it was restarted")?.hasSuffix("> before") == true }, "\(terminal.output)")
        #expect(!terminal.isCanonical)
        terminal.type(" and after\r")
        #expect(terminal.waitFor("│ before and after │"))
        kill(terminal.pid, SIGTERM)
        #expect(terminal.finish() == 128 + SIGTERM)
        #expect(terminal.isCanonical)
    }
}

@Suite("A line's file removed under an open chat", .heavy(.broker))
struct RemovedLineFileTests {
    @Test("a plugin file removed under an open chat is said once, not again at every look while it stays gone")
    func removedFileSaidOnce() throws {
        let workspace = try Workspace.standard()
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", houseChatURL], in: workspace.root)
        // A jobs card on the house page opens the jobs line in the chat: its file is watched.
        chat.send(#"/recv jobs.interview {"company":"58 Tech","position":"iOS engineer","time":"2026-01-08 10:00","place":"Building A, 3F"}"#)
        try #require(chat.waitFor("58 Tech"), "\(chat.stdout)\(chat.stderr)")
        try FileManager.default.removeItem(atPath: workspace.plugins + "/jobs.so")
        let gone = "jobs.so is gone from"
        try #require(chat.waitFor(gone), "\(chat.stdout)\(chat.stderr)")
        // A change made after the refusal is seen, settles and is vetted no sooner than the gone
        // file would be again (both settle on the same looks): once the house reload is said,
        // a repeated refusal would have been said too.
        try workspace.installOver("house.so", product: "House")
        #expect(chat.waitFor("line house reloaded"), "\(chat.stdout)\(chat.stderr)")
        chat.send("/quit")
        let result = chat.finish()
        #expect(result.stderr.components(separatedBy: gone).count - 1 == 1, "said once: \(result.stderr)")
    }
}

import Foundation
import Testing
import CIMHostSupport
@testable import IMHost
import IMKit

@Suite("Lines that misbehave in quieter ways")
struct QuietMisbehaviourTests {
    /// House and jobs, and a C line (rootCateID 79) that misbehaves as `how` says in register_line.
    func cWorkspace(_ how: String) throws -> Workspace {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.compileC("crash_plugin.c", as: "ccrash.so", defines: ["CRASH_IN=WHERE_REGISTER", "CRASH_HOW=HOW_\(how)"])
        try workspace.writeConfig(crashyConfig(extra: #", "ccrash": {}"#).replacingOccurrences(
            of: #"{ "rootCateID": 66, "cateID": "*", "line": "crashy" }"#,
            with: #"{ "rootCateID": 66, "cateID": "*", "line": "crashy" }, { "rootCateID": 79, "cateID": "*", "line": "ccrash" }"#))
        return workspace
    }

    @Test("a line that closes the host's descriptors cannot cut the chat off from its supervisor")
    func closesDescriptors() throws {
        let workspace = try cWorkspace("CLOSE_FDS")
        let result = try imhost(["chat", "im://chat?rootCateID=79&peer=p"], input: "one\ntwo\n", in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("[ccrash page]") && result.stdout.contains("│ two │"))
        #expect(workspace.crashes.isEmpty)
        let again = try imhost(["chat", "im://chat?rootCateID=79&peer=p"], input: "", in: workspace)
        #expect(again.stdout.contains("#1 me") && again.stdout.contains("#2 me") && !again.stdout.contains("unreadable"),
                "no answer of the worker ended up in the conversation")
    }

    @Test("what a line prints on standard output reaches the terminal made safe, and a scan is not fooled by it")
    func printsEscapes() throws {
        let workspace = try cWorkspace("NOISE")
        let route = try imhost(["route", "im://chat?rootCateID=79&peer=p"], in: workspace)
        #expect(route.stdout.hasPrefix("page:   ccrash (CarrierPage)"), "\(route.stdout)\(route.stderr)")
        let chat = try imhost(["chat", "im://chat?rootCateID=79&peer=p"], input: "hi\n", in: workspace)
        #expect(chat.status == 0)
        #expect(!chat.stdout.contains("\u{1B}") && !chat.stderr.contains("\u{1B}"), "no raw escape reaches the terminal")
        #expect(chat.stderr.contains("\\x1b]0;PWNED\\x07\\x1b[31mred"))
    }

    @Test("a breadcrumb folder holding a FIFO, a folder or junk does not hang or fool a start")
    func junkBreadcrumbs() throws {
        let workspace = try crashyWorkspace()
        let run = workspace.data + "/run"
        try FileManager.default.createDirectory(atPath: run + "/folder.crumb", withIntermediateDirectories: true)
        #expect(mkfifo(run + "/fifo.crumb", 0o600) == 0)
        try Data("not a breadcrumb".utf8).write(to: URL(fileURLWithPath: run + "/junk.crumb"))
        let route = try imhost(["route", houseChatURL], in: workspace)
        #expect(route.status == 0 && route.stdout.hasPrefix("page:   house"))
        #expect(workspace.crashes.isEmpty)
    }

    @Test("SIGTERM stops a chat at once, even while a line's call hangs, and records no crash")
    func interruptedHang() throws {
        let (workspace, chat) = try chatHungInLineCode()
        chat.signal(SIGTERM)
        let result = chat.finish()
        #expect(result.status == 128 + SIGTERM)
        #expect(workspace.crashes.isEmpty, "stopped from outside: not the line's crash")
    }

    @Test("a worker dies with its supervisor")
    func diesWithSupervisor() throws {
        let workspace = try crashyWorkspace()
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", houseChatURL], in: workspace.root)
        #expect(chat.waitFor("[house page]"))
        let workers = children(of: chat.pid)
        #expect(!workers.isEmpty)
        chat.signal(SIGKILL)
        _ = chat.finish()
        var alive = workers
        for _ in 0..<500 where !alive.isEmpty {
            alive = alive.filter(Breadcrumb.isRunning)
            if !alive.isEmpty { _ = poll(nil, 0, 10) }
        }
        #expect(alive.isEmpty)
    }

    @Test("a crash that cannot be written to the crash log is quarantined anyway, and says so: no crash loop")
    func unrecordable() throws {
        let workspace = try crashyWorkspace()
        try FileManager.default.createDirectory(atPath: workspace.data + "/crashes.log", withIntermediateDirectories: true)
        let result = try crashyChat(workspace, "builder:segv", """
            /recv crashy.bomb {"text":"x"}
            after
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "crashed (SIGSEGV)").count == 2, "one crash, not a loop")
        #expect(result.stderr.contains("It is not in crashes.log (open \(workspace.data)/crashes.log: it is a folder, not a regular file)"), "\(result.stderr)")
        #expect(result.stdout.contains("│ after │"))
    }

    @Test("a crash log with a torn last line still counts the line's crashes")
    func tornCrashLog() throws {
        let workspace = try crashyWorkspace()
        try FileManager.default.createDirectory(atPath: workspace.data, withIntermediateDirectories: true)
        try Data("{\"torn".utf8).write(to: URL(fileURLWithPath: workspace.data + "/crashes.log"))
        _ = try crashyChat(workspace, "builder:abort,note:abort", """
            /recv crashy.bomb {"text":"one"}
            /recv crashy.note {"text":"two"}
            """)
        #expect(workspace.crashes.map(\.quarantined) == ["key", "line"])
    }

    @Test("after a lift, an earlier crash no longer escalates the next one")
    func liftResetsHistory() throws {
        let workspace = try crashyWorkspace()
        _ = try crashyChat(workspace, "builder:abort", #"/recv crashy.bomb {"text":"one"}"# + "\n")
        #expect(try imhost(["quarantine", "lift", "crashy.bomb"], in: workspace).status == 0)
        let again = try crashyChat(workspace, "builder:abort", "")
        #expect(workspace.crashes.map(\.quarantined) == ["key", "key"], "\(again.stderr)")
    }

    @Test("what was queued before a crash is still queued after it, once each")
    func queuedSurvivesACrash() throws {
        let workspace = try crashyWorkspace()
        let result = try crashyChat(workspace, "route:abort", """
            queued one
            /open crashy://boom
            queued two
            """)
        #expect(result.status == 0)
        #expect(result.stdout.contains("#2 me · ") && result.stdout.contains(" · queued"))
        let store = try MessageStore(dataFolder: workspace.data, user: "me")
        #expect(try store.queuedCount() == 2)
        #expect(try store.stored(of: "tester", endingBefore: nil, limit: 10).map(\.state) == [.queued, .queued])
    }

    @Test("a crash in a service's finalize at the end of a chat is recorded")
    func finalizeCrash() throws {
        let workspace = try crashyWorkspace()
        let result = try crashyChat(workspace, "finalize:abort", "/quit\n")
        #expect(workspace.crashes.first?.what == "service" && workspace.crashes.first?.key == "crashy.engine finalize",
                "\(result.stderr)")
    }

    @Test("a line that does not register what it did when vetted is said, and vetted again next time")
    func changedRegistration() throws {
        let workspace = try crashyWorkspace()
        _ = try imhost(["route", houseChatURL], in: workspace)
        let cache = workspace.data + "/plugins.cache"
        let text = try String(contentsOfFile: cache, encoding: .utf8)
        try text.replacingOccurrences(of: "house.listing", with: "house.lxsting").write(toFile: cache, atomically: true, encoding: .utf8)
        let chat = try imhost(["chat", houseChatURL], input: "", in: workspace)
        #expect(chat.stdout.contains("[legacy page]"))
        #expect(chat.stderr.contains("imhost: failed house.so: line 'house': registration failed:") || chat.stderr.contains("imhost: failed house.so: line 'house': it registered something else"),
                "\(chat.stderr)")
        let next = try imhost(["chat", houseChatURL], input: "", in: workspace)
        #expect(next.stdout.contains("[house page]"), "the cache entry was dropped and the file vetted again")
    }

    @Test("a quarantine.json that does not read is said, and kept aside when rewritten")
    func corruptQuarantine() throws {
        let workspace = try crashyWorkspace()
        try FileManager.default.createDirectory(atPath: workspace.data, withIntermediateDirectories: true)
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: workspace.data + "/quarantine.json"))
        let route = try imhost(["route", houseChatURL], in: workspace)
        #expect(route.stderr.contains("quarantine.json does not read"))
        _ = try crashyChat(workspace, "builder:abort", #"/recv crashy.bomb {"text":"x"}"# + "\n")
        #expect(FileManager.default.fileExists(atPath: workspace.data + "/quarantine.json.corrupt"))
        #expect(Quarantine(dataFolder: workspace.data).holds.count == 1)
    }
}

/// A chat of the crashy line whose worker is looping in the line's menu handler (with a call
/// limit long enough that the watchdog never steps in), once its breadcrumb says so.
func chatHungInLineCode() throws -> (Workspace, RunningProcess) {
    let workspace = try crashyWorkspace()
    try workspace.writeConfig(crashyConfig(callSeconds: 600))
    let chat = try RunningProcess(BuildProducts.imhost, ["chat", crashyURL], in: workspace.root,
                                  environment: ["IMHOST_CRASHY": "menu:loop"])
    #expect(chat.waitFor("[crashy page]"))
    chat.send("/menu 4")
    #expect(waitUntilInLineCode(workspace))
    return (workspace, chat)
}

/// Waits until a chat's worker is inside a line's code, as its breadcrumb says.
func waitUntilInLineCode(_ workspace: Workspace) -> Bool {
    waitUntil(timeout: 10) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: workspace.data + "/run")) ?? []
        return names.contains(where: { (Breadcrumb.read(workspace.data + "/run/" + $0)?.depth ?? 0) > 0 })
    }
}

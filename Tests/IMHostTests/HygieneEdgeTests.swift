import Foundation
import Testing
@testable import IMHost

/// Waits until a breadcrumb in `folder` says its process is inside a line's code.
func waitUntilInLineCode(folder: String) -> Bool {
    waitUntil(timeout: 10) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.contains(where: { $0.hasSuffix(".crumb") && (Breadcrumb.read(folder + "/" + $0)?.depth ?? 0) > 0 })
    }
}

/// A crashy workspace whose data folder holds the user's messages and cannot take a new file,
/// not even from root (its `run` folder is gone), and an `$XDG_RUNTIME_DIR` for the private
/// folder. Undo with ``unlock(_:)``.
func lockedCrashyWorkspace(callSeconds: Double = 0.5) throws -> (Workspace, xdg: String) {
    let workspace = try crashyWorkspace()
    try workspace.writeConfig(crashyConfig(callSeconds: callSeconds))
    #expect(try imhost(["chat", crashyURL], input: "", in: workspace).status == 0)
    try FileManager.default.removeItem(atPath: workspace.data + "/run")
    let xdg = workspace.root + "/xdg"
    try FileManager.default.createDirectory(atPath: xdg, withIntermediateDirectories: true)
    let locked = try run("/usr/bin/chattr", ["+i", workspace.data])
    try #require(locked.status == 0, "chattr +i needs CAP_LINUX_IMMUTABLE: \(locked.stderr)")
    return (workspace, xdg)
}

func unlock(_ path: String) { _ = try? run("/usr/bin/chattr", ["-i", path]) }

@Suite("Process hygiene: where breadcrumbs go")
struct BreadcrumbPlaceTests {
    @Test("with neither folder usable, the breadcrumb is kept in memory: said in one line, and a hang is still caught and named")
    func inMemory() throws {
        let (workspace, xdg) = try lockedCrashyWorkspace(callSeconds: 0.5)
        defer { unlock(workspace.data) }
        try FileManager.default.createDirectory(atPath: xdg + "/imhost", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = try run("/usr/bin/chattr", ["+i", xdg + "/imhost"])
        defer { unlock(xdg + "/imhost") }
        let chat = try sh(#"printf '/menu 4\n' | IMHOST_CRASHY=menu:loop timeout 60 "$IMHOST" chat "\#(crashyURL)""#, in: workspace,
                          environment: ["XDG_RUNTIME_DIR": xdg])
        #expect(chat.status == 0, "\(chat.stderr)")
        #expect(chat.stderr.contains("imhost: the chat's breadcrumb is kept in memory: cannot keep it in \(workspace.data)/run (mkdir: Operation not permitted) nor in \(xdg)/imhost (open: Operation not permitted)"), "\(chat.stderr)")
        #expect(chat.stderr.contains("imhost: line 'crashy' hung (no return within 0.5 s) handling menu item 4; line 'crashy' is quarantined"), "\(chat.stderr)")
        #expect(chat.stderr.contains("It could not be recorded"), "the data folder cannot take it: \(chat.stderr)")
    }

    @Test("a <data>/run that is a link, open to others, or another's is refused: the breadcrumb goes to the private folder, nothing through the link",
          arguments: ["link", "mode 777"])
    func runFolderRefused(_ kind: String) throws {
        let workspace = try crashyWorkspace()
        try workspace.writeConfig(crashyConfig(callSeconds: 600))
        let xdg = workspace.root + "/xdg", target = workspace.root + "/elsewhere"
        for folder in [workspace.data, xdg, target] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        if kind == "link" {
            try FileManager.default.createSymbolicLink(atPath: workspace.data + "/run", withDestinationPath: target)
        } else {
            try FileManager.default.createDirectory(atPath: workspace.data + "/run", withIntermediateDirectories: true)
            chmod(workspace.data + "/run", 0o777)
        }
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", crashyURL], in: workspace.root,
                                      environment: ["IMHOST_CRASHY": "menu:loop", "XDG_RUNTIME_DIR": xdg])
        #expect(chat.waitFor("[crashy page]"))
        chat.send("/menu 4")
        #expect(waitUntilInLineCode(folder: xdg + "/imhost"), "the breadcrumb is in the private folder")
        var info = stat()
        #expect(stat(workspace.data, &info) == 0)
        let crumbs = try FileManager.default.contentsOfDirectory(atPath: xdg + "/imhost")
        #expect(crumbs.allSatisfy { $0.hasPrefix("\(info.st_dev)-\(info.st_ino)-") }, "named after its data folder: \(crumbs)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).isEmpty, "nothing was made through the link")
        chat.signal(SIGKILL)
        _ = chat.finish()
    }

    @Test("a breadcrumb left in the private folder is found by the next start of its own data folder, and only of that one")
    func fallbackOrphan() throws {
        let (workspace, xdg) = try lockedCrashyWorkspace(callSeconds: 600)
        defer { unlock(workspace.data) }
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", crashyURL], in: workspace.root,
                                      environment: ["IMHOST_CRASHY": "menu:loop", "XDG_RUNTIME_DIR": xdg])
        #expect(chat.waitFor("[crashy page]"))
        chat.send("/menu 4")
        #expect(waitUntilInLineCode(folder: xdg + "/imhost"))
        let workers = children(of: chat.pid)
        chat.signal(SIGKILL)
        _ = chat.finish()
        while workers.contains(where: Breadcrumb.isRunning) { _ = poll(nil, 0, 10) }

        // Another data folder's start shares the private folder: it leaves the breadcrumb alone.
        let other = try crashyWorkspace()
        let elsewhere = try imhost(["route", crashyURL], in: other, environment: ["XDG_RUNTIME_DIR": xdg])
        #expect(!elsewhere.stderr.contains("found at start"), "\(elsewhere.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: xdg + "/imhost").count == 1)

        unlock(workspace.data)
        let next = try imhost(["route", crashyURL], in: workspace, environment: ["XDG_RUNTIME_DIR": xdg])
        #expect(next.stderr.contains("imhost: found at start: a chat was killed from outside while line 'crashy' was handling menu item 4; recorded in crashes.log, not held against the line"), "\(next.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: xdg + "/imhost").isEmpty, "the breadcrumb was taken")
    }

    @Test("a kill from outside during a builder call never makes a later crash cost the whole line")
    func killNotHeld() throws {
        let workspace = try crashyWorkspace()
        try workspace.writeConfig(crashyConfig(callSeconds: 600))
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", crashyURL], in: workspace.root,
                                      environment: ["IMHOST_CRASHY": "builder:loop"])
        #expect(chat.waitFor("[crashy page]"))
        chat.send(#"/recv crashy.bomb {"text":"b"}"#)
        #expect(waitUntilInLineCode(workspace))
        let workers = children(of: chat.pid)
        chat.signal(SIGKILL)
        _ = chat.finish()
        while workers.contains(where: Breadcrumb.isRunning) { _ = poll(nil, 0, 10) }

        let next = try crashyChat(workspace, "builder:abort", "")
        #expect(next.stderr.contains("found at start: a chat was killed from outside while line 'crashy' was building"), "\(next.stderr)")
        #expect(next.stderr.contains("message key crashy.bomb is quarantined"), "\(next.stderr)")
        #expect(workspace.crashes.map(\.quarantined) == [nil, "key"], "\(workspace.crashes)")
    }
}

@Suite("Process hygiene: the executable and its descriptors")
struct ExecutableTests {
    @Test("a worker restarted after the executable was replaced runs the file the chat started from, never the new one")
    func replacedExecutable() throws {
        let workspace = try crashyWorkspace()
        let bin = workspace.root + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for name in ["imhost", "libIMKit.so"] { try FileManager.default.copyItem(atPath: BuildProducts.folder + "/" + name, toPath: bin + "/" + name) }
        let chat = try RunningProcess(bin + "/imhost", ["chat", crashyURL], in: workspace.root, environment: ["IMHOST_CRASHY": "tap:abort"])
        #expect(chat.waitFor("[crashy page]"))
        // Replaced as an upgrade would: a new file renamed over the old.
        let marker = workspace.root + "/the-new-file-ran"
        try "#!/bin/sh\ntouch \(marker)\nexec sleep 30\n".write(toFile: bin + "/new", atomically: true, encoding: .utf8)
        chmod(bin + "/new", 0o755)
        #expect(rename(bin + "/new", bin + "/imhost") == 0)
        chat.send(#"/recv crashy.note {"text":"n"}"#)
        chat.send("/tap 1")
        #expect(chat.waitFor("crashed (SIGABRT)"), "\(chat.stderr)")
        chat.send("still here")
        #expect(chat.waitFor("│ still here │"))
        let result = chat.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the file now at the path never ran")
    }

    @Test("restarting workers leaks no descriptor")
    func restartsLeakNothing() throws {
        let workspace = try Workspace.standard()
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", houseChatURL], in: workspace.root)
        #expect(chat.waitFor("type a message"))
        func descriptors() -> Int { ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(chat.pid)/fd")) ?? []).count }
        // The first line typed opens the store the supervisor keeps drafts in: counted before.
        chat.send("round 0")
        #expect(chat.waitFor("│ round 0 │"))
        let before = descriptors()
        for round in 1...2 {
            for worker in children(of: chat.pid) { kill(worker, SIGKILL) }
            #expect(chat.waitFor("restarted", occurrences: round), "\(chat.stderr)")
            chat.send("round \(round)")
            #expect(chat.waitFor("│ round \(round) │"))
        }
        #expect(descriptors() == before, "the supervisor holds as many descriptors as before the restarts")
        #expect(chat.finish().status == 0)
    }

    @Test("a low open-file limit still runs a chat, a scan and a crash", arguments: [256, 64])
    func lowFileLimit(_ limit: Int) throws {
        let workspace = try crashyWorkspace()
        let chat = try sh(#"ulimit -n \#(limit); printf 'hello\n/recv crashy.note {"text":"n"}\n/tap 2\n' | IMHOST_CRASHY=tap:abort timeout 60 "$IMHOST" chat "\#(crashyURL)""#,
                          in: workspace)
        #expect(chat.status == 0, "\(chat.stderr)")
        #expect(chat.stdout.contains("│ hello │"), "\(chat.stdout.suffix(600))")
        #expect(chat.stderr.contains("line 'crashy' crashed (SIGABRT)"), "\(chat.stderr)")
        #expect(!chat.stderr.contains("outside any line's code"), "\(chat.stderr)")
        // A changed plugin is scanned again, by a scanner under the same limit.
        unlink(workspace.plugins + "/crashy.so")
        try workspace.install("FixtureCrashy", as: "crashy.so")
        let plugins = try sh(#"ulimit -n \#(limit); timeout 60 "$IMHOST" plugins"#, in: workspace)
        #expect(!plugins.stderr.contains("scanner ended") && !plugins.stdout.contains("scanner ended"), "\(plugins.stdout)\(plugins.stderr)")
    }
}

@Suite("Process hygiene: what is said when things go wrong")
struct SayingTests {
    @Test("a chat whose output is gone stops at once, reading no input, and says so in one line")
    func outputGoneAtOnce() throws {
        let workspace = try Workspace.standard()
        // Its input stays open and empty: it must stop without waiting for a line.
        let chat = try RunningProcess("/bin/sh", ["-c", #"exec "$IMHOST" chat "\#(houseChatURL)" > /dev/full"#], in: workspace.root,
                                      environment: ["IMHOST": BuildProducts.imhost])
        #expect(chat.waitFor("no more input is read"), "\(chat.stderr)")
        let result = chat.finish()
        #expect(result.status == 1)
        let said = result.stderr.split(separator: "\n").filter { $0.contains("standard output") }
        #expect(said == ["imhost chat: cannot write to standard output (No space left on device); stopping, and no more input is read"], "\(result.stderr)")
    }

    @Test("an interrupt while line code hangs ends the chat in two seconds, saying what was killed unfinished")
    func interruptDuringHang() throws {
        let (_, chat) = try chatHungInLineCode()
        chat.signal(SIGINT)
        let result = chat.finish()
        #expect(result.status == 130)
        #expect(result.stderr.contains("imhost: the chat worker did not end within 2 s (line 'crashy' was handling menu item 4); it was killed, so its lines' services were not finalized"), "\(result.stderr)")
    }

    @Test("a crash log that is not a file: the crash still quarantines, and the notice names the log and why")
    func crashLogNotAFile() throws {
        let workspace = try crashyWorkspace()
        try FileManager.default.createDirectory(atPath: workspace.data, withIntermediateDirectories: true)
        #expect(mkfifo(workspace.data + "/crashes.log", 0o600) == 0)
        let chat = try crashyChat(workspace, "tap:abort", "/recv crashy.note {\"text\":\"n\"}\n/tap 1\n")
        #expect(chat.stderr.contains("line 'crashy' is quarantined"), "\(chat.stderr)")
        #expect(chat.stderr.contains("It is not in crashes.log (open \(workspace.data)/crashes.log: it is a FIFO, not a regular file)"), "\(chat.stderr)")
        #expect(try imhost(["route", crashyURL], in: workspace).stdout.contains("reason: quarantined"), "the quarantine was written")
    }

    @Test("a line log that is not a file is said once, naming it")
    func lineLogNotAFile() throws {
        let workspace = try crashyWorkspace()
        try FileManager.default.createDirectory(atPath: workspace.data, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: workspace.data + "/lines.log", withIntermediateDirectories: true)
        let chat = try crashyChat(workspace, "menu:warn", "/menu 4\n/menu 4\n")
        let said = chat.stderr.components(separatedBy: "cannot write lines' log entries to \(workspace.data)/lines.log (it is a folder, not a regular file); they are not kept").count - 1
        #expect(said == 1, "\(chat.stderr)")
        #expect(chat.stderr.contains("[crashy] warning: a warning from crashy"), "warnings still reach standard error")
    }

    @Test("a quarantine file that is a link is refused as a link, and the advice touches nothing it points at")
    func quarantineLink() throws {
        let workspace = try crashyWorkspace()
        try FileManager.default.createDirectory(atPath: workspace.data, withIntermediateDirectories: true)
        let precious = workspace.root + "/precious"
        try "{}".write(toFile: precious, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: workspace.data + "/quarantine.json", withDestinationPath: precious)
        let route = try imhost(["route", crashyURL], in: workspace)
        #expect(route.stderr.contains("quarantine.json is a link, not a file imhost wrote, so every line is held out of service until it is gone; remove it (rm \(workspace.data)/quarantine.json)"), "\(route.stderr)")
        #expect(route.stdout.contains("reason: quarantined"))
    }
}

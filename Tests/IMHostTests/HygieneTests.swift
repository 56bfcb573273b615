import Foundation
import Testing
@testable import IMHost

/// Runs a shell script in the workspace, with `$IMHOST` the built imhost. Each script that could
/// hang if the host misbehaved runs under `timeout`, so a hang is a failure, not a stuck test.
func sh(_ script: String, in workspace: Workspace, environment: [String: String] = [:], shell: String = "/bin/sh") throws -> ProcessResult {
    var environment = environment
    environment["IMHOST"] = BuildProducts.imhost
    return try run(shell, ["-c", script], currentDirectory: workspace.root, environment: environment)
}

/// The page's lines as `imhost chat` shows them with no input: to read what a conversation holds.
func shownMessages(_ workspace: Workspace, _ url: String = houseChatURL, data: String? = nil) throws -> String {
    try imhost(["chat", url], input: "", in: workspace).stdout
}

@Suite("Process hygiene: closed standard streams")
struct ClosedStreamTests {
    @Test("with standard output closed, no page is written into a conversation")
    func closedStdout() throws {
        let workspace = try Workspace.standard()
        let result = try sh(#"printf 'one\ntwo\nthree\n' | timeout 60 "$IMHOST" chat "\#(houseChatURL)" >&-"#, in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        let shown = try shownMessages(workspace)
        #expect(shown.contains("│ one │") && shown.contains("│ two │") && shown.contains("│ three │"), "\(shown)")
        #expect(shown.contains("#3 me") && !shown.contains("#4") && !shown.contains("unreadable"))

        try #"[ { "open": "\#(houseChatURL)" }, { "text": "a" }, { "text": "b" } ]"#
            .write(toFile: workspace.root + "/send.json", atomically: true, encoding: .utf8)
        try #"[ { "open": "\#(houseChatURL)" }, { "expect": { "stored": 2, "contains": ["│ a │", "│ b │"] } } ]"#
            .write(toFile: workspace.root + "/check.json", atomically: true, encoding: .utf8)
        let played = try sh(#"timeout 60 "$IMHOST" play send.json --data played >&-"#, in: workspace)
        #expect(played.status == 0, "\(played.stderr)")
        let checked = try imhost(["play", "check.json", "--data", "played"], in: workspace)
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
    }

    @Test("with standard input closed, the chat reads an empty input: nothing is stored")
    func closedStdin() throws {
        let workspace = try Workspace.standard()
        let result = try sh(#"timeout 60 "$IMHOST" chat "\#(houseChatURL)" <&-"#, in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("type a message"))
        #expect(!(try shownMessages(workspace)).contains("#1 "), "nothing was read as a message")
    }

    @Test("with standard error closed, crashes and hangs are still named, recorded and quarantined")
    func closedStderr() throws {
        let workspace = try crashyWorkspace()
        let crashed = try sh(#"printf '/recv crashy.note {"text":"n"}\n/tap 1\n' | IMHOST_CRASHY=tap:abort timeout 60 "$IMHOST" chat "\#(crashyURL)" 2>&-"#,
                             in: workspace)
        #expect(crashed.status == 0)
        #expect(workspace.crashes.first?.line == "crashy" && workspace.crashes.first?.signal == "SIGABRT")
        #expect(workspace.crashes.first?.quarantined == "line")
        try FileManager.default.removeItem(atPath: workspace.data + "/quarantine.json")
        let hung = try sh(#"printf '/menu 4\n' | IMHOST_CRASHY=menu:loop timeout 60 "$IMHOST" chat "\#(crashyURL)" 2>&-"#, in: workspace)
        #expect(hung.status == 0)
        #expect(workspace.crashes.last?.line == "crashy" && workspace.crashes.last?.signal == "hung", "the watchdog still works")
    }

    @Test("a child starts with only the descriptors handed to it")
    func childDescriptors() throws {
        let workspace = try crashyWorkspace()
        // Descriptors 57 and 59 are open in the shell and not close-on-exec: the host inherits
        // them, its worker must not. (High numbers, which bash can open and dash cannot: the
        // worker's own descriptors, opened lowest-free first, never take them.)
        let result = try sh(#"exec 57</dev/null 59</dev/null; printf '/menu 4\n' | IMHOST_CRASHY=menu:fds timeout 60 "$IMHOST" chat "\#(crashyURL)""#,
                            in: workspace, shell: "/bin/bash")
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(result.stderr.split(separator: "\n").first { $0.contains("fds: ") })
        let fds = line.split(separator: ":").last!.split(separator: " ").compactMap { Int($0) }
        #expect(!fds.contains(57) && !fds.contains(59), "\(line)")
        #expect(Array(fds.prefix(5)) == [0, 1, 2, 3, 4], "\(line)")
    }
}

@Suite("Process hygiene: output that cannot be written")
struct OutputErrorTests {
    @Test("commands whose output cannot be written exit 1 and say so", arguments: [
        ["plugins"], ["route", houseChatURL], ["open", houseChatURL], ["quarantine"], ["--version"], ["demo"],
    ])
    func devFull(_ arguments: [String]) throws {
        let workspace = try Workspace.standard()
        try workspace.install("Cars", as: "cars.so")
        try workspace.writeConfig(try String(contentsOfFile: BuildProducts.repository + "/host.json", encoding: .utf8))
        let result = try sh(#"timeout 120 "$IMHOST" \#(arguments.map { "'\($0)'" }.joined(separator: " ")) > /dev/full"#, in: workspace)
        #expect(result.status == 1, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("cannot write to standard output (No space left on device)"), "\(arguments): \(result.stderr)")
    }

    @Test("a chat piped into head -1 stops when head is gone, instead of sending on")
    func intoHead() throws {
        let workspace = try Workspace.standard()
        let result = try sh(#"{ seq 1 200 | timeout 120 "$IMHOST" chat "\#(houseChatURL)"; echo $? > status; } | head -1"#, in: workspace)
        #expect(result.status == 0)
        #expect(try String(contentsOfFile: workspace.root + "/status", encoding: .utf8) == "1\n")
        #expect(result.stderr.contains("cannot write to standard output (Broken pipe)"), "\(result.stderr)")
        #expect(!(try shownMessages(workspace)).contains("#200 me"), "it stopped reading input")
    }
}

@Suite("Process hygiene: files that are not files")
struct NotAFileTests {
    @Test("a FIFO as the quarantine or the plugin cache hangs nothing, and is said", arguments: ["quarantine.json", "plugins.cache"])
    func fifoInData(_ name: String) throws {
        let workspace = try Workspace.standard()
        try FileManager.default.createDirectory(atPath: workspace.data, withIntermediateDirectories: true)
        #expect(mkfifo(workspace.data + "/" + name, 0o600) == 0)
        for arguments in [["route", houseChatURL], ["plugins"], ["quarantine"], ["chat", houseChatURL]] {
            let result = try sh(#"timeout 60 "$IMHOST" \#(arguments.map { "'\($0)'" }.joined(separator: " ")) < /dev/null"#, in: workspace)
            #expect(result.status != 124, "\(arguments) hung on a FIFO \(name)")
            #expect(result.stderr.contains(name) && result.stderr.contains("FIFO"), "\(arguments): \(result.stderr)")
        }
        let route = try imhost(["route", houseChatURL], in: workspace)
        if name == "quarantine.json" {
            #expect(route.stdout.contains("reason: quarantined"), "a quarantine that cannot be read holds every line")
        } else {
            #expect(route.stdout.contains("reason: routed"), "no cache: the files are scanned again")
        }
    }

    @Test("a FIFO as the outbox, the crash log or the line log hangs no chat")
    func fifoInChat() throws {
        let workspace = try crashyWorkspace()
        let user = workspace.data + "/users/me"
        try FileManager.default.createDirectory(atPath: user, withIntermediateDirectories: true)
        for path in [user + "/outbox.jsonl", workspace.data + "/crashes.log", workspace.data + "/lines.log"] { #expect(mkfifo(path, 0o600) == 0) }
        let result = try sh(#"printf 'hello\n/recv crashy.note {"text":"n"}\n/tap 1\n' | IMHOST_CRASHY=tap:abort timeout 60 "$IMHOST" chat "\#(crashyURL)""#,
                            in: workspace)
        #expect(result.status != 124, "the chat hung")
        #expect(result.stderr.contains("crashed (SIGABRT)"), "\(result.stderr)")
        #expect(result.stderr.contains("It is not in crashes.log"), "\(result.stderr)")
    }

    @Test("a quarantine file that cannot be read holds every line, says how to fix it, and is never written over")
    func unreadableQuarantine() throws {
        let workspace = try crashyWorkspace()
        try FileManager.default.createDirectory(atPath: workspace.data + "/quarantine.json", withIntermediateDirectories: true)
        let route = try imhost(["route", crashyURL], in: workspace)
        #expect(route.stdout.contains("reason: quarantined"))
        #expect(route.stderr.contains("quarantine.json is a folder, not a file imhost wrote, so every line is held out of service until it is gone; remove it (rm -r "), "\(route.stderr)")
        var isFolder: ObjCBool = false
        _ = try crashyChat(workspace, "tap:abort", "/recv crashy.note {\"text\":\"n\"}\n/tap 1\n", url: houseChatURL)
        #expect(FileManager.default.fileExists(atPath: workspace.data + "/quarantine.json", isDirectory: &isFolder) && isFolder.boolValue)
    }
}

@Suite("Process hygiene: another local user")
struct OtherUserTests {
    /// A real unprivileged user, made once; `nil` where users cannot be made (not root).
    static let mallory: (uid: uid_t, gid: gid_t)? = {
        guard geteuid() == 0 else { return nil }
        _ = try? run("/usr/sbin/useradd", ["-M", "-r", "-s", "/usr/sbin/nologin", "imhost-mallory"])
        guard let entry = getpwnam("imhost-mallory") else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }()

    /// Runs a shell script as the other user.
    func asMallory(_ script: String) throws -> ProcessResult {
        let user = try #require(Self.mallory)
        return try run("/usr/bin/setpriv", ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "/bin/sh", "-c", script])
    }

    /// A workspace whose data folder cannot be written (not even by root), so breadcrumbs go to
    /// the private folder under `$XDG_RUNTIME_DIR` (made shared, like /tmp).
    func lockedWorkspace() throws -> (Workspace, xdg: String) {
        let workspace = try Workspace.standard()
        // The user's messages are there already; only new files cannot be made.
        #expect(try imhost(["chat", houseChatURL], input: "", in: workspace).status == 0)
        try FileManager.default.removeItem(atPath: workspace.data + "/run")
        let xdg = workspace.root + "/xdg"
        try FileManager.default.createDirectory(atPath: xdg, withIntermediateDirectories: true)
        chmod(xdg, 0o1777)
        chmod(workspace.root, 0o755)
        let locked = try run("/usr/bin/chattr", ["+i", workspace.data])
        try #require(locked.status == 0, "chattr +i needs CAP_LINUX_IMMUTABLE: \(locked.stderr)")
        return (workspace, xdg)
    }

    @Test("a private folder another user made first is refused, naming it; the files they pointed at are untouched",
          .enabled(if: OtherUserTests.mallory != nil, "needs a second Unix user, which only root can make"))
    func plantedFolder() throws {
        let (workspace, xdg) = try lockedWorkspace()
        defer { _ = try? run("/usr/bin/chattr", ["-i", workspace.data]) }
        let precious = workspace.root + "/precious"
        try "precious\n".write(toFile: precious, atomically: true, encoding: .utf8)
        chmod(precious, 0o600)
        let planted = try asMallory("mkdir -m 777 \(xdg)/imhost && for n in 0 1 2 3; do ln -s \(precious) \(xdg)/imhost/$$-$n.new; ln -s \(precious) \(xdg)/imhost/$$-$n.crumb; done")
        #expect(planted.status == 0, "\(planted.stderr)")
        let chat = try sh(#"timeout 60 "$IMHOST" chat "\#(houseChatURL)" < /dev/null"#, in: workspace, environment: ["XDG_RUNTIME_DIR": xdg])
        #expect(chat.status == 0, "the chat still opens: \(chat.stderr)")
        #expect(chat.stdout.contains("type a message"))
        let said = chat.stderr.split(separator: "\n").filter { $0.contains("breadcrumb") }
        #expect(said.count == 1, "one line: \(chat.stderr)")
        #expect(said.first?.contains("kept in memory: cannot keep it in \(workspace.data)/run") == true, "\(chat.stderr)")
        #expect(said.first?.contains("nor in \(xdg)/imhost (it is owned by uid \(Self.mallory!.uid) (imhost-mallory), not you; remove it, or set XDG_RUNTIME_DIR to a folder of your own)") == true, "\(chat.stderr)")
        #expect(try String(contentsOfFile: precious, encoding: .utf8) == "precious\n")
    }

    /// A breadcrumb that says its process died of SIGSEGV in crashy's code: what a forger writes.
    func forgedCrumb(at path: String) throws {
        let crumb = try Breadcrumb(path: path)
        _ = crumb.enter(.pageHook, LineMark(line: "crashy", file: "crashy.so", identity: nil), key: nil, message: nil)
        let file = try #require(FileHandle(forWritingAtPath: path))
        try file.seek(toOffset: UInt64(Breadcrumb.Offset.pid))
        file.write(withUnsafeBytes(of: Int32(999_999).littleEndian) { Data($0) })
        try file.seek(toOffset: UInt64(Breadcrumb.Offset.signal))
        file.write(withUnsafeBytes(of: UInt32(SIGSEGV).littleEndian) { Data($0) })
        try file.close()
    }

    @Test("another user's breadcrumb is never taken for a crash: not from a run folder open to all, nor one they own in ours",
          .enabled(if: OtherUserTests.mallory != nil, "needs a second Unix user, which only root can make"), arguments: ["open folder", "their file"])
    func forgedBreadcrumb(_ how: String) throws {
        let mallory = try #require(Self.mallory)
        let workspace = try crashyWorkspace()
        let run = workspace.data + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        chmod(workspace.root, 0o755)
        chmod(workspace.data, 0o755)
        try forgedCrumb(at: workspace.root + "/forged")
        chmod(workspace.root + "/forged", 0o644)
        if how == "open folder" {
            chmod(run, 0o777)
            let planted = try asMallory("cp \(workspace.root)/forged \(run)/1-0.crumb")
            #expect(planted.status == 0, "\(planted.stderr)")
        } else {
            chmod(run, 0o700)
            try FileManager.default.copyItem(atPath: workspace.root + "/forged", toPath: run + "/1-0.crumb")
            #expect(chown(run + "/1-0.crumb", mallory.uid, mallory.gid) == 0)
        }
        let plugins = try imhost(["plugins"], in: workspace)
        #expect(!plugins.stderr.contains("crash"), "\(plugins.stderr)")
        #expect(workspace.crashes.isEmpty, "\(workspace.crashes)")
        #expect(try imhost(["route", crashyURL], in: workspace).stdout.contains("reason: routed"), "crashy is not quarantined")
    }
}

@Suite("Process hygiene: signals")
struct SignalTests {
    @Test("SIGTERM ends a chat promptly while endless input arrives; no worker is left behind")
    func termUnderEndlessInput() throws {
        let workspace = try Workspace.standard()
        let chat = try RunningProcess("/bin/sh", ["-c", #"exec timeout --preserve-status -k 5 60 "$IMHOST" chat "\#(houseChatURL)" < /dev/zero"#],
                                      in: workspace.root, environment: ["IMHOST": BuildProducts.imhost])
        #expect(chat.waitFor("type a message"))
        let host = try #require(children(of: chat.pid).first)
        let workers = children(of: host)
        chat.signal(SIGTERM)
        let result = chat.finish()
        #expect(result.status == 143, "\(result.stderr)")
        for worker in workers { #expect(!Breadcrumb.isRunning(worker), "the worker ended with the chat") }
    }

    @Test("SIGQUIT ends a chat like SIGTERM: services finalized, no backtrace, exit 131")
    func quit() throws {
        let workspace = try crashyWorkspace()
        let finalized = workspace.root + "/finalized"
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", crashyURL], in: workspace.root,
                                      environment: ["IMHOST_CRASHY_FINALIZED": finalized])
        #expect(chat.waitFor("[crashy page]"))
        chat.signal(SIGQUIT)
        let result = chat.finish()
        #expect(result.status == 131)
        #expect(FileManager.default.fileExists(atPath: finalized), "the line's service was finalized")
        #expect(!result.stderr.contains("stack trace") && !result.stderr.contains("Backtrace") && !result.stderr.contains("0x"), "\(result.stderr)")
    }

    @Test("a chat stopped (Ctrl-Z) during a legitimate line call and resumed is not a hang")
    func stoppedIsNotHung() throws {
        let workspace = try crashyWorkspace()
        try workspace.writeConfig(crashyConfig(callSeconds: 3))
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", crashyURL], in: workspace.root,
                                      environment: ["IMHOST_CRASHY": "menu:overrun"])
        #expect(chat.waitFor("[crashy page]"))
        chat.send("/menu 4")
        #expect(waitUntilInLineCode(workspace))
        let callBegan = Date()
        // As Ctrl-Z stops the whole job: the supervisor and its worker, for longer than the limit.
        let processes = [chat.pid] + children(of: chat.pid)
        for pid in processes { kill(pid, SIGSTOP) }
        #expect(waitUntil { processes.allSatisfy { processState($0) == "T" } }, "the job is stopped")
        // What is tested is the limit passing while the job is stopped: it stays stopped until the
        // line call is older than limits.callSeconds (3 s), with a second to spare.
        #expect(waitUntil(timeout: 10) { Date().timeIntervalSince(callBegan) > 4 })
        for pid in processes { kill(pid, SIGCONT) }
        #expect(chat.waitFor("menu: "))
        let result = chat.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(workspace.crashes.isEmpty, "\(workspace.crashes)")
        #expect(!result.stderr.contains("hung"))
    }
}

@Suite("Process hygiene: a full disk")
struct FullDiskTests {
    @Test("with no space left, a chat opens read-only: its history shows, a send is refused naming the disk, nothing crashes",
          .enabled(if: SmallDisk.canMount, SmallDisk.why))
    func fullDisk() throws {
        let workspace = try Workspace.standard()
        let disk = workspace.root + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mounted = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", disk])
        try #require(mounted.status == 0, "\(mounted.stderr)")
        defer { _ = try? run("/bin/umount", ["-l", disk]) }
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""plugins": "Plugins","#, with: #""plugins": "Plugins", "data": "disk/data","#))
        try FileManager.default.createDirectory(atPath: disk + "/xdg", withIntermediateDirectories: true)
        let before = try imhost(["chat", houseChatURL], input: "written before\n", in: workspace, environment: ["XDG_RUNTIME_DIR": disk + "/xdg"])
        #expect(before.status == 0, "\(before.stderr)")
        _ = try sh("dd if=/dev/zero of=disk/fill bs=64k 2>/dev/null; true", in: workspace)
        let chat = try sh(#"printf 'not sent\n/tap 1\n' | timeout 60 "$IMHOST" chat "\#(houseChatURL)""#, in: workspace,
                          environment: ["XDG_RUNTIME_DIR": disk + "/xdg"])
        #expect(chat.status == 0, "\(chat.stderr)")
        #expect(chat.stdout.contains("│ written before │"), "history readable")
        #expect(chat.stdout.contains("not sent: cannot send: the disk holding"), "\(chat.stdout)")
        #expect(chat.stderr.contains("the chat's breadcrumb is kept in memory"), "\(chat.stderr)")
        #expect(!chat.stderr.contains("SIGBUS") && !chat.stderr.contains("crashed"), "\(chat.stderr)")
    }
}

@Suite("Process hygiene: attribution and growth")
struct AttributionTests {
    @Test("a crash's last words are what the crashed call wrote, never another line's log or the host's")
    func lastWords() throws {
        let workspace = try crashyWorkspace()
        let quiet = try crashyChat(workspace, "menu:warn,menu:print,tap:abort", "/recv crashy.note {\"text\":\"n\"}\n/menu 4\n/tap 1\n")
        #expect(quiet.stderr.contains("[crashy] warning: a warning from crashy"), "the warning is passed on")
        #expect(quiet.stderr.contains("crashy printed this"), "and what line code printed")
        let record = try #require(workspace.crashes.first)
        #expect(record.detail == nil, "an abort that said nothing: not the earlier warning or print (\(record.detail ?? ""))")
        try FileManager.default.removeItem(atPath: workspace.data + "/quarantine.json")
        _ = try crashyChat(workspace, "tap:print,tap:abort", "/recv crashy.note {\"text\":\"n\"}\n/tap 2\n")
        #expect(workspace.crashes.last?.detail == "crashy printed this", "what the call itself said")
    }

    @Test("a plugin replaced while the scanner runs is recorded under the file that was scanned, and not scanned again")
    func replacedDuringScan() throws {
        let workspace = try Workspace.standard()
        try workspace.compileC("crash_plugin.c", as: "a-slow.so", defines: ["LINE_ID=\"slow\"", "CRASH_IN=WHERE_CONSTRUCTOR", "CRASH_HOW=HOW_OVERRUN"])
        try workspace.compileC("crash_plugin.c", as: "b-target.so", defines: ["LINE_ID=\"target\""])
        try workspace.compileC("crash_plugin.c", as: "segv.so", defines: ["LINE_ID=\"target\"", "CRASH_IN=WHERE_CONSTRUCTOR", "CRASH_HOW=HOW_SEGV"],
                               into: workspace.root)
        try workspace.writeConfig(#"{ "lines": { "slow": {}, "target": {} } }"#)
        let route = try RunningProcess(BuildProducts.imhost, ["plugins"], in: workspace.root)
        // The scanner is in a-slow.so's two-second constructor: b-target.so is replaced now.
        var scanning = false
        for _ in 0..<2000 where !scanning {
            scanning = children(of: route.pid).contains { pid in
                ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "").contains("__scan")
            }
            if !scanning { _ = poll(nil, 0, 5) }
        }
        #expect(scanning)
        #expect(rename(workspace.root + "/segv.so", workspace.plugins + "/b-target.so") == 0)
        _ = route.finish()
        let crash = try #require(workspace.crashes.first { $0.file == "b-target.so" })
        #expect(crash.identity == FileIdentity.of(workspace.plugins + "/b-target.so"), "recorded under the file scanned")
        let again = try imhost(["plugins"], in: workspace)
        #expect(again.stdout.contains("b-target.so"))
        #expect(workspace.crashes.filter { $0.file == "b-target.so" }.count == 1, "not opened again")
    }

    @Test("crashes.log is rotated at its limit and a crash does not read it whole")
    func crashLogRotates() throws {
        let workspace = try crashyWorkspace()
        try FileManager.default.createDirectory(atPath: workspace.data, withIntermediateDirectories: true)
        let junk = String(repeating: #"{"time":"2020-01-01T00:00:00Z","what":"x","signal":"unknown"}"# + "\n", count: 40_000)
        try junk.write(toFile: workspace.data + "/crashes.log", atomically: true, encoding: .utf8)
        _ = try crashyChat(workspace, "tap:abort", "/recv crashy.note {\"text\":\"n\"}\n/tap 1\n")
        #expect(FileManager.default.fileExists(atPath: workspace.data + "/crashes.log.1"))
        #expect(workspace.crashes.count == 1 && workspace.crashes[0].line == "crashy")
    }

    @Test("a stored payload over the limit shows as a placeholder that says its size, and is not drawn")
    func oversizedStored() throws {
        let workspace = try Workspace.standard()
        let big = String(repeating: "x", count: 150_000)
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""plugins": "Plugins","#,
                                                                                  with: #""plugins": "Plugins", "limits": { "payloadBytes": 200000 },"#))
        let stored = try imhost(["chat", houseChatURL], input: "/recv text {\"text\":\"\(big)\"}\n", in: workspace)
        #expect(stored.status == 0)
        try workspace.writeConfig()
        let shown = try imhost(["chat", houseChatURL], input: "/why 1\n", in: workspace)
        #expect(!shown.stdout.contains(String(repeating: "x", count: 100)), "not drawn")
        #expect(shown.stdout.contains("(too large)"))
        #expect(shown.stdout.contains("why #1 (text): its payload is 150011 bytes, over the limit of 65536 (limits.payloadBytes in host.json)"), "\(shown.stdout.suffix(600))")
    }
}

@Suite("Process hygiene: the smaller ones")
struct SmallerHygieneTests {
    @Test("TERM=dumb and NO_COLOR both mean no colour on a terminal")
    func noColour() throws {
        let workspace = try Workspace.standard()
        func onTerminal(_ environment: String) throws -> String {
            try sh(#"env -u NO_COLOR \#(environment) script -qfec "\"$IMHOST\" open '\#(houseChatURL)'" /dev/null"#, in: workspace).stdout
        }
        #expect(try onTerminal("TERM=xterm-256color").contains("\u{1B}["), "colour on a terminal that has it")
        #expect(!(try onTerminal("TERM=dumb")).contains("\u{1B}["))
        #expect(!(try onTerminal("TERM=xterm-256color NO_COLOR=1")).contains("\u{1B}["))
    }

    @Test("a same-size edit of host.json with its modification time put back is still reloaded")
    func ctimeEdit() throws {
        let workspace = try Workspace.standard()
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""lines": [], "messages""#, with: #""lines": ["jobs"], "messages""#))
        let url = "im://chat?rootCateID=9&cateID=12&peer=hr"
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", url], in: workspace.root)
        #expect(chat.waitFor("[legacy page]"))
        let modified = try #require(try FileManager.default.attributesOfItem(atPath: workspace.configPath)[.modificationDate] as? Date)
        let edited = try String(contentsOfFile: workspace.configPath, encoding: .utf8).replacingOccurrences(of: #"["jobs"]"#, with: #"[      ]"#)
        let handle = try #require(FileHandle(forWritingAtPath: workspace.configPath))
        handle.write(Data(edited.utf8))
        try handle.close()
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: workspace.configPath)
        chat.send("/route")
        #expect(chat.waitFor("reloaded host.json: routed"))
        _ = chat.finish()
    }
}

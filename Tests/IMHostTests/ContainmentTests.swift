import Foundation
import Testing
import CIMHostSupport
@testable import IMHost
import IMKit

/// House, jobs and the crashy fixture line (rootCateID 66), with half-second time limits.
func crashyWorkspace(crashy enabled: Bool = true) throws -> Workspace {
    let workspace = try Workspace()
    try workspace.installLines()
    try workspace.install("FixtureCrashy", as: "crashy.so")
    try workspace.writeConfig(crashyConfig(enabled: enabled))
    return workspace
}

func crashyConfig(enabled: Bool = true, house: Bool = true, extra: String = "", callSeconds: Double = 0.5) -> String {
    """
    {
      "lines": { "house": { "enabled": \(house) }, "jobs": {}, "crashy": { "enabled": \(enabled) }\(extra) },
      "routes": [
        { "rootCateID": 1, "cateID": "*", "line": "house" },
        { "rootCateID": 9, "cateID": [12, 13], "line": "jobs" },
        { "rootCateID": 66, "cateID": "*", "line": "crashy" }
      ],
      "limits": { "scanSeconds": 0.5, "callSeconds": \(callSeconds) }
    }
    """
}

let crashyURL = "im://chat?rootCateID=66&peer=tester"
let houseChatURL = "im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1001"

/// Runs `imhost chat URL` with the crashy line told to misbehave as `plan` says.
func crashyChat(_ workspace: Workspace, _ plan: String, _ input: String, url: String = crashyURL) throws -> ProcessResult {
    try imhost(["chat", url], input: input, in: workspace, environment: ["IMHOST_CRASHY": plan])
}

extension Workspace {
    /// The crash records in the data folder.
    var crashes: [CrashRecord] { CrashLog(dataFolder: data).records() }
}

@Suite("A line cannot take the host down while it is vetted")
struct ScanContainmentTests {
    struct CCase: Sendable, CustomTestStringConvertible {
        var place: String
        var how: String
        var signal: String
        /// Whether host.json names the line: a constructor crashes before anyone knows which line it is.
        var configured: Bool
        var testDescription: String { "\(place) \(how)" }
    }

    static let cCases = [
        CCase(place: "CONSTRUCTOR", how: "ABORT", signal: "SIGABRT", configured: false),
        CCase(place: "CONSTRUCTOR", how: "SEGV", signal: "SIGSEGV", configured: false),
        CCase(place: "CONSTRUCTOR", how: "LOOP", signal: "hung", configured: false),
        CCase(place: "ENTRY", how: "SEGV", signal: "SIGSEGV", configured: true),
        CCase(place: "REGISTER", how: "ABORT", signal: "SIGABRT", configured: true),
        CCase(place: "REGISTER", how: "LOOP", signal: "hung", configured: true),
        CCase(place: "REGISTER", how: "OVERRUN", signal: "hung", configured: true),
        CCase(place: "REGISTER", how: "BUFFER", signal: "SIGSEGV", configured: true),
    ]

    @Test("a C plugin that crashes or hangs while it is opened is named and quarantined; every command serves the rest",
          arguments: cCases)
    func cPlugin(_ test: CCase) throws {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.compileC("crash_plugin.c", as: "ccrash.so", defines: ["CRASH_IN=WHERE_\(test.place)", "CRASH_HOW=HOW_\(test.how)"])
        try workspace.writeConfig(crashyConfig(extra: test.configured ? #", "ccrash": {}"# : "")
            .replacingOccurrences(of: #""crashy": { "enabled": true }"#, with: #""crashy": { "enabled": false }"#))
        let site = ["CONSTRUCTOR": "load", "ENTRY": "entry", "REGISTER": "register"][test.place]!
        let state = test.signal == "hung" ? "hung" : "crashed"

        let route = try imhost(["route", houseChatURL], in: workspace)
        #expect(route.status == 0)
        #expect(route.stdout.hasPrefix("page:   house (HousePage)"))
        #expect(route.stderr.contains("imhost: \(state) ccrash.so: "), "\(route.stderr)")

        let records = workspace.crashes
        #expect(records.count == 1)
        #expect(records.first?.what == site && records.first?.signal == test.signal && records.first?.file == "ccrash.so")
        #expect(records.first?.line == (site == "register" ? "ccrash" : nil), "the line is known once its descriptor is read")

        let plugins = try imhost(["plugins", "--json"], in: workspace)
        #expect(plugins.status == (test.configured ? 1 : 0), "a configured line that does not serve fails the listing")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(plugins.stdout.utf8)) as? [String: Any])
        let row = try #require((report["plugins"] as? [[String: Any]])?.first { ($0["file"] as? String)?.hasSuffix("/ccrash.so") == true })
        #expect(row["status"] as? String == state)
        #expect(workspace.crashes.count == 1, "a quarantined file is not opened again")

        let chat = try imhost(["chat", houseChatURL], input: "hello\n", in: workspace)
        #expect(chat.status == 0 && chat.stdout.contains("│ hello │"))
    }

    @Test("a Swift line that crashes or hangs in register(with:) is contained by the scanner",
          arguments: [("abort", "SIGABRT"), ("segv", "SIGSEGV"), ("trap", "SIGILL"), ("loop", "hung"), ("overrun", "hung")])
    func swiftRegister(how: String, signal: String) throws {
        let workspace = try crashyWorkspace()
        let route = try imhost(["route", "im://chat?rootCateID=66&peer=p"], in: workspace, environment: ["IMHOST_CRASHY": "register:\(how)"])
        #expect(route.status == 0)
        #expect(route.stdout.contains("reason: quarantined: routes[2] (rootCateID 66, cateID \"*\") names line 'crashy', but line 'crashy' is quarantined: \(signal == "hung" ? "hung (did not return within its time limit)" : "crashed (\(signal))") while registering at "))
        let record = try #require(workspace.crashes.first)
        #expect(record.line == "crashy" && record.what == "register" && record.signal == signal && record.quarantined == "line")
        if how == "trap" { #expect(record.detail?.contains("Fatal error: Index out of range") == true) }
        // The other lines serve, and nothing of crashy runs in the host.
        let house = try imhost(["route", houseChatURL], in: workspace)
        #expect(house.stdout.hasPrefix("page:   house (HousePage)"))
    }
}

@Suite("A line cannot take a chat down")
struct ChatContainmentTests {
    @Test("a builder that crashes costs its message key: the chat reopens, the message shows as a placeholder, nothing is lost",
          arguments: [("abort", "crashed (SIGABRT)"), ("segv", "crashed (SIGSEGV)"), ("trap", "crashed (SIGILL)"),
                      ("loop", "hung (no return within 0.5 s)"), ("exit", "crashed (exit 3)")])
    func builder(how: String, ending: String) throws {
        let workspace = try crashyWorkspace()
        let result = try crashyChat(workspace, "builder:\(how)", """
            before
            /recv crashy.bomb {"text":"boom"}
            after the crash
            /quit
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("imhost: line 'crashy' \(ending) building message m2 (crashy.bomb); message key crashy.bomb is quarantined: its messages show as placeholders. Lift with: imhost quarantine lift crashy.bomb."), "\(result.stderr)")
        #expect(result.stdout.contains("│ (quarantined)"))
        #expect(result.stdout.contains("│ /why 2 says why"))
        #expect(result.stdout.contains("│ after the crash │"), "the chat goes on with the next command")
        let records = workspace.crashes
        #expect(records.count == 1)
        #expect(records.first?.key == "crashy.bomb" && records.first?.message == "m2" && records.first?.quarantined == "key")

        let again = try crashyChat(workspace, "builder:\(how)", "")
        #expect(again.status == 0 && again.stderr.isEmpty, "the key stays quarantined: no crash on the next open")
        #expect(again.stdout.contains("[crashy page]"), "the line itself still serves")
        #expect(again.stdout.contains("#1 me") && again.stdout.contains("#2 tester") && again.stdout.contains("#3 me"), "history intact")
    }

    struct LineCase: Sendable, CustomTestStringConvertible {
        var plan: String
        var input: String
        var what: String
        var testDescription: String { plan }
    }

    static let lineCases = [
        LineCase(plan: "open:abort", input: "hello\n", what: "imhost: line 'crashy' crashed (SIGABRT) while opening its page; line 'crashy' is quarantined"),
        LineCase(plan: "page:segv", input: "hello\n", what: "imhost: line 'crashy' crashed (SIGSEGV) in its page's hooks (title and components); line 'crashy' is quarantined"),
        LineCase(plan: "service:abort", input: "hello\n", what: "imhost: line 'crashy' crashed (SIGABRT) in its service crashy.engine prepare; line 'crashy' is quarantined"),
        LineCase(plan: "tap:abort", input: "/recv crashy.note {\"text\":\"n\"}\n/tap 1\n/tap 1\nhello\n",
                 what: "imhost: line 'crashy' crashed (SIGABRT) handling a tap on message m1 (crashy.note); line 'crashy' is quarantined"),
        LineCase(plan: "menu:loop", input: "/menu 4\nhello\n", what: "imhost: line 'crashy' hung (no return within 0.5 s) handling menu item 4; line 'crashy' is quarantined"),
        LineCase(plan: "route:segv", input: "/open crashy://boom\n/open crashy://boom\nhello\n",
                 what: "imhost: line 'crashy' crashed (SIGSEGV) in its route handler for crashy://boom; line 'crashy' is quarantined"),
    ]

    @Test("a crash in a page, a tap, a menu item, a route or a service costs the line: the chat reopens on the legacy page",
          arguments: lineCases)
    func line(_ test: LineCase) throws {
        let workspace = try crashyWorkspace()
        let result = try crashyChat(workspace, test.plan, test.input)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains(test.what), "\(result.stderr)")
        #expect(result.stdout.contains("[legacy page]"))
        #expect(result.stdout.contains("│ hello │"), "the chat goes on")
        #expect(workspace.crashes.count == 1, "the command that crashed is not run again")
        #expect(workspace.crashes.first?.quarantined == "line")
        if test.plan.hasPrefix("route") {
            #expect(result.stdout.contains("/open: not found: crashy://boom belongs to line 'crashy', but line 'crashy' is quarantined: crashed (SIGSEGV) in its route handler for crashy://boom at "))
        }
        if test.plan.hasPrefix("tap") {
            #expect(result.stdout.contains("tap #1: nothing happens"), "on the legacy page the line's card is a placeholder")
        }
        // Every other line keeps serving, in this command and the next.
        let house = try imhost(["chat", houseChatURL], input: "", in: workspace)
        #expect(house.status == 0 && house.stdout.contains("[house page]") && house.stderr.isEmpty)
    }

    @Test("a second crash of a line within ten minutes quarantines the whole line")
    func escalation() throws {
        let workspace = try crashyWorkspace()
        let result = try crashyChat(workspace, "builder:abort,note:abort", """
            /recv crashy.bomb {"text":"one"}
            /recv crashy.note {"text":"two"}
            still here
            """)
        #expect(result.status == 0)
        #expect(result.stderr.contains("message key crashy.bomb is quarantined"))
        #expect(result.stderr.contains("crashed (SIGABRT) building message m2 (crashy.note); line 'crashy' is quarantined"))
        #expect(workspace.crashes.map(\.quarantined) == ["key", "line"])
        #expect(result.stdout.contains("│ still here │") && result.stdout.contains("[legacy page]"))
    }

    @Test("a crash in a thread a line started is the line's: named and quarantined, no restart loop")
    func backgroundThread() throws {
        let workspace = try crashyWorkspace()
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", crashyURL], in: workspace.root,
                                      environment: ["IMHOST_CRASHY": "thread:segv"])
        #expect(chat.waitFor("in a thread it started"))
        chat.send("still here")
        #expect(chat.waitFor("│ still here │"))
        let result = chat.finish()
        #expect(result.status == 0)
        #expect(result.stderr.contains("imhost: line 'crashy' crashed (SIGSEGV) in a thread it started; line 'crashy' is quarantined"))
        #expect(workspace.crashes.count == 1 && workspace.crashes.first?.what == "background")
    }

    @Test("a worker killed from outside is restarted, and a burst of such deaths stops the chat")
    func restartLimit() throws {
        let workspace = try crashyWorkspace()
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", houseChatURL], in: workspace.root)
        #expect(chat.waitFor("[house page]"))
        var killed: Set<Int32> = []
        for round in 1...4 {
            // Readiness: the worker of this round exists (a new one after each restart).
            var workers: [Int32] = []
            for _ in 0..<500 where workers.isEmpty {
                workers = children(of: chat.pid).filter { pid in
                    !killed.contains(pid) && Breadcrumb.isRunning(pid)
                        && (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?.contains("__worker") == true
                }
                if workers.isEmpty { _ = poll(nil, 0, 10) }
            }
            killed.formUnion(workers)
            #expect(!workers.isEmpty, "round \(round)")
            for worker in workers { kill(worker, SIGSEGV) }
            if round < 4 { #expect(chat.waitFor("it was restarted", occurrences: round)) }
        }
        #expect(chat.waitFor("stopping"))
        let result = chat.finish()
        #expect(result.status == 1)
        #expect(result.stderr.contains("imhost: the chat worker crashed (SIGSEGV) outside any line's code; it was restarted."))
        #expect(result.stderr.contains("imhost: the chat worker crashed 4 times within 60 s; stopping. The crashes are in \(workspace.data)/crashes.log"))
        #expect(workspace.crashes.count == 4)
        #expect(workspace.crashes.allSatisfy { $0.line == nil && $0.quarantined == nil }, "a death no line's code caused quarantines nothing")
    }

    @Test("imhost open of a crashing route says which line crashed and exits 1; the next open answers not-found")
    func openCommand() throws {
        let workspace = try crashyWorkspace()
        let first = try imhost(["open", "crashy://boom"], in: workspace, environment: ["IMHOST_CRASHY": "route:abort"])
        #expect(first.status == 1)
        #expect(first.stderr.contains("imhost: line 'crashy' crashed (SIGABRT) in its route handler for crashy://boom; line 'crashy' is quarantined"))
        let second = try imhost(["open", "crashy://boom"], in: workspace, environment: ["IMHOST_CRASHY": "route:abort"])
        #expect(second.status == 1)
        #expect(second.stderr.hasPrefix("imhost open: not found: crashy://boom belongs to line 'crashy', but line 'crashy' is quarantined: crashed (SIGABRT)"))
        #expect(workspace.crashes.count == 1)
    }

    @Test("play reports the step that crashed and goes on; an unexpected crash fails the run")
    func play() throws {
        let workspace = try crashyWorkspace()
        let scenario = workspace.root + "/crash.json"
        func write(expect: Bool) throws {
            try """
            [
              { "open": "\(crashyURL)" },
              { "receive": "crashy.note", "payload": { "text": "n" } },
              { "tap": 1\(expect ? #", "expectCrash": true"# : "") },
              { "text": "after" },
              { "expect": { "page": "legacy", "stored": 2, "quarantined": ["crashy"] } }
            ]
            """.write(toFile: scenario, atomically: true, encoding: .utf8)
        }
        try write(expect: false)
        let unexpected = try imhost(["play", scenario, "--data", workspace.root + "/run1"], in: workspace, environment: ["IMHOST_CRASHY": "tap:abort"])
        #expect(unexpected.status == 1)
        #expect(unexpected.stdout.contains("── 3. /tap 1\nimhost: line 'crashy' crashed (SIGABRT) handling a tap on message m1 (crashy.note)"))
        #expect(unexpected.stdout.contains("   → step 3 crashed; the run goes on\n── 4. type \"after\""))
        #expect(unexpected.stdout.contains("5 steps run; step 3 crashed."))
        try write(expect: true)
        let expected = try imhost(["play", scenario, "--data", workspace.root + "/run2"], in: workspace, environment: ["IMHOST_CRASHY": "tap:abort"])
        #expect(expected.status == 0, "\(expected.stderr)")
        #expect(expected.stdout.contains("   → the step crashed, as expected; the run goes on"))
        #expect(expected.stdout.contains("5 steps passed."))
        #expect(CrashLog(dataFolder: workspace.root + "/run2").records().count == 1, "play keeps its crashes in its own data folder")
    }
}

@Suite("Quarantine")
struct QuarantineTests {
    @Test("imhost quarantine lists entries with their crash; lift puts a line back; nothing to lift exits 1")
    func listAndLift() throws {
        let workspace = try crashyWorkspace()
        _ = try crashyChat(workspace, "builder:abort", #"/recv crashy.bomb {"text":"x"}"# + "\n")
        let list = try imhost(["quarantine"], in: workspace)
        #expect(list.status == 0)
        #expect(list.stdout.contains("message key crashy.bomb\n    since "))
        #expect(list.stdout.contains(": crashed (SIGABRT) building message m1 (crashy.bomb) at "))
        #expect(list.stdout.contains("    lift with: imhost quarantine lift crashy.bomb\n"))
        let json = try imhost(["quarantine", "--json"], in: workspace)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 1 && rows[0]["scope"] as? String == "key" && rows[0]["active"] as? Bool == true)
        #expect((rows[0]["crash"] as? [String: Any])?["signal"] as? String == "SIGABRT")

        let plugins = try imhost(["plugins"], in: workspace)
        #expect(plugins.stdout.contains("    quarantined keys: crashy.bomb; lift with imhost quarantine lift crashy"))

        let lifted = try imhost(["quarantine", "lift", "crashy"], in: workspace)
        #expect(lifted.status == 0)
        #expect(lifted.stdout.hasPrefix("lifted message key crashy.bomb (quarantined since "))
        let none = try imhost(["quarantine", "lift", "crashy"], in: workspace)
        #expect(none.status == 1)
        #expect(none.stderr == "imhost quarantine lift: nothing is quarantined for 'crashy'; see imhost quarantine\n")
        #expect(try imhost(["quarantine"], in: workspace).stdout == "Nothing is quarantined.\n")
        let usage = try imhost(["quarantine", "lift"], in: workspace)
        #expect(usage.status == 2)
    }

    @Test("a quarantine lifts by itself when the plugin file is replaced")
    func liftsWhenTheFileChanges() throws {
        let workspace = try crashyWorkspace()
        _ = try crashyChat(workspace, "route:abort", "/open crashy://boom\n")
        #expect(try imhost(["route", crashyURL], in: workspace).stdout.contains("reason: quarantined"))
        try FileManager.default.removeItem(atPath: workspace.plugins + "/crashy.so")
        try workspace.install("FixtureCrashy", as: "crashy.so")
        let route = try imhost(["route", crashyURL], in: workspace)
        #expect(route.stdout.contains("reason: routed"), "\(route.stdout)")
        #expect(Quarantine(dataFolder: workspace.data).holds.isEmpty, "the stale entry is dropped")
    }

    @Test("a chat that is open picks up a lift from another terminal")
    func liftUnderARunningChat() throws {
        let workspace = try crashyWorkspace()
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", crashyURL], in: workspace.root,
                                      environment: ["IMHOST_CRASHY": "route:abort"])
        chat.send("/open crashy://boom")
        #expect(chat.waitFor("[legacy page]"))
        #expect(try imhost(["quarantine", "lift", "crashy"], in: workspace).status == 0)
        chat.send("/route")
        #expect(chat.waitFor("reloaded host.json"))
        let result = chat.finish()
        #expect(result.stdout.contains("route: im://chat/crashy?rootCateID=66&peer=tester\n  routed"))
    }

    @Test("escalation: a builder's first crash costs the key, a second crash of the line within ten minutes the line")
    func escalationRule() {
        func crash(_ key: String?, _ site: CrashSite, at time: String, line: String = "cars") -> CrashRecord {
            CrashRecord(time: time, line: line, file: "cars.so", identity: nil, what: site.name, key: key, message: "m1", signal: "SIGSEGV")
        }
        var first = crash("cars.offer", .builder, at: "2026-11-23T10:00:00Z")
        #expect(Quarantine.scope(of: first, history: []) == .key)
        // Only what was held against the line counts: a kill from outside is recorded, costs nothing.
        #expect(Quarantine.scope(of: crash("cars.offer", .builder, at: "2026-11-23T10:09:59Z"), history: [first]) == .key)
        first.quarantined = "key"
        #expect(Quarantine.scope(of: crash("cars.offer", .builder, at: "2026-11-23T10:09:59Z"), history: [first]) == .line)
        #expect(Quarantine.scope(of: crash("cars.offer", .builder, at: "2026-11-23T10:10:01Z"), history: [first]) == .key)
        #expect(Quarantine.scope(of: crash("jobs.card", .builder, at: "2026-11-23T10:01:00Z", line: "jobs"), history: [first]) == .key)
        for site in [CrashSite.register, .pageOpen, .pageHook, .tap, .action, .route, .service, .load, .entry] {
            #expect(Quarantine.scope(of: crash(nil, site, at: "2026-11-23T10:00:00Z"), history: []) == .line)
        }
        var hostCrash = crash(nil, .unknown, at: "2026-11-23T10:00:00Z")
        hostCrash.line = nil
        hostCrash.file = nil
        #expect(Quarantine.scope(of: hostCrash, history: []) == nil)
    }

    @Test("the C crash handler writes the site Swift reads as a background thread's")
    func backgroundSite() {
        #expect(Int(CrashSite.background.rawValue) == IMHOST_CRUMB_SITE_BACKGROUND)
    }

    @Test("ISO 8601 times round-trip, the way the escalation window reads them",
          arguments: [Int64(0), 1_767_603_600_000, 951_782_400_000, -86_400_000, 4_102_444_799_000])
    func times(milliseconds: Int64) {
        #expect(Clock.parse(Clock.iso8601(milliseconds)) == milliseconds)
    }
}

@Suite("Crashes found at the next start")
struct OrphanTests {
    @Test("a chat killed with its supervisor in the middle of line code is recorded at the next start, and not held against the line")
    func killedWithItsSupervisor() throws {
        let (workspace, chat) = try chatHungInLineCode()
        // The supervisor that would have recorded it dies first (as the OOM killer would kill
        // it), and the worker with it.
        let workers = children(of: chat.pid)
        #expect(!workers.isEmpty)
        chat.signal(SIGKILL)
        _ = chat.finish()
        // The worker's breadcrumb is free once it is gone (its lock went with its supervisor).
        while workers.contains(where: Breadcrumb.isRunning) {
            _ = poll(nil, 0, 10)
        }
        #expect(workspace.crashes.isEmpty)

        let next = try imhost(["route", crashyURL], in: workspace)
        #expect(next.stderr.contains("imhost: found at start: a chat was killed from outside while line 'crashy' was handling menu item 4; recorded in crashes.log, not held against the line"), "\(next.stderr)")
        #expect(next.stdout.contains("reason: routed"), "an innocent line is not quarantined")
        #expect(workspace.crashes.first?.what == "action" && workspace.crashes.first?.signal == "unknown")
        #expect(workspace.crashes.first?.quarantined == nil)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: workspace.data + "/run"))?.isEmpty == true, "the breadcrumb was taken")
    }

    @Test("a worker whose own crash handler caught a fatal signal in line code, with nobody watching, costs the line at the next start")
    func diedInLineCodeUnwatched() throws {
        let (workspace, chat) = try chatHungInLineCode()
        let workers = children(of: chat.pid)
        // The supervisor is stopped, so it cannot record what happens; the worker dies of a
        // fatal signal in line code, which its own handler stamps into the breadcrumb.
        chat.signal(SIGSTOP)
        for worker in workers { kill(worker, SIGSEGV) }
        while workers.contains(where: Breadcrumb.isRunning) { _ = poll(nil, 0, 10) }
        chat.signal(SIGKILL)
        _ = chat.finish()
        let next = try imhost(["route", crashyURL], in: workspace)
        #expect(next.stderr.contains("imhost: recorded a crash found at start: line 'crashy' crashed (SIGSEGV) handling menu item 4"), "\(next.stderr)")
        #expect(next.stdout.contains("reason: quarantined"))
        #expect(workspace.crashes.first?.signal == "SIGSEGV" && workspace.crashes.first?.quarantined == "line")
    }
}

/// The processes whose parent is `pid`, from /proc.
func children(of pid: Int32) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { name -> Int32? in
        guard let child = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After "pid (comm) ": the state, then the parent's pid.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 && Int32(fields[1]) == pid ? child : nil
    }
}

/// The chat workers `server` (an `imhost web`) runs for its pages now; its spare (a worker
/// started for a chat named later, `__worker chat … --spare`, until a page takes it and it calls
/// itself `imhost-worker`) is ``spareWorkers(of:)``.
func pageWorkers(of server: Int32) -> [Int32] {
    children(of: server).filter { chatWorker($0) == false }
}

/// The spare worker `server` keeps, if it keeps one now.
func spareWorkers(of server: Int32) -> [Int32] {
    children(of: server).filter { chatWorker($0) == true }
}

/// Whether process `pid` is a spare chat worker (true), a page's (false), or none (`nil`).
private func chatWorker(_ pid: Int32) -> Bool? {
    guard let line = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8) else { return nil }
    let arguments = line.split(separator: "\0").dropFirst()
    guard arguments.starts(with: ["__worker", "chat"]) else { return nil }
    return arguments.contains("--spare") && processName(pid) != "imhost-worker"
}

/// What /proc/PID/comm says the process is called.
func processName(_ pid: Int32) -> String? {
    (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
}

/// A process's state letter from /proc (R running, S sleeping, T stopped, Z zombie).
func processState(_ pid: Int32) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
    return stat[stat.index(after: close)...].split(separator: " ").first?.first
}

/// Checks `condition` every 10 ms until it holds or `timeout` seconds pass; whether it held.
func waitUntil(timeout: Double = 30, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { return false }
        _ = poll(nil, 0, 10)
    }
    return true
}

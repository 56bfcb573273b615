import Foundation
import Testing
import IMHost

@Suite("imhost chat, play and demo")
struct ChatCommandTests {
    static let houseURL = "im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1"
    static let listing = #"{"id":"L1","title":"Sunny flat","price":4200,"area":56,"rooms":2}"#

    @Test("a chat driven through a pipe sends, receives, taps and keeps its history across runs")
    func chatThroughAPipe() throws {
        let workspace = try Workspace.standard()
        let first = try imhost(["chat", Self.houseURL], input: """
            hello there
            /recv house.listing \(Self.listing)
            /tap 2
            /quick 2
            /send location {"name":"Wangjing","latitude":39.99,"longitude":116.47}
            /tap 9
            /fly
            /send text {"text":
            /send house.listing {"title":"x"}
            /menu 4
            /route
            /quit
            this line is never read
            """, in: workspace)
        #expect(first.status == 0)
        #expect(first.stderr == noTransportNotice, "the only thing said, and said once")
        let out = first.stdout
        #expect(out.contains("│ hello there │"))
        #expect(out.contains("│ 🏠 Sunny flat "))
        #expect(out.contains("tap #2: opened listing L1 detail: Sunny flat, ¥4200, 2 rooms"))
        #expect(out.contains("│ Is this still available? │"))
        #expect(out.contains("│ [Location] Wangjing"))
        #expect(out.contains("/tap: there is no message #9 on screen"))
        #expect(out.contains("unknown command /fly; did you mean /file?; type /help"))
        #expect(out.contains("/send: the JSON is not valid at column 9: unexpected end of file, expected a value"))
        #expect(out.contains("/send: not sent: 'house.listing' payload does not decode: missing field 'price'"))
        #expect(out.contains("menu: reported listing L1 as fake; the housing team will review it"))
        #expect(out.contains("route: im://chat/house?rootCateID=1&cateID=12&peer=u42&infoID=L1\n  routed: routes[0]"))
        #expect(!out.contains("never read"))

        // The history belongs to the user: the legacy page, in another run, shows the same messages.
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""killSwitch": { "lines": []"#, with: #""killSwitch": { "lines": ["house"]"#))
        let second = try imhost(["chat", Self.houseURL], input: "", in: workspace)
        #expect(second.status == 0)
        #expect(second.stdout.contains("[legacy page]"))
        #expect(second.stdout.contains("#2 u42 · ") && second.stdout.contains(" · house.listing"))
        #expect(second.stdout.contains("#4 me · "))
        #expect(second.stdout.contains("│ hello there │"))
    }

    @Test("a hostile peer id never becomes a path: it is a value in the user's database")
    func hostilePeer() throws {
        let workspace = try Workspace.standard()
        let result = try imhost(["chat", "im://chat?rootCateID=1&peer=..%2F..%2Fescaped"], input: "hi\n", in: workspace)
        #expect(result.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.root).sorted() == [".imhost", "Plugins", "host.json"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.root + "/.imhost/users") == ["me"])
        #expect(try MessageStore(dataFolder: workspace.data, user: "me").count(of: "../../escaped") == 1)
        let long = try imhost(["chat", "im://chat?rootCateID=1&peer=" + String(repeating: "p", count: 100)], input: "hi\n", in: workspace)
        #expect(long.status == 1)
        #expect(long.stderr == "imhost chat: refused: peer id is 100 bytes long; the limit is 80\n")
    }

    @Test("a peer's newline or control characters never start a line of their own, and escapes wrap instead of being cut")
    func hostileText() throws {
        let workspace = try Workspace.standard()
        let input = #"""
            /open house://listing/L1%0Aimhost: FAKE
            /recv text {"text":"\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001 SECRET tail"}

            """#
        let result = try imhost(["chat", Self.houseURL, "--width", "40"], input: input, in: workspace)
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(!lines.contains { $0.hasPrefix("imhost: FAKE") }, "\(result.stdout)")
        #expect(result.stdout.contains(#"no listing L1\nimhost: FAKE is known"#), "\(result.stdout)")
        #expect(!result.stdout.contains("\u{1}"))
        #expect(result.stdout.contains("SECRET tail"), "an escape that outgrows the bubble wraps: \(result.stdout)")

        let bad = try imhost(["route", "im://chat?rootCateID=x", "--json"], in: workspace)
        #expect(bad.status == 1)
        let refusal = try JSONSerialization.jsonObject(with: Data(bad.stdout.utf8)) as? [String: String]
        #expect(refusal == ["refused": #"rootCateID "x" is not a whole number from 0 to 2147483647"#], "route --json says a refusal on standard output too")
    }

    @Test("host.json edited under a running chat: a good change applies, a bad one is refused")
    func liveReload() throws {
        let workspace = try Workspace.standard()
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", Self.houseURL], in: workspace.root)
        chat.send("/recv house.listing \(Self.listing)")
        try #require(chat.waitFor("│ 🏠 Sunny flat "), "the chat is up")
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""killSwitch": { "lines": []"#, with: #""killSwitch": { "lines": ["house"]"#))
        #expect(chat.waitFor("reloaded host.json: killed: routes[0]"))
        #expect(chat.waitFor("[legacy page]"))
        try workspace.writeConfig(#"{ "lines": { "house": { "enabled": maybe } } }"#)
        #expect(chat.waitFor("imhost: reload refused: host.json:1:36: JSON syntax: unexpected 'm', expected a value; keeping the last good configuration"))
        chat.send("/route")
        chat.send("/quit")
        let result = chat.finish()
        #expect(result.status == 0)
        #expect(result.stdout.hasSuffix("route: im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1\n  killed: routes[0] (rootCateID 1, cateID \"*\") names line 'house', but line 'house' is in killSwitch.lines: legacy page\n"))
    }

    @Test("a change to host.json is applied while input keeps arriving, not only when it pauses")
    func reloadDuringInput() throws {
        let workspace = try Workspace.standard()
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", Self.houseURL], in: workspace.root)
        chat.send("/route")
        try #require(chat.waitFor("route: im://chat/house"), "the chat is up")
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""killSwitch": { "lines": []"#, with: #""killSwitch": { "lines": ["house"]"#))
        // Commands keep coming, never a pause for the chat to wait in: the reload still happens
        // between two of them.
        var sent = 0
        while !chat.stdout.contains("reloaded host.json: killed"), sent < 5000 {
            for _ in 0..<20 { chat.send("/route") }
            sent += 20
            chat.waitFor("route: ", occurrences: sent + 1, timeout: 30)
        }
        chat.send("/quit")
        let result = chat.finish()
        #expect(result.stdout.contains("reloaded host.json: killed: routes[0]"), "after \(sent) commands")
        #expect(sent < 5000)
    }

    @Test("SIGHUP and /reload re-read host.json")
    func hangupAndReloadCommand() throws {
        let workspace = try Workspace.standard()
        let result = try imhost(["chat", Self.houseURL], input: "/reload\n", in: workspace)
        #expect(result.stdout.contains("reloaded host.json: routed"))

        let chat = try RunningProcess(BuildProducts.imhost, ["chat", Self.houseURL], in: workspace.root)
        chat.send("/route")
        try #require(chat.waitFor("route: im://chat/house"), "the chat is up")
        chat.signal(SIGHUP)
        #expect(chat.waitFor("reloaded host.json: routed"))
        #expect(chat.finish().status == 0)
    }

    @Test("scenarios pass with a transcript, and fail at the first wrong expectation naming the step")
    func scenarios() throws {
        let workspace = try Workspace.standard()
        let good = workspace.root + "/good.json"
        try """
            [
              { "open": "\(Self.houseURL)" },
              { "receive": "house.listing", "payload": \(Self.listing) },
              { "text": "见面聊" },
              { "expect": { "page": "house", "contains": "🏠 Sunny flat", "stored": 2 } },
              { "killSwitch": { "components": ["quickReplies"], "messages": ["house.listing"] } },
              { "expect": { "components": ["topPost", "bottomBar", "dropdownMenu", "inputBar"], "contains": "Unsupported message type" } }
            ]
            """.write(toFile: good, atomically: true, encoding: .utf8)
        let passed = try imhost(["play", good, "--fixed-clock"], in: workspace)
        #expect(passed.status == 0)
        #expect(passed.stdout.hasSuffix("6 steps passed.\n"))
        #expect(passed.stdout.contains("── 5. kill switch: messages house.listing; components quickReplies"))

        let bad = workspace.root + "/bad.json"
        try """
            [
              { "open": "\(Self.houseURL)" },
              { "send": "text", "payload": { "text": "hi" } },
              { "expect": { "stored": 3 } }
            ]
            """.write(toFile: bad, atomically: true, encoding: .utf8)
        let failed = try imhost(["play", bad], in: workspace)
        #expect(failed.status == 1)
        #expect(failed.stderr == "imhost play: \(bad) step 3 (line 4): expected 3 stored messages in the conversation with u42, found 1\n")

        // What a scenario expects is quoted in the one-line failure, escaped; the page it
        // looked at goes to the transcript.
        try #"[ { "open": "\#(Self.houseURL)" }, { "expect": { "contains": "\u001b]0;PWNED\u0007\u202e" } } ]"#
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let hostile = try imhost(["play", bad], in: workspace)
        #expect(hostile.status == 1)
        #expect(hostile.stderr == #"imhost play: \#(bad) step 2 (line 1): expected the page to show "\x1b]0;PWNED\x07\u{202e}", but it does not (the page is shown above)"# + "\n")
        #expect(hostile.stdout.contains("[house page]"))

        try #"[ { "opne": "x" } ]"#.write(toFile: bad, atomically: true, encoding: .utf8)
        let typo = try imhost(["play", bad], in: workspace)
        #expect(typo.status == 2)
        #expect(typo.stderr == "imhost play: \(bad):1:5: step 1.opne: unknown key \"opne\"; did you mean \"open\"?\n")
    }

    @Test("the demo plays the whole idea, a crash rolled back by the host included, and repeats exactly")
    func demo() throws {
        let workspace = try Workspace.standard()
        try workspace.install("Cars", as: "cars.so")
        try workspace.writeConfig(try String(contentsOfFile: BuildProducts.repository + "/host.json", encoding: .utf8))
        let result = try imhost(["demo"], in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: workspace.data + "/quarantine.json"), "the demo's quarantine stays in its own scratch folder")
        try expectGolden(result.stdout, "demo.txt")
        #expect(try imhost(["demo"], in: workspace).stdout == result.stdout)
    }
}

@Suite("imhost play's scratch folder")
struct PlayScratchTests {
    /// The scratch folders of the run with process id `pid`.
    func scratch(of pid: Int32) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter { $0.hasPrefix("imhost-play-\(pid)-") }
    }

    @Test("play leaves no scratch folder: not when it ends, not on SIGTERM, and a killed run's is removed by the next")
    func noFolderLeft() throws {
        let workspace = try crashyWorkspace()
        // A builder that never returns, and a limit long enough that the run is still going when killed.
        try workspace.writeConfig(crashyConfig(callSeconds: 600))
        let scenario = workspace.root + "/hang.json"
        try """
            [ { "open": "im://chat?rootCateID=66&peer=p" }, { "receive": "crashy.bomb", "payload": { "text": "x" } }, { "show": true } ]
            """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let quick = workspace.root + "/quick.json"
        try #"[ { "open": "im://chat?rootCateID=1&peer=p" } ]"#.write(toFile: quick, atomically: true, encoding: .utf8)

        let ended = try RunningProcess(BuildProducts.imhost, ["play", quick], in: workspace.root)
        let endedPID = ended.pid
        #expect(ended.finish().status == 0)
        #expect(try scratch(of: endedPID).isEmpty)

        for signal in [SIGTERM, SIGKILL] {
            let run = try RunningProcess(BuildProducts.imhost, ["play", scenario], in: workspace.root, environment: ["IMHOST_CRASHY": "builder:loop"])
            try #require(run.waitFor("── 3. show"), "the run reached the step that hangs")
            #expect(try scratch(of: run.pid).count == 1, "the run has its scratch folder")
            if signal == SIGKILL {
                for worker in children(of: run.pid) { kill(worker, SIGKILL) }
            }
            run.signal(signal)
            _ = run.finish()
            if signal == SIGTERM {
                #expect(try scratch(of: run.pid).isEmpty, "SIGTERM ends the run, which removes its folder")
            } else {
                #expect(try scratch(of: run.pid).count == 1, "a run killed outright cannot tidy up")
                #expect(try imhost(["play", quick], in: workspace).status == 0)
                #expect(try scratch(of: run.pid).isEmpty, "the next run removed it")
            }
        }
    }
}

@Suite("What the chat's commands show")
struct ChatCommandScreenTests {
    @Test("quick replies with the input bar killed are shown as unavailable and say why; /menu N redraws the page")
    func quickRepliesAndMenu() throws {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""components": []"#, with: #""components": ["inputBar"]"#))
        let url = "im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1"
        let result = try imhost(["chat", url], input: "/quick 1\nhello\n/menu 4\n", in: workspace)
        #expect(result.status == 0)
        #expect(result.stdout.contains("Quick replies (unavailable, no input bar): [1] Hello!"))
        #expect(result.stdout.contains("/quick: quick replies are unavailable: the page has no input bar to send them (turned off by killSwitch.components in host.json)"))
        #expect(result.stdout.contains("this page has no input bar (turned off by killSwitch.components in host.json)"))
        #expect(try MessageStore(dataFolder: workspace.data, user: "me").count(of: "u42") == 0, "nothing was sent")
        // The menu item's result comes after a fresh page.
        let afterMenu = try #require(result.stdout.components(separatedBy: "menu: reported listing L1 as fake").first)
        #expect(afterMenu.hasSuffix("────\n") || afterMenu.contains("No messages yet.\n"), "the page is drawn again before the menu's result")
        let pages = result.stdout.components(separatedBy: "二手房 Resale · u42").count - 1
        #expect(pages == 2, "the first page, and the one /menu 4 drew")
    }
}

@Suite("chat and play run the same verbs")
struct VerbParityTests {
    /// Every verb that has a scenario step, as a step and as a typed line, in the same order.
    static let steps: [(step: String, typed: String)] = [
        (#"{ "open": "im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1" }"#, ""),
        (#"{ "receive": "house.listing", "payload": {"id":"L1","title":"Sunny","price":1,"area":2,"rooms":1} }"#,
         #"/recv house.listing {"id":"L1","title":"Sunny","price":1,"area":2,"rooms":1}"#),
        (#"{ "receive": "cars.offer", "payload": {"id":"C1"} }"#, #"/recv cars.offer {"id":"C1"}"#),
        (#"{ "tap": 1 }"#, "/tap 1"),
        (#"{ "tap": 2 }"#, "/tap 2"),
        (#"{ "why": 2 }"#, "/why 2"),
        (#"{ "tap": 9 }"#, "/tap 9"),
        (#"{ "menu": true }"#, "/menu"),
        (#"{ "menu": 4 }"#, "/menu 4"),
        (#"{ "quick": 4 }"#, "/quick 4"),
        (#"{ "send": "text", "payload": {"text":"sent by key"} }"#, #"/send text {"text":"sent by key"}"#),
        (#"{ "text": "typed" }"#, "typed"),
        (#"{ "more": 5 }"#, "/more 5"),
        (#"{ "route": true }"#, "/route"),
        (#"{ "offline": true }"#, "/offline"),
        (#"{ "online": true }"#, "/online"),
        (#"{ "reload": true }"#, "/reload"),
        (#"{ "open": "house://listing/L1" }"#, "/open house://listing/L1"),
        (#"{ "open": "im://chat?rootCateID=9&cateID=12&peer=hr" }"#, "/open im://chat?rootCateID=9&cateID=12&peer=hr"),
        (#"{ "bar": 5 }"#, "/bar 5"),
        (#"{ "bar": 1 }"#, "/bar 1"),
    ]

    @Test("each step a scenario plays says what the same typed command says in a chat")
    func sameWords() throws {
        let workspace = try Workspace.standard()
        let scenario = workspace.root + "/verbs.json"
        // The step that fails ends a play: tap 9 is played alone, after the rest.
        let failing = #"{ "tap": 9 }"#
        try ("[" + Self.steps.map(\.step).filter { $0 != failing }.joined(separator: ",\n") + "]")
            .write(toFile: scenario, atomically: true, encoding: .utf8)
        let play = try imhost(["play", scenario, "--data", workspace.root + "/played"], in: workspace)
        #expect(play.status == 0, "\(play.stdout)\(play.stderr)")
        let chat = try imhost(["chat", "im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1"],
                              input: Self.steps.map(\.typed).filter { !$0.isEmpty }.joined(separator: "\n") + "\n", in: workspace)
        #expect(chat.status == 0, "\(chat.stderr)")
        let said = play.stdout.split(separator: "\n").filter { $0.hasPrefix("   → ") }.map { String($0.dropFirst(5)) }
        #expect(said.count >= 15, "\(play.stdout)")
        // A chat marks what it shows as read, a scenario does not: a state may differ.
        for line in said where !line.hasPrefix("opened the") && !line.hasPrefix("  state: ") {
            #expect(chat.stdout.contains(line + "\n"), "chat did not say \"\(line)\"")
        }
        for expected in ["tap #2: nothing happens: it shows as a placeholder (/why 2 says why)",
                         "why #2 (cars.offer): no builder is registered for its key: no installed line registers it, or its line is not loaded",
                         "menu: reported listing L1 as fake; the housing team will review it",
                         "opened listing L1 detail: Sunny, ¥1, 1 rooms",
                         "bar: shared your résumé with hr", "bar: chose Photo"] {
            #expect(said.contains { $0.hasSuffix(expected) }, "play did not say \"\(expected)\"")
        }
        #expect(chat.stdout.contains("/tap: there is no message #9 on screen"))
        try ("[" + Self.steps[0].step + "," + failing + "]").write(toFile: scenario, atomically: true, encoding: .utf8)
        let failed = try imhost(["play", scenario], in: workspace)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("step 2 (line 1): /tap: there is no message #9 on screen"))
    }

    @Test("the chat's help lists every verb, and play --help every step")
    func helpFromOneTable() throws {
        let chatHelp = try imhost(["chat", "--help"])
        let playHelp = try imhost(["play", "--help"])
        for verb in ["send", "recv", "tap", "why", "quick", "menu", "bar", "more", "route", "open", "offline", "online", "reload", "help", "quit"] {
            #expect(chatHelp.stdout.contains("  /\(verb)"), "chat --help lacks /\(verb)")
        }
        for step in ["send", "receive", "tap", "why", "quick", "menu", "bar", "more", "route", "open", "offline", "online", "reload",
                     "text", "killSwitch", "liftQuarantine", "say", "show", "expect"] {
            #expect(playHelp.stdout.contains("\"\(step)\""), "play --help lacks \"\(step)\"")
        }
    }
}

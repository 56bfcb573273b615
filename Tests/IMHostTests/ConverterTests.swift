import Foundation
import Testing
@testable import IMHost
import IMKit

@Suite("The converter")
struct ConverterTests {
    /// Real plugins: house and jobs loaded, cfail failing, a refused file claiming "broken"'s
    /// routes, "cars" enabled without a plugin, "boats" disabled.
    static func host(killing killed: [String] = []) throws -> (Workspace, ChatHost) {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.compileC("descriptor_plugin.c", as: "cfail.so", defines: ["LINE_ID=\"cfail\"", "FAIL_REASON=\"no database\""])
        try workspace.compileC("descriptor_plugin.c", as: "broken.so", defines: ["LINE_ID=\"broken\""], swiftVersion: "5.10")
        try workspace.writeConfig("""
            {
              "lines": { "house": {}, "jobs": {}, "cfail": {}, "broken": {}, "cars": {}, "boats": { "enabled": false } },
              "routes": [
                { "rootCateID": 1, "cateID": "*", "line": "house" },
                { "rootCateID": 1, "cateID": 99, "line": "jobs" },
                { "rootCateID": 9, "cateID": [12, 13], "line": "jobs" },
                { "rootCateID": 20, "cateID": "*", "line": "cfail" },
                { "rootCateID": 21, "cateID": "*", "line": "broken" },
                { "rootCateID": 4, "cateID": "*", "line": "cars" },
                { "rootCateID": 5, "cateID": "*", "line": "boats" }
              ],
              "killSwitch": { "lines": [\(killed.map { "\"\($0)\"" }.joined(separator: ", "))] }
            }
            """)
        return (workspace, try workspace.host())
    }

    @Test("each reason: routed, exact over wildcard, no rule, disabled, missing, refused, failed")
    func everyReason() throws {
        let (workspace, host) = try Self.host()
        defer { withExtendedLifetime(workspace) {} }
        func decide(_ url: String) throws -> Converter.Decision { try host.converter.decide(url) }

        let house = try decide("im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L7")
        #expect(house.target == .line("house"))
        #expect(house.reason == .routed)
        #expect(house.url == "im://chat/house?rootCateID=1&cateID=12&peer=u42&infoID=L7")
        #expect(house.explanation == #"routes[0] (rootCateID 1, cateID "*") sends it to line 'house'"#)

        let exact = try decide("im://chat?rootCateID=1&cateID=99&peer=u42")
        #expect(exact.target == .line("jobs"))
        #expect(exact.rule?.index == 1)

        let jobs = try decide("im://chat?peer=u42&cateID=13&rootCateID=9")
        #expect(jobs.target == .line("jobs"))
        #expect(jobs.url == "im://chat/jobs?peer=u42&cateID=13&rootCateID=9")

        let noRule = try decide("im://chat?rootCateID=9&cateID=14&peer=u42")
        #expect(noRule.target == .legacy)
        #expect(noRule.reason == .noRule)
        #expect(noRule.url == "im://chat?rootCateID=9&cateID=14&peer=u42")
        #expect(noRule.explanation == "no rule for rootCateID 9, cateID 14: legacy page")
        #expect(try decide("im://chat?rootCateID=9&peer=u42").explanation == "no rule for rootCateID 9, cateID (none): legacy page")

        let disabled = try decide("im://chat?rootCateID=5&peer=u42")
        #expect(disabled.target == .legacy)
        #expect(disabled.reason == .lineDisabled)
        #expect(disabled.explanation == #"routes[6] (rootCateID 5, cateID "*") names line 'boats', but line 'boats' is disabled in host.json: legacy page"#)

        let missing = try decide("im://chat?rootCateID=4&peer=u42")
        #expect(missing.reason == .lineMissing)
        #expect(missing.explanation.hasSuffix("but no plugin provides line 'cars': legacy page"))

        let refused = try decide("im://chat?rootCateID=21&peer=u42")
        #expect(refused.reason == .lineRefused)
        #expect(refused.explanation.contains("line 'broken' was refused: built with Swift 5.10"))

        let failed = try decide("im://chat?rootCateID=20&peer=u42")
        #expect(failed.reason == .lineFailed)
        #expect(failed.explanation.contains("line 'cfail' failed to register: registration failed: no database"))
    }

    @Test("the kill switch sends a loaded line's jumps to the legacy page with the same URL")
    func killSwitch() throws {
        let (workspace, host) = try Self.host(killing: ["house"])
        defer { withExtendedLifetime(workspace) {} }
        let decision = try host.converter.decide("im://chat?rootCateID=1&cateID=12&peer=u42")
        #expect(decision.target == .legacy)
        #expect(decision.reason == .killed)
        #expect(decision.url == "im://chat?rootCateID=1&cateID=12&peer=u42")
        #expect(decision.explanation == #"routes[0] (rootCateID 1, cateID "*") names line 'house', but line 'house' is in killSwitch.lines: legacy page"#)
        #expect(try host.converter.decide("im://chat?rootCateID=9&cateID=12&peer=u42").target == .line("jobs"))
    }

    @Test("malformed URLs and ids are refused with the reason", arguments: [
        ("https://example.com/chat", #""https://example.com/chat" is not a chat jump URL; expected im://chat?rootCateID=<n>&cateID=<n>&peer=<id>"#),
        ("im://chat?cateID=12&peer=u1", #""im://chat?cateID=12&peer=u1" has no rootCateID; add rootCateID=<n>"#),
        ("im://chat?rootCateID=abc", #"rootCateID "abc" is not a whole number from 0 to 2147483647"#),
        ("im://chat?rootCateID=-1", #"rootCateID "-1" is not a whole number from 0 to 2147483647"#),
        ("im://chat?rootCateID=1&cateID=", #"cateID "" is not a whole number from 0 to 2147483647"#),
        ("im://chat?rootCateID=9999999999", "rootCateID 9999999999 is larger than 2147483647"),
        ("im://chat?rootCateID=1&rootCateID=2", "rootCateID is given twice; give it once"),
        ("im://chat/house?rootCateID=1", #""im://chat/house?rootCateID=1" has a path after im://chat; callers send im://chat?rootCateID=<n>&…, and the converter picks the page"#),
        ("im://chat?rootCateID=1&peer=%zz", #"peer "%zz" is empty or badly percent-encoded"#),
        // The core quotes the id as it is; the terminal and the page escape it where they draw it.
        ("im://chat?rootCateID=1&peer=ev%E2%80%AEil", "peer id has control or bidirectional characters (ev\u{202E}il); ids are plain text"),
        ("im://chat?rootCateID=1&peer=a%1B%5B2J", "peer id has control or bidirectional characters (a\u{1B}[2J); ids are plain text"),
        ("im://chat?rootCateID=1&peer=a\u{FFFD}b", "peer id holds U+FFFD, the replacement character: bytes that are not UTF-8 turn into it, so two ids could become one; give the id as UTF-8"),
        ("im://chat//?rootCateID=1", #""im://chat//?rootCateID=1" has a path after im://chat that is not a line's page; callers send im://chat?rootCateID=<n>&…, and the converter picks the page"#),
    ])
    func malformed(url: String, reason: String) throws {
        let (workspace, host) = try Self.host()
        defer { withExtendedLifetime(workspace) {} }
        #expect(throws: JumpURL.Malformed(description: reason)) { try host.converter.decide(url) }
    }

    @Test("a URL's control and bidirectional characters reach the terminal escaped, as text and as JSON's refusal")
    func hostileURLOnTerminal() throws {
        let workspace = try Workspace.standard()
        let url = "im://chat?rootCateID=1&peer=a%1B%5B2J%E2%80%AE"
        let routed = try imhost(["route", url], in: workspace)
        #expect(routed.status == 1)
        #expect(routed.stderr == #"imhost route: refused: peer id has control or bidirectional characters (a\x1b[2J\u{202e}); ids are plain text"# + "\n")
        let json = try imhost(["route", url, "--json"], in: workspace)
        let refused = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: String]
        #expect(refused == ["refused": "peer id has control or bidirectional characters (a\u{1B}[2J\u{202E}); ids are plain text"], "JSON carries the text as it is: \(json.stdout)")
        let chat = try imhost(["chat", url], input: "/quit\n", in: workspace)
        #expect(chat.stderr.contains(#"(a\x1b[2J\u{202e})"#) && !chat.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E },
                "\(chat.stderr)")
    }

    @Test("scheme and host match in any case; route and open decide every chat URL alike", arguments: [
        "IM://CHAT?rootCateID=1&cateID=12&peer=u1", "Im://Chat/?rootCateID=9&cateID=13&peer=u1",
        "im://chat/house?rootCateID=1&peer=u1", "im://chat/jobs?rootCateID=1&peer=u1", "im://chat/nosuch?rootCateID=1&peer=u1",
        "im://chat//?rootCateID=1&peer=u1", "im://chat/house/x?rootCateID=1&peer=u1", "im://chatx?rootCateID=1&peer=u1",
    ])
    func routeAndOpenAgree(url: String) throws {
        let (workspace, host) = try Self.host()
        defer { withExtendedLifetime(workspace) {} }
        let routed = Result { () throws(JumpURL.Malformed) in try host.converter.decide(chatURL: url) }
        let opened = Result { () throws(ChatHost.OpenError) in try host.open(route: url) }
        switch (routed, opened) {
        case (.success(let decision), .success(.page(let page))):
            #expect(page.decision.url == decision.url)
            #expect(page.decision.target == decision.target)
        case (.failure, .failure):
            break
        default:
            Issue.record("route and open disagree on \(url): \(routed) vs \(opened)")
        }
        if url.hasPrefix("IM://") { #expect(try routed.get().target == .line("house")) }
    }

    @Test("parameters pass through, percent-decoded for the page")
    func parameters() throws {
        let jump = try JumpURL.parse("im://chat?rootCateID=1&peer=%E5%BC%A0%E4%B8%89&title=Sunny+flat&x")
        #expect(jump.peer == "张三")
        #expect(jump.parameters.map(\.name) == ["rootCateID", "peer", "title", "x"])
        #expect(jump.parameters.map(\.value) == ["1", "张三", "Sunny flat", ""])
    }
}

import Foundation
import Testing
@testable import IMHost
import IMKit

@Suite("host.json")
struct ConfigTests {
    func error(_ text: String) -> String? {
        do {
            _ = try HostConfig.parse(text, file: "host.json")
            return nil
        } catch {
            return error.description
        }
    }

    /// What loading the file at `path` says, or `nil` when it loads.
    func loadError(_ path: String) -> String? {
        do {
            _ = try HostConfig.load(from: path)
            return nil
        } catch {
            return error.description
        }
    }

    @Test("the committed host.json is valid and routes housing, jobs and used cars")
    func committedConfig() throws {
        let config = try HostConfig.load(from: BuildProducts.repository + "/host.json")
        #expect(config.lineOrder == ["house", "jobs", "cars"])
        #expect(config.pluginsFolder == BuildProducts.repository + "/Plugins")
        #expect(config.routes.map(\.line) == ["house", "jobs", "cars"])
        #expect(config.limits == HostConfig.Limits(scanSeconds: 5, callSeconds: 5))
        #expect(config.killSwitch == HostConfig.KillSwitch())
    }

    @Test("defaults: no plugins key means Plugins beside host.json; a line without settings is enabled")
    func defaults() throws {
        let config = try HostConfig.parse(#"{ "lines": { "house": {} } }"#, file: "/etc/imhost/host.json")
        #expect(config.pluginsFolder == "/etc/imhost/Plugins")
        #expect(config.lines["house"]?.enabled == true)
        #expect(config.routes.isEmpty)
    }

    @Test("JSON syntax errors name the line and column", arguments: [
        ("{\n  \"lines\": {,}\n}", "host.json:2:13: JSON syntax: unexpected ',', expected a key in double quotes"),
        ("{\n  \"plugins\": \"Plugins\",\n}", "host.json:3:1: JSON syntax: unexpected '}', expected a key in double quotes"),
        ("{ \"plugins\": \"Plug", "host.json:1:14: JSON syntax: a string is not closed (missing '\"')"),
        ("{ \"a\": 1 } x", "host.json:1:12: JSON syntax: unexpected 'x' after the end of the document"),
        ("", "host.json:1:1: JSON syntax: unexpected end of file, expected a value"),
        ("{ \"routes\": [01] }", "host.json:1:14: JSON syntax: a number cannot start with 0 (leading zeros are not JSON)"),
        ("{ \"lines\": {}, \"lines\": {} }", "host.json:1:16: JSON syntax: key \"lines\" appears twice in the same object"),
    ])
    func syntax(text: String, expected: String) {
        #expect(error(text) == expected)
    }

    @Test("unknown keys name their path and the closest valid key", arguments: [
        (#"{ "plugin": "P" }"#, #"host.json:1:3: plugin: unknown key "plugin"; did you mean "plugins"?"#),
        (#"{ "lines": { "house": { "enabeld": true } } }"#, #"host.json:1:25: lines.house.enabeld: unknown key "enabeld"; did you mean "enabled"?"#),
        (#"{ "lines": { "house": {} }, "routes": [ { "rootCateId": 1, "cateID": "*", "line": "house" } ] }"#,
         #"host.json:1:43: routes[0].rootCateId: unknown key "rootCateId"; did you mean "rootCateID"?"#),
        (#"{ "killswitch": {} }"#, #"host.json:1:3: killswitch: unknown key "killswitch"; did you mean "killSwitch"?"#),
        (#"{ "colour": 1 }"#, #"host.json:1:3: colour: unknown key "colour"; allowed keys: plugins, data, user, lines, routes, killSwitch, limits, transport, web, privacy"#),
    ])
    func unknownKeys(text: String, expected: String) {
        #expect(error(text) == expected)
    }

    @Test("wrong types say what was expected and what was found", arguments: [
        (#"{ "plugins": 3 }"#, "host.json:1:14: plugins: expected a string, found the number 3"),
        (#"{ "lines": { "house": { "enabled": "yes" } } }"#, #"host.json:1:36: lines.house.enabled: expected true or false, found the string "yes""#),
        (#"{ "lines": [] }"#, "host.json:1:12: lines: expected an object, found an array"),
        (#"{ "lines": { "house": {} }, "routes": [ { "rootCateID": "1", "cateID": "*", "line": "house" } ] }"#,
         #"host.json:1:57: routes[0].rootCateID: expected a whole number, found the string "1""#),
        (#"{ "lines": { "house": {} }, "routes": [ { "rootCateID": 1.5, "cateID": "*", "line": "house" } ] }"#,
         "host.json:1:57: routes[0].rootCateID: expected a whole number from 0 to 2147483647, found 1.5"),
        (#"{ "lines": { "house": {} }, "routes": [ { "rootCateID": 1, "cateID": "all", "line": "house" } ] }"#,
         #"host.json:1:70: routes[0].cateID: expected "*", a cateID, or a non-empty array of cateIDs, found the string "all""#),
        (#"{ "lines": { "house": {} }, "routes": [ { "rootCateID": 1, "line": "house" } ] }"#,
         #"host.json:1:41: routes[0]: missing "cateID"; a route is { "rootCateID": 1, "cateID": "*", "line": "house" }"#),
        (#"{ "lines": { "House": {} } }"#, #"host.json:1:14: lines.House: "House" is not a line id; use [a-z][a-z0-9-]{0,31}, e.g. "house""#),
    ])
    func types(text: String, expected: String) {
        #expect(error(text) == expected)
    }

    @Test("a route or kill switch naming a line not in lines is refused with the fix")
    func unknownLine() {
        #expect(error(#"{ "lines": { "house": {} }, "routes": [ { "rootCateID": 1, "cateID": "*", "line": "hose" } ] }"#)
                == #"host.json:1:83: routes[0].line: line "hose" is not in "lines"; did you mean "house", or add "hose": { "enabled": true } to "lines""#)
        #expect(error(#"{ "lines": { "house": {} }, "killSwitch": { "lines": ["cars"] } }"#)
                == #"host.json:1:55: killSwitch.lines[0]: line "cars" is not in "lines"; add "cars": { "enabled": true } to "lines""#)
        #expect(error(#"{ "killSwitch": { "components": ["quickReply"] } }"#)
                == #"host.json:1:34: killSwitch.components[0]: unknown component "quickReply"; did you mean "quickReplies"? components: topPost, quickReplies, bottomBar, dropdownMenu, inputBar"#)
        #expect(error(#"{ "killSwitch": { "messages": ["house."] } }"#)
                == #"host.json:1:32: killSwitch.messages[0]: "house." is not a message key; use a built-in key like "image" or "<line>.<name>" like "house.listing""#)
    }

    @Test("two rules for the same rootCateID and cateID are refused, naming both")
    func duplicateRules() {
        let lines = #""lines": { "house": {}, "jobs": {} }"#
        #expect(error(#"{ \#(lines), "routes": [ { "rootCateID": 9, "cateID": [12, 13], "line": "jobs" }, { "rootCateID": 9, "cateID": 13, "line": "house" } ] }"#)
                == #"host.json:1:110: routes[1]: rootCateID 9, cateID 13 is already routed by routes[0] (to "jobs"); remove one of the two rules"#)
        #expect(error(#"{ \#(lines), "routes": [ { "rootCateID": 1, "cateID": "*", "line": "house" }, { "rootCateID": 1, "cateID": "*", "line": "jobs" } ] }"#)
                == #"host.json:1:106: routes[1]: rootCateID 1, cateID "*" is already routed by routes[0] (to "house"); remove one of the two rules"#)
        // An exact rule beside a "*" rule for the same rootCateID is not a duplicate.
        #expect(error(#"{ \#(lines), "routes": [ { "rootCateID": 1, "cateID": "*", "line": "house" }, { "rootCateID": 1, "cateID": 5, "line": "jobs" } ] }"#) == nil)
    }

    @Test("a missing host.json is one clear line, and the host loads nothing")
    func missingFile() throws {
        let workspace = try Workspace()
        #expect(throws: ConfigError.self) { try ChatHost(configPath: workspace.configPath) }
        #expect(loadError(workspace.configPath) == "\(workspace.configPath): cannot read the configuration (No such file or directory); create it (see docs/reference/host-json.md) or pass --config PATH")
    }

    @Test("host.json must be a regular file of at most 1 MiB of UTF-8; each refusal is one line with the place")
    func documents() throws {
        let workspace = try Workspace()
        #expect(loadError("/dev/zero") == "/dev/zero: it is a device, not a regular file; pass --config PATH to a host.json")
        #expect(loadError(workspace.root) == "\(workspace.root): it is a folder, not a regular file; pass --config PATH to a host.json")
        let big = workspace.root + "/big.json"
        try Data(repeating: 0x20, count: (1 << 20) + 1).write(to: URL(fileURLWithPath: big))
        #expect(loadError(big) == "\(big): it is 1048577 bytes; the limit is 1048576 (1024 KiB); pass --config PATH to a host.json")
        let latin1 = workspace.root + "/latin1.json"
        try Data("{\n  \"user\": \"caf".utf8 + [0xE9] + Data("\" }".utf8)).write(to: URL(fileURLWithPath: latin1))
        #expect(loadError(latin1) == "\(latin1):2:15: it is not valid UTF-8; pass --config PATH to a host.json")
    }

    @Test("JSON escapes and line ends: \\u takes exactly four hex digits; a lone CR ends a line", arguments: [
        (#"{ "user": "\u+041" }"#, #"host.json:1:14: JSON syntax: \u must be followed by four hex digits"#),
        (#"{ "user": "\u41" }"#, #"host.json:1:14: JSON syntax: \u must be followed by four hex digits"#),
        (#"{ "user": "\u-041" }"#, #"host.json:1:14: JSON syntax: \u must be followed by four hex digits"#),
        // Quoted as it is: the terminal escapes it (hostileUserOnTerminal).
        (#"{ "user": "me\u202e" }"#, "host.json:1:11: user: the user id has control or bidirectional characters (me\u{202E}); ids are plain text"),
        ("{\r  \"x\": 1 }", #"host.json:2:3: x: unknown key "x"; allowed keys: plugins, data, user, lines, routes, killSwitch, limits, transport, web, privacy"#),
        ("{\r\n  \"x\": 1 }", #"host.json:2:3: x: unknown key "x"; allowed keys: plugins, data, user, lines, routes, killSwitch, limits, transport, web, privacy"#),
    ])
    func escapes(text: String, expected: String) {
        #expect(error(text) == expected)
    }

    @Test("what host.json says reaches the terminal escaped: a user id with a control and a bidirectional character")
    func hostileUserOnTerminal() throws {
        let workspace = try Workspace()
        try workspace.writeConfig(#"{ "user": "me\u001b[2J\u202e" }"#)
        let result = try imhost(["chats"], in: workspace)
        #expect(result.status == 2)
        #expect(result.stderr == #"imhost: host.json:1:11: user: the user id has control or bidirectional characters (me\x1b[2J\u{202e}); ids are plain text"# + "\n",
                "\(result.stderr)")
    }

    @Test("a cateID listed twice in one rule is refused at its place (it crashed imhost route once)")
    func duplicateCateInRule() throws {
        #expect(error(#"{ "lines": { "house": {} }, "routes": [ { "rootCateID": 1, "cateID": [12, 12], "line": "house" } ] }"#)
                == "host.json:1:70: routes[0].cateID: cateID 12 is listed twice in this rule; list it once")
        let workspace = try Workspace()
        try workspace.writeConfig(#"{ "lines": { "house": {} }, "routes": [ { "rootCateID": 1, "cateID": [12, 12], "line": "house" } ] }"#)
        let result = try imhost(["route", "im://chat?rootCateID=1&cateID=12&peer=u"], in: workspace)
        #expect(result.status == 2)
        #expect(result.stderr == "imhost: host.json:1:70: routes[0].cateID: cateID 12 is listed twice in this rule; list it once\n")
    }

    @Test("limits: payload and input line sizes are whole numbers of bytes, in range")
    func limits() throws {
        let config = try HostConfig.parse(#"{ "limits": { "payloadBytes": 131072, "inputLineBytes": 4096, "callSeconds": 2 } }"#, file: "host.json")
        #expect(config.limits == HostConfig.Limits(scanSeconds: 5, callSeconds: 2, payloadBytes: 131072, inputLineBytes: 4096))
        #expect(error(#"{ "limits": { "payloadBytes": 12.5 } }"#) == "host.json:1:31: limits.payloadBytes: expected a whole number of bytes from 1024 to 67108864, found 12.5")
        #expect(error(#"{ "limits": { "inputLineBytes": "1M" } }"#) == #"host.json:1:33: limits.inputLineBytes: expected a number, found the string "1M""#)
    }

    @Test("web.maxPages: a whole number of pages from 1 to 256, 8 when not given")
    func webPages() throws {
        #expect(try HostConfig.parse("{}", file: "host.json").web.maxPages == 8)
        #expect(try HostConfig.parse(#"{ "web": { "maxPages": 3 } }"#, file: "host.json").web.maxPages == 3)
        #expect(error(#"{ "web": { "maxPages": 0 } }"#) == "host.json:1:24: web.maxPages: expected a whole number of pages from 1 to 256, found the number 0")
        #expect(error(#"{ "web": { "maxPages": "8" } }"#) == #"host.json:1:24: web.maxPages: expected a whole number of pages from 1 to 256, found the string "8""#)
        #expect(error(#"{ "web": { "pages": 8 } }"#) == #"host.json:1:12: web.pages: unknown key "pages"; allowed keys: maxPages"#)
    }

    @Test("columns count characters, so a Chinese value points at the right place")
    func unicodeColumns() {
        #expect(error("{ \"plugins\": \"插件\", \"x\": 1 }") == #"host.json:1:20: x: unknown key "x"; allowed keys: plugins, data, user, lines, routes, killSwitch, limits, transport, web, privacy"#)
    }
}

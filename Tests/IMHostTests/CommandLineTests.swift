import Foundation
import Testing
import IMHost
import IMKit

@Suite("The imhost command")
struct CommandLineTests {
    @Test("imhost plugins shows each line's status, page and keys; --json too")
    func plugins() throws {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.writePlugin("junk.so", contents: "not a library")
        try workspace.writeConfig()
        let text = try imhost(["plugins"], in: workspace)
        #expect(text.status == 0)
        #expect(text.stdout.contains("house.so             house        loaded\n    Housing 1.0.0, page HousePage, messages: house.listing"))
        #expect(text.stdout.contains("junk.so              -            refused\n    not an ELF shared object"))

        let json = try imhost(["plugins", "--json"], in: workspace)
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let rows = try #require(report?["plugins"] as? [[String: Any]])
        #expect(rows.map { $0["status"] as? String } == ["loaded", "loaded", "refused"])
        #expect(rows[2]["code"] as? String == "not-elf")
        #expect(rows[0]["messageKeys"] as? [String] == ["house.listing"])
    }

    @Test("editing host.json changes imhost route: disable, kill, drop a route")
    func editingConfigChangesRoutes() throws {
        let workspace = try Workspace()
        try workspace.installLines()
        let url = "im://chat?rootCateID=1&cateID=12&peer=u42"
        try workspace.writeConfig()
        #expect(try imhost(["route", url], in: workspace).stdout.hasPrefix("page:   house (HousePage)\nurl:    im://chat/house?rootCateID=1&cateID=12&peer=u42\n"))

        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""house": { "enabled": true }"#, with: #""house": { "enabled": false }"#))
        #expect(try imhost(["route", url], in: workspace).stdout.contains("reason: line-disabled"))

        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""killSwitch": { "lines": []"#, with: #""killSwitch": { "lines": ["house"]"#))
        let killed = try imhost(["route", url], in: workspace)
        #expect(killed.stdout.hasPrefix("page:   legacy page\nurl:    im://chat?rootCateID=1&cateID=12&peer=u42\nreason: killed"))
        #expect(try imhost(["plugins"], in: workspace).stdout.contains("house        killed"))

        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #"{ "rootCateID": 1, "cateID": "*", "line": "house" },"#, with: ""))
        #expect(try imhost(["route", url], in: workspace).stdout.contains("reason: no-rule"))
    }

    @Test("exit codes: 0 ok, 1 refused URL, 2 usage or configuration error, diagnostics on stderr")
    func exitCodes() throws {
        let workspace = try Workspace.standard()
        let bad = try imhost(["route", "im://chat?rootCateID=x"], in: workspace)
        #expect(bad.status == 1)
        #expect(bad.stdout.isEmpty)
        #expect(bad.stderr == "imhost route: refused: rootCateID \"x\" is not a whole number from 0 to 2147483647\n")

        let unknown = try imhost(["rout"], in: workspace)
        #expect(unknown.status == 2)
        #expect(unknown.stderr == "imhost: unknown command 'rout'; did you mean 'route'?; see imhost --help\n")

        let option = try imhost(["plugins", "--jsn"], in: workspace)
        #expect(option.status == 2)
        #expect(option.stderr == "imhost plugins: unknown option --jsn for 'plugins'; did you mean --json?; see imhost plugins --help\n")

        try workspace.writeConfig(#"{ "lines": { "house": { "enabled": "yes" } } }"#)
        let config = try imhost(["route", "im://chat?rootCateID=1"], in: workspace)
        #expect(config.status == 2)
        #expect(config.stderr == "imhost: host.json:1:36: lines.house.enabled: expected true or false, found the string \"yes\"\n")

        let elsewhere = try imhost(["plugins", "--config", workspace.root + "/missing.json"])
        #expect(elsewhere.status == 2)
        #expect(elsewhere.stderr.contains("missing.json: cannot read the configuration (No such file or directory)"))
    }

    @Test("an option given an empty value is refused and never takes the next argument", arguments: [
        ["route", "--config=", "im://chat?rootCateID=1&peer=u"],
        ["chat", "im://chat?rootCateID=1&peer=u", "--width="],
        ["chat", "im://chat?rootCateID=1&peer=u", "--width", ""],
    ])
    func emptyOption(arguments: [String]) throws {
        let workspace = try Workspace()
        try workspace.writeConfig()
        let result = try imhost(arguments, in: workspace)
        let option = arguments.contains("--config=") ? "--config" : "--width"
        #expect(result.status == 2)
        #expect(result.stderr == "imhost \(arguments[0]): \(option) needs a value, got an empty one\n")
    }

    @Test("a 2 MB input line is refused in one line and the chat goes on; a payload over the limit too")
    func inputLimits() throws {
        let workspace = try Workspace.standard()
        let huge = String(repeating: "x", count: 2_000_000)
        let big = String(repeating: "y", count: 70_000)
        let result = try imhost(["chat", "im://chat?rootCateID=1&cateID=12&peer=u42"],
                                input: huge + "\nafter the long line\n/recv text {\"text\":\"\(big)\"}\n" + big + "\n", in: workspace)
        #expect(result.status == 0)
        #expect(result.stderr.contains("imhost chat: refused an input line of 2000000 bytes: the limit is 1048576 (limits.inputLineBytes in host.json); nothing was sent\n"))
        #expect(result.stdout.contains("│ after the long line │"))
        #expect(result.stdout.contains("/recv: not stored: the payload is 70011 bytes; the limit is 65536 (limits.payloadBytes in host.json)"))
        #expect(result.stdout.contains("\nnot sent: the payload is 70011 bytes; the limit is 65536 (limits.payloadBytes in host.json)"),
                "typed text over the limit says it was not sent, as /send does")
        #expect(try MessageStore(dataFolder: workspace.data, user: "me").count(of: "u42") == 1)
    }

    @Test("a page drawn on a terminal is coloured, also by the supervised worker; NO_COLOR turns it off")
    func colourOnTerminal() throws {
        let workspace = try Workspace.standard()
        // script(1) gives imhost a terminal; the test helpers set NO_COLOR, so it is unset here.
        func onTerminal(_ environment: String) throws -> String {
            try run("/usr/bin/script", ["-qec", "env \(environment) '\(BuildProducts.imhost)' open 'im://chat?rootCateID=1&cateID=12&peer=u42'",
                                        "/dev/null"], currentDirectory: workspace.root).stdout
        }
        let coloured = try onTerminal("-u NO_COLOR")
        #expect(coloured.contains("\u{1B}["), "\(coloured)")
        #expect(coloured.contains("[house page]"))
        let plain = try onTerminal("NO_COLOR=1")
        #expect(!plain.contains("\u{1B}[") && plain.contains("[house page]"), "\(plain)")
    }

    @Test("an argument that is not UTF-8 is refused by its bytes, not turned into another URL, path or id")
    func undecodableArgument() throws {
        let workspace = try Workspace.standard()
        // Process takes Strings, so the shell's printf makes the byte 0xFF.
        let result = try run("/bin/sh", ["-c", #""$0" open "$(printf 'house://listing/L\3771')""#, BuildProducts.imhost],
                             currentDirectory: workspace.root)
        #expect(result.status == 2)
        #expect(result.stderr == #"imhost: argument 2 is not valid UTF-8 (house://listing/L\xFF1); give paths, ids and URLs as UTF-8 text, percent-encoding other bytes in URLs"# + "\n")
    }

    @Test("--help on every command and at the top", arguments: [["--help"], ["plugins", "--help"], ["route", "--help"], ["help", "route"]])
    func help(arguments: [String]) throws {
        let result = try imhost(arguments)
        #expect(result.status == 0)
        #expect(result.stdout.contains("Usage: imhost"))
        #expect(result.stderr.isEmpty)
    }

    @Test("a refused plugin is one line on stderr and the command still works")
    func refusalOnStderr() throws {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.writePlugin("junk.so", contents: "not a library")
        try workspace.writeConfig()
        let result = try imhost(["route", "im://chat?rootCateID=9&cateID=12&peer=u1"], in: workspace)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("page:   jobs (JobsPage)"))
        #expect(result.stderr == "imhost: refused junk.so: not an ELF shared object (the file starts with \"not a li\"); build the plugin as a dynamic library (.library(type: .dynamic)) or remove the file\n")
    }
}

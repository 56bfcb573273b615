import Foundation
import Testing

/// The commands are declared once: their usage lines, `--help`, the "did you mean", the checks of
/// option values and the reference in docs/reference/commands.md are all made from the
/// declarations, and what each command prints for a script is there as JSON.
@Suite("Commands declared once")
struct CommandDeclarationTests {
    static let referencePath = BuildProducts.repository + "/docs/reference/commands.md"

    /// The reference's section of one command: from its heading to the next.
    static func section(_ command: String, of reference: String) -> String? {
        guard let start = reference.range(of: "\n## imhost \(command)\n") else { return nil }
        let rest = reference[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)])
    }

    @Test("docs/reference/commands.md is exactly what the declarations make")
    func referenceMatches() throws {
        let printed = try imhost(["__reference"])
        #expect(printed.status == 0 && printed.stderr.isEmpty, "\(printed.stderr)")
        let committed = try String(contentsOfFile: Self.referencePath, encoding: .utf8)
        let made = printed.stdout.components(separatedBy: "\n"), kept = committed.components(separatedBy: "\n")
        let first = zip(made, kept).enumerated().first { $1.0 != $1.1 }?.offset ?? (made.count == kept.count ? nil : min(made.count, kept.count))
        #expect(first == nil, """
            docs/reference/commands.md differs from the commands' declarations at line \((first ?? 0) + 1) \
            (the file has "\(first.flatMap { kept.indices.contains($0) ? kept[$0] : nil } ?? "")", \
            the declarations make "\(first.flatMap { made.indices.contains($0) ? made[$0] : nil } ?? "")"): \
            regenerate it with `make reference` (or .build/debug/imhost __reference > docs/reference/commands.md) and commit it
            """)
    }

    @Test("every command the overview lists has a section in the reference, and its --help names every option the reference gives it")
    func helpAndReferenceAgree() throws {
        let overview = try imhost(["--help"])
        #expect(overview.status == 0)
        let listed = overview.stdout.components(separatedBy: "Commands:\n")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n").map { String($0.dropFirst(2).prefix { $0 != " " }) }
        #expect(listed.count >= 14, "\(overview.stdout)")
        let reference = try imhost(["__reference"]).stdout
        for command in listed {
            let section = try #require(Self.section(command, of: reference), "the reference has no section for \(command)")
            let help = try imhost([command, "--help"])
            #expect(help.status == 0 && help.stdout.hasPrefix("Usage: imhost \(command)"), "\(command): \(help.stdout)")
            // Each option row of the reference: | `--width N` | ... |
            let options = section.split(separator: "\n").filter { $0.hasPrefix("| `--") }.map { String($0.dropFirst(3).prefix { $0 != "`" }) }
            for option in options {
                #expect(help.stdout.contains("  " + option.replacingOccurrences(of: "\\|", with: "|") + " "), "imhost \(command) --help lacks \(option)")
            }
        }
        #expect(!overview.stdout.contains("__"), "internal commands are listed to nobody")
    }

    @Test("the README's commands are declared ones, with declared options")
    func readmeCommands() throws {
        let readme = try String(contentsOfFile: BuildProducts.repository + "/README.md", encoding: .utf8)
        let commands = readme.components(separatedBy: "\n## Commands\n")[1].components(separatedBy: "\n#")[0]
        let reference = try String(contentsOfFile: Self.referencePath, encoding: .utf8)
        #expect(commands.contains("(docs/reference/commands.md)"))
        let lines = commands.split(separator: "\n").filter { $0.hasPrefix("imhost ") }
        #expect(lines.count >= 5, "\(commands)")
        for line in lines {
            let words = line.split(separator: " ").map(String.init)
            let section = try #require(Self.section(words[1], of: reference), "README names imhost \(words[1]), which is no command")
            for option in words where option.hasPrefix("--") {
                #expect(section.contains("`\(option)"), "README gives imhost \(words[1]) \(option), which it does not take")
            }
        }
    }

    @Test("the options for every command may come before it, as with git -C")
    func globalOptionsFirst() throws {
        let workspace = try Workspace.standard()
        let elsewhere = try Workspace()
        let after = try imhost(["plugins", "--config", workspace.configPath], in: elsewhere)
        #expect(after.status == 0, "\(after.stderr)")
        let before = try imhost(["--config", workspace.configPath, "plugins"], in: elsewhere)
        #expect(before.status == 0 && before.stdout == after.stdout, "\(before.stderr)")
        let joined = try imhost(["--verbose", "--config=" + workspace.configPath, "chats"], in: elsewhere)
        let plain = try imhost(["chats"], in: workspace)
        #expect(joined.status == 0 && joined.stdout == plain.stdout, "\(joined.stderr)")
        // One given after the command wins over one given before it.
        let both = try imhost(["--config", elsewhere.root + "/missing.json", "route", "--config", workspace.configPath,
                               "im://chat?rootCateID=1&cateID=12&peer=u42"], in: elsewhere)
        #expect(both.status == 0 && both.stdout.hasPrefix("page:   house (HousePage)"), "\(both.stderr)")

        let help = try imhost(["--help", "chat"])
        let asked = try imhost(["chat", "--help"])
        #expect(help.status == 0 && help.stdout == asked.stdout)
        #expect(help.stdout.hasPrefix("Usage: imhost chat URL | --peer ID [--width N] [--user ID]\n"))
        let alone = try imhost(["--config", workspace.configPath])
        #expect(alone.status == 2 && alone.stdout.isEmpty && alone.stderr.contains("Usage: imhost [OPTIONS] COMMAND [ARGUMENTS]"))
    }

    /// What was typed, and the one line it gets: a suggestion only when it is plausibly a typo.
    @Test("a mistyped command, subcommand or option gets the nearest declared one, and a word that is no typo gets none", arguments: [
        (["--verison"], "imhost: unknown option --verison; did you mean --version?; see imhost --help"),
        (["-c", "chats"], "imhost: unknown option -c; see imhost --help"),
        (["plugins", "-c"], "imhost plugins: unknown option -c for 'plugins'; see imhost plugins --help"),
        (["plugins", "-H"], "imhost plugins: unknown option -H for 'plugins'; did you mean -h?; see imhost plugins --help"),
        (["chats", "--jsn"], "imhost chats: unknown option --jsn for 'chats'; did you mean --json?; see imhost chats --help"),
        (["--cnofig", "x", "chats"], "imhost: unknown option --cnofig; did you mean --config?; see imhost --help"),
        (["rout"], "imhost: unknown command 'rout'; did you mean 'route'?; see imhost --help"),
        (["ch"], "imhost: unknown command 'ch'; see imhost --help"),
        (["broker", "iint"], "imhost broker: unknown subcommand 'iint'; did you mean 'init'?; see imhost broker --help"),
        (["fleet", "stauts"], "imhost fleet: unknown subcommand 'stauts'; did you mean 'status'?; see imhost fleet --help"),
        (["broker"], "imhost broker: expected a subcommand: init, add-user, remove-user, add-device, remove-device, devices, upgrade or run; see imhost broker --help"),
        (["broker", "run", "b", "--force"], "imhost broker: --force is not an option of 'broker run' (it goes with broker init); see imhost broker --help"),
        (["quarantine", "--all"], "imhost quarantine: --all is not an option of 'quarantine' (it goes with quarantine lift); see imhost quarantine --help"),
    ])
    func suggestions(typed: [String], said: String) throws {
        let workspace = try Workspace.standard()
        let result = try imhost(typed, in: workspace)
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == said + "\n")
    }

    @Test("a value an option does not take is refused before anything runs, always as 'OPTION takes WHAT, got VALUE'", arguments: [
        (["chat", "im://chat?rootCateID=1&peer=u", "--width", "23"], "imhost chat: --width takes a number from 24 to 400, got '23'"),
        (["sync", "--timeout", "0"], "imhost sync: --timeout takes seconds from 0.1 to 3600, got '0'"),
        (["fleet", "kill", "house", "--wait", "x"], "imhost fleet: --wait takes seconds from 0 to 60, got 'x'"),
        (["broker", "init", "made", "--users", "alice", "--port", "0"], "imhost broker: --port takes a port from 1 to 65535, got '0'"),
        (["broker", "init", "made", "--users", "alice,,bob"], "imhost broker: --users takes ids separated by commas (alice,bob), got 'alice,,bob'"),
        (["broker", "init", "made", "--users", "alice", "--listen", "8883"], "imhost broker: --listen takes HOST:PORT, e.g. 0.0.0.0:8883, got '8883'"),
        (["new-line", "made", "--root-cate-id", "0"], "imhost new-line: --root-cate-id takes a whole number from 1 to 2147483647, got '0'"),
        (["new-line", "--example", "hous"], "imhost new-line: --example takes house, jobs or cars, got 'hous'"),
        (["chats", "--user", "a\u{202E}b"], #"imhost chats: --user takes a user id, got 'a\u{202e}b'; it has control or bidirectional characters (a\u{202e}b); ids are plain text"#),
    ])
    func refusedValues(arguments: [String], said: String) throws {
        let workspace = try Workspace.standard()
        let result = try imhost(arguments, in: workspace)
        #expect(result.status == 2)
        #expect(result.stderr == said + "\n")
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/made"), "nothing is written for a refused command")
    }

    @Test("broker init --json gives the folder, the URL and each user's host.json members, which connect")
    func brokerJSON() throws {
        let root = try Workspace()
        let folder = root.root + "/broker"
        let made = try imhost(["broker", "init", folder, "--users", "alice,bob", "--json"], in: root)
        #expect(made.status == 0, "\(made.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any])
        #expect(report["folder"] as? String == folder)
        #expect(report["url"] as? String == "unix:\(folder)/mosquitto.sock")
        let users = try #require(report["users"] as? [[String: Any]])
        #expect(users.map { $0["user"] as? String } == ["alice", "bob"])
        let alice = try #require(users[0]["hostJSON"] as? [String: Any])
        #expect(alice["user"] as? String == "alice")
        let transport = try #require(alice["transport"] as? [String: Any])
        #expect(transport["passwordFile"] as? String == folder + "/passwords/alice" && users[0]["passwordFile"] as? String == folder + "/passwords/alice")

        // The members, as they are, in a host.json: alice's host connects with them.
        let broker = try RunningProcess(BuildProducts.imhost, ["broker", "run", folder], in: root.root)
        defer { broker.signal(SIGINT); _ = broker.finish() }
        try #require(broker.waitFor("accepting connections"), "\(broker.stderr)")
        let host = try Workspace()
        try String(decoding: JSONSerialization.data(withJSONObject: alice), as: UTF8.self).write(toFile: host.configPath, atomically: true, encoding: .utf8)
        let sync = try imhost(["sync", "--json"], in: host)
        #expect(sync.status == 0 && sync.stdout.contains(#""connected" : true"#), "\(sync.stdout)\(sync.stderr)")

        let added = try imhost(["broker", "add-user", folder, "carol", "--json"], in: root)
        let carol = try #require(try JSONSerialization.jsonObject(with: Data(added.stdout.utf8)) as? [String: Any])
        #expect((carol["users"] as? [[String: Any]])?.first?["hostJSON"] != nil && carol["reloaded"] as? Bool == true, "\(added.stdout)")
        let bridge = try imhost(["broker", "add-user", folder, "peer-broker", "--bridge", "--json"], in: root)
        let bridged = try #require(try JSONSerialization.jsonObject(with: Data(bridge.stdout.utf8)) as? [String: Any])
        #expect((bridged["users"] as? [[String: Any]])?.first?["hostJSON"] == nil, "a bridge's user has no host.json: \(bridge.stdout)")
    }

    @Test("new-line --json says what it wrote, where, and the host.json members its own host.json holds")
    func newLineJSON() throws {
        let workspace = try Workspace()
        for (arguments, routes) in [(["new-line", "rent", "--root-cate-id", "77"], #"[{"cateID":"*","line":"rent","rootCateID":77}]"#),
                                    (["new-line", "--example", "jobs"], #"[{"cateID":[12,13],"line":"jobs","rootCateID":9}]"#)] {
            let made = try imhost(arguments + ["--json"], in: workspace)
            #expect(made.status == 0, "\(made.stderr)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any])
            let folder = try #require(report["folder"] as? String)
            let line = try #require(report["line"] as? String)
            #expect(folder == workspace.root + "/" + line)
            let files = try #require(report["files"] as? [String])
            #expect(files.contains("Package.swift") && files.contains("host.json"))
            for file in files { #expect(FileManager.default.fileExists(atPath: folder + "/" + file), "\(file) was not written") }
            #expect(report["library"] as? String == ".build/debug/lib\(line.prefix(1).uppercased() + line.dropFirst()).so")
            let members = try #require(report["hostJSON"] as? [String: Any])
            func canonical(_ value: Any?) throws -> String {
                String(decoding: try JSONSerialization.data(withJSONObject: try #require(value), options: [.sortedKeys]), as: UTF8.self)
            }
            #expect(try canonical(members["lines"]) == #"{"\#(line)":{"enabled":true}}"#)
            #expect(try canonical(members["routes"]) == routes)
            // The package's own host.json routes to the line the same way.
            let own = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/host.json"))) as? [String: Any]
            #expect(try canonical(own?["routes"]) == routes)
        }
    }
}

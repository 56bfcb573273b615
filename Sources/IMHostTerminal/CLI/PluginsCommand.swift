import IMKit
import IMHost
import IMHostRuntime

/// `imhost plugins`: every plugin file and configured line, and where each stands.
enum PluginsCommand {
    static let command = CommandLineTool.Command(
        name: "plugins",
        summary: "list plugin files and lines: loaded, killed, quarantined, refused, failed...",
        options: [
            .flag("--samples", "draw each line's samples (IMKit 1.4) in a child process and check their cards against the card rules, saying where each mistake is"),
            .json(),
        ],
        help: """
            Examines the plugin folder named in host.json and reports each .so file and each
            configured line:
              loaded          vetted and enabled: it serves, and its library is opened in a chat
                              when first needed
              killed          loaded, but in killSwitch.lines (the operator's kill switch)
              quarantined     the host took it out of service after its code crashed or hung
              crashed, hung   its code crashed or hung while it was being loaded or registered
              disabled        "enabled": false in host.json; never opened in the host
              not-configured  found, but not in host.json's lines; never opened in the host
              refused         failed a check: trust, ELF, ABI, compiler, line id, pins
              failed          its registration failed
              missing         enabled, but no file provides it
            A line that does not serve says why and what to do. New or changed files are opened
            first by a scanner process, never by this one; nothing is started to list.
            An open chat that runs another build of a line than its file now says so:
            "open chats run 0.2.0 (pid 123)" (a chat moves to a new build by itself once
            the file is a build that loads).
            Exits 1 when a configured, enabled line does not serve (refused, failed, crashed,
            hung, quarantined or missing); killed and disabled lines are the operator's choice.

            --samples draws every sample each vetted line gives (MessageBuilder.samples), in a
            child process per file as the workbench (imhost preview) does, and says, under the
            line, each card that breaks a card rule with the path of the mistake
            ('buttons[2].id: "book now" has a space; ...') or why a sample could not be drawn.
            Exits 1 when one does.
            """,
        run: run)

    struct Row: Encodable {
        var file: String?
        var line: String?
        var displayName: String?
        var version: String?
        var status: LineTable.State
        var serving: Bool
        var code: String?
        /// Who turned the line off: "host.json", "fleet" or "quarantine".
        var source: String?
        var reason: String?
        var fix: String?
        var page: String?
        var messageKeys: [String]
        var services: [String]
        var routes: [String]
        var quarantinedKeys: [String]
        var crash: CrashRecord?
        var note: String?
        /// The open chats that run this file's line: which build each runs.
        var openChats: [OpenChat]
        /// With `--samples`: each sample drawn, or why none could be, or why those after the ones
        /// drawn could not be.
        var samples: [SampleCheck.Report]? = nil
        var samplesProblem: String? = nil
        /// With `--samples`: whether a card breaks a rule, or a sample could not be drawn.
        var samplesFailed: Bool? = nil
    }

    static func samplesFailed(_ row: Row) -> Bool {
        row.samplesProblem != nil || row.samples?.contains { !$0.isClean } == true
    }

    /// An open chat running a line: its process, the version it opened, and whether that is the
    /// file as it is now.
    struct OpenChat: Encodable {
        var pid: Int32
        var version: String
        var current: Bool
    }

    struct Report: Encodable {
        var folder: String
        var folderProblem: String?
        /// The fleet configuration this host applies (cached), if any.
        var fleetVersion: Int64?
        var plugins: [Row]
        /// Configured, enabled lines that do not serve.
        var notServing: [String]
    }

    static func report(_ host: ChatHost, samples: Bool = false) -> Report {
        let chats = OpenChats.all(dataFolder: host.dataFolder)
        var rows = host.lines.rows.map { entry in
            let manifest = entry.manifest
            let source: String? = switch entry.state {
            case .killed: entry.lineID.flatMap { host.config.switchedOff(line: $0)?.source }
            case .quarantined, .crashed, .hung: "quarantine"
            case .disabled, .notConfigured: "host.json"
            default: nil
            }
            return Row(file: entry.file, line: entry.lineID, displayName: entry.descriptor?.displayName,
                       version: entry.descriptor?.version, status: entry.state, serving: entry.isServing,
                       code: entry.problem?.code.rawValue, source: source, reason: entry.problem?.reason, fix: entry.problem?.fix,
                       page: manifest?.page, messageKeys: manifest?.messageKeys ?? [], services: manifest?.services ?? [],
                       routes: manifest?.routes.map(\.pattern) ?? [], quarantinedKeys: entry.quarantinedKeys.keys.sorted(),
                       crash: entry.crash, note: entry.note, openChats: [])
        }
        // Each chat's build is told on the row of its file, or else on its line's.
        for chat in chats {
            for build in chat.lines {
                guard let index = rows.firstIndex(where: { $0.file == build.file }) ?? rows.firstIndex(where: { $0.line == build.line }) else { continue }
                let current = host.lines.rows[index].identity == build.identity
                rows[index].openChats.append(OpenChat(pid: chat.pid, version: build.version, current: current))
            }
        }
        if samples {
            for index in rows.indices {
                guard let file = rows[index].file, host.lines.rows[index].manifest != nil else { continue }
                switch SampleCheck.run(file: file, executable: Executable.path) {
                case .drawn(_, _, let drawn, let cut):
                    rows[index].samples = drawn
                    rows[index].samplesProblem = cut
                case .refused(let why): rows[index].samplesProblem = why
                }
                rows[index].samplesFailed = samplesFailed(rows[index])
            }
        }
        return Report(folder: host.lines.folder, folderProblem: host.lines.folderProblem, fleetVersion: host.config.fleet?.config.version, plugins: rows,
                      notServing: host.lines.notServing.compactMap(\.lineID))
    }

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        guard arguments.positionals.isEmpty else {
            output.diagnostic("imhost plugins: takes no arguments, got '\(arguments.positionals[0])'; see imhost plugins --help")
            return CommandLineTool.ExitCode.usage
        }
        guard let config = CommandLineTool.loadConfig(arguments, output: output) else { return CommandLineTool.ExitCode.usage }
        let host = CommandLineTool.makeHost(config, verbose: arguments.flags.contains("--verbose"))
        for crash in host.recoveredCrashes { output.diagnostic(CommandLineTool.foundAtStart(crash)) }
        for crash in host.lines.recordedCrashes { output.diagnostic("imhost: recorded a crash: \(crash.summary)") }
        // What is not about one file (those are in the table).
        for problem in [host.lines.quarantineProblem, host.lines.cacheProblem].compactMap({ $0 }) {
            output.diagnostic("imhost: \(problem)")
        }
        let report = report(host, samples: arguments.flags.contains("--samples"))
        let failed = !report.notServing.isEmpty || report.folderProblem != nil || report.plugins.contains { $0.samplesFailed == true }
        let code = failed ? CommandLineTool.ExitCode.failure : CommandLineTool.ExitCode.ok
        if arguments.flags.contains("--json") {
            output.out(JSONOutput.encode(report))
            return code
        }
        var text = "Plugin folder: \(TerminalText.safe(report.folder))\n"
        if let problem = report.folderProblem { text += "  \(TerminalText.safe(problem))\n" }
        if report.plugins.isEmpty { text += "  no plugins found (drop a line's .so here)\n" }
        for row in report.plugins {
            let file = row.file.map { TerminalText.safe(FileSystem.baseName($0)) } ?? "(no file)"
            // Padded to line up, never cut: a long name or id is shown whole.
            text += "\n" + file.padding(20, cut: false) + " " + (row.line ?? "-").padding(12, cut: false) + " " + row.status.rawValue + "\n"
            if let name = row.displayName, let version = row.version {
                var about = "    \(name) \(version)"
                if let page = row.page { about += ", page \(page)" }
                if !row.messageKeys.isEmpty { about += ", messages: " + row.messageKeys.joined(separator: ", ") }
                text += TerminalText.safe(about) + "\n"
                if !row.services.isEmpty { text += TerminalText.safe("    services: " + row.services.joined(separator: ", ")) + "\n" }
                if !row.routes.isEmpty { text += TerminalText.safe("    routes: " + row.routes.joined(separator: ", ")) + "\n" }
            }
            if !row.quarantinedKeys.isEmpty {
                text += TerminalText.safe("    quarantined keys: " + row.quarantinedKeys.joined(separator: ", ") + "; lift with imhost quarantine lift \(row.line ?? "")") + "\n"
            }
            if let reason = row.reason, let fix = row.fix { text += "    \(TerminalText.safe(reason)); \(TerminalText.safe(fix))\n" }
            if let note = row.note { text += "    \(TerminalText.safe(note))\n" }
            for (version, chats) in Dictionary(grouping: row.openChats.filter { !$0.current }, by: \.version).sorted(by: { $0.key < $1.key }) {
                let pids = chats.map { "\($0.pid)" }.joined(separator: ", ")
                text += TerminalText.safe("    open chats run \(version) (pid\(chats.count == 1 ? "" : "s") \(pids))") + "\n"
            }
            text += samplesText(row)
        }
        if !report.notServing.isEmpty {
            text += "\nNot serving: \(report.notServing.joined(separator: ", ")) (configured and enabled)\n"
        }
        output.out(text)
        return code
    }

    /// What `--samples` found for a row: a count when every sample keeps the rules, else each
    /// mistake with its path, one line each.
    static func samplesText(_ row: Row) -> String {
        guard let samples = row.samples else {
            return row.samplesProblem.map { "    samples not drawn: \(TerminalText.safe($0))\n" } ?? ""
        }
        let cut = row.samplesProblem.map { "    samples after these not drawn: \(TerminalText.safe($0))\n" } ?? ""
        guard !samples.isEmpty else {
            return cut.isEmpty ? "    samples: none (give MessageBuilder.samples, IMKit 1.4, to have them checked here and in imhost preview)\n" : cut
        }
        let broken = samples.filter { !$0.isClean }
        var text = "    samples: \(samples.count), " + (broken.isEmpty ? "every card keeps the card rules" : "\(broken.count) with mistakes or not drawn") + "\n" + cut
        for sample in broken {
            let name = "\(sample.key) \"\(sample.name)\""
            if let failure = sample.failure { text += TerminalText.safe("      \(name): \(failure)") + "\n" }
            for problem in sample.problems { text += TerminalText.safe("      \(name): \(problem)") + "\n" }
        }
        return text
    }
}

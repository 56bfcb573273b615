import IMHost
import IMHostRuntime
import IMKit

/// `imhost quarantine [--json]` and `imhost quarantine lift LINE|FILE|--all`: what the host took
/// out of service after line code crashed or hung, and putting it back.
enum QuarantineCommand {
    static let command = CommandLineTool.Command(
        name: "quarantine",
        summary: "list what the host quarantined after a crash or hang, or lift it",
        subcommands: [
            .init(name: "", summary: "list the entries, with the crash behind each", options: [.json()]),
            .init(name: "lift", arguments: "LINE|KEY|FILE|--all",
                  summary: "lift a line's entries (its keys too), one message key (e.g. cars.offer), a plugin file's entry (by its name), or everything",
                  options: [.flag("--all", "lift everything")]),
        ],
        help: """
            The host quarantines on its own when a line's code crashes or hangs: a first crash
            in a message builder costs that message key (its messages show as placeholders);
            a second crash of the line within 10 minutes, or a crash while loading or
            registering, in a page hook, a tap, a route handler or a service, costs the whole
            line (its chats open on the legacy page, its routes answer not-found). A file that
            crashes before it says which line it is is not opened again.

            Each entry applies to the file that crashed: installing a new file lifts it by
            itself. Entries are kept in <data>/quarantine.json, and every crash in
            <data>/crashes.log (one JSON object a line).

            Chats that are open pick up a lift at once; exits 1 when nothing matched.
            """,
        run: run)

    struct Row: Encodable {
        var line: String?
        var key: String?
        /// For one message from another host: its sender and global id.
        var sender: String?
        var globalID: String?
        var file: String?
        var scope: Quarantine.Scope
        var since: String
        /// Whether it applies to the file installed now (a replaced file lifts it).
        var active: Bool
        var reason: String
        var crash: CrashRecord
    }

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        guard let config = CommandLineTool.loadConfig(arguments, output: output) else { return CommandLineTool.ExitCode.usage }
        if arguments.positionals.first == "lift" {
            return lift(arguments, config: config, output: output)
        }
        guard arguments.positionals.isEmpty else {
            output.diagnostic("imhost quarantine: expected nothing or 'lift LINE|FILE|--all', got '\(arguments.positionals.joined(separator: " "))'; see imhost quarantine --help")
            return CommandLineTool.ExitCode.usage
        }
        let host = CommandLineTool.makeHost(config, verbose: arguments.flags.contains("--verbose"))
        let quarantine = Quarantine(dataFolder: host.dataFolder)
        if let problem = quarantine.problem { output.diagnostic("imhost: \(problem)") }
        if let problem = host.lines.cacheProblem { output.diagnostic("imhost: \(problem)") }
        let rows = quarantine.holds.map { entry in
            let current = entry.file.flatMap { name in host.lines.rows.first { $0.fileName == name }?.identity }
            return Row(line: entry.line, key: entry.key, sender: entry.sender, globalID: entry.globalID, file: entry.file,
                       scope: entry.scope, since: entry.since,
                       active: entry.applies(to: current), reason: entry.reason, crash: entry.crash)
        }
        if arguments.flags.contains("--json") {
            output.out(JSONOutput.encode(rows))
            return CommandLineTool.ExitCode.ok
        }
        guard !quarantine.isUnreadable else {
            output.out("Every line is held: the quarantine cannot be read (see above).\n")
            return CommandLineTool.ExitCode.failure
        }
        guard !rows.isEmpty else {
            output.out("Nothing is quarantined.\n")
            return CommandLineTool.ExitCode.ok
        }
        // Each row is a few lines of the host's own; what they quote (a line's error, a file
        // name) is escaped line by line, so a newline in it cannot start a line of its own.
        var lines: [String] = []
        func add(_ line: String) { lines.append(TerminalText.safe(line, newlines: false)) }
        for row in rows {
            let what = subject(row.scope, key: row.key, line: row.line, file: row.file, sender: row.sender)
            add("\(what)\(row.active ? "" : " (no longer applies: the file was replaced)")")
            add("    since \(row.since): \(row.reason)")
            if let detail = row.crash.detail { add("    it said: \(detail)") }
            // A message or key hold is lifted by its key, as the crash notice says; a line's by its line.
            let target = row.scope == .line ? row.line : (row.key ?? row.line)
            add("    lift with: imhost quarantine lift \(target ?? row.file ?? "--all")")
        }
        output.out(lines.map { $0 + "\n" }.joined())
        return CommandLineTool.ExitCode.ok
    }

    static func lift(_ arguments: Arguments, config: HostConfig, output: Output) -> Int32 {
        let targets = Array(arguments.positionals.dropFirst())
        let all = arguments.flags.contains("--all")
        guard all ? targets.isEmpty : targets.count == 1 else {
            output.diagnostic("imhost quarantine lift: expected one LINE, KEY or FILE, or --all; see imhost quarantine --help")
            return CommandLineTool.ExitCode.usage
        }
        let target = targets.first
        let what: Quarantine.Target
        if all {
            what = .all
        } else if let target, target.hasSuffix(".so") {
            what = .file(target)
        } else if let target, LineID.owner(ofMessageKey: target) != nil {
            what = .key(target)
        } else {
            what = .line(target ?? "")
        }
        let lifted: [Quarantine.Hold]
        do {
            lifted = try Quarantine.lift(dataFolder: config.dataFolder, what)
        } catch {
            output.diagnostic("imhost quarantine lift: cannot write \(config.dataFolder)/quarantine.json (\(error.call): \(error)); check the data folder's permissions")
            return CommandLineTool.ExitCode.failure
        }
        guard !lifted.isEmpty else {
            output.diagnostic("imhost quarantine lift: nothing is quarantined\(all ? "" : " for '\(target ?? "")'"); see imhost quarantine")
            return CommandLineTool.ExitCode.failure
        }
        for entry in lifted {
            let what = subject(entry.scope, key: entry.key, line: entry.line, file: entry.file, sender: entry.sender)
            output.out(TerminalText.safe("lifted \(what) (quarantined since \(entry.since))") + "\n")
        }
        return CommandLineTool.ExitCode.ok
    }

    /// What an entry takes out: "one house.listing message from bob", "house.listing messages
    /// from bob", "message key
    /// house.listing", "line cars", "file x.so".
    static func subject(_ scope: Quarantine.Scope, key: String?, line: String?, file: String?, sender: String? = nil) -> String {
        switch scope {
        case .message: "one \(key ?? "") message from \(sender ?? "")"
        case .sender: "\(key ?? "") messages from \(sender ?? "")"
        case .key: "message key \(key ?? "")"
        case .line: "line \(line ?? "")"
        case .file: "file \(file ?? "")"
        }
    }
}

/// `imhost plugins`: every plugin file and configured line, and where each stands.
enum PluginsCommand {
    static let command = CommandLineTool.Command(
        name: "plugins",
        summary: "list plugin files and lines: loaded, killed, disabled, refused, failed...",
        usage: "[--json]",
        help: """
            Scans the plugin folder named in host.json and reports each .so file and each
            configured line: loaded, killed (loaded, but in killSwitch.lines), disabled,
            not-configured (found, not in host.json), refused (failed a check before
            registration), failed (its registration failed) or missing (enabled, no file).
            A line that is not loaded says why and what to do.

              --json   the same as JSON
            """,
        flags: ["--json"], options: [],
        run: run)

    struct Row: Encodable {
        var file: String?
        var line: String?
        var displayName: String?
        var version: String?
        var status: PluginCatalog.Status
        var code: String?
        var reason: String?
        var fix: String?
        var page: String?
        var messageKeys: [String]
        var services: [String]
        var routes: [String]
    }

    struct Report: Encodable {
        var folder: String
        var folderProblem: String?
        var plugins: [Row]
    }

    static func report(_ host: ChatHost) -> Report {
        let rows = host.catalog.entries.map { entry in
            let status = host.catalog.status(of: entry, killSwitch: host.config.killSwitch)
            var problem = entry.problem
            if status == .killed {
                problem = PluginRefusal(.killed, "line '\(entry.lineID ?? "")' is in killSwitch.lines: its chats open on the legacy page",
                                        fix: "remove it from killSwitch.lines to roll it forward")
            }
            return Row(file: entry.file, line: entry.lineID, displayName: entry.displayName, version: entry.pluginVersion,
                       status: status, code: problem?.code.rawValue, reason: problem?.reason, fix: problem?.fix,
                       page: entry.pageTypeName, messageKeys: entry.messageKeys,
                       services: entry.services, routes: entry.routes)
        }
        return Report(folder: host.catalog.folder, folderProblem: host.catalog.folderProblem, plugins: rows)
    }

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        guard arguments.positionals.isEmpty else {
            output.err("imhost plugins: takes no arguments, got '\(arguments.positionals[0])'; see imhost plugins --help\n")
            return CommandLineTool.ExitCode.usage
        }
        guard let host = CommandLineTool.loadHost(arguments, output: output, reportProblems: false, loadAll: true) else {
            return CommandLineTool.ExitCode.usage
        }
        let report = report(host)
        if arguments.flags.contains("--json") {
            output.out(JSONOutput.encode(report))
            return CommandLineTool.ExitCode.ok
        }
        var text = "Plugin folder: \(report.folder)\n"
        if let problem = report.folderProblem { text += "  \(problem)\n" }
        if report.plugins.isEmpty { text += "  no plugins found (drop a line's .so here)\n" }
        for row in report.plugins {
            let file = row.file.map(FileSystem.baseName) ?? "(no file)"
            text += "\n" + file.padding(20) + " " + (row.line ?? "-").padding(12) + " " + row.status.rawValue + "\n"
            if let name = row.displayName, let version = row.version {
                text += "    \(name) \(version)"
                if let page = row.page { text += ", page \(page)" }
                if !row.messageKeys.isEmpty { text += ", messages: " + row.messageKeys.joined(separator: ", ") }
                text += "\n"
                if !row.services.isEmpty { text += "    services: " + row.services.joined(separator: ", ") + "\n" }
                if !row.routes.isEmpty { text += "    routes: " + row.routes.joined(separator: ", ") + "\n" }
            }
            if let reason = row.reason, let fix = row.fix { text += "    \(reason); \(fix)\n" }
        }
        output.out(text)
        return CommandLineTool.ExitCode.ok
    }
}

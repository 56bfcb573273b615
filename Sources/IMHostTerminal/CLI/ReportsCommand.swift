import IMHost
import IMHostRuntime
import IMKit

/// `imhost reports`: the operator reads the reports people made of others (a chat menu's
/// Report), and closes those handled. They are retained on the broker, each on its own topic
/// that only its maker writes and only operator reads (``Topic/report(user:id:)``).
enum ReportsCommand {
    static let command = CommandLineTool.Command(
        name: "reports",
        summary: "the operator lists the reports people made of others (a chat menu's Report), and closes those handled",
        subcommands: [
            .init(name: "", summary: "list every report the broker holds, oldest first", options: [.json("each report's maker, id, time, whom, chat URL, line and the person's last messages, as JSON")]),
            .init(name: "close", arguments: "ID...", summary: "close reports once handled: the broker forgets them"),
        ],
        help: """
            Runs as the operator: host.json's "user" must be "operator", and its "transport" the
            broker with operator's password file (imhost broker init makes DIR/passwords/operator),
            as for imhost fleet.

            A person reports someone from a chat's menu (Report; /report in a terminal chat). The
            report says whom, when, the chat's URL (what it was about), the line and its version,
            and the reported person's last 5 messages in the chat (280 characters each). The
            person's host keeps it until the broker takes it, so one made offline arrives when
            the host is next online. The broker retains it on imhost/fleet/report/USER/ID: only
            USER's devices may write there, and only operator may read it, so who reported is
            what the broker vouches for. It stays until closed.

            Exit 0 when done, 1 when the broker could not be reached or refused, 2 for bad usage,
            host.json, or an id no report has.
            """,
        run: { arguments, output in run(arguments, output) })

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        let words = arguments.positionals
        let closing = words.first == "close"
        if closing, words.count < 2 {
            output.diagnostic("imhost reports close: name the reports to close by their ids (imhost reports lists them)")
            return CommandLineTool.ExitCode.usage
        }
        if !closing, !words.isEmpty {
            output.diagnostic("imhost reports: unknown subcommand '\(TerminalText.safe(words[0]))'; imhost reports lists, imhost reports close ID... closes")
            return CommandLineTool.ExitCode.usage
        }
        guard let (config, transport) = FleetCommand.operatorConfig(arguments, command: "reports", lives: "reports live", output: output) else {
            return CommandLineTool.ExitCode.usage
        }
        let fleet = FleetOperator(transport: transport, user: config.user)
        do throws(FleetOperator.Failure) {
            let filed = try fleet.filedReports()
            guard closing else {
                list(filed, json: arguments.flags.contains("--json"), output: output)
                return CommandLineTool.ExitCode.ok
            }
            var ids: [String] = []
            for id in words.dropFirst() where !ids.contains(id) { ids.append(id) }
            if let unknown = ids.first(where: { id in !filed.contains { $0.id == id } }) {
                output.diagnostic("imhost reports close: no report the broker holds has the id \(TerminalText.safe(unknown)) (closed already?); imhost reports lists them")
                return CommandLineTool.ExitCode.usage
            }
            for report in filed where ids.contains(report.id) {
                if case .refused(let reason) = try fleet.close(report) {
                    output.diagnostic("imhost reports close: the broker refused clearing \(TerminalText.safe(report.id)) (\(TerminalText.safe(reason))): is this folder's operator the broker's?")
                    return CommandLineTool.ExitCode.failure
                }
            }
            output.out("closed \(ids.count) report\(ids.count == 1 ? "" : "s"): the broker forgets \(ids.count == 1 ? "it" : "them")\n")
        } catch {
            output.diagnostic("imhost reports: \(TerminalText.safe(FleetCommand.line(error)))")
            return CommandLineTool.ExitCode.failure
        }
        return CommandLineTool.ExitCode.ok
    }

    /// What `--json` says of a report.
    struct Shown: Encodable {
        var by: String
        /// The report's id (`USER/SLOT` for one that cannot be read), and its slot.
        var id: String
        var slot: Int
        /// Whether it could be read as a report (`false`: only its maker and id are known).
        var readable: Bool
        var report: UserReport?
    }

    private static func list(_ filed: [FiledReport], json: Bool, output: Output) {
        if json {
            output.out(JSONOutput.encode(filed.map { Shown(by: $0.by, id: $0.id, slot: $0.slot, readable: $0.report != nil, report: $0.report) }))
            return
        }
        guard !filed.isEmpty else {
            output.out("No reports: the broker holds none (closed ones are gone).\n")
            return
        }
        var lines = ["\(filed.count) report\(filed.count == 1 ? "" : "s"), oldest first (imhost reports close ID clears one once handled):"]
        for entry in filed {
            guard let report = entry.report else {
                lines.append("  \(entry.id)  by \(entry.by): not a report this imhost can read (close it)")
                continue
            }
            let line = report.line.map { " on line \($0)" + (report.lineVersion.map { " \($0)" } ?? "") } ?? " on the base page"
            lines.append("  \(entry.id)  \(StoreViews.time(report.at)) UTC  \(entry.by) reported \(report.peer)\(line)")
            lines.append("      chat: \(report.url)")
            if report.messages.isEmpty { lines.append("      (\(report.peer) sent nothing in the chat)") }
            for message in report.messages {
                let text = message.text.isEmpty ? "(\(message.key))" : "\"\(message.text)\""
                lines.append("      \(StoreViews.time(message.at)) \(report.peer): \(message.key == "text" ? "" : message.key + " ")\(text)")
            }
        }
        output.out(lines.map { TerminalText.safe($0, newlines: false) + "\n" }.joined())
    }
}

import IMKit
import IMHost
import IMHostRuntime

/// `imhost route URL`: which page a jump URL opens, and why.
enum RouteCommand {
    static let command = CommandLineTool.Command(
        name: "route",
        summary: "show which page a chat jump URL opens, and why",
        arguments: "URL",
        options: [.json()],
        help: """
            Runs the converter on a jump URL as callers send it, for example
              imhost route 'im://chat?rootCateID=1&cateID=12&peer=u42'
            and prints the page chosen (a line's page or the legacy page), the rewritten URL,
            the rule that matched, and why: a line that is disabled, missing, refused, killed
            (killSwitch.lines) or quarantined by the host sends its jumps to the legacy page.
            A malformed URL is refused (exit 1). No plugin code runs.
            """,
        run: run)

    struct Result: Encodable {
        var url: String
        var target: String
        var line: String?
        var page: String
        var reason: Converter.Reason
        var rule: Int?
        var explanation: String
        /// Who turned the line off: "host.json", "fleet" or "quarantine".
        var source: String?
        /// The fleet configuration this host applies, if any.
        var fleetVersion: Int64?
    }

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        guard arguments.positionals.count == 1 else {
            output.diagnostic("imhost route: expected one jump URL, got \(arguments.positionals.count); see imhost route --help")
            return CommandLineTool.ExitCode.usage
        }
        guard let config = CommandLineTool.loadConfig(arguments, output: output) else {
            return CommandLineTool.ExitCode.usage
        }
        let host = CommandLineTool.makeHost(config, verbose: arguments.flags.contains("--verbose"))
        CommandLineTool.report(host, output: output)
        let decision: Converter.Decision
        do {
            decision = try host.converter.decide(chatURL: arguments.positionals[0])
        } catch {
            output.diagnostic("imhost route: refused: \(error.description)")
            // A script reading --json gets the refusal on standard output too, as from open.
            if arguments.flags.contains("--json") { output.out(JSONOutput.encode(["refused": error.description])) }
            return CommandLineTool.ExitCode.failure
        }
        var line: String?
        var page = "legacy page"
        if case .line(let id) = decision.target {
            line = id
            page = host.lines.status(ofLine: id)?.manifest?.page ?? "CarrierPage"
        }
        let result = Result(url: decision.url, target: line == nil ? "legacy" : "line", line: line, page: page,
                            reason: decision.reason, rule: decision.rule?.index, explanation: decision.explanation,
                            source: decision.reason.source, fleetVersion: host.config.fleet?.config.version)
        if arguments.flags.contains("--json") {
            output.out(JSONOutput.encode(result))
        } else {
            // Three lines of the host's own; what they quote is escaped each on its line.
            let lines = ["page:   \(line.map { "\($0) (\(page))" } ?? page)", "url:    \(result.url)",
                         "reason: \(result.reason.rawValue): \(result.explanation)"]
            output.out(lines.map { TerminalText.safe($0, newlines: false) + "\n" }.joined())
        }
        return CommandLineTool.ExitCode.ok
    }
}

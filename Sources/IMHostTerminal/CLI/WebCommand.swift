import IMHost
import IMHostRuntime
import IMHostWeb
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// `imhost web`: one user's chats in a browser on this machine.
enum WebCommand {
    static let command = CommandLineTool.Command(
        name: "web",
        summary: "serve your chats to a browser on this machine, live",
        options: [
            .option("--port", .number(1024...65535, "a port", shape: "N"), "the port to listen on (default: a free one)"),
            .option("--lang", .choice(WebLanguage.allCases.map(\.rawValue)), "the language of the page's own words: en or zh (default: each browser's, by its Accept-Language)"),
            .flag("--dev", "draw what QA and line authors need too: message numbers, why this page, the line, a message's causes (a toggle on the page shows or hides them)"),
            .user,
        ],
        help: """
            Serves the signed-in user's chats to a browser on this machine, and prints one URL
            to open (it carries a token: only who has it gets in). The start page lists the
            conversations; a chat opens from a jump URL, clicked or pasted, exactly as imhost chat
            opens it, and stays live: arrivals, receipts, a changed host.json, fleet
            configuration or quarantine, and a rebuilt line show without a reload (host.json is
            read again when it changes, or on SIGHUP, as a chat reads it). Serves until Ctrl-C
            or SIGTERM.

            The page speaks to the person (names, times, states; brief notices, all kept in
            a list), in English or Chinese: the one the browser prefers (Accept-Language), or
            --lang's; a line's own words are the line's. --dev also draws message numbers, why this page, the line and a
            message's causes, behind a toggle on the page.

            It listens on 127.0.0.1 only. It holds the user's broker connection, as a chat does;
            each open page runs in a worker of its own, so a line that crashes costs that page a
            restart and no other.
            """,
        run: run)

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        guard arguments.positionals.isEmpty else {
            output.diagnostic("imhost web: takes no arguments, got '\(TerminalText.safe(arguments.positionals[0]))'; see imhost web --help")
            return CommandLineTool.ExitCode.usage
        }
        var port: UInt16 = 0
        if let text = arguments.options["--port"] {
            // The declaration checked the range.
            port = UInt16(text) ?? 0
        }
        let configPath = CommandLineTool.configPath(arguments)
        Interruption.install()
        guard let config = CommandLineTool.loadConfig(arguments, output: output) else { return CommandLineTool.ExitCode.usage }
        let user = arguments.options["--user"] ?? config.user
        let host = CommandLineTool.makeHost(config, user: user, verbose: arguments.flags.contains("--verbose"), connection: "web")
        CommandLineTool.report(host, output: output)
        do {
            try host.signIn()
        } catch {
            output.diagnostic("imhost web: cannot sign \(user) in: \(error)")
            return CommandLineTool.ExitCode.failure
        }
        CommandLineTool.reportNotes(host.store, output: output)
        let server: WebServer
        do {
            server = try WebServer(host: host, config: config, configPath: configPath, user: user, port: port,
                                   verbose: arguments.flags.contains("--verbose"), dev: arguments.flags.contains("--dev"),
                                   language: arguments.options["--lang"].flatMap(WebLanguage.init(tag:)), keep: true, output: output)
        } catch {
            output.diagnostic("imhost web: \(error); choose another with --port, or leave it out for a free one")
            return CommandLineTool.ExitCode.failure
        }
        if let note = server.portNote { output.diagnostic(note) }
        output.out("imhost web: serving \(user)'s chats at \(server.url)\n  open it in a browser on this machine; Ctrl-C stops\n")
        let code = WebServer.serve([server])
        host.signOut()
        return code
    }
}

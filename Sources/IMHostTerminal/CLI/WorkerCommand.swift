import IMKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CIMHostSupport
import IMHost
import IMHostRuntime
#if canImport(Glibc)
import Glibc
#endif

/// `imhost __worker MODE TARGET`: the chat worker a supervisor starts (internal). It speaks the
/// ``WorkerProtocol``: reads ``ToWorker`` messages on standard input, the first of which says
/// what to reopen after a crash, and answers with ``FromWorker`` on file descriptor 3. It loads
/// the host with the breadcrumb the supervisor reserved and opens the chat.
///
/// Modes: `chat URL`, `open URL`, `play FILE`, `demo -`.
enum WorkerCommand {
    static let command = CommandLineTool.Command(
        name: "__worker",
        summary: "the chat worker a supervisor runs (internal)",
        arguments: "chat|open|play|demo TARGET",
        options: [
            .option("--breadcrumb-fd", .text("N"), "the descriptor of the breadcrumb the supervisor reserved"),
            .option("--parent", .text("PID"), "the supervisor, whose death ends the worker"),
            .flag("--terminal", "the supervisor draws on a terminal"),
            .flag("--color", "pages are coloured"),
            .flag("--fixed-clock", "as play's"), .flag("--external", "as open's"), .json("as open's"),
            .width, .user,
            .option("--data", .text("DIR"), "the data folder"),
            .option("--transport", .text("URL"), "the broker of a scenario of several people, instead of host.json's"),
            .option("--password-file", .text("FILE"), "the password file for --transport"),
            .flag("--web-page", "the page is drawn for a browser; the serving process holds the connection"),
            .flag("--spare", "a chat worker started before its chat is known: it waits to be told it (its TARGET is ignored)"),
        ],
        help: "Runs a chat's work for a supervising imhost; not for people.",
        hidden: true,
        run: run)

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        // A spare is named so from its start (`ps` tells it from a page's worker) until it is
        // given its chat (``Worker/chat(url:)``).
        let spare = arguments.flags.contains("--spare")
        if spare { Worker.name(spare: true) }
        signal(SIGHUP, SIG_IGN)
        Interruption.install()
        // Dies with its supervisor: a worker must never go on alone.
        if let parent = arguments.options["--parent"].flatMap(Int32.init), imhost_die_with_parent(parent) != 0 {
            return CommandLineTool.ExitCode.failure
        }
        guard let channel = WorkerChannel() else {
            output.diagnostic("imhost __worker: no control pipe on descriptor 3; this command is for imhost itself")
            return CommandLineTool.ExitCode.usage
        }
        // Line code that prints on standard output goes to the supervisor, which passes it on
        // made safe; the worker's own pages go to the terminal through `terminal`.
        let terminal = imhost_move_high(STDOUT_FILENO, 500)
        if terminal >= 0 { dup2(STDERR_FILENO, STDOUT_FILENO) }
        // What the host says goes to the supervisor as messages, so only what line code writes
        // on standard error can be taken for a crash's last words.
        let pipe = channel.answers
        let said: @Sendable (String) -> Void = { text in
            for line in text.split(separator: "\n") { pipe.send(FromWorker.say(line: String(line))) }
        }
        // A chat says what it says as replies, through its channel; other modes print their
        // transcripts on the terminal.
        let output = Output(out: terminal >= 0 ? Output(outFD: terminal, errFD: STDERR_FILENO).out : output.out, err: said)
        // Standard output is a pipe to the supervisor now: colour follows where pages go, or the
        // supervisor's word when it passes them on to a terminal.
        let colors = arguments.flags.contains("--color") || Environment.colors(on: terminal >= 0 ? terminal : STDOUT_FILENO)
        func exit(_ code: Int32) -> Int32 {
            let code = CommandLineTool.finished(code, output: output)
            channel.say(.exiting(code: code))
            return code
        }
        let breadcrumb = arguments.options["--breadcrumb-fd"].flatMap(Int32.init)
        guard arguments.positionals.count == 2, breadcrumb != nil else {
            output.diagnostic("imhost __worker: expected MODE TARGET --breadcrumb-fd N; this command is for imhost itself")
            return exit(CommandLineTool.ExitCode.usage)
        }
        // The supervisor's first message: the version it speaks, and what to reopen.
        guard case .message(.start(let version, let resume)) = Worker.nextMessage(channel), version == WorkerProtocol.version else {
            output.diagnostic("imhost __worker: the supervisor did not start with protocol \(WorkerProtocol.version); this command is for imhost itself")
            return exit(CommandLineTool.ExitCode.usage)
        }
        let mode = arguments.positionals[0], target = arguments.positionals[1]
        guard let width = CommandLineTool.widthOption(arguments, command: mode, output: output),
              var config = CommandLineTool.loadConfig(arguments, output: output) else {
            return exit(CommandLineTool.ExitCode.usage)
        }
        // A scenario of several people: play's private broker stands in for host.json's.
        if let url = arguments.options["--transport"], let passwordFile = arguments.options["--password-file"] {
            guard case .success(let address) = HostConfig.Transport.address(url, relativeTo: "/") else {
                output.diagnostic("imhost __worker: --transport takes a broker URL; this option is for imhost itself")
                return exit(CommandLineTool.ExitCode.usage)
            }
            config.transport = HostConfig.Transport(address: address, passwordFile: passwordFile)
        }
        let host = CommandLineTool.makeHost(config, user: arguments.options["--user"], dataFolder: arguments.options["--data"],
                                            verbose: arguments.flags.contains("--verbose"), logEcho: said,
                                            breadcrumbs: breadcrumb.map { .attach(fd: $0) } ?? .none, quarantine: resume?.quarantine ?? [],
                                            // A browser's page works through the database: its server holds the connection.
                                            connection: mode == "chat" && !arguments.flags.contains("--web-page") ? "chat"
                                                : arguments.options["--transport"] != nil && mode != "chat" ? "play" : nil)
        if resume == nil { CommandLineTool.report(host, output: output) }
        let settings = Worker.Settings(configPath: CommandLineTool.configPath(arguments), webPage: arguments.flags.contains("--web-page"),
                                       terminal: arguments.flags.contains("--terminal"), fixedClock: arguments.flags.contains("--fixed-clock"))
        let worker = Worker(host: host, channel: channel, output: output, width: width, colors: colors, settings: settings, resume: resume)
        let code: Int32
        switch mode {
        // A spare is told its chat once a page wants one (``ToWorker/open(url:)``).
        case "chat": code = worker.chat(url: spare ? nil : target)
        case "open": code = open(host, url: target, width: width, colors: colors, external: arguments.flags.contains("--external"),
                                 json: arguments.flags.contains("--json"), output: output)
        case "play", "demo": code = worker.play(file: target, demo: mode == "demo")
        default:
            output.diagnostic("imhost __worker: unknown mode '\(mode)'")
            code = CommandLineTool.ExitCode.usage
        }
        host.signOut()
        return exit(code)
    }

    // MARK: open

    private static func open(_ host: ChatHost, url: String, width: Int, colors: Bool, external: Bool, json: Bool, output: Output) -> Int32 {
        // Drawing the page may have found the database damaged: said after it.
        defer { CommandLineTool.reportNotes(host.store, output: output) }
        do throws(any Error) {
            let opened = try host.open(route: url, external: external)
            CommandLineTool.reportNotices(host, output: output)
            switch opened {
            case .opened(let what):
                output.out(json ? JSONOutput.encode(["opened": what]) : "opened \(TerminalText.safe(what))\n")
            case .page(let page) where json:
                output.out(JSONOutput.encode(PageJSON(page, view: try page.view(width: width), fleetVersion: host.config.fleet?.config.version)))
            case .page(let page):
                output.out(try PageRenderer(width: width, colors: colors).render(page))
            }
            return CommandLineTool.ExitCode.ok
        } catch {
            output.diagnostic("imhost open: \(error)")
            // A script reading --json gets the refusal on standard output too.
            if json { output.out(JSONOutput.encode(["refused": "\(error)"])) }
            return CommandLineTool.ExitCode.failure
        }
    }
}

import IMKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CIMHostSupport
import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// `imhost __worker MODE TARGET`: the chat worker a supervisor starts (internal). It loads the
/// host with the breadcrumb the supervisor reserved, opens the chat (or the one `--resume`
/// names after a crash), then reads one command a line from standard input and answers each
/// on file descriptor 3 with a ``Supervisor/Ack``.
///
/// Modes: `chat URL`, `open URL`, `play FILE`, `demo -`.
enum WorkerCommand {
    static let command = CommandLineTool.Command(
        name: "__worker",
        summary: "the chat worker a supervisor runs (internal)",
        usage: "chat|open|play|demo TARGET --breadcrumb PATH [--resume STATE]",
        help: "Runs a chat's work for a supervising imhost; not for people.",
        flags: ["--terminal", "--fixed-clock", "--external", "--json"],
        options: ["--width", "--user", "--data", "--breadcrumb", "--resume", "--parent"],
        hidden: true,
        run: run)

    /// Answers the supervisor on the pipe it gave as file descriptor 3, moved out of line code's
    /// way at start.
    enum Control {
        /// The pipe, and what it was when the worker started: if line code closes it and the
        /// number is reused for another file, answers must not go into that file.
        nonisolated(unsafe) static var fd: Int32 = 3
        nonisolated(unsafe) static var identity: (dev_t, ino_t)?

        /// Moves the pipe to a high, close-on-exec descriptor and remembers what it is.
        static func take() {
            let moved = fcntl(3, F_DUPFD_CLOEXEC, 500)
            guard moved >= 0 else { return }
            close(3)
            fd = moved
            var info = stat()
            if fstat(fd, &info) == 0 { identity = (info.st_dev, info.st_ino) }
        }

        static func ack(_ ack: Supervisor.Ack) {
            var info = stat()
            guard fstat(fd, &info) == 0, let identity, info.st_dev == identity.0, info.st_ino == identity.1 else {
                // Line code closed the pipe back to the supervisor: nothing can be said any more.
                _exit(70)
            }
            JSONLines.send(ack, to: fd)
        }

        static func exit(_ code: Int32) -> Int32 {
            ack(Supervisor.Ack(exit: code))
            return code
        }
    }

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        signal(SIGHUP, SIG_IGN)
        Interruption.install()
        // Dies with its supervisor: a worker must never go on alone.
        if let parent = arguments.options["--parent"].flatMap(Int32.init), imhost_die_with_parent(parent) != 0 {
            return CommandLineTool.ExitCode.failure
        }
        Control.take()
        // Line code that prints on standard output goes to the supervisor, which passes it on
        // made safe; the worker's own pages go to the terminal through `terminal`.
        let terminal = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 500)
        if terminal >= 0 { dup2(STDERR_FILENO, STDOUT_FILENO) }
        let output = terminal >= 0 ? Output(outFD: terminal, errFD: STDERR_FILENO) : output
        // Standard output is a pipe to the supervisor now: colour follows where pages go.
        let colors = Environment.colors(on: terminal >= 0 ? terminal : STDOUT_FILENO)
        guard arguments.positionals.count == 2, let breadcrumb = arguments.options["--breadcrumb"] else {
            output.diagnostic("imhost __worker: expected MODE TARGET --breadcrumb PATH; this command is for imhost itself")
            return Control.exit(CommandLineTool.ExitCode.usage)
        }
        let mode = arguments.positionals[0], target = arguments.positionals[1]
        let resume = arguments.options["--resume"].flatMap { try? JSONDecoder().decode(Supervisor.Ack.self, from: Data($0.utf8)) }
        guard let width = CommandLineTool.widthOption(arguments, command: mode, output: output),
              let config = CommandLineTool.loadConfig(arguments, output: output) else {
            return Control.exit(CommandLineTool.ExitCode.usage)
        }
        let dataFolder = arguments.options["--data"]
        let host = CommandLineTool.makeHost(config, user: arguments.options["--user"], dataFolder: dataFolder,
                                            breadcrumbs: .attach(breadcrumb), quarantine: resume?.quarantine ?? [])
        if resume == nil { CommandLineTool.report(host, output: output) }
        let code: Int32
        switch mode {
        case "chat": code = chat(host, url: target, resume: resume, width: width, colors: colors, arguments: arguments, output: output)
        case "open": code = open(host, url: target, width: width, colors: colors, external: arguments.flags.contains("--external"),
                                 json: arguments.flags.contains("--json"), output: output)
        case "play", "demo": code = play(host, file: target, demo: mode == "demo", resume: resume, width: width, colors: colors, arguments: arguments,
                                             output: output)
        default:
            output.diagnostic("imhost __worker: unknown mode '\(mode)'")
            code = CommandLineTool.ExitCode.usage
        }
        host.signOut()
        return Control.exit(code)
    }

    /// Reads the supervisor's next command; `nil` at end of input or on SIGINT/SIGTERM.
    private static func nextCommand(_ reader: LineReader) -> String? {
        while Interruption.signal == nil {
            switch reader.next(timeout: 200) {
            case .end: return nil
            case .timeout: continue
            case .line(let line): return line
            // The supervisor hands over only lines within the limit; a longer one is not a command.
            case .tooLong: continue
            }
        }
        return nil
    }

    private static func exitCode() -> Int32 { Interruption.signal.map(Interruption.exitCode) ?? CommandLineTool.ExitCode.ok }

    // MARK: chat

    private static func chat(_ host: ChatHost, url: String, resume: Supervisor.Ack?, width: Int, colors: Bool, arguments: Arguments,
                             output: Output) -> Int32 {
        let terminal = arguments.flags.contains("--terminal")
        let session: ChatSession
        do {
            // After a crash the user stays as they were: offline, if they were.
            try host.signIn(online: resume?.online ?? true)
            session = try ChatSession(host: host, url: resume?.url ?? url, window: resume?.window ?? 20,
                                      configPath: CommandLineTool.configPath(arguments), output: output, width: width,
                                      colors: colors)
            // Opens the conversation's files now: an id the store refuses is refused here.
            _ = try session.page.messageCount()
        } catch {
            // An open error says "refused:" or "not found:" already.
            let said = "\(error)"
            output.diagnostic("imhost chat: \(said.hasPrefix("refused: ") || said.hasPrefix("not found: ") ? "" : "refused: ")\(said)")
            return CommandLineTool.ExitCode.failure
        }
        if resume == nil {
            if let store = host.store as? FileConversationStore {
                for repair in store.repairs { output.diagnostic("imhost: \(repair)") }
            }
            let delivered = host.deliveredAtSignIn
            if !delivered.isEmpty {
                output.diagnostic("imhost: delivered \(delivered.count) message\(delivered.count == 1 ? "" : "s") sent while offline: \(delivered.map { "\($0.conversation) \($0.id)" }.joined(separator: ", "))")
            }
        }
        session.show()
        if terminal && resume == nil { output.out("Type /help for commands.\n") }
        func ack() {
            CommandLineTool.reportNotices(host, output: output)
            Control.ack(Supervisor.Ack(url: session.url, window: session.page.window, online: host.isOnline))
        }
        ack()
        let reader = LineReader(limit: .max)
        while let line = nextCommand(reader) {
            guard session.handle(line) else { return CommandLineTool.ExitCode.ok }
            ack()
        }
        return exitCode()
    }

    // MARK: open

    private static func open(_ host: ChatHost, url: String, width: Int, colors: Bool, external: Bool, json: Bool, output: Output) -> Int32 {
        do throws(any Error) {
            let opened = try host.open(route: url, external: external)
            CommandLineTool.reportNotices(host, output: output)
            switch opened {
            case .opened(let what):
                output.out(json ? JSONOutput.encode(["opened": what]) : "opened \(TerminalText.safe(what))\n")
            case .page(let page) where json:
                output.out(JSONOutput.encode(PageJSON(page, view: try page.view(width: width))))
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

    // MARK: play

    private static func play(_ host: ChatHost, file: String, demo: Bool, resume: Supervisor.Ack?, width: Int, colors: Bool,
                             arguments: Arguments, output: Output) -> Int32 {
        let scenario: Scenario
        do {
            let text = demo ? DemoScenario.text : try FileSystem.readDocument(file, limit: HostConfig.Limits.documentBytes)
            scenario = try Scenario.parse(text, file: demo ? DemoScenario.name : file, lineOrder: host.config.lineOrder)
        } catch {
            output.diagnostic("imhost play: \(error)")
            return CommandLineTool.ExitCode.usage
        }
        let runner = ScenarioRunner(scenario: scenario, host: host, output: output, width: width,
                                    colors: colors,
                                    fixedClock: demo || arguments.flags.contains("--fixed-clock"),
                                    configPath: CommandLineTool.configPath(arguments))
        if let resume {
            let saved = resume.state.flatMap { try? JSONDecoder().decode(ScenarioRunner.State.self, from: Data($0.utf8)) }
            do {
                try runner.restore(saved ?? ScenarioRunner.State(), url: resume.url, window: resume.window)
            } catch {
                output.diagnostic("imhost play: cannot reopen the chat after a crash: \(error)")
                return CommandLineTool.ExitCode.failure
            }
        }
        func ack(failure: String? = nil) {
            CommandLineTool.reportNotices(host, output: output)
            let state = (try? JSONEncoder().encode(runner.state)).map { String(decoding: $0, as: UTF8.self) }
            Control.ack(Supervisor.Ack(url: runner.url, window: runner.page?.window, state: state, failure: failure))
        }
        ack()
        let reader = LineReader(limit: .max)
        while let line = nextCommand(reader) {
            guard line.hasPrefix("step "), let number = Int(line.dropFirst(5)) else {
                ack(failure: "the worker was sent '\(TerminalText.safe(line))', not 'step N'")
                continue
            }
            do {
                try runner.perform(number)
                ack()
            } catch {
                ack(failure: error.description)
            }
        }
        return exitCode()
    }
}

/// `imhost __scan FILE...`: the plugin scanner (internal); see ``Scanner``.
enum ScanCommand {
    static let command = CommandLineTool.Command(
        name: "__scan",
        summary: "the plugin scanner (internal)",
        usage: "FILE...",
        help: "Opens plugin files for a host and reports on file descriptor 3; not for people.",
        flags: [], options: ["--parent"],
        hidden: true,
        run: { arguments, _ in
            // Stopped from outside only through its parent, whose death kills it too: Ctrl-C in
            // a terminal reaches the whole group, and must not look like a plugin's crash.
            for number in [SIGINT, SIGHUP, SIGTERM] { signal(number, SIG_IGN) }
            if let parent = arguments.options["--parent"].flatMap(Int32.init), imhost_die_with_parent(parent) != 0 {
                return CommandLineTool.ExitCode.failure
            }
            // Reports on their own pipe, moved out of line code's way; what line code prints on
            // standard output joins standard error, which only ever counts as last words.
            WorkerCommand.Control.take()
            dup2(STDERR_FILENO, STDOUT_FILENO)
            return Scanner.childMain(arguments.positionals, reports: WorkerCommand.Control.fd)
        })
}

import IMKit
import IMHost
import IMHostRuntime
#if canImport(Glibc)
import Glibc
#endif

/// `imhost chat URL`: opens the page a jump URL routes to, shows it, and reads commands. The
/// chat runs in a worker under a supervisor that owns the terminal and input: a line that
/// crashes or hangs is recorded and quarantined, and the chat reopens and goes on.
enum ChatCommand {
    static let command = CommandLineTool.Command(
        name: "chat",
        summary: "open a chat from a jump URL and type to it (or pipe commands in)",
        arguments: "URL | --peer ID",
        options: [
            .option("--peer", .id("peer"), "open the conversation with ID on the page it last opened on (imhost chats lists them), instead of a URL"),
            .width, .user,
        ],
        help: """
            Opens the page the converter chooses for a jump URL, for example
              imhost chat 'im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1001'
            shows it, then reads lines from standard input, from a terminal or a pipe.
            The conversation is kept in the data folder (host.json "data", default .imhost),
            per user, and stays whole across runs and pages.

            \(ChatVerb.help.utf8.split(separator: 0x0A).map { "  " + String(Substring($0)) }.joined(separator: "\n"))

            host.json and the quarantine are read again on /reload, SIGHUP, or when either
            file changes; an invalid new configuration is refused and the last good one stays.
            A new build of a line installed while the chat is open is vetted and taken: the
            chat moves to it with its history ("line rent reloaded: 0.2.0 → 0.3.0"), or stays
            on the build it runs and says why.

            On a terminal, the prompt and what is typed stay at the bottom while messages
            arrive: Backspace, Ctrl-U (clear), Ctrl-D on an empty line (end), Enter (send).

            The chat runs in a worker process. If a line's code crashes or hangs (limits.callSeconds),
            the crash is recorded in <data>/crashes.log, the line or its message key is
            quarantined, and the chat reopens with its history; the command that crashed is not
            run again. After three restarts within a minute, the next crash stops the chat (exit 1).
            """,
        run: run)

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        let peer = arguments.options["--peer"]
        guard arguments.positionals.count == (peer == nil ? 1 : 0) else {
            output.diagnostic(peer == nil ? "imhost chat: expected one jump URL, got \(arguments.positionals.count); see imhost chat --help"
                                          : "imhost chat: --peer opens a conversation instead of a URL; give one or the other")
            return CommandLineTool.ExitCode.usage
        }
        let configPath = CommandLineTool.configPath(arguments)
        // Installs the SIGHUP handler before anything slow, so an early SIGHUP reloads, not kills.
        let watcher = ConfigWatcher(paths: [configPath])
        Interruption.install()
        guard let width = CommandLineTool.widthOption(arguments, command: "chat", output: output),
              let config = CommandLineTool.loadConfig(arguments, output: output) else {
            return CommandLineTool.ExitCode.usage
        }
        let quarantineWatcher = ConfigWatcher(paths: [config.dataFolder + "/quarantine.json"])
        // On a terminal, keys are read one at a time and everything is written through the
        // screen, which keeps what is typed at the bottom; a pipe is read line by line, as ever.
        let terminal = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
        let mode = terminal ? TerminalMode(fd: STDIN_FILENO) : nil
        let screen = mode == nil ? nil : ChatScreen()
        defer {
            screen?.submitted()
            mode?.restore()
        }
        let output = screen?.output ?? output
        var url = arguments.positionals.first ?? ""
        if let peer {
            if let problem = StorePath.problem(withID: peer) {
                output.diagnostic("imhost chat: --peer: the peer id \(problem)")
                return CommandLineTool.ExitCode.usage
            }
            let page: JumpPage?
            do {
                // Closed before the chat starts. Opening it may have found it damaged: said here,
                // and the worker opens the new one.
                let store = try? MessageStore(dataFolder: config.dataFolder, user: arguments.options["--user"] ?? config.user)
                page = try? store?.page(for: peer)
                CommandLineTool.reportNotes(store, output: output)
            }
            if page == nil { output.diagnostic("imhost chat: no page is known for the conversation with \(peer); it opens on the legacy page") }
            url = StoreViews.url(peer, page: page)
        }
        var workerArguments = ["chat", url, "--config", configPath, "--width", "\(width)"]
        if let user = arguments.options["--user"] { workerArguments += ["--user", user] }
        if terminal { workerArguments.append("--terminal") }
        if arguments.flags.contains("--verbose") { workerArguments.append("--verbose") }
        // The worker sends its pages as values and its lines as text; this process draws them,
        // in the order they came.
        let renderer = PageRenderer(width: width, colors: Environment.colors(on: STDOUT_FILENO))
        let chat = ChatRuntime(config: config, configPath: configPath, dataFolder: config.dataFolder, user: arguments.options["--user"] ?? config.user,
                               workerArguments: workerArguments, output: output, chat: true) { shown in
            switch shown {
            case .reply(let reply): say(reply, output: output)
            case .page(let page): output.out(renderer.render(page))
            // The terminal draws a picture's place as text: it needs no bytes.
            case .pictures: break
            }
        }
        chat.supervisor.quarantineWritten = { quarantineWatcher.markSeen() }
        if let code = chat.start() { return code }
        if terminal { output.out("Type /help for commands.\n") }

        let reader = screen.map { LineReader(editing: $0, limit: config.limits.inputLineBytes) } ?? LineReader(limit: config.limits.inputLineBytes)
        while true {
            if let signal = Interruption.signal {
                chat.finish(signal: signal)
                return Interruption.exitCode(signal)
            }
            // Nobody reads the chat any more (a closed pipe, a full disk): this process draws
            // it, so it is the one that notices, and stops taking input.
            if CommandLineTool.outputLost(output, command: "chat") {
                chat.finish()
                return CommandLineTool.ExitCode.failure
            }
            // A shell took the terminal back (Ctrl-Z), and gave it again (fg).
            if mode?.reassert() == true { screen?.redraw() }
            screen?.showPrompt()
            var command: String?
            let event = reader.next(timeout: chat.waitMilliseconds, wake: chat.watched)
            if let signal = Interruption.signal {
                chat.finish(signal: signal)
                return Interruption.exitCode(signal)
            }
            switch event {
            case .end:
                // On a terminal the screen ends the line (the defer).
                if terminal && screen == nil { output.out("\n") }
                return chat.finish()
            case .timeout:
                // The worker may have said something, or died on its own, while we waited.
                if let code = chat.idle() { return code }
            case .line(let line):
                command = line
            case .tooLong(let bytes):
                output.diagnostic("imhost chat: refused an input line of \(bytes) bytes: the limit is \(config.limits.inputLineBytes) (limits.inputLineBytes in host.json); nothing was sent")
            }
            // A changed host.json or quarantine is applied before the next command, even while
            // input keeps arriving. Both are asked (and so marked seen) every time: one reload
            // covers both.
            let configChanged = watcher.reloadDue()
            let quarantineChanged = quarantineWatcher.reloadDue()
            var action: ChatAction?
            if let command, !command.trimmingSpaces.isEmpty {
                switch ChatVerb.parse(typed: command) {
                case .failure(let usage): output.out(TerminalText.safe(usage.description, newlines: false) + "\n")
                case .success(.help): output.out(ChatVerb.help + "\n")
                case .success(.quit): return chat.finish()
                case .success(.action(let asked)): action = asked
                }
            }
            if configChanged || quarantineChanged || action == .reload {
                if let code = chat.reload() { return code }
            }
            if let action, action != .reload, let code = chat.act(action) { return code }
        }
    }

    /// Prints what the chat said: a reply in the chat, a diagnostic on standard error; what it
    /// quotes (a peer's text, a URL) may hold a newline, which must not start a line that looks
    /// like the host's own.
    static func say(_ reply: ChatReply, output: Output) {
        for line in ChatWords.lines(reply) {
            if ChatWords.isDiagnostic(reply) { output.diagnostic(line) } else { output.out(TerminalText.safe(line, newlines: false) + "\n") }
        }
    }
}

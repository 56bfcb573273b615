import IMKit
import IMHost
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
        usage: "URL | --peer ID [--width N] [--user ID]",
        help: """
            Opens the page the converter chooses for a jump URL, for example
              imhost chat 'im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1001'
            shows it, then reads lines from standard input, from a terminal or a pipe.
            The conversation is kept in the data folder (host.json "data", default .imhost),
            per user, and stays whole across runs and pages.

            \(ChatVerb.help.utf8.split(separator: 0x0A).map { "  " + String(Substring($0)) }.joined(separator: "\n"))

            host.json and the quarantine are read again on /reload, SIGHUP, or when either
            file changes; an invalid new configuration is refused and the last good one stays.

            The chat runs in a worker process. If a line's code crashes or hangs (limits.callSeconds),
            the crash is recorded in <data>/crashes.log, the line or its message key is
            quarantined, and the chat reopens with its history; the command that crashed is not
            run again. After three restarts within a minute, the next crash stops the chat (exit 1).

              --peer ID   open the conversation with ID on the page it last opened on
                          (imhost chats lists them), instead of a URL
              --width N   page width in terminal columns (default 72)
              --user ID   the signed-in user (default: host.json "user", or "me")
            """,
        flags: [], options: ["--width", "--user", "--peer"],
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
        let terminal = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
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
        let supervised = SupervisedRun(config: config, dataFolder: config.dataFolder,
                                       workerArguments: workerArguments, output: output)
        if let code = supervised.start() { return code }
        quarantineWatcher.markSeen()

        let reader = LineReader(limit: config.limits.inputLineBytes)
        var prompted = false
        while true {
            if let signal = Interruption.signal {
                supervised.supervisor.finish(signal: signal)
                return Interruption.exitCode(signal)
            }
            if terminal && !prompted {
                output.out("> ")
                prompted = true
            }
            var command: String?
            let event = reader.next(timeout: 500, wake: supervised.supervisor.watched)
            if let signal = Interruption.signal {
                supervised.supervisor.finish(signal: signal)
                return Interruption.exitCode(signal)
            }
            switch event {
            case .end:
                if terminal { output.out("\n") }
                return supervised.supervisor.finish()
            case .timeout:
                // The worker may have said something, or died on its own, while we waited.
                if let code = supervised.idle() { return code }
                if supervised.lastCrashed { quarantineWatcher.markSeen() }
            case .line(let line):
                prompted = false
                command = line
            case .tooLong(let bytes):
                prompted = false
                output.diagnostic("imhost chat: refused an input line of \(bytes) bytes: the limit is \(config.limits.inputLineBytes) (limits.inputLineBytes in host.json); nothing was sent")
            }
            // A changed host.json or quarantine is applied before the next command, even while
            // input keeps arriving. Both are asked (and so marked seen) every time: one reload
            // covers both.
            let configChanged = watcher.reloadDue()
            let quarantineChanged = quarantineWatcher.reloadDue()
            let reload = command?.trimmingSpaces == "/reload"
            if configChanged || quarantineChanged || reload {
                if command == nil && terminal { output.out("\n") }
                prompted = false
                if let code = supervised.hand(.reload) { return code }
            }
            if !reload, let command, let code = supervised.hand(.command(text: command)) { return code }
            // A crash rewrote the quarantine: it is applied already, not a change to reload for.
            if supervised.lastCrashed { quarantineWatcher.markSeen() }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// `imhost chat URL`: opens the page a jump URL routes to, shows it, and reads commands.
enum ChatCommand {
    static let command = CommandLineTool.Command(
        name: "chat",
        summary: "open a chat from a jump URL and type to it (or pipe commands in)",
        usage: "URL [--width N] [--user ID]",
        help: """
            Opens the page the converter chooses for a jump URL, for example
              imhost chat 'im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1001'
            shows it, then reads lines from standard input, from a terminal or a pipe.
            The conversation is kept in the data folder (host.json "data", default .imhost),
            per user, and stays whole across runs and pages.

            \(ChatSession.help.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))

            host.json is read again on /reload, SIGHUP, or when the file changes; an invalid
            new configuration is refused and the last good one stays.

              --width N   page width in terminal columns (default 72)
              --user ID   the signed-in user (default: host.json "user", or "me")
            """,
        flags: [], options: ["--width", "--user"],
        run: run)

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        guard arguments.positionals.count == 1 else {
            output.err("imhost chat: expected one jump URL, got \(arguments.positionals.count); see imhost chat --help\n")
            return CommandLineTool.ExitCode.usage
        }
        // Installs the SIGHUP handler before anything slow, so an early SIGHUP reloads, not kills.
        let watcher = ConfigWatcher(path: CommandLineTool.configPath(arguments))
        guard let width = CommandLineTool.intOption(arguments, "--width", default: 72, command: "chat", output: output),
              let host = CommandLineTool.loadHost(arguments, output: output, durable: true) else {
            return CommandLineTool.ExitCode.usage
        }
        let terminal = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
        let colors = Environment.colorsOnStandardOutput
        let session: ChatSession
        do {
            session = try ChatSession(host: host, url: arguments.positionals[0], configPath: CommandLineTool.configPath(arguments),
                                      output: output, width: width, colors: colors)
        } catch {
            output.err("imhost chat: refused: \(error)\n")
            return CommandLineTool.ExitCode.failure
        }
        do {
            _ = try host.store.count(of: session.page.conversation)
        } catch {
            output.err("imhost chat: refused: \(error)\n")
            return CommandLineTool.ExitCode.failure
        }
        if let store = host.store as? FileConversationStore {
            for repair in store.repairs { output.err("imhost: \(repair)\n") }
        }
        let delivered = host.deliveredAtSignIn
        if !delivered.isEmpty {
            output.err("imhost: delivered \(delivered.count) message\(delivered.count == 1 ? "" : "s") sent while offline: \(delivered.map { "\($0.conversation) \($0.id)" }.joined(separator: ", "))\n")
        }
        session.show()
        if terminal { output.out("Type /help for commands.\n") }
        let reader = LineReader()
        var prompted = false
        while true {
            if terminal && !prompted {
                output.out("> ")
                prompted = true
            }
            switch reader.next(timeout: 500) {
            case .end:
                if terminal { output.out("\n") }
                return CommandLineTool.ExitCode.ok
            case .timeout:
                if watcher.reloadDue() {
                    if terminal { output.out("\n") }
                    session.reload()
                    prompted = false
                }
            case .line(let line):
                prompted = false
                if line.trimmingSpaces == "/reload" { watcher.markSeen() }
                guard session.handle(line) else { return CommandLineTool.ExitCode.ok }
            }
        }
    }
}

import IMHost
import IMHostRuntime
import IMKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The `imhost` command line: parses arguments and runs one command. Exit codes: 0 ok,
/// 1 failure, 2 usage or configuration error; diagnostics go to standard error.
public enum CommandLineTool {
    /// Exit codes.
    public typealias ExitCode = IMHostRuntime.ExitCode

    static let commands: [Command] = [
        ChatCommand.command, StoreCommands.chats, PlayCommand.demo, OpenCommand.command, PlayCommand.command, PluginsCommand.command,
        QuarantineCommand.command, RouteCommand.command, StoreCommands.search, StoreCommands.store, NewLineCommand.command, BrokerCommand.command, SyncCommand.command,
        FleetCommand.command, ReportsCommand.command, WebCommand.command, PreviewCommand.command,
        WorkerCommand.command, ScanCommand.command, SamplesCommand.command, DecodePhotoCommand.command, CommandHelp.command,
    ]

    /// Refuses an argument whose bytes are not UTF-8, showing them (`\xFF`); the usage exit code.
    public static func refuseUndecodable(argument index: Int, bytes: [UInt8], output: Output = .standard) -> Int32 {
        output.diagnostic("imhost: argument \(index) is not valid UTF-8 (\(FileSystem.escapingInvalidUTF8(bytes))); give paths, ids and URLs as UTF-8 text, percent-encoding other bytes in URLs")
        return ExitCode.usage
    }

    /// Runs `imhost` with `arguments` (without the program name).
    public static func run(_ arguments: [String], output: Output = .standard) -> Int32 {
        // Photos are decoded by this program run again, as plugins are scanned.
        PhotoDecoder.shared.use(executable: executable)
        switch Invocation.read(arguments, commands: commands) {
        case .refused(let line):
            output.diagnostic(line)
            return ExitCode.usage
        case .overview(let asked):
            // Without a command the list is the answer to a usage error, on standard error.
            (asked ? output.out : output.err)(CommandHelp.overview(commands))
            return asked ? finished(ExitCode.ok, output: output) : ExitCode.usage
        case .version:
            output.out(versionText)
            return finished(ExitCode.ok, output: output)
        case .help(let command):
            output.out(CommandHelp.text(command))
            return finished(ExitCode.ok, output: output)
        case .run(let command, let parsed):
            return finished(command.run(parsed, output), output: output)
        }
    }

    /// A command's exit code, or 1 when what it printed did not all reach standard output.
    static func finished(_ code: Int32, output: Output) -> Int32 { Reports.finished(code, output: output) }

    /// Whether standard output is gone, said once as `command` stopping.
    static func outputLost(_ output: Output, command: String) -> Bool { Reports.outputLost(output, command: command) }

    /// imhost's own version.
    public static let version = "1.0.0"

    /// What `imhost --version` prints: what a line team needs to build a line this host loads.
    static var versionText: String {
        """
        imhost \(version)
        IMKit \(IMKitVersion.current)
        plugin ABI \(PluginEntry.abiVersion)
        Swift \(SwiftCompiler.version)
        Build lines with exactly this Swift compiler: Swift has no stable ABI across compilers on Linux.

        """
    }

    /// This executable, to start again as the plugin scanner and the chat worker: through
    /// `/proc/self/exe`, so a child runs this very file even when the one at its path was
    /// replaced meanwhile (an upgrade mid-chat, or worse), never whatever is there now.
    static var executable: String { Executable.path }
    /// This executable's path, for a person to run.
    static var executablePath: String { Executable.personPath }

    /// host.json as `--config` or `$IMHOST_CONFIG` names it, or `nil` after saying why. A
    /// `--user` id with control or bidi characters is refused here too.
    static func loadConfig(_ arguments: Arguments, output: Output) -> HostConfig? {
        if let user = arguments.options["--user"], let problem = StorePath.problem(withID: user) {
            output.diagnostic("imhost: --user: the user id \(problem)")
            return nil
        }
        do {
            return try HostConfig.load(from: configPath(arguments))
        } catch {
            output.diagnostic("imhost: \(error.description)")
            return nil
        }
    }

    /// The host for a configuration, built the one way every command builds it.
    static func makeHost(_ config: HostConfig, user: String? = nil, dataFolder: String? = nil, verbose: Bool = false,
                         logEcho: (@Sendable (String) -> Void)? = nil,
                         breadcrumbs: ChatHost.Options.Breadcrumbs = .none, quarantine: [Quarantine.Hold] = [],
                         connection: String? = nil) -> ChatHost {
        // Lines' log entries go to <data>/lines.log, warnings (everything, verbose) to standard
        // error too; those written while the scanner registers a line included.
        LineLogFile(dataFolder: dataFolder ?? config.dataFolder, verbose: verbose, echo: logEcho).install()
        let host = ChatHost(config: config, options: ChatHost.Options(user: user, dataFolder: dataFolder, scanner: executable,
                                                                     breadcrumbs: breadcrumbs, quarantine: quarantine,
                                                                     connection: connection))
        host.announce = { Output.standard.diagnostic("imhost: " + $0) }
        return host
    }

    /// Says on standard error what the host could not use, and the crashes it recorded.
    static func report(_ host: ChatHost, output: Output) {
        for crash in host.recoveredCrashes { output.diagnostic(foundAtStart(crash)) }
        for problem in host.problems { output.diagnostic("imhost: \(problem)") }
    }

    /// One line for a crash a start found (a breadcrumb left behind), the same from every command.
    static func foundAtStart(_ crash: CrashRecord) -> String {
        if crash.signal == "unknown" && crash.quarantined == nil {
            let who = crash.line.map { "line '\($0)'" } ?? "line code"
            return "imhost: found at start: a chat was killed from outside while \(who) was \(crash.site.phrase(key: crash.key, message: crash.message)); recorded in crashes.log, not held against the line"
        }
        return "imhost: recorded a crash found at start: \(crash.summary)"
    }

    /// What the host noticed since it was last asked, and what its store said.
    static func reportNotices(_ host: ChatHost, output: Output) { Reports.notices(host, output: output) }

    /// What the store said since it was last asked.
    static func reportNotes(_ store: MessageStore?, output: Output) { Reports.notes(store, output: output) }

    static func configPath(_ arguments: Arguments) -> String {
        // An empty $IMHOST_CONFIG is as good as unset.
        arguments.options["--config"] ?? Environment.value("IMHOST_CONFIG").flatMap { $0.isEmpty ? nil : $0 } ?? "host.json"
    }

    /// The page width `--width` gives, or its default; `nil` after saying, as declared, why a
    /// width is refused (a command that declares `--width` had it checked before it ran).
    static func widthOption(_ arguments: Arguments, command: String, output: Output) -> Int? {
        if let text = arguments.options[Option.width.name], let refusal = Option.width.refusal(of: text) {
            output.diagnostic("imhost \(command): \(refusal)")
            return nil
        }
        return arguments.number(.width)
    }
}

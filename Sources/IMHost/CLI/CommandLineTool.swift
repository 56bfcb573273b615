import IMKit

/// The `imhost` command line: parses arguments and runs one command. Exit codes: 0 ok,
/// 1 failure, 2 usage or configuration error; diagnostics go to standard error.
public enum CommandLineTool {
    /// Exit codes.
    public enum ExitCode {
        public static let ok: Int32 = 0
        public static let failure: Int32 = 1
        public static let usage: Int32 = 2
    }

    struct Command: Sendable {
        var name: String
        var summary: String
        var usage: String
        var help: String
        var flags: Set<String>
        var options: Set<String>
        var run: @Sendable (Arguments, Output) -> Int32
    }

    static let commands: [Command] = [
        ChatCommand.command, PlayCommand.demo, OpenCommand.command, PlayCommand.command, PluginsCommand.command,
        RouteCommand.command,
    ]

    static let overview = """
        imhost: the chat-page plugin host.

        Usage: imhost COMMAND [OPTIONS] [ARGUMENTS]

        Commands:
        \(commands.map { "  " + $0.name.padding(12) + $0.summary }.joined(separator: "\n"))

        Options for every command:
          --config PATH   the configuration (default: ./host.json, or $IMHOST_CONFIG)
          --help          what a command does and takes

        Exit codes: 0 ok, 1 failure, 2 usage or configuration error.
        """

    /// Runs `imhost` with `arguments` (without the program name).
    public static func run(_ arguments: [String], output: Output = .standard) -> Int32 {
        guard let name = arguments.first else {
            output.err(overview + "\n")
            return ExitCode.usage
        }
        if name == "--help" || name == "-h" || name == "help" {
            if name == "help", arguments.count > 1, let command = commands.first(where: { $0.name == arguments[1] }) {
                output.out(helpText(command))
            } else {
                output.out(overview + "\n")
            }
            return ExitCode.ok
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            let hint = closestMatch(to: name, among: commands.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
            output.err("imhost: unknown command '\(name)'\(hint); see imhost --help\n")
            return ExitCode.usage
        }
        let parsed: Arguments
        do {
            parsed = try Arguments(Array(arguments.dropFirst()), command: command.name,
                                   flags: command.flags.union(["--help", "-h"]),
                                   options: command.options.union(["--config"]))
        } catch {
            output.err("imhost \(command.name): \(error)\n")
            return ExitCode.usage
        }
        if parsed.flags.contains("--help") || parsed.flags.contains("-h") {
            output.out(helpText(command))
            return ExitCode.ok
        }
        return command.run(parsed, output)
    }

    static func helpText(_ command: Command) -> String {
        "Usage: imhost \(command.name) \(command.usage)\n\n\(command.help)\n\nOptions:\n  --config PATH   the configuration (default: ./host.json, or $IMHOST_CONFIG)\n  --help          this text\n"
    }

    /// Loads the host for a command, or reports the configuration error (exit 2). A durable
    /// host keeps conversations in the data folder, for the user `--user` or host.json names.
    /// The plugin cache is used (and kept up to date) unless `loadAll`, which loads every
    /// plugin and rewrites the cache.
    static func loadHost(_ arguments: Arguments, output: Output, reportProblems: Bool = true,
                         durable: Bool = false, loadAll: Bool = false) -> ChatHost? {
        guard let config = loadConfig(arguments, output: output) else { return nil }
        return makeHost(config, arguments, output: output, dataFolder: durable ? config.dataFolder : nil,
                        reportProblems: reportProblems, loadAll: loadAll)
    }

    /// host.json as `--config` or `$IMHOST_CONFIG` names it, or `nil` after saying why.
    static func loadConfig(_ arguments: Arguments, output: Output) -> HostConfig? {
        do {
            return try HostConfig.load(from: configPath(arguments))
        } catch {
            output.err("imhost: \(error)\n")
            return nil
        }
    }

    /// The host for a configuration, signed in as `--user`, keeping conversations under
    /// `dataFolder` (in memory when `nil`), or `nil` after saying why.
    static func makeHost(_ config: HostConfig, _ arguments: Arguments, output: Output, dataFolder: String?,
                         reportProblems: Bool = true, loadAll: Bool = false) -> ChatHost? {
        let host: ChatHost
        do {
            host = try ChatHost(config: config, dataFolder: dataFolder, user: arguments.options["--user"],
                                pluginCache: config.pluginCachePath, trustCache: !loadAll)
        } catch {
            output.err("imhost: \(error)\n")
            return nil
        }
        if reportProblems {
            for problem in host.problems { output.err("imhost: \(problem)\n") }
        }
        return host
    }

    static func configPath(_ arguments: Arguments) -> String {
        arguments.options["--config"] ?? Environment.value("IMHOST_CONFIG") ?? "host.json"
    }

    /// A positive whole number option, or a usage error said on stderr.
    static func intOption(_ arguments: Arguments, _ name: String, default value: Int, command: String,
                          output: Output) -> Int? {
        guard let text = arguments.options[name] else { return value }
        guard let number = Int(text), number >= 24, number <= 400 else {
            output.err("imhost \(command): \(name) takes a number from 24 to 400, got '\(text)'\n")
            return nil
        }
        return number
    }
}

extension String {
    /// Pads with spaces to `width` terminal columns.
    func padding(_ width: Int) -> String { TextWidth.pad(self, to: width) }
}

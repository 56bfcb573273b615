import IMHost
import IMHostRuntime

/// What the words given to `imhost` ask for, read against the commands' declarations: the
/// options for every command may come before the command (`imhost --config X chats`, as `git -C`)
/// or after it; a command's subcommand is its first positional; option values are checked as
/// declared, before the command runs. Anything wrong is one line, with a "did you mean" made
/// from the declarations.
enum Invocation {
    typealias Command = CommandLineTool.Command
    typealias Option = CommandLineTool.Option

    case run(Command, Arguments)
    case help(Command)
    /// The list of commands: asked for (`--help`), or shown because no command was given.
    case overview(asked: Bool)
    case version
    case refused(String)

    /// What the options before a command may be.
    static let beforeCommand = Option.global + [Option.version]

    static func read(_ words: [String], commands: [Command]) -> Invocation {
        let leading: Arguments
        do throws(Arguments.Problem) {
            leading = try Arguments(words, declared: beforeCommand, upToCommand: true)
        } catch {
            return .refused("imhost: " + error.said(command: nil, candidates: beforeCommand.flatMap(names)))
        }
        if leading.has(Option.version) { return .version }
        let rest = Array(words.dropFirst(leading.count))
        let visible = commands.filter { !$0.hidden }
        guard let name = rest.first else { return .overview(asked: leading.has(Option.help)) }
        if name == "version" { return .version }
        // `imhost help chat` and `imhost --help chat`; a name that is no command gets the list.
        if name == "help" || leading.has(Option.help) {
            let named = name == "help" ? rest.dropFirst().first : name
            return visible.first { $0.name == named }.map(Invocation.help) ?? .overview(asked: true)
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            let hint = closestMatch(to: name, among: visible.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
            return .refused("imhost: unknown command '\(name)'\(hint); see imhost --help")
        }
        return read(Array(rest.dropFirst()), for: command, after: leading)
    }

    /// A command's words: read with every option any of its subcommands takes (so that a value
    /// is never taken for a subcommand), then held to the subcommand's own options.
    private static func read(_ words: [String], for command: Command, after leading: Arguments) -> Invocation {
        let prefix = "imhost \(command.name): "
        let all = Option.global + command.options + command.subcommands.flatMap(\.options)
        var arguments: Arguments
        do throws(Arguments.Problem) {
            arguments = try Arguments(words, declared: all, upToCommand: false)
        } catch {
            return .refused(prefix + error.said(command: command.name, candidates: unique(all.flatMap(names))))
        }
        arguments.take(leading)
        if arguments.has(Option.help) { return .help(command) }
        var allowed = Option.global + command.options
        if !command.subcommands.isEmpty {
            switch subcommand(of: command, named: arguments.positionals.first) {
            case .failure(let refusal): return .refused(prefix + refusal.line)
            case .success(let subcommand):
                allowed += subcommand.options
                for name in arguments.given.sorted() where !allowed.contains(where: { $0.name == name }) {
                    let owners = command.subcommands.filter { $0.options.contains { $0.name == name } }.map { called(command, $0) }
                    return .refused(prefix + "\(name) is not an option of '\(called(command, subcommand))' (it goes with \(owners.joined(separator: ", "))); see imhost \(command.name) --help")
                }
            }
        }
        for option in allowed {
            if let text = arguments.options[option.name], let refusal = option.refusal(of: text) {
                return .refused(prefix + refusal)
            }
        }
        return .run(command, arguments)
    }

    struct Refusal: Error { var line: String }

    /// The subcommand `word` names, or the command's own when it has one and `word` names none.
    private static func subcommand(of command: Command, named word: String?) -> Result<CommandLineTool.Subcommand, Refusal> {
        if let word, let named = command.subcommands.first(where: { $0.name == word && !word.isEmpty }) { return .success(named) }
        if let own = command.subcommands.first(where: { $0.name.isEmpty }) { return .success(own) }
        let names = command.subcommands.map(\.name)
        let see = "; see imhost \(command.name) --help"
        guard let word else {
            return .failure(Refusal(line: "expected a subcommand: \(names.listed("or"))\(see)"))
        }
        let hint = closestMatch(to: word, among: names).map { "; did you mean '\($0)'?" } ?? ""
        return .failure(Refusal(line: "unknown subcommand '\(word)'\(hint)\(see)"))
    }

    /// `broker init`; `quarantine` for its own.
    private static func called(_ command: Command, _ subcommand: CommandLineTool.Subcommand) -> String {
        subcommand.name.isEmpty ? command.name : command.name + " " + subcommand.name
    }

    private static func names(_ option: Option) -> [String] { [option.name] + (option.alias.map { [$0] } ?? []) }

    private static func unique(_ names: [String]) -> [String] {
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted }
    }
}

import IMKit

/// The texts made from the commands' declarations: the overview (`imhost --help`), a command's
/// `--help`, and the reference in Markdown (`imhost __reference`, kept in
/// docs/reference/commands.md, which a test holds to it).
enum CommandHelp {
    typealias Command = CommandLineTool.Command
    typealias Subcommand = CommandLineTool.Subcommand
    typealias Option = CommandLineTool.Option

    /// The columns help text is wrapped to.
    static let width = 92

    static func overview(_ commands: [Command]) -> String {
        let visible = commands.filter { !$0.hidden }
        return """
            imhost: the chat-page plugin host.

            Usage: imhost [OPTIONS] COMMAND [ARGUMENTS]

            Commands:
            \(visible.map { "  " + $0.name.padding(12) + $0.summary }.joined(separator: "\n"))

            Options for every command (before it or after it):
            \(table(Option.global.map { (names($0), $0.fullHelp) }, column: 18))

            imhost --version prints the versions of imhost, IMKit and the plugin ABI, and the
            exact Swift compiler lines must be built with. imhost help COMMAND, or imhost COMMAND
            --help, says what a command does and takes.

            Exit codes: 0 ok, 1 failure, 2 usage or configuration error.

            """
    }

    /// `imhost COMMAND --help`.
    static func text(_ command: Command) -> String {
        // Each usage line wrapped under where its arguments start: "Usage: imhost broker init ".
        let usage = usageWords(command).enumerated().map { index, words in
            let named = command.subcommands.isEmpty || command.subcommands[index].name.isEmpty ? 1 : 2
            let lead = (index == 0 ? "Usage: " : "       ") + "imhost " + words.prefix(named).joined(separator: " ") + " "
            return lead + wrap(Array(words.dropFirst(named)), width: width - lead.count).joined(separator: "\n" + String(repeating: " ", count: lead.count))
        }
        var text = usage.joined(separator: "\n") + "\n\n" + command.help + "\n"
        let sections = optionSections(command)
        let column = (command.subcommands.map { shape($0).count } + (sections.flatMap(\.options) + Option.global).map { names($0).count }).max()! + 4
        if !command.subcommands.isEmpty {
            text += "\nSubcommands:\n" + table(command.subcommands.map { (shape($0), $0.summary) }, column: column) + "\n"
        }
        for section in sections {
            text += "\n\(section.title):\n" + table(section.options.map { ($0.shape, $0.fullHelp) }, column: column) + "\n"
        }
        return text + "\nOptions for every command:\n" + table(Option.global.map { (names($0), $0.fullHelp) }, column: column) + "\n"
    }

    /// The reference of every command a person runs, in Markdown.
    static func reference(_ commands: [Command]) -> String {
        let visible = commands.filter { !$0.hidden }
        var text = """
            # imhost commands

            <!-- Made from the commands' declarations (Sources/IMHostTerminal/CLI) by `imhost __reference`;
                 regenerate with `make reference`. A test fails when this file differs from them. -->

            `imhost [OPTIONS] COMMAND [ARGUMENTS]`. Results go to standard output, diagnostics (one line
            each) to standard error. Exit codes: 0 ok, 1 failure, 2 usage or configuration error.
            `imhost --version` prints the versions of imhost, IMKit and the plugin ABI, and the exact
            Swift compiler lines must be built with.

            \(visible.map { "- [`\($0.name)`](#imhost-\($0.name)): \($0.summary)" }.joined(separator: "\n"))

            ## Options for every command

            They may come before the command (`imhost --config X chats`) or after it.

            \(markdownTable("Option", Option.global.map { (names($0), $0.fullHelp) }))

            """
        for command in visible {
            text += "\n## imhost \(command.name)\n\n\(sentence(command.summary))\n\n```\n"
            text += usageLines(command).map { "imhost " + $0 + "\n" }.joined() + "```\n"
            if !command.subcommands.isEmpty {
                text += "\n" + markdownTable("Subcommand", command.subcommands.map { (shape($0), $0.summary) }) + "\n"
            }
            for section in optionSections(command) {
                text += "\n\(section.title):\n\n" + markdownTable("Option", section.options.map { ($0.shape, $0.fullHelp) }) + "\n"
            }
            text += "\n```text\n\(command.help)\n```\n"
        }
        return text
    }

    /// The hidden command that prints the reference: `imhost __reference > docs/reference/commands.md`.
    static let command = Command(
        name: "__reference", summary: "print the commands' reference in Markdown (internal)",
        help: "Prints the reference of every command, made from their declarations, as docs/reference/commands.md holds it.",
        hidden: true,
        run: { arguments, output in
            guard arguments.positionals.isEmpty else {
                output.diagnostic("imhost __reference: takes no arguments; run imhost __reference > docs/reference/commands.md")
                return CommandLineTool.ExitCode.usage
            }
            output.out(reference(CommandLineTool.commands))
            return CommandLineTool.ExitCode.ok
        })

    /// A command's usage lines, one for each subcommand, without `imhost `.
    static func usageLines(_ command: Command) -> [String] { usageWords(command).map { $0.joined(separator: " ") } }

    /// The words of each usage line: the command (and subcommand), its arguments, then each
    /// option the arguments do not name, in brackets (`[--width N]`, one word).
    private static func usageWords(_ command: Command) -> [[String]] {
        func line(_ words: [String], _ arguments: String, _ options: [Option]) -> [String] {
            let named = Set(arguments.split(whereSeparator: { " |[]".contains($0) }).map(String.init))
            return (words + [arguments] + options.filter { !named.contains($0.name) }.map { "[" + $0.shape + "]" }).filter { !$0.isEmpty }
        }
        guard !command.subcommands.isEmpty else { return [line([command.name], command.arguments, command.options)] }
        return command.subcommands.map { line([command.name, $0.name].filter { !$0.isEmpty }, $0.arguments, command.options + $0.options) }
    }

    /// The options a command takes, by section: its own, then each subcommand's (subcommands
    /// that take the same options share a section).
    private static func optionSections(_ command: Command) -> [(title: String, options: [Option])] {
        var sections: [(title: String, options: [Option])] = command.options.isEmpty ? [] : [("Options", command.options)]
        var groups: [(names: [String], options: [Option])] = []
        for subcommand in command.subcommands where !subcommand.options.isEmpty {
            let called = subcommand.name.isEmpty ? command.name : command.name + " " + subcommand.name
            if let index = groups.firstIndex(where: { $0.options.map(\.name) == subcommand.options.map(\.name) }) {
                groups[index].names.append(subcommand.name.isEmpty ? command.name : subcommand.name)
            } else {
                groups.append(([called], subcommand.options))
            }
        }
        for group in groups {
            sections.append(("Options of \(group.names.listed("and"))", group.options))
        }
        return sections
    }

    /// "Open a chat." from "open a chat".
    private static func sentence(_ summary: String) -> String {
        summary.prefix(1).uppercased() + summary.dropFirst() + (summary.hasSuffix(".") ? "" : ".")
    }

    /// `init DIR`; `(none)` for what the command does without a subcommand.
    private static func shape(_ subcommand: Subcommand) -> String {
        subcommand.name.isEmpty ? "(none)" : [subcommand.name, subcommand.arguments].filter { !$0.isEmpty }.joined(separator: " ")
    }

    private static func names(_ option: Option) -> String { option.shape + (option.alias.map { ", " + $0 } ?? "") }

    /// Rows of a name and its help, the help starting at `column` and wrapped to ``width``.
    private static func table(_ rows: [(String, String)], column: Int) -> String {
        rows.map { name, help in
            let first = "  " + name
            let lines = wrap(help, width: width - column)
            let lead = first.count + 2 > column ? first + "\n" + String(repeating: " ", count: column) : first.padding(column)
            return lead + lines.joined(separator: "\n" + String(repeating: " ", count: column))
        }.joined(separator: "\n")
    }

    private static func markdownTable(_ heading: String, _ rows: [(String, String)]) -> String {
        // A bar in a cell would end it, even between backticks; `<data>` outside them would be
        // taken for HTML.
        func cell(_ text: String) -> String { text.split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|") }
        func prose(_ text: String) -> String { cell(text).split(separator: "<", omittingEmptySubsequences: false).joined(separator: "&lt;") }
        return "| \(heading) | |\n|---|---|\n" + rows.map { "| `\(cell($0))` | \(prose($1)) |" }.joined(separator: "\n")
    }

    /// `text` in lines of at most `width` columns, broken between words.
    static func wrap(_ text: String, width: Int) -> [String] { wrap(text.split(separator: " ").map(String.init), width: width) }

    /// `words` joined by spaces in lines of at most `width` columns.
    private static func wrap(_ words: [String], width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in words {
            if !line.isEmpty, TextWidth.columns(line) + 1 + TextWidth.columns(word) > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        return lines + [line]
    }
}

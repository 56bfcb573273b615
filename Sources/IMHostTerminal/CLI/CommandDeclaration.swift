import IMHost
import IMHostRuntime
import IMKit

extension CommandLineTool {
    /// A command, declared once: its name, what it does and what it takes. The usage lines,
    /// `--help`, the overview, the "did you mean" for commands, subcommands and options, the
    /// checks of option values, and the reference in docs/reference/commands.md are all made
    /// from these declarations (``Invocation``, ``CommandHelp``), so none can drift from another.
    struct Command: Sendable {
        var name: String
        /// One line, for the overview and the reference.
        var summary: String
        /// Its positional arguments as a usage line shows them: `URL`, `FILE`, `URL | --peer ID`.
        /// An option named here is not repeated after it.
        var arguments = ""
        /// What it takes whatever the subcommand, besides the options for every command.
        var options: [Option] = []
        /// Chosen by the first argument (`broker init`); one named "" is what the command does
        /// with none (`quarantine` lists).
        var subcommands: [Subcommand] = []
        /// What it does beyond what its options and subcommands say, for `--help` and the reference.
        var help: String
        /// Internal commands (the scanner, the chat worker) are in no list and suggested to nobody.
        var hidden = false
        var run: @Sendable (Arguments, Output) -> Int32
    }

    /// A command's subcommand (`broker init`, `fleet kill`) and the options only it takes.
    struct Subcommand: Sendable {
        var name: String
        /// Its arguments as a usage line shows them: `DIR ID`, `LINE PERCENT`.
        var arguments = ""
        /// What it does (wrapped in `--help`).
        var summary: String
        var options: [Option] = []
    }

    /// An option: a flag (`--json`) or one that takes a value (`--width N`).
    struct Option: Sendable {
        var name: String
        /// What its value is; `nil` for a flag, which takes none.
        var value: Value?
        /// What it does (wrapped in `--help`); a default the value declares is added.
        var help: String
        /// Another spelling: `-h` for `--help`.
        var alias: String?

        static func flag(_ name: String, _ help: String, alias: String? = nil) -> Option {
            Option(name: name, value: nil, help: help, alias: alias)
        }

        static func option(_ name: String, _ value: Value, _ help: String) -> Option {
            Option(name: name, value: value, help: help, alias: nil)
        }

        /// As a usage line shows it: `--width N`, `--json`.
        var shape: String { value.map { name + " " + $0.shape } ?? name }

        /// Its help with the declared default: "page width in terminal columns (default 72)".
        var fullHelp: String { help + (value?.defaultValue.map { " (default \($0))" } ?? "") }

        /// The one line that refuses `text` for this option, or `nil` when it is a value it takes.
        /// Every refusal reads "--OPTION takes WHAT, got 'TEXT'", with why when there is more to say.
        func refusal(of text: String) -> String? {
            guard let value, let takes = value.takes, let problem = value.problem(text) else { return nil }
            return "\(name) takes \(takes), got '\(text)'\(problem)"
        }
    }

    /// What an option's value is, and how a wrong one is refused.
    struct Value: Sendable {
        /// How a usage line shows it: `N`, `PATH`, `ID`.
        var shape: String
        /// What it takes, said when a value is refused: "a number from 24 to 400"; `nil` for any text.
        var takes: String?
        /// The value when the option is not given, said in `--help` as "(default 72)".
        var defaultValue: String?
        /// `nil` when `text` is taken; else more about why it is not ("; it is 90 bytes long"), or "".
        var problem: @Sendable (String) -> String? = { _ in nil }

        /// Any text: a path, a URL, a name checked where it is used.
        static func text(_ shape: String) -> Value { Value(shape: shape) }

        /// A whole number in `range`: "a number from 24 to 400".
        static func number(_ range: ClosedRange<Int>, _ noun: String = "a number", shape: String = "N", default value: Int? = nil) -> Value {
            Value(shape: shape, takes: "\(noun) from \(range.lowerBound) to \(range.upperBound)", defaultValue: value.map(String.init),
                  problem: { Int($0).map(range.contains) == true ? nil : "" })
        }

        /// Seconds in `range`, fractions allowed: "seconds from 0 to 60".
        static func seconds(_ range: ClosedRange<Double>, default value: Double) -> Value {
            func said(_ number: Double) -> String { number == number.rounded() ? String(Int(number)) : String(number) }
            return Value(shape: "S", takes: "seconds from \(said(range.lowerBound)) to \(said(range.upperBound))", defaultValue: said(value),
                         problem: { Double($0).map(range.contains) == true ? nil : "" })
        }

        /// One of `names`: "house, jobs or cars".
        static func choice(_ names: [String]) -> Value {
            Value(shape: names.joined(separator: "|"), takes: names.listed("or"), problem: { names.contains($0) ? nil : "" })
        }

        /// A user's or peer's id, as the store takes it: plain text of at most 80 bytes.
        static func id(_ noun: String) -> Value {
            Value(shape: "ID", takes: "a \(noun) id", problem: { StorePath.problem(withID: $0).map { "; it " + $0 } })
        }

        /// Text `accepts` takes: "HOST:PORT, e.g. 0.0.0.0:8883".
        static func text(_ shape: String, takes: String, accepts: @escaping @Sendable (String) -> Bool) -> Value {
            Value(shape: shape, takes: takes, problem: { accepts($0) ? nil : "" })
        }
    }
}

extension CommandLineTool.Option {
    /// The options every command takes, before the command or after it.
    static let global: [CommandLineTool.Option] = [config, verbose, help]

    static let config = option("--config", .text("PATH"), "the configuration (default: ./host.json, or $IMHOST_CONFIG)")
    static let verbose = flag("--verbose", "lines' informational log entries on standard error too (they always go to <data>/lines.log; warnings and errors go to both)")
    static let help = flag("--help", "what a command does and takes", alias: "-h")
    /// Before any command only: `imhost --version`.
    static let version = flag("--version", "the versions of imhost, IMKit and the plugin ABI, and the exact Swift compiler lines must be built with")

    /// The signed-in user, for the commands that open a user's store.
    static let user = option("--user", .id("user"), "the signed-in user (default: host.json \"user\", or \"me\")")
    /// The page width, for the commands that draw a page.
    static let width = option("--width", .number(24...400, default: PageRenderer.defaultWidth), "page width in terminal columns")

    /// `--json`: what the command prints, as JSON for a script.
    static func json(_ help: String = "the same as JSON") -> CommandLineTool.Option { flag("--json", help) }
}

extension [String] {
    /// "a, b or c", as a sentence lists them.
    func listed(_ conjunction: String) -> String {
        count < 2 ? joined() : dropLast().joined(separator: ", ") + " \(conjunction) " + last!
    }
}

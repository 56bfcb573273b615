import IMHost
import IMHostRuntime

/// A command's arguments, read against the options it declares: flags, options with a value
/// (`--width 30` or `--width=30`), and positionals (all of them after `--`).
struct Arguments {
    /// Why the words could not be read.
    enum Problem: Error {
        /// An option nobody declared.
        case unknown(String)
        case flagWithValue(String)
        case needsValue(String)
        case emptyValue(String)

        /// One line, for `imhost COMMAND: ...`; `command` names where an unknown option was
        /// given (`nil` before any command), `candidates` are the options it may have meant.
        func said(command: String?, candidates: [String]) -> String {
            switch self {
            case .flagWithValue(let name): return "\(name) takes no value"
            case .needsValue(let name): return "\(name) needs a value"
            case .emptyValue(let name): return "\(name) needs a value, got an empty one"
            case .unknown(let name):
                let hint = closestMatch(to: name, among: candidates).map { "; did you mean \($0)?" } ?? ""
                return "unknown option \(name)\(command.map { " for '\($0)'" } ?? "")\(hint); see imhost \(command.map { $0 + " " } ?? "")--help"
            }
        }
    }

    /// The flags given, by their declared names (`-h` is `--help`).
    private(set) var flags: Set<String> = []
    private(set) var options: [String: String] = [:]
    private(set) var positionals: [String] = []
    /// How many words were read: all of them, unless reading stopped at a command.
    private(set) var count = 0

    /// Reads `words` for `declared` options; with `upToCommand`, stops at the first positional
    /// (the command, after the options for every command that may come before it).
    init(_ words: [String], declared: [CommandLineTool.Option], upToCommand: Bool = false) throws(Problem) {
        var byName: [String: CommandLineTool.Option] = [:]
        for option in declared {
            byName[option.name] = option
            if let alias = option.alias { byName[alias] = option }
        }
        var onlyPositionals = false
        while count < words.count {
            let word = words[count]
            if onlyPositionals || !word.hasPrefix("-") || word == "-" {
                if upToCommand { return }
                positionals.append(word)
                count += 1
                continue
            }
            count += 1
            if word == "--" { onlyPositionals = true; continue }
            // Split once at '=', keeping an empty value: `--config=` is an empty value, not a
            // request to take the next word.
            let parts = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let option = byName[parts[0]] else { throw .unknown(parts[0]) }
            guard option.value != nil else {
                guard parts.count == 1 else { throw .flagWithValue(parts[0]) }
                flags.insert(option.name)
                continue
            }
            let value: String
            if parts.count == 2 {
                value = parts[1]
            } else {
                guard count < words.count else { throw .needsValue(parts[0]) }
                value = words[count]
                count += 1
            }
            guard !value.isEmpty else { throw .emptyValue(parts[0]) }
            options[option.name] = value
        }
    }

    /// The names of the options and flags given.
    var given: Set<String> { flags.union(options.keys) }

    /// Takes what `earlier` (the options before the command) gave, unless given again here.
    mutating func take(_ earlier: Arguments) {
        flags.formUnion(earlier.flags)
        options.merge(earlier.options) { here, _ in here }
    }

    /// Whether `flag` was given.
    func has(_ flag: CommandLineTool.Option) -> Bool { flags.contains(flag.name) }

    /// The value of `option`, or its declared default.
    subscript(_ option: CommandLineTool.Option) -> String? {
        options[option.name] ?? option.value?.defaultValue
    }

    /// The value of a number option, or its default; read after ``Invocation`` checked it.
    func number(_ option: CommandLineTool.Option) -> Int? { self[option].flatMap { Int($0) } }

    /// The value of a seconds option, or its default; read after ``Invocation`` checked it.
    func seconds(_ option: CommandLineTool.Option) -> Double? { self[option].flatMap { Double($0) } }
}

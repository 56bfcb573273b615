import IMHost

/// A command's arguments: flags, options with a value, and positionals, refused when unknown.
struct Arguments {
    /// A usage error: what was wrong with the command line, said as one line.
    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    private(set) var flags: Set<String> = []
    private(set) var options: [String: String] = [:]
    private(set) var positionals: [String] = []

    /// Parses `arguments` for a command that knows `flags` and `options` (names with `--`).
    init(_ arguments: [String], command: String, flags known: Set<String>, options knownOptions: Set<String>) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            // Split once at '=', keeping an empty value: `--config=` is an empty value, not a
            // request to take the next argument.
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let name = parts[0]
            if known.contains(name) {
                guard parts.count == 1 else { throw UsageError(description: "\(name) takes no value") }
                flags.insert(name)
            } else if knownOptions.contains(name) {
                let value: String
                if parts.count == 2 {
                    value = parts[1]
                } else {
                    guard index < arguments.count else { throw UsageError(description: "\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                guard !value.isEmpty else { throw UsageError(description: "\(name) needs a value, got an empty one") }
                options[name] = value
            } else {
                let all = known.union(knownOptions)
                let hint = closestMatch(to: name, among: all).map { "; did you mean \($0)?" } ?? ""
                throw UsageError(description: "unknown option \(name) for '\(command)'\(hint); see imhost \(command) --help")
            }
        }
    }
}

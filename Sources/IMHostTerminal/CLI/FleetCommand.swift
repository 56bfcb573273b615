import IMHost
import IMKit

/// `imhost fleet`: the operator's kill switch and rollouts for every host at once, through the
/// broker (``FleetOperator``), and which hosts applied them.
enum FleetCommand {
    static let command = CommandLineTool.Command(
        name: "fleet",
        summary: "the operator's kill switch and rollouts for every host, through the broker",
        usage: "show [--json] | kill LINE | lift LINE | kill-message KEY | lift-message KEY | kill-component NAME | lift-component NAME | rollout LINE PERCENT | status [--json]",
        help: """
            Runs as the operator: host.json's "user" must be "operator", and its "transport" the
            broker with operator's password file (imhost broker init makes DIR/passwords/operator).

              show                  the fleet configuration the broker holds
              kill LINE             turn a line off on every host: its chats open on the legacy page
              lift LINE             turn it back on
              kill-message KEY      show a message key as a placeholder everywhere
              lift-message KEY
              kill-component NAME   hide a built-in component (\(ComponentSet.all.names.joined(separator: ", ")))
              lift-component NAME
              rollout LINE PERCENT  serve the line to PERCENT of users (0 to 100, at most two
                                    decimals; 100 serves everyone). A user is in when the first
                                    4 bytes of SHA-256("LINE/USER"), big-endian, modulo 10,000
                                    are below PERCENT x 100, so a user in stays in as it grows.
              status                every host's report: the version it applies, and who has
                                    not caught up

            Each change reads the configuration the broker holds, publishes the next version
            (retained: hosts that connect later get it) and reads it back to confirm it won; a
            change another operator made meanwhile is kept, this one made again on top of it.
            Connected hosts apply it at once; each keeps the last good one in its data folder.

            Exit 0 when done (or nothing needed doing), 1 when the broker could not be reached or
            refused, 2 for bad usage or host.json.

              --init   publish the first configuration when the broker holds none
              --json   show and status as JSON
            """,
        flags: ["--json", "--init"], options: [],
        run: { arguments, output in run(arguments, output) })

    /// A change's word, what it needs, and what it does to a configuration.
    enum Change {
        case kill(String), lift(String), killMessage(String), liftMessage(String)
        case killComponent(ComponentSet, String), liftComponent(ComponentSet, String), rollout(String, Int)

        func apply(to config: inout FleetConfig) {
            switch self {
            case .kill(let line): if !config.killSwitch.lines.contains(line) { config.killSwitch.lines.append(line) }
            case .lift(let line): config.killSwitch.lines.removeAll { $0 == line }
            case .killMessage(let key): if !config.killSwitch.messages.contains(key) { config.killSwitch.messages.append(key) }
            case .liftMessage(let key): config.killSwitch.messages.removeAll { $0 == key }
            case .killComponent(let component, _): config.killSwitch.components.insert(component)
            case .liftComponent(let component, _): config.killSwitch.components.remove(component)
            case .rollout(let line, let share): config.rollouts[line] = share == 10_000 ? nil : share
            }
        }

        /// What it does, for a person: "line house off".
        var said: String {
            switch self {
            case .kill(let line): "line \(line) off"
            case .lift(let line): "line \(line) on"
            case .killMessage(let key): "message key \(key) off"
            case .liftMessage(let key): "message key \(key) on"
            case .killComponent(_, let name): "component \(name) off"
            case .liftComponent(_, let name): "component \(name) on"
            case .rollout(let line, let share): share == 10_000 ? "line \(line) served to every user" : "line \(line) served to \(FleetConfig.percent(share)) of users"
            }
        }
    }

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        let words = arguments.positionals
        guard let verb = words.first else {
            output.diagnostic("imhost fleet: expected a subcommand (show, kill, lift, kill-message, lift-message, kill-component, lift-component, rollout, status); see imhost fleet --help")
            return CommandLineTool.ExitCode.usage
        }
        let change: Change?
        switch parse(verb, Array(words.dropFirst())) {
        case .failure(let usage):
            output.diagnostic("imhost fleet: \(usage.text)")
            return CommandLineTool.ExitCode.usage
        case .success(let parsed):
            change = parsed
        }
        guard let config = CommandLineTool.loadConfig(arguments, output: output) else { return CommandLineTool.ExitCode.usage }
        guard let transport = config.transport else {
            output.diagnostic("imhost fleet: there is no \"transport\" in \(TerminalText.safe(config.file)): the fleet configuration lives on the broker; add one with operator's password file")
            return CommandLineTool.ExitCode.usage
        }
        guard config.user == TransportID.operatorID else {
            output.diagnostic("imhost fleet: \(TerminalText.safe(config.file))'s user is \"\(TerminalText.safe(config.user))\"; fleet commands run as \(TransportID.operatorID): use a host.json with \"user\": \"\(TransportID.operatorID)\" and operator's password file (DIR/passwords/\(TransportID.operatorID))")
            return CommandLineTool.ExitCode.usage
        }
        let fleet = FleetOperator(transport: transport, user: config.user)
        do throws(FleetOperator.Failure) {
            if let change {
                try perform(change, fleet: fleet, initialize: arguments.flags.contains("--init"), output: output)
            } else if verb == "show" {
                try show(fleet, json: arguments.flags.contains("--json"), output: output)
            } else {
                try status(fleet, json: arguments.flags.contains("--json"), output: output)
            }
        } catch {
            output.diagnostic("imhost fleet \(verb): \(TerminalText.safe(error.description))")
            return CommandLineTool.ExitCode.failure
        }
        return CommandLineTool.ExitCode.ok
    }

    struct Usage: Error { var text: String }

    /// The change a subcommand asks for (`nil` for show and status), or what is wrong with it.
    static func parse(_ verb: String, _ rest: [String]) -> Result<Change?, Usage> {
        func one(_ what: String) -> Result<String, Usage> {
            rest.count == 1 ? .success(rest[0]) : .failure(Usage(text: "\(verb) takes one \(what), got \(rest.count) arguments; see imhost fleet --help"))
        }
        func lineID(_ text: String) -> Result<String, Usage> {
            LineID.isValid(text) ? .success(text) : .failure(Usage(text: "\"\(TerminalText.safe(text))\" is not a line id (lowercase letters, digits and -)"))
        }
        func line() -> Result<String, Usage> { one("line id").flatMap(lineID) }
        func key() -> Result<String, Usage> {
            one("message key").flatMap {
                LineID.isValidMessageKey($0) ? .success($0) : .failure(Usage(text: "\"\(TerminalText.safe($0))\" is not a message key; use a built-in key like \"image\" or \"<line>.<name>\""))
            }
        }
        func component() -> Result<(ComponentSet, String), Usage> {
            one("component").flatMap { name in
                ComponentSet(name: name).map { .success(($0, name)) }
                    ?? .failure(Usage(text: "unknown component \"\(TerminalText.safe(name))\"; components: \(ComponentSet.all.names.joined(separator: ", "))"))
            }
        }
        switch verb {
        case "show", "status":
            return rest.isEmpty ? .success(nil) : .failure(Usage(text: "\(verb) takes no arguments, got '\(TerminalText.safe(rest[0]))'"))
        case "kill": return line().map { .kill($0) }
        case "lift": return line().map { .lift($0) }
        case "kill-message": return key().map { .killMessage($0) }
        case "lift-message": return key().map { .liftMessage($0) }
        case "kill-component": return component().map { .killComponent($0.0, $0.1) }
        case "lift-component": return component().map { .liftComponent($0.0, $0.1) }
        case "rollout":
            guard rest.count == 2 else { return .failure(Usage(text: "rollout takes a line and a percentage, got \(rest.count) arguments; e.g. imhost fleet rollout cars 25")) }
            if case .failure(let usage) = lineID(rest[0]) { return .failure(usage) }
            let text = rest[1].hasSuffix("%") ? String(rest[1].dropLast()) : rest[1]
            guard let share = FleetConfig.basisPoints(percent: text) else {
                return .failure(Usage(text: "the rollout \"\(TerminalText.safe(rest[1]))\" is not a percentage from 0 to 100 with at most two decimals"))
            }
            return .success(.rollout(rest[0], share))
        default:
            let verbs = ["show", "kill", "lift", "kill-message", "lift-message", "kill-component", "lift-component", "rollout", "status"]
            let hint = closestMatch(to: verb, among: verbs).map { "did you mean \"\($0)\"? " } ?? ""
            return .failure(Usage(text: "unknown subcommand \"\(TerminalText.safe(verb))\"; \(hint)see imhost fleet --help"))
        }
    }

    private static func perform(_ change: Change, fleet: FleetOperator, initialize: Bool, output: Output) throws(FleetOperator.Failure) {
        switch try fleet.change(initialize: initialize, { (config: inout FleetConfig) throws(FleetOperator.Failure) in change.apply(to: &config) }) {
        case .unchanged(let config):
            output.out("fleet configuration version \(config.version) already has \(change.said); nothing published\n")
        case .published(let config, let retries):
            let after = retries == 0 ? "" : " (on top of another operator's change, after \(retries) retr\(retries == 1 ? "y" : "ies"))"
            output.out("published fleet configuration version \(config.version): \(change.said)\(after). Connected hosts apply it now, others when they connect; imhost fleet status shows who has.\n")
        }
    }

    private struct ShownConfig: Encodable {
        var version: Int64
        var madeAt: Int64
        var digest: String
        var killSwitch: [String: [String]]
        var rollouts: [String: Double]
    }

    private static func show(_ fleet: FleetOperator, json: Bool, output: Output) throws(FleetOperator.Failure) {
        guard let config = try fleet.current() else {
            if json { output.out("null\n") } else { output.out("The broker holds no fleet configuration: hosts keep the last one they applied, or host.json alone if they never had one (imhost fleet kill LINE --init publishes the first).\n") }
            return
        }
        let rollouts = config.rollouts.mapValues { Double($0) / 100 }
        if json {
            output.out(JSONOutput.encode(ShownConfig(version: config.version, madeAt: config.madeAt, digest: config.digest,
                                                     killSwitch: ["lines": config.killSwitch.lines, "messages": config.killSwitch.messages,
                                                                  "components": config.killSwitch.components.names],
                                                     rollouts: rollouts)))
            return
        }
        func list(_ items: [String]) -> String { items.isEmpty ? "(none)" : items.joined(separator: ", ") }
        let lines = [
            "fleet configuration version \(config.version), made \(StoreViews.time(config.madeAt)) UTC (SHA-256 \(config.digest.prefix(16))…)",
            "  lines off:          \(list(config.killSwitch.lines))",
            "  message keys off:   \(list(config.killSwitch.messages))",
            "  components off:     \(list(config.killSwitch.components.names))",
            "  rollouts:           \(list(config.rollouts.keys.sorted().map { "\($0) \(FleetConfig.percent(config.rollouts[$0]!))" }))",
        ]
        output.out(lines.map { TerminalText.safe($0, newlines: false) + "\n" }.joined())
    }

    private struct ShownStatus: Encodable {
        var version: Int64?
        var hosts: [Host]
        var behind: [String]
        struct Host: Encodable {
            var user: String
            var state: String
            var version: Int64?
            var at: Int64?
            var caughtUp: Bool
        }
    }

    private static func status(_ fleet: FleetOperator, json: Bool, output: Output) throws(FleetOperator.Failure) {
        // Hosts report whatever the broker holds; an invalid configuration there is said and the
        // reports are listed all the same.
        var current: Int64?
        do {
            current = try fleet.current()?.version
        } catch {
            guard error.invalidOnBroker else { throw error }
            output.diagnostic("imhost fleet status: \(TerminalText.safe(error.description))")
        }
        let hosts = try fleet.statuses().map { status in
            ShownStatus.Host(user: status.user, state: status.state, version: status.version, at: status.at,
                             caughtUp: status.version == current)
        }
        // A host that went away has not caught up only if it will come back behind: listed, but
        // "behind" names running hosts that apply another version.
        let behind = hosts.filter { $0.state == "running" && !$0.caughtUp }.map(\.user)
        if json {
            output.out(JSONOutput.encode(ShownStatus(version: current, hosts: hosts, behind: behind)))
            return
        }
        var lines = [current.map { "fleet configuration version \($0) on the broker" } ?? "no fleet configuration on the broker"]
        if hosts.isEmpty { lines.append("no host has reported yet") }
        let width = max(4, hosts.map(\.user.count).max() ?? 0)
        for host in hosts {
            let version = host.version.map(String.init) ?? "none"
            let note = host.caughtUp ? "" : host.state == "running" ? "  not caught up" : ""
            lines.append("  \(host.user.padding(toLength: width, withPad: " ", startingAt: 0))  \(host.state.padding(toLength: 11, withPad: " ", startingAt: 0))  version \(version)\(note)")
        }
        let running = hosts.count { $0.state == "running" }
        lines.append("\(hosts.count) host\(hosts.count == 1 ? "" : "s"): \(running) running, \(behind.isEmpty ? "all running ones caught up" : "not caught up: " + behind.joined(separator: ", "))")
        output.out(lines.map { TerminalText.safe($0, newlines: false) + "\n" }.joined())
    }
}

import IMHost
import IMHostRuntime
import IMKit

/// `imhost fleet`: the operator's kill switch and rollouts for every host at once, through the
/// broker (``FleetOperator``), and which hosts applied them.
enum FleetCommand {
    typealias Option = CommandLineTool.Option

    /// How long a change waits for running hosts to report they apply it: they apply within
    /// milliseconds, so the default is only ever waited out for a host that lags.
    static let wait = Option.option("--wait", .seconds(0...60, default: 3), "how long a change waits for running hosts' reports, in seconds; 0 does not wait")
    /// What every change takes.
    static let changeOptions: [Option] = [
        .flag("--init", "publish the first configuration when the broker holds none (or start from nothing turned off when hosts refuse what it holds)"),
        .flag("--force", "publish a line or message key no host reports"),
        wait,
    ]

    static let subcommands: [CommandLineTool.Subcommand] = [
        .init(name: "show", summary: "the fleet configuration the broker holds, and whether hosts apply it", options: [.json()]),
        .init(name: "kill", arguments: "LINE", summary: "turn a line off on every host: its chats open on the legacy page", options: changeOptions),
        .init(name: "lift", arguments: "LINE", summary: "turn it back on", options: changeOptions),
        .init(name: "kill-message", arguments: "KEY", summary: "show a message key as a placeholder everywhere", options: changeOptions),
        .init(name: "lift-message", arguments: "KEY", summary: "show its messages again", options: changeOptions),
        .init(name: "kill-component", arguments: "NAME",
              summary: "hide a built-in component (\(ComponentSet.all.names.joined(separator: ", ")))", options: changeOptions),
        .init(name: "lift-component", arguments: "NAME", summary: "show it again", options: changeOptions),
        .init(name: "rollout", arguments: "LINE PERCENT",
              summary: "serve the line to PERCENT of users (0 to 100, at most two decimals; 100 serves everyone). A user is in when the first 4 bytes of SHA-256(\"LINE/USER\"), big-endian, modulo 10,000 are below PERCENT x 100, so a user in stays in as it grows.",
              options: changeOptions),
        .init(name: "replace",
              summary: "replace a configuration on the broker that hosts refuse (not valid, or dated more than a day ahead) or ignore (older than the one they apply: a broker restored from a backup): publish what it turns off, when that can be read, above every version hosts report, so every host moves to it",
              options: [wait]),
        .init(name: "status", summary: "every host's report: the version it applies, and who has not caught up", options: [.json()]),
        .init(name: "cards",
              summary: "how hosts drew each line's messages their chats showed: by the line's version, or as placeholders by why (not-installed, turned-off, held, builder-failed, ...), summed across the hosts that reported",
              options: [.json()]),
    ]

    static let command = CommandLineTool.Command(
        name: "fleet",
        summary: "the operator's kill switch and rollouts for every host, through the broker",
        subcommands: subcommands,
        help: """
            Runs as the operator: host.json's "user" must be "operator", and its "transport" the
            broker with operator's password file (imhost broker init makes DIR/passwords/operator).

            Each change reads the configuration the broker holds and judges it as hosts do: one
            they refuse is not built on (replace it). It publishes the next version, above every
            version hosts report (retained: hosts that connect later get it), and reads it back
            to confirm it won; a change another operator made meanwhile is kept, this one made
            again on top of it. Then it waits for the running hosts to report they apply it
            (--wait) and says how many did; imhost fleet status shows the rest later.

            A line, or a message key, that a change turns off must be one some host reports
            having (each host reports its installed and configured lines and their keys when it
            connects): a typo is refused with the nearest name hosts report, unless --force.

            Exit 0 when done (or nothing needed doing), 1 when the broker could not be reached or
            refused, or holds a configuration hosts do not apply (show), 2 for bad usage,
            host.json, or a name no host reports.
            """,
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

        /// Why it would turn off something not known to be anywhere (a typo, or a name only one
        /// user's report claims), with the nearest known name; `nil` when it is known
        /// (``FleetOperator/Standing/unreported(line:)``). Lifting is never checked: it turns
        /// nothing off.
        func unreported(in standing: FleetOperator.Standing) -> String? {
            switch self {
            case .kill(let line): standing.unreported(line: line)
            case .rollout(let line, let share) where share < 10_000: standing.unreported(line: line)
            case .killMessage(let key): standing.unreported(key: key)
            default: nil
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
        // The subcommand, chosen and checked as declared.
        let verb = words.first ?? ""
        let change: Change?
        switch parse(verb, Array(words.dropFirst())) {
        case .failure(let usage):
            output.diagnostic("imhost fleet: \(usage.text)")
            return CommandLineTool.ExitCode.usage
        case .success(let parsed):
            change = parsed
        }
        let wait = Int64(arguments.seconds(Self.wait)! * 1000)
        guard let (config, transport) = operatorConfig(arguments, command: "fleet", lives: "the fleet configuration lives", output: output) else {
            return CommandLineTool.ExitCode.usage
        }
        // What this operator published and saw on the fleet topic: the versions hosts' reports
        // may claim and be believed.
        let fleet = FleetOperator(transport: transport, user: config.user, ledger: FleetLedger(dataFolder: config.dataFolder))
        let json = arguments.flags.contains("--json")
        do throws(FleetOperator.Failure) {
            var standing = try fleet.standing()
            if let change {
                // A name the operator's own host has is known whatever hosts report.
                if !arguments.flags.contains("--force"), change.unreported(in: standing) != nil {
                    standing.own = CommandLineTool.makeHost(config).fleetReport
                }
                if !arguments.flags.contains("--force"), let unknown = change.unreported(in: standing) {
                    output.diagnostic("imhost fleet \(verb): \(TerminalText.safe(unknown))")
                    return CommandLineTool.ExitCode.usage
                }
                let initialize = arguments.flags.contains("--init")
                // A change on a configuration hosts refuse fails with its own line, unless --init
                // starts over.
                let refused = if case .refused = standing.verdict { true } else { false }
                if let problem = standing.problem, initialize || !refused {
                    output.out("note: \(TerminalText.safe(problem))\n")
                }
                let outcome = try fleet.change(initialize: initialize, { (config: inout FleetConfig) throws(FleetOperator.Failure) in change.apply(to: &config) })
                try said(outcome, change.said, standing: standing, fleet: fleet, wait: wait, output: output)
            } else if verb == "replace" {
                try said(try fleet.replace(), nil, standing: standing, fleet: fleet, wait: wait, output: output)
            } else if verb == "show" {
                return show(standing, json: json, output: output)
            } else if verb == "cards" {
                cards(standing, json: json, output: output)
            } else {
                status(standing, json: json, output: output)
            }
        } catch {
            output.diagnostic("imhost fleet \(verb): \(TerminalText.safe(line(error)))")
            return CommandLineTool.ExitCode.failure
        }
        return CommandLineTool.ExitCode.ok
    }

    struct Usage: Error { var text: String }

    /// host.json as the operator's commands need it (`imhost COMMAND`): a transport, and the user
    /// `operator`; otherwise one line that says what to change, and `nil`.
    static func operatorConfig(_ arguments: Arguments, command: String, lives: String, output: Output) -> (HostConfig, HostConfig.Transport)? {
        guard let config = CommandLineTool.loadConfig(arguments, output: output) else { return nil }
        guard let transport = config.transport else {
            output.diagnostic("imhost \(command): there is no \"transport\" in \(TerminalText.safe(config.file)): \(lives) on the broker; add one with operator's password file")
            return nil
        }
        guard config.user == TransportID.operatorID else {
            output.diagnostic("imhost \(command): \(TerminalText.safe(config.file))'s user is \"\(TerminalText.safe(config.user))\"; \(command) commands run as \(TransportID.operatorID): use a host.json with \"user\": \"\(TransportID.operatorID)\" and operator's password file (DIR/passwords/\(TransportID.operatorID))")
            return nil
        }
        return (config, transport)
    }

    /// The change a subcommand asks for (`nil` for show, replace and status), or what is wrong
    /// with it.
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
        case "show", "status", "replace", "cards":
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
            let hint = closestMatch(to: verb, among: subcommands.map(\.name)).map { "did you mean \"\($0)\"? " } ?? ""
            return .failure(Usage(text: "unknown subcommand \"\(TerminalText.safe(verb))\"; \(hint)see imhost fleet --help"))
        }
    }

    /// Says what a change or a replacement did and, after waiting at most `wait` ms, how many
    /// of the hosts running before it report they apply it: applied means reported.
    private static func said(_ outcome: FleetOperator.Outcome, _ what: String?, standing: FleetOperator.Standing, fleet: FleetOperator,
                             wait: Int64, output: Output) throws(FleetOperator.Failure) {
        let config: FleetConfig
        switch outcome {
        case .unchanged(let held):
            output.out(what.map { "fleet configuration version \(held.version) already has \($0); nothing published\n" }
                       ?? "hosts apply the fleet configuration the broker holds (version \(held.version)): nothing to replace\n")
            return
        case .published(let made, let retries):
            config = made
            let after = retries == 0 ? "" : " (on top of another operator's change, after \(retries) retr\(retries == 1 ? "y" : "ies"))"
            output.out("published fleet configuration version \(made.version): \(what ?? "in place of the one hosts did not apply; \(offSummary(made))")\(after)\n")
        }
        // A host whose report claims a version nobody vouches for is not waited for: what it
        // says of itself cannot be believed.
        let running = standing.hosts.filter { host in host.state == .running && !standing.unvouched.contains { $0.user == host.user } }.map(\.user)
        guard !running.isEmpty else {
            output.out("No host is running: each applies it when it connects; imhost fleet status shows who has.\n")
            return
        }
        guard wait > 0 else {
            output.out("Not waited for (--wait 0): imhost fleet status shows which of the \(running.count) running host\(running.count == 1 ? "" : "s") apply it.\n")
            return
        }
        let reports = try fleet.awaitReports(of: running, applying: config, milliseconds: wait)
        let behind = running.filter { user in !(reports.first { $0.user == user }.map { fleet.applies($0, config) } ?? false) }
        let applied = "Applied by \(running.count - behind.count) of \(running.count) running host\(running.count == 1 ? "" : "s")"
        guard !behind.isEmpty else {
            output.out(applied + " (as they report).\n")
            return
        }
        let named = behind.prefix(5).map { user in
            // Two steps: Swift 6.3.1 crashes compiling this in one expression for release (-O).
            let version = reports.first { $0.user == user }?.version
            return "\(user) (\(version.map { "version \($0)" } ?? "no version"))"
        }
        let more = behind.count > 5 ? " and \(behind.count - 5) more" : ""
        output.out(TerminalText.safe("\(applied) within \(Double(wait) / 1000) s; not yet: \(named.joined(separator: ", "))\(more); imhost fleet status shows when they do.", newlines: false) + "\n")
    }

    /// What a configuration turns off, in one line: "lines off: house; message keys off: none; ...".
    private static func offSummary(_ config: FleetConfig) -> String {
        func list(_ items: [String]) -> String { items.isEmpty ? "none" : items.joined(separator: ", ") }
        let rollouts = config.rollouts.keys.sorted().map { "\($0) \(FleetConfig.percent(config.rollouts[$0]!))" }
        return "lines off: \(list(config.killSwitch.lines)); message keys off: \(list(config.killSwitch.messages)); components off: \(list(config.killSwitch.components.names)); rollouts: \(list(rollouts))"
    }

    private struct ShownConfig: Encodable {
        var version: Int64
        var madeAt: Int64
        var digest: String
        var killSwitch: [String: [String]]
        var rollouts: [String: Double]
    }

    /// Shows what the broker holds (when it can be read), and says in one line when hosts do
    /// not apply it; exit 1 then.
    private static func show(_ standing: FleetOperator.Standing, json: Bool, output: Output) -> Int32 {
        if case .removed = standing.verdict {
            if json { output.out("null\n") } else { output.out("The broker holds no fleet configuration: hosts keep the last one they applied, or host.json alone if they never had one (imhost fleet kill LINE --init publishes the first).\n") }
            return CommandLineTool.ExitCode.ok
        }
        // One dated too far ahead can still be read: what it says is what replace keeps.
        if let config = try? FleetConfig.read(standing.bytes) {
            if json {
                output.out(JSONOutput.encode(ShownConfig(version: config.version, madeAt: config.madeAt, digest: config.digest,
                                                         killSwitch: ["lines": config.killSwitch.lines, "messages": config.killSwitch.messages,
                                                                      "components": config.killSwitch.components.names],
                                                         rollouts: config.rollouts.mapValues { Double($0) / 100 })))
            } else {
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
        }
        guard let problem = standing.problem else { return CommandLineTool.ExitCode.ok }
        output.diagnostic("imhost fleet show: \(TerminalText.safe(problem))")
        return CommandLineTool.ExitCode.failure
    }

    private struct ShownStatus: Encodable {
        var version: Int64?
        var hosts: [Host]
        var behind: [String]
        struct Host: Encodable {
            var user: String
            var state: FleetStatus.State
            var version: Int64?
            var at: Int64?
            var caughtUp: Bool
            /// Whether the version it reports is one the operator vouches for (published or
            /// saw on the fleet topic, or two hosts report): one that is not is not built on.
            var vouched: Bool
            /// The lines and message keys it reports having.
            var lines: [String]
            var keys: [String]
            /// How it drew lines' messages its chats showed, by line (absent when it said nothing).
            var drawn: [String: DrawnCounts]?
        }
    }

    private static func status(_ standing: FleetOperator.Standing, json: Bool, output: Output) {
        // Hosts report whatever the broker holds; a configuration there that hosts do not apply
        // is said, and the reports are listed all the same.
        let current: Int64? = if case .applies(let config) = standing.verdict { config.version } else { nil }
        if let problem = standing.problem { output.diagnostic("imhost fleet status: \(TerminalText.safe(problem))") }
        let hosts = standing.hosts.map { status in
            ShownStatus.Host(user: status.user, state: status.state, version: status.version, at: status.at,
                             caughtUp: status.version == current, vouched: !standing.unvouched.contains { $0.user == status.user },
                             lines: status.report.lines, keys: status.report.keys,
                             drawn: status.report.drawn.isEmpty ? nil : status.report.drawn)
        }
        // A host that went away has not caught up only if it will come back behind: listed, but
        // "behind" names running hosts that apply another version.
        let behind = hosts.filter { $0.state == .running && !$0.caughtUp }.map(\.user)
        if json {
            output.out(JSONOutput.encode(ShownStatus(version: current, hosts: hosts, behind: behind)))
            return
        }
        var lines: [String] = switch standing.verdict {
        case .refused: ["the broker holds a fleet configuration hosts refuse"]
        case .removed: ["no fleet configuration on the broker"]
        default: current.map { ["fleet configuration version \($0) on the broker"] } ?? []
        }
        if hosts.isEmpty { lines.append("no host has reported yet") }
        let width = max(4, hosts.map(\.user.count).max() ?? 0)
        for host in hosts {
            let version = host.version.map(String.init) ?? "none"
            let ahead = standing.ahead.contains { $0.user == host.user }
            let note = !host.vouched ? "  a version no configuration this operator knows has (not built on)"
                : host.caughtUp ? "" : ahead ? "  ahead of the broker" : host.state == .running ? "  not caught up" : ""
            lines.append("  \(host.user.padding(toLength: width, withPad: " ", startingAt: 0))  \(host.state.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0))  version \(version)\(note)")
        }
        let running = hosts.count { $0.state == .running }
        lines.append("\(hosts.count) host\(hosts.count == 1 ? "" : "s"): \(running) running, \(behind.isEmpty ? "all running ones caught up" : "not caught up: " + behind.joined(separator: ", "))")
        output.out(lines.map { TerminalText.safe($0, newlines: false) + "\n" }.joined())
    }
}

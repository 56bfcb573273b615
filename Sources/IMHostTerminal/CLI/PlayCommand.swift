import IMKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMHostBroker
import IMHostRuntime
import IMHostWeb
#if canImport(Glibc)
import Glibc
#endif

/// `imhost play FILE` and `imhost demo`: run a scenario and print its transcript. The steps run
/// in a supervised worker, handed over one at a time: a step that crashes a line is reported,
/// the line is quarantined, and the run goes on with the next step.
enum PlayCommand {
    static let command = CommandLineTool.Command(
        name: "play",
        summary: "run a scenario file: open, send, receive, tap, kill switch, expectations",
        arguments: "FILE",
        options: [
            .flag("--fixed-clock", "timestamps from 2026-01-05 09:00 UTC, a minute a message, so transcripts repeat exactly (message ids are always repeatable)"),
            .width,
            .option("--data", .text("DIR"), "keep conversations, quarantine and crash records in DIR (default: a scratch folder, removed after)"),
            .user,
        ],
        help: """
            Runs a scenario: a JSON list of steps, each one action. Every chat verb is a step,
            and does and says what typing it does in imhost chat:
            \(ChatVerb.stepHelp)
              { "text": "typed" }                  type into the input bar and send
            A scenario's own steps:
              { "killSwitch": { "lines": [...], "messages": [...], "components": [...] } }
              { "killSwitch": {} } clears it; host.json is never changed
              { "liftQuarantine": LINE } (or "--all"), as imhost quarantine lift does
              { "say": "narration" }   { "show": true } prints the page
              { "expect": { "page": "house" or "legacy", "components": [...], "contains": [...],
                            "absent": [...], "stored": N, "tap": "what the last tap did",
                            "quarantined": [LINE or KEY, ...] } }
            Any step may say "expectCrash": true: it must crash a line.
            Prints the transcript; exits 1 at the first step that fails (an expectation not met,
            a verb that is refused), naming the step, what was expected and what was found. A
            step that crashes a line is reported, the line or key is quarantined and the run
            goes on; an unexpected crash fails the run (exit 1) at the end.
            """,
        run: { arguments, output in
            guard arguments.positionals.count == 1 else {
                output.diagnostic("imhost play: expected one scenario file, got \(arguments.positionals.count); see imhost play --help")
                return CommandLineTool.ExitCode.usage
            }
            let path = arguments.positionals[0]
            let text: String
            do throws(FileSystem.DocumentFailure) {
                text = try FileSystem.readDocument(path, limit: HostConfig.Limits.documentBytes)
            } catch {
                let place = error.position.map { ":\($0)" } ?? ""
                output.diagnostic("imhost play: \(path)\(place): \(error); give a scenario file (a JSON list of steps)")
                return CommandLineTool.ExitCode.usage
            }
            return play(text, file: path, demo: false, arguments: arguments, output: output)
        })

    static let demo = CommandLineTool.Command(
        name: "demo",
        summary: "play a bundled demo: lines and the kill switch, or two people chatting through a broker",
        arguments: "[lines | two-people] [--web]",
        options: [.width, .flag("--web", "once it has played, serve its chats to a browser (as imhost web does; two-people: alice's and bob's, one URL each) until Ctrl-C")],
        help: """
            imhost demo (or imhost demo lines) plays a bundled scenario against the plugins
            host.json names: a housing chat and a jobs chat opened from unchanged jump URLs,
            their components and custom messages, the kill switch rolling house back to the
            legacy page with nothing lost, and a used-cars line crashing in a chat: the chat
            goes on, the host quarantines the line by itself, its history stays, and the
            quarantine is lifted.

            imhost demo two-people starts a private Mosquitto broker and two hosts, alice's and
            bob's, on the same host.json: alice sends a listing card; bob, whose host has house
            killed, sees a placeholder saying why, then the card once the switch lifts; a read
            receipt comes back; bob goes offline, alice sends, bob returns and gets it.

            Both use a fixed clock and a scratch data folder, so they repeat exactly.
            """,
        run: { arguments, output in
            guard arguments.positionals.count <= 1, let demo = DemoScenario.named(arguments.positionals.first ?? "lines") else {
                output.diagnostic("imhost demo: expected lines or two-people, got '\(TerminalText.safe(arguments.positionals.joined(separator: " ")))'; see imhost demo --help")
                return CommandLineTool.ExitCode.usage
            }
            return play(demo.text, file: demo.name, demo: true, arguments: arguments, output: output)
        })

    static func play(_ text: String, file: String, demo: Bool, arguments: Arguments, output: Output) -> Int32 {
        Interruption.install()
        guard let width = CommandLineTool.widthOption(arguments, command: demo ? "demo" : "play", output: output),
              let config = CommandLineTool.loadConfig(arguments, output: output) else { return CommandLineTool.ExitCode.usage }
        let scenario: Scenario
        do {
            scenario = try Scenario.parse(text, file: file, folder: demo ? DemoFiles.folder ?? "/nonexistent" : nil, lineOrder: config.lineOrder)
        } catch {
            output.diagnostic("imhost play: \(error.description)")
            return CommandLineTool.ExitCode.usage
        }
        let scratch: ScratchFolder
        let dataFolder: String
        if let given = arguments.options["--data"] {
            dataFolder = FileSystem.resolve(given, against: ".")
            scratch = ScratchFolder(path: nil)
        } else {
            do {
                scratch = try ScratchFolder()
            } catch {
                output.diagnostic("imhost play: cannot make a scratch data folder in /tmp: \(error)")
                return CommandLineTool.ExitCode.failure
            }
            dataFolder = scratch.path!
        }
        var workerArguments = [demo ? "demo" : "play", demo ? file : FileSystem.resolve(file, against: "."),
                               "--width", "\(width)"]
        if arguments.flags.contains("--fixed-clock") { workerArguments.append("--fixed-clock") }
        if arguments.flags.contains("--verbose") { workerArguments.append("--verbose") }
        // One supervised worker, or one per person with a private broker between them.
        var runs: [String: ChatRuntime] = [:]
        let broker: BrokerProcess?
        if scenario.users.isEmpty {
            broker = nil
            var own = workerArguments + ["--config", CommandLineTool.configPath(arguments), "--data", dataFolder]
            if let user = arguments.options["--user"] { own += ["--user", user] }
            runs[""] = ChatRuntime(config: config, configPath: CommandLineTool.configPath(arguments), dataFolder: dataFolder,
                                   user: arguments.options["--user"] ?? config.user, workerArguments: own, output: output, chat: false)
        } else {
            let started = PrivateBroker.start(for: scenario.users.map(\.name), in: dataFolder, output: output)
            guard let started else { return CommandLineTool.ExitCode.failure }
            broker = started
            output.out("A private broker for \(scenario.users.map(\.name).joined(separator: ", ")) (mosquitto, on a unix socket in the run's scratch folder).\n")
            for user in scenario.users {
                let path = user.config ?? CommandLineTool.configPath(arguments)
                let userConfig: HostConfig
                do {
                    userConfig = try HostConfig.load(from: path)
                } catch {
                    output.diagnostic("imhost play: \(user.name): \(error.description)")
                    return CommandLineTool.ExitCode.usage
                }
                let userData = dataFolder + "/" + user.name
                let own = workerArguments + ["--config", path, "--data", userData, "--user", user.name,
                                             "--transport", "unix:" + started.socket,
                                             "--password-file", started.folder.passwordFile(of: user.name)]
                runs[user.name] = ChatRuntime(config: userConfig, configPath: path, dataFolder: userData, user: user.name, workerArguments: own,
                                              output: output, chat: false)
            }
        }
        defer { broker?.stop() }
        for run in runs.values { run.noticesToTranscript = true }
        // Workers start in the order of the users, each connected before the next.
        for key in scenario.users.isEmpty ? [""] : scenario.users.map(\.name) {
            if let code = runs[key]!.start() { return code }
        }
        func finishAll(signal: Int32? = nil) -> Int32 {
            var code: Int32 = 0
            for run in runs.values {
                let ended = run.finish(signal: signal)
                if code == 0 { code = ended }
            }
            return code
        }
        var unexpected: [Int] = []
        for step in scenario.steps {
            if let signal = Interruption.signal {
                _ = finishAll(signal: signal)
                return Interruption.exitCode(signal)
            }
            if case .fleet(let change, let written) = step.action, let broker {
                output.out("── \(step.number). operator: imhost fleet \(TerminalText.safe(written))\n")
                if let failure = FleetStep.run(change, broker: broker, users: scenario.users.map(\.name), output: output) {
                    _ = finishAll()
                    output.diagnostic("imhost play: \(file) step \(step.number) (line \(step.position.line)): \(failure)")
                    return CommandLineTool.ExitCode.failure
                }
                continue
            }
            let supervised = runs[step.user ?? ""]!
            if let code = supervised.hand(.step(number: step.number)) {
                _ = finishAll()
                return code == 0 ? CommandLineTool.ExitCode.failure : code
            }
            if supervised.lastCrashed {
                if step.expectCrash {
                    output.out("   → the step crashed, as expected; the run goes on\n")
                } else {
                    unexpected.append(step.number)
                    output.out("   → step \(step.number) crashed; the run goes on\n")
                }
            } else if let failure = supervised.lastFailure {
                _ = finishAll()
                // It quotes the scenario (expected text, pages, names): one escaped line.
                output.diagnostic("imhost play: \(failure)")
                return CommandLineTool.ExitCode.failure
            } else if step.expectCrash {
                _ = finishAll()
                output.diagnostic("imhost play: \(file) step \(step.number) (line \(step.position.line)): expected the step to crash a line, but it did not")
                return CommandLineTool.ExitCode.failure
            }
        }
        let code = finishAll()
        guard unexpected.isEmpty else {
            output.out("\n\(scenario.steps.count) steps run; step\(unexpected.count == 1 ? "" : "s") \(unexpected.map(String.init).joined(separator: ", ")) crashed.\n")
            return CommandLineTool.ExitCode.failure
        }
        output.out("\n\(scenario.steps.count) steps passed.\n")
        if code == 0, arguments.flags.contains("--web") {
            if let broker { return serveWeb(scenario.users, broker: broker, dataFolder: dataFolder, arguments: arguments, output: output) }
            return serveWeb(config: config, dataFolder: dataFolder, arguments: arguments, output: output)
        }
        return code
    }

    /// After a scenario of one person: their chats served to a browser, as `imhost web` serves
    /// them, on the scenario's data (its scratch folder lives until Ctrl-C), until Ctrl-C.
    private static func serveWeb(config: HostConfig, dataFolder: String, arguments: Arguments, output: Output) -> Int32 {
        var config = config
        config.dataFolder = dataFolder
        let user = arguments.options["--user"] ?? config.user
        let host = CommandLineTool.makeHost(config, user: user, dataFolder: dataFolder, connection: "web")
        do {
            try host.signIn()
            let server = try WebServer(host: host, config: config, configPath: CommandLineTool.configPath(arguments), user: user, port: 0,
                                       verbose: false, workerOptions: ["--data", dataFolder], output: output)
            output.out("\(user)'s chats: \(server.url)\nOpen it in a browser on this machine; Ctrl-C stops it.\n")
            return WebServer.serve([server])
        } catch {
            output.diagnostic("imhost demo: cannot serve the chats to a browser: \(error)")
            return CommandLineTool.ExitCode.failure
        }
    }

    /// After a scenario of several people: each person's chats served to a browser, as
    /// `imhost web` serves them, on the scenario's broker and data, until Ctrl-C.
    private static func serveWeb(_ users: [Scenario.User], broker: BrokerProcess, dataFolder: String, arguments: Arguments, output: Output) -> Int32 {
        var servers: [WebServer] = []
        for user in users {
            let path = user.config ?? CommandLineTool.configPath(arguments)
            guard var config = try? HostConfig.load(from: path) else { return CommandLineTool.ExitCode.usage }
            let userData = dataFolder + "/" + user.name
            config.dataFolder = userData
            config.transport = HostConfig.Transport(address: .unix(path: broker.socket), passwordFile: broker.folder.passwordFile(of: user.name))
            let host = CommandLineTool.makeHost(config, user: user.name, dataFolder: userData, connection: "web")
            do {
                try host.signIn()
                servers.append(try WebServer(host: host, config: config, configPath: path, user: user.name, port: 0, verbose: false,
                                             workerOptions: ["--data", userData, "--transport", "unix:" + broker.socket,
                                                             "--password-file", broker.folder.passwordFile(of: user.name)],
                                             output: output))
            } catch {
                output.diagnostic("imhost demo: cannot serve \(user.name)'s chats to a browser: \(error)")
                return CommandLineTool.ExitCode.failure
            }
            output.out("\(user.name)'s chats: \(servers.last!.url)\n")
        }
        output.out("Open each in a browser on this machine (two windows side by side); Ctrl-C stops both and the broker.\n")
        return WebServer.serve(servers)
    }
}

/// The broker `play` starts for a scenario of several people: made with `imhost broker init`'s
/// settings in the run's data folder, on a unix socket, stopped when the run ends.
enum PrivateBroker {
    static func start(for users: [String], in dataFolder: String, output: Output) -> BrokerProcess? {
        func cannot(_ why: String) -> BrokerProcess? {
            output.diagnostic("imhost play: cannot start a broker for the scenario's users: \(TerminalText.safe(why))")
            return nil
        }
        let folder: BrokerFolder
        do throws(BrokerFolder.Failure) {
            folder = try BrokerFolder.initialize(at: dataFolder + "/broker", users: users, listener: .socket(dataFolder + "/broker/mosquitto.sock"))
        } catch {
            return cannot(BrokerCommand.line(error))
        }
        do throws(BrokerProcess.Failure) {
            return try BrokerProcess(folder: folder)
        } catch {
            return cannot(BrokerCommand.line(error))
        }
    }
}

extension BrokerProcess {
    /// The unix socket it listens on (a private broker always has one).
    var socket: String {
        if case .socket(let path) = listener { return path }
        return ""
    }
}

/// A scenario's `fleet` step: the operator's change through the scenario's broker, as `imhost
/// fleet` makes it, then a wait until every user's host reports it applied.
enum FleetStep {
    /// How long the users' hosts have to apply a change.
    static let applySeconds: UInt64 = 10

    /// Runs the change; `nil` when every host applied it, else why the step failed. Says in the
    /// transcript what was done, without the version (a time: transcripts stay the same).
    static func run(_ change: FleetCommand.Change, broker: BrokerProcess, users: [String], output: Output) -> String? {
        let transport = HostConfig.Transport(address: .unix(path: broker.socket), passwordFile: broker.folder.passwordFile(of: TransportID.operatorID))
        let fleet = FleetOperator(transport: transport, user: TransportID.operatorID)
        let version: Int64
        do throws(FleetOperator.Failure) {
            switch try fleet.change(initialize: true, { (config: inout FleetConfig) throws(FleetOperator.Failure) in change.apply(to: &config) }) {
            case .published(let config, _), .unchanged(let config): version = config.version
            }
        } catch {
            return "the operator's change failed: \(FleetCommand.line(error))"
        }
        let deadline = Clock.monotonic() + applySeconds * 1_000_000_000
        var behind = users
        while !behind.isEmpty {
            let statuses = (try? fleet.statuses()) ?? []
            behind = users.filter { user in !statuses.contains { $0.user == user && $0.version == version && $0.state == .running } }
            guard !behind.isEmpty else { break }
            guard Clock.monotonic() < deadline else {
                return "waited \(applySeconds) s: \(behind.joined(separator: ", ")) did not apply the fleet configuration"
            }
            _ = poll(nil, 0, 20)
        }
        output.out("   → published: \(change.said); \(users.joined(separator: " and ")) applied it\n")
        return nil
    }
}

import IMKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
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
        usage: "FILE [--fixed-clock] [--width N] [--data DIR] [--user ID]",
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

              --fixed-clock   timestamps from 2026-01-05 09:00 UTC, a minute a message, so
                              transcripts repeat exactly (message ids are always repeatable)
              --width N       page width (default 72)
              --data DIR      keep conversations, quarantine and crash records in DIR
                              (default: a scratch folder, removed after)
              --user ID       the signed-in user
            """,
        flags: ["--fixed-clock"], options: ["--width", "--data", "--user"],
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
        summary: "play the bundled demo: lines, the kill switch, a crash rolled back automatically",
        usage: "[--width N]",
        help: """
            Plays a bundled scenario against the plugins host.json names: a housing chat and a
            jobs chat opened from unchanged jump URLs, their components and custom messages,
            the kill switch rolling house back to the legacy page with nothing lost, and a
            used-cars line crashing in a chat: the chat goes on, the host quarantines the line
            by itself, its history stays, and the quarantine is lifted. Uses a fixed clock and a
            scratch data folder, so it repeats exactly.

              --width N   page width (default 72)
            """,
        flags: [], options: ["--width"],
        run: { arguments, output in
            play(DemoScenario.text, file: DemoScenario.name, demo: true, arguments: arguments, output: output)
        })

    static func play(_ text: String, file: String, demo: Bool, arguments: Arguments, output: Output) -> Int32 {
        Interruption.install()
        guard let width = CommandLineTool.widthOption(arguments, command: demo ? "demo" : "play", output: output),
              let config = CommandLineTool.loadConfig(arguments, output: output) else { return CommandLineTool.ExitCode.usage }
        let scenario: Scenario
        do {
            scenario = try Scenario.parse(text, file: file, lineOrder: config.lineOrder)
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
        var workerArguments = [demo ? "demo" : "play", demo ? "-" : FileSystem.resolve(file, against: "."),
                               "--config", CommandLineTool.configPath(arguments), "--width", "\(width)", "--data", dataFolder]
        if let user = arguments.options["--user"] { workerArguments += ["--user", user] }
        if arguments.flags.contains("--fixed-clock") { workerArguments.append("--fixed-clock") }
        if arguments.flags.contains("--verbose") { workerArguments.append("--verbose") }
        let supervised = SupervisedRun(config: config, dataFolder: dataFolder, workerArguments: workerArguments,
                                       output: output)
        supervised.noticesToTranscript = true
        if let code = supervised.start() { return code }
        var unexpected: [Int] = []
        for step in scenario.steps {
            if let signal = Interruption.signal {
                supervised.supervisor.finish(signal: signal)
                return Interruption.exitCode(signal)
            }
            if let code = supervised.hand(.step(number: step.number)) {
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
                supervised.supervisor.finish()
                // It quotes the scenario (expected text, pages, names): one escaped line.
                output.diagnostic("imhost play: \(failure)")
                return CommandLineTool.ExitCode.failure
            } else if step.expectCrash {
                supervised.supervisor.finish()
                output.diagnostic("imhost play: \(file) step \(step.number) (line \(step.position.line)): expected the step to crash a line, but it did not")
                return CommandLineTool.ExitCode.failure
            }
        }
        let code = supervised.supervisor.finish()
        guard unexpected.isEmpty else {
            output.out("\n\(scenario.steps.count) steps run; step\(unexpected.count == 1 ? "" : "s") \(unexpected.map(String.init).joined(separator: ", ")) crashed.\n")
            return CommandLineTool.ExitCode.failure
        }
        output.out("\n\(scenario.steps.count) steps passed.\n")
        return code
    }
}

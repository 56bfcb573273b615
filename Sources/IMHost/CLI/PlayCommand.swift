#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `imhost play FILE` and `imhost demo`: run a scenario and print its transcript.
enum PlayCommand {
    static let command = CommandLineTool.Command(
        name: "play",
        summary: "run a scenario file: open, send, receive, tap, kill switch, expectations",
        usage: "FILE [--fixed-clock] [--width N] [--data DIR] [--user ID]",
        help: """
            Runs a scenario: a JSON list of steps, each one action:
              { "open": URL }   { "send": KEY, "payload": JSON }   { "receive": KEY, "payload": JSON }
              { "text": "typed" }   { "tap": N }   { "quick": N }   { "more": N }
              { "killSwitch": { "lines": [...], "messages": [...], "components": [...] } }
              { "killSwitch": {} } clears it   { "reload": true } re-reads host.json
              { "say": "narration" }   { "show": true } prints the page
              { "expect": { "page": "house" or "legacy", "components": [...], "contains": [...],
                            "absent": [...], "stored": N, "tap": "what the last tap did" } }
            Prints the transcript; exits 1 at the first failed expectation, naming the step,
            what was expected and what was found. Kill-switch steps change the running host
            only, never host.json.

              --fixed-clock   timestamps from 2026-01-05 09:00 UTC, a minute a message, so
                              transcripts repeat exactly (message ids are always repeatable)
              --width N       page width (default 72)
              --data DIR      keep conversations in DIR (default: a scratch folder, removed after)
              --user ID       the signed-in user
            """,
        flags: ["--fixed-clock"], options: ["--width", "--data", "--user"],
        run: { arguments, output in
            guard arguments.positionals.count == 1 else {
                output.err("imhost play: expected one scenario file, got \(arguments.positionals.count); see imhost play --help\n")
                return CommandLineTool.ExitCode.usage
            }
            let path = arguments.positionals[0]
            let text: String
            do {
                text = try FileSystem.readText(path)
            } catch {
                output.err("imhost play: cannot read \(path): \(error); check the path\n")
                return CommandLineTool.ExitCode.usage
            }
            return play(text, file: path, arguments: arguments, output: output, fixedClock: arguments.flags.contains("--fixed-clock"))
        })

    static let demo = CommandLineTool.Command(
        name: "demo",
        summary: "play the bundled demo: two lines, the kill switch rolling one back and forward",
        usage: "[--width N]",
        help: """
            Plays a bundled scenario against the plugins host.json names: a housing chat and a
            jobs chat opened from unchanged jump URLs, their components and custom messages,
            the kill switch rolling house back to the legacy page with nothing lost, and the
            switch lifted. Uses a fixed clock and a scratch data folder, so it repeats exactly.

              --width N   page width (default 72)
            """,
        flags: [], options: ["--width"],
        run: { arguments, output in
            play(DemoScenario.text, file: DemoScenario.name, arguments: arguments, output: output, fixedClock: true)
        })

    static func play(_ text: String, file: String, arguments: Arguments, output: Output, fixedClock: Bool) -> Int32 {
        guard let width = CommandLineTool.intOption(arguments, "--width", default: 72, command: "play", output: output) else {
            return CommandLineTool.ExitCode.usage
        }
        guard let config = CommandLineTool.loadConfig(arguments, output: output) else { return CommandLineTool.ExitCode.usage }
        let scenario: Scenario
        do {
            scenario = try Scenario.parse(text, file: file, lineOrder: config.lineOrder)
        } catch {
            output.err("imhost play: \(error)\n")
            return CommandLineTool.ExitCode.usage
        }
        var scratch: String?
        let dataFolder: String
        if let given = arguments.options["--data"] {
            dataFolder = FileSystem.resolve(given, against: ".")
        } else {
            var template = Array("/tmp/imhost-play-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else {
                output.err("imhost play: cannot make a scratch data folder in /tmp: \(String(cString: strerror(errno)))\n")
                return CommandLineTool.ExitCode.failure
            }
            dataFolder = String(cString: made)
            scratch = dataFolder
        }
        defer { if let scratch { try? FileManager.default.removeItem(atPath: scratch) } }
        guard let host = CommandLineTool.makeHost(config, arguments, output: output, dataFolder: dataFolder) else {
            return CommandLineTool.ExitCode.failure
        }
        let runner = ScenarioRunner(host: host, output: output, width: width, colors: Environment.colorsOnStandardOutput,
                                    fixedClock: fixedClock) {
            try HostConfig.load(from: config.file)
        }
        do {
            try runner.run(scenario)
        } catch {
            output.err("imhost play: \(error)\n")
            return CommandLineTool.ExitCode.failure
        }
        return CommandLineTool.ExitCode.ok
    }
}

import IMHost
import IMHostRuntime
import IMKit

/// A worker playing a scenario (`imhost __worker play FILE`, `demo NAME`): the terminal's mode of
/// the runtime's ``Worker``, whose transcript is text for a terminal.
extension Worker {
    // MARK: play

    func play(file: String, demo: Bool) -> Int32 {
        let scenario: Scenario
        do {
            let bundled = demo ? DemoScenario.named(file) : nil
            let text = try bundled?.text ?? FileSystem.readDocument(file, limit: HostConfig.Limits.documentBytes)
            scenario = try Scenario.parse(text, file: bundled?.name ?? file, folder: bundled != nil ? DemoFiles.folder ?? "/nonexistent" : nil,
                                          lineOrder: host.config.lineOrder)
        } catch {
            output.diagnostic("imhost play: \(error)")
            return CommandLineTool.ExitCode.usage
        }
        let runner = ScenarioRunner(scenario: scenario, host: host, output: output, width: width, colors: colors,
                                    fixedClock: demo || settings.fixedClock, configPath: configPath)
        if let resume {
            do {
                try host.signIn()
                try runner.restore(resume.scenario ?? ScenarioProgress(), url: resume.url, window: resume.window)
            } catch {
                output.diagnostic("imhost play: cannot reopen the chat after a crash: \(error)")
                return CommandLineTool.ExitCode.failure
            }
        } else if host.courier == nil, host.connectionCommand != nil {
            do {
                try connectForScenario()
            } catch {
                output.diagnostic("imhost play: cannot sign \(host.userID) in: \(error)")
                return CommandLineTool.ExitCode.failure
            }
        }
        func answer(failure: String? = nil) {
            CommandLineTool.reportNotices(host, output: output)
            let state = WorkerResume(url: runner.url, window: runner.page?.window, scenario: runner.progress)
            channel.say(failure.map { .failed(reason: $0, resume: state) } ?? .ready(state))
        }
        answer()
        // With a connection, it runs between steps too: what this user sends goes out, what
        // others send comes in, as in a chat.
        let next: () -> ToWorker? = host.connectionCommand == nil ? messages().next : { self.nextCommand(nil, follow: runner.follow) }
        while let message = next() {
            if CommandLineTool.outputLost(output, command: "play") { return CommandLineTool.ExitCode.failure }
            guard case .step(let number) = message else {
                answer(failure: unexpected(message))
                continue
            }
            do {
                try runner.perform(number)
                answer()
            } catch {
                answer(failure: error.description)
            }
        }
        return exitCode()
    }
}

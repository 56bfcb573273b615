#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMHostRuntime
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// Runs the steps of a ``Scenario`` against a host, one at a time, printing a transcript. It
/// runs in the chat worker; the supervisor hands it step numbers, and after a crash a new runner
/// takes up from its ``ScenarioProgress``. Chat verbs run through the same ``ChatDriver`` as
/// `imhost chat`.
final class ScenarioRunner {
    /// A failed step: one line for a person.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The first timestamp of a fixed clock, 2026-01-05 09:00 UTC; each message adds a minute.
    static let fixedClockStart: Int64 = 1_767_603_600_000

    private let host: ChatHost
    private let driver: ChatDriver
    private let output: Output
    private let renderer: PageRenderer
    private let width: Int
    private let scenario: Scenario
    var page: ChatPage? { driver.page }
    var url: String? { driver.url }
    /// How far the scenario has come, for a worker that takes over after a crash.
    var progress: ScenarioProgress {
        var progress = state
        progress.lastTap = driver.lastTap.map { ChatWords.tap($0.tap, number: $0.number) } ?? state.lastTap
        return progress
    }
    private var state = ScenarioProgress()

    init(scenario: Scenario, host: ChatHost, output: Output, width: Int, colors: Bool, fixedClock: Bool, configPath: String) {
        self.scenario = scenario
        self.host = host
        driver = ChatDriver(host: host, configPath: configPath)
        self.output = output
        self.width = width
        renderer = PageRenderer(width: width, colors: colors)
        if fixedClock {
            host.clock = { [unowned self] in
                defer { self.state.minute += 1 }
                return ScenarioRunner.fixedClockStart + self.state.minute * 60_000
            }
        }
    }

    /// Takes up after a crash: the scenario's kill switch, the last tap, the clock, and the chat.
    func restore(_ saved: ScenarioProgress, url: String?, window: Int?) throws {
        state = saved
        if let killSwitch = saved.killSwitch {
            var config = host.config
            config.killSwitch = Self.killSwitch(killSwitch)
            host.apply(config)
        }
        if let url { try driver.openChat(url, window: window ?? 50) }
    }

    /// Runs step `number` (from 1).
    func perform(_ number: Int) throws(Failure) {
        // Steps are numbered from 1 in order: found by index, so a long scenario stays linear.
        guard scenario.steps.indices.contains(number - 1), case let step = scenario.steps[number - 1], step.number == number else {
            throw Failure(description: "\(scenario.file) has no step \(number)")
        }
        do {
            try perform(step)
        } catch let failure as Failure {
            throw Failure(description: "\(scenario.file) step \(step.number) (line \(step.position.line)): \(failure.description)")
        } catch {
            throw Failure(description: "\(scenario.file) step \(step.number) (line \(step.position.line)): \(TerminalText.safe("\(error)"))")
        }
    }

    private func currentPage() throws -> ChatPage {
        guard let page else { throw Failure(description: "no chat is open; start with { \"open\": URL }") }
        return page
    }

    private func note(_ step: Scenario.Step, _ text: String) {
        output.out("── \(step.number). \(step.user.map { "\($0): " } ?? "")\(TerminalText.safe(text))\n")
    }

    /// How long `await` waits for what another user sends before the step fails.
    static let awaitSeconds = 15.0

    /// Runs the connection until the page meets `expectation`, then shows it.
    private func awaitPage(_ expectation: Scenario.Expectation, _ step: Scenario.Step) throws {
        var page = try currentPage()
        let deadline = Clock.monotonic() + UInt64(Self.awaitSeconds * 1e9)
        while true {
            follow(host.serviceConnection())
            page = try currentPage()
            // A message that arrived is stored: the page reads it from there.
            if (try? evaluate(expectation, page)) != nil { break }
            guard Clock.monotonic() < deadline, Interruption.signal == nil else {
                output.out(try renderer.render(page))
                var unmet = "the page does not meet the expectation"
                do { _ = try evaluate(expectation, page) } catch let failure as Failure { unmet = failure.description } catch {}
                let status = host.courier.map { ConnectionWords.status($0.status) } ?? "no connection"
                throw Failure(description: "waited \(Int(Self.awaitSeconds)) s: \(unmet) (the page is shown above; this user's connection: \(status))")
            }
            guard let courier = host.courier else { _ = poll(nil, 0, 50); continue }
            courier.wait(milliseconds: min(courier.wakeAfter(), 100))
        }
        note(step, "await ✓ " + (try evaluate(expectation, page)).joined(separator: "; "))
        output.out(try renderer.render(page))
    }

    /// Follows what the connection did between steps: a fleet configuration the host applied
    /// reopens the chat on the page the converter now picks (the next step shows it).
    func follow(_ events: [Courier.Event]) {
        guard events.contains(where: { if case .fleetApplied = $0 { true } else { false } }), page != nil else { return }
        try? driver.reopen()
    }

    private func perform(_ step: Scenario.Step) throws {
        switch step.action {
        case .fleet:
            throw Failure(description: "step \(step.number) is the operator's: imhost play runs it, not a user's host")
        case .say(let text):
            output.out("\n▶ \(TerminalText.safe(text))\n")
        case .verb(let action):
            note(step, ChatWords.typed(action))
            let outcome = driver.perform(action)
            for line in outcome.replies.flatMap(ChatWords.lines) { output.out("   → \(TerminalText.safe(line, newlines: false))\n") }
            if let refusal = outcome.refusal { throw Failure(description: ChatWords.line(refusal)) }
            if action == .reload { state.killSwitch = nil }
        case .killSwitch(let killSwitch):
            var config = host.config
            config.killSwitch = killSwitch
            host.apply(config)
            state.killSwitch = ScenarioProgress.KillSwitch(lines: killSwitch.lines, messages: killSwitch.messages, components: killSwitch.components.names)
            try driver.reopen()
            let parts = [("lines", killSwitch.lines), ("messages", killSwitch.messages), ("components", killSwitch.components.names)]
                .filter { !$0.1.isEmpty }.map { "\($0.0) \($0.1.joined(separator: ", "))" }
            note(step, "kill switch: " + (parts.isEmpty ? "cleared" : parts.joined(separator: "; ")))
        case .liftQuarantine(let line):
            let lifted = try Quarantine.lift(dataFolder: host.dataFolder, line.map(Quarantine.Target.line) ?? .all)
            host.apply(host.config)
            try driver.reopen()
            note(step, "lift quarantine of \(line.map { "line \($0)" } ?? "everything"): \(lifted.count) entr\(lifted.count == 1 ? "y" : "ies") lifted")
        case .show:
            note(step, "show")
            output.out(try renderer.render(try currentPage()))
        case .expect(let expectation):
            try check(expectation, step)
        case .await(let expectation):
            try awaitPage(expectation, step)
        }
    }

    static func killSwitch(_ state: ScenarioProgress.KillSwitch) -> HostConfig.KillSwitch {
        HostConfig.KillSwitch(lines: state.lines, messages: state.messages,
                              components: ComponentSet(state.components.compactMap(ComponentSet.init(name:))))
    }

    private func check(_ expectation: Scenario.Expectation, _ step: Scenario.Step) throws {
        let page = try currentPage()
        do {
            note(step, "expect ✓ " + (try evaluate(expectation, page)).joined(separator: "; "))
        } catch let failure as Failure {
            // The page goes to the transcript, so the failure itself stays one line.
            if !expectation.contains.isEmpty { output.out(try renderer.render(page)) }
            throw failure
        }
    }

    /// What `expectation` checked of `page`, or the first thing it found unmet.
    private func evaluate(_ expectation: Scenario.Expectation, _ page: ChatPage) throws -> [String] {
        var checked: [String] = []
        if let expected = expectation.page {
            let found = page.isLegacy ? "legacy" : (page.lineID ?? "base")
            guard found == expected else {
                throw Failure(description: "expected the \(expected) page, found the \(found) page (\(page.decision.reason.rawValue): \(page.decision.explanation))")
            }
            checked.append("\(expected) page")
        }
        if let expected = expectation.components {
            let found = ComponentSet(page.components.map { type(of: $0).kind }).names
            guard found == expected else {
                throw Failure(description: "expected components \(expected.joined(separator: ", ")), found \(found.isEmpty ? "none" : found.joined(separator: ", "))")
            }
            checked.append("components \(found.joined(separator: ", "))")
        }
        if !expectation.contains.isEmpty || !expectation.absent.isEmpty {
            let rendering = try PageRenderer(width: width, colors: false).render(page)
            for text in expectation.contains where !rendering.contains(text) {
                throw Failure(description: "expected the page to show \"\(text)\", but it does not (the page is shown above)")
            }
            for text in expectation.absent where rendering.contains(text) {
                throw Failure(description: "expected the page not to show \"\(text)\", but it does")
            }
            checked += expectation.contains.map { "shows \"\($0)\"" } + expectation.absent.map { "not \"\($0)\"" }
        }
        if let expected = expectation.stored {
            let found = try page.messageCount()
            guard found == expected else {
                throw Failure(description: "expected \(expected) stored messages in the conversation with \(page.conversation), found \(found)")
            }
            checked.append("\(found) stored")
        }
        if let expected = expectation.tap {
            let lastTap = progress.lastTap
            guard lastTap == expected else {
                throw Failure(description: "expected the last tap to say \"\(expected)\", found \(lastTap.map { "\"\($0)\"" } ?? "no tap")")
            }
            checked.append("tap \"\(expected)\"")
        }
        for name in expectation.quarantined {
            let line = LineID.owner(ofMessageKey: name).map(String.init) ?? name
            let entry = host.lines.status(ofLine: line)
            let held = name == line
                ? [.quarantined, .crashed, .hung].contains(entry?.state)
                : entry?.quarantinedKeys[name] != nil
            guard held else {
                throw Failure(description: "expected \(name == line ? "line" : "message key") \(name) to be quarantined, but it is not (\(entry?.state.rawValue ?? "no such line"))")
            }
            checked.append("\(name) quarantined")
        }
        return checked
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMKit

/// Runs the steps of a ``Scenario`` against a host, one at a time, printing a transcript. It
/// runs in the chat worker; the supervisor hands it step numbers, and after a crash a new runner
/// takes up from its ``State``.
final class ScenarioRunner {
    /// A failed step: one line for a person.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What a new runner needs to take up where a crashed one was, besides the open chat.
    struct State: Codable, Equatable {
        /// The kill switch the scenario set, which host.json does not have.
        var killSwitch: KillSwitchState?
        var lastTap: String?
        /// Minutes the fixed clock has advanced.
        var minute: Int64 = 0
    }

    struct KillSwitchState: Codable, Equatable {
        var lines: [String]
        var messages: [String]
        var components: [String]
    }

    /// The first timestamp of a fixed clock, 2026-01-05 09:00 UTC; each message adds a minute.
    static let fixedClockStart: Int64 = 1_767_603_600_000

    private let host: ChatHost
    private let output: Output
    private let renderer: PageRenderer
    private let width: Int
    private let configPath: String
    private let scenario: Scenario
    private(set) var page: ChatPage?
    private(set) var url: String?
    private(set) var state = State()

    init(scenario: Scenario, host: ChatHost, output: Output, width: Int, colors: Bool, fixedClock: Bool, configPath: String) {
        self.scenario = scenario
        self.host = host
        self.output = output
        self.width = width
        self.configPath = configPath
        renderer = PageRenderer(width: width, colors: colors)
        if fixedClock {
            host.clock = { [unowned self] in
                defer { self.state.minute += 1 }
                return ScenarioRunner.fixedClockStart + self.state.minute * 60_000
            }
        }
    }

    /// Takes up after a crash: the scenario's kill switch, the last tap, the clock, and the chat.
    func restore(_ saved: State, url: String?, window: Int?) throws {
        state = saved
        if let killSwitch = saved.killSwitch {
            var config = host.config
            config.killSwitch = Self.killSwitch(killSwitch)
            host.apply(config)
        }
        if let url {
            page = try host.open(url, window: window ?? 50)
            self.url = url
        }
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
        output.out("── \(step.number). \(TerminalText.safe(text))\n")
    }

    private func perform(_ step: Scenario.Step) throws {
        switch step.action {
        case .say(let text):
            output.out("\n▶ \(TerminalText.safe(text))\n")
        case .open(let url):
            note(step, "open \(url)")
            let page = try host.open(url)
            self.page = page
            self.url = url
            output.out("   → \(page.isLegacy ? "legacy page" : "\(page.lineID ?? "") page"): \(page.decision.reason.rawValue): \(TerminalText.safe(page.decision.explanation))\n")
        case .send(let key, let payload):
            note(step, "send \(key) \(payload)")
            try currentPage().send(key: key, payload: MessagePayload(json: payload))
        case .receive(let key, let payload):
            note(step, "receive \(key) \(payload)")
            try currentPage().receive(key: key, payload: MessagePayload(json: payload))
        case .text(let text):
            note(step, "type \"\(text)\"")
            if let why = try currentPage().submitText(text) { throw Failure(description: "typing \"\(text)\" failed: \(why)") }
        case .tap(let number):
            note(step, "tap #\(number)")
            guard let result = try currentPage().tap(number) else { throw Failure(description: "there is no message #\(number) on screen") }
            state.lastTap = result.outcome
            output.out("   → \(TerminalText.safe(result.outcome))\n")
        case .quick(let number):
            let page = try currentPage()
            guard let phrase = page.quickReply(number) else {
                if let replies = page.component(QuickRepliesComponent.self), !replies.isAvailable {
                    throw Failure(description: "quick replies are unavailable on this page: it has no input bar to send them (\(page.whyHidden(.inputBar)))")
                }
                throw Failure(description: "there is no quick reply \(number) on this page")
            }
            note(step, "quick reply \(number): \"\(phrase)\"")
        case .more(let count):
            let shown = try currentPage().showOlder(count)
            note(step, "show \(shown) older messages")
        case .killSwitch(let killSwitch):
            var config = host.config
            config.killSwitch = killSwitch
            host.apply(config)
            state.killSwitch = KillSwitchState(lines: killSwitch.lines, messages: killSwitch.messages, components: killSwitch.components.names)
            try reopen()
            let parts = [("lines", killSwitch.lines), ("messages", killSwitch.messages), ("components", killSwitch.components.names)]
                .filter { !$0.1.isEmpty }.map { "\($0.0) \($0.1.joined(separator: ", "))" }
            note(step, "kill switch: " + (parts.isEmpty ? "cleared" : parts.joined(separator: "; ")))
        case .reload:
            host.apply(try HostConfig.load(from: configPath))
            state.killSwitch = nil
            try reopen()
            note(step, "reload host.json")
        case .liftQuarantine(let line):
            let lifted = try Quarantine.lift(dataFolder: host.dataFolder, line.map(Quarantine.Target.line) ?? .all)
            host.apply(host.config)
            try reopen()
            note(step, "lift quarantine of \(line.map { "line \($0)" } ?? "everything"): \(lifted.count) entr\(lifted.count == 1 ? "y" : "ies") lifted")
        case .show:
            note(step, "show")
            output.out(try renderer.render(try currentPage()))
        case .expect(let expectation):
            try check(expectation, step)
        }
    }

    /// Reopens the open chat under the configuration now in force, as a live reload does.
    private func reopen() throws {
        guard let url, let page else { return }
        self.page = try host.open(url, window: page.window)
    }

    static func killSwitch(_ state: KillSwitchState) -> HostConfig.KillSwitch {
        HostConfig.KillSwitch(lines: state.lines, messages: state.messages,
                              components: ComponentSet(state.components.compactMap(ComponentSet.init(name:))))
    }

    private func check(_ expectation: Scenario.Expectation, _ step: Scenario.Step) throws {
        let page = try currentPage()
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
                // The page goes to the transcript, so the failure itself stays one line.
                output.out(rendering)
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
            guard state.lastTap == expected else {
                throw Failure(description: "expected the last tap to say \"\(expected)\", found \(state.lastTap.map { "\"\($0)\"" } ?? "no tap")")
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
        note(step, "expect ✓ " + checked.joined(separator: "; "))
    }
}

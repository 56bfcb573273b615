import IMKit

/// Runs a ``Scenario`` against a host, printing a transcript, and stops at the first failed
/// expectation, saying which step, what was expected and what was found.
final class ScenarioRunner {
    /// A failed step: one line for a person.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The first timestamp of a fixed clock, 2026-01-05 09:00 UTC; each message adds a minute.
    static let fixedClockStart: Int64 = 1_767_603_600_000

    private let host: ChatHost
    private let output: Output
    private let width: Int
    private let colors: Bool
    private let reloadConfig: () throws -> HostConfig
    private var page: ChatPage?
    private var url: String?
    private var lastTap: String?

    init(host: ChatHost, output: Output, width: Int, colors: Bool, fixedClock: Bool,
         reloadConfig: @escaping () throws -> HostConfig) {
        self.host = host
        self.output = output
        self.width = width
        self.colors = colors
        self.reloadConfig = reloadConfig
        if fixedClock {
            var minute: Int64 = 0
            host.clock = {
                defer { minute += 1 }
                return ScenarioRunner.fixedClockStart + minute * 60_000
            }
        }
    }

    func run(_ scenario: Scenario) throws(Failure) {
        for step in scenario.steps {
            do {
                try perform(step)
            } catch let failure as Failure {
                throw Failure(description: "\(scenario.file) step \(step.number) (line \(step.position.line)): \(failure.description)")
            } catch {
                throw Failure(description: "\(scenario.file) step \(step.number) (line \(step.position.line)): \(error)")
            }
        }
        output.out("\n\(scenario.steps.count) steps passed.\n")
    }

    private func currentPage() throws -> ChatPage {
        guard let page else { throw Failure(description: "no chat is open; start with { \"open\": URL }") }
        return page
    }

    private func note(_ step: Scenario.Step, _ text: String) {
        output.out("── \(step.number). \(text)\n")
    }

    private func perform(_ step: Scenario.Step) throws {
        switch step.action {
        case .say(let text):
            output.out("\n▶ \(text)\n")
        case .open(let url):
            let page = try host.open(url)
            self.page = page
            self.url = url
            note(step, "open \(url)")
            output.out("   → \(page.isLegacy ? "legacy page" : "\(page.lineID ?? "") page"): \(page.decision.reason.rawValue): \(page.decision.explanation)\n")
        case .send(let key, let payload):
            try currentPage().send(key: key, payload: MessagePayload(json: payload))
            note(step, "send \(key) \(payload)")
        case .receive(let key, let payload):
            try currentPage().receive(key: key, payload: MessagePayload(json: payload))
            note(step, "receive \(key) \(payload)")
        case .text(let text):
            guard let bar = try currentPage().component(InputBarComponent.self) else {
                throw Failure(description: "this page has no input bar to type into")
            }
            guard bar.submit(text) else { throw Failure(description: "typing \"\(text)\" failed: \(bar.lastError ?? "")") }
            note(step, "type \"\(text)\"")
        case .tap(let number):
            guard let result = try currentPage().tap(number) else { throw Failure(description: "there is no message #\(number) on screen") }
            lastTap = result.outcome
            note(step, "tap #\(number): \(result.outcome)")
        case .quick(let number):
            guard let phrase = try currentPage().quickReply(number) else {
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
            try reopen()
            let parts = [("lines", killSwitch.lines), ("messages", killSwitch.messages), ("components", killSwitch.components.names)]
                .filter { !$0.1.isEmpty }.map { "\($0.0) \($0.1.joined(separator: ", "))" }
            note(step, "kill switch: " + (parts.isEmpty ? "cleared" : parts.joined(separator: "; ")))
        case .reload:
            host.apply(try reloadConfig())
            try reopen()
            note(step, "reload host.json")
        case .show:
            note(step, "show")
            output.out(try currentPage().render(width: width, colors: colors))
        case .expect(let expectation):
            try check(expectation, step)
        }
    }

    /// Reopens the open chat under the configuration now in force, as a live reload does.
    private func reopen() throws {
        guard let url, let page else { return }
        self.page = try host.open(url, window: page.window)
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
            let rendering = try page.render(width: width)
            for text in expectation.contains where !rendering.contains(text) {
                throw Failure(description: "expected the page to show \"\(text)\", but it does not; the page shows:\n\(rendering)")
            }
            for text in expectation.absent where rendering.contains(text) {
                throw Failure(description: "expected the page not to show \"\(text)\", but it does")
            }
            checked += expectation.contains.map { "shows \"\($0)\"" } + expectation.absent.map { "not \"\($0)\"" }
        }
        if let expected = expectation.stored {
            let found = try host.store.count(of: page.conversation)
            guard found == expected else {
                throw Failure(description: "expected \(expected) stored messages in the conversation with \(page.conversation), found \(found)")
            }
            checked.append("\(found) stored")
        }
        if let expected = expectation.tap {
            guard lastTap == expected else {
                throw Failure(description: "expected the last tap to say \"\(expected)\", found \(lastTap.map { "\"\($0)\"" } ?? "no tap")")
            }
            checked.append("tap \"\(expected)\"")
        }
        note(step, "expect ✓ " + checked.joined(separator: "; "))
    }
}

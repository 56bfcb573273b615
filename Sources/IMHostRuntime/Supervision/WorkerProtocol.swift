#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
/// What a supervisor and its chat worker say to each other, one JSON object a line: the
/// supervisor writes ``ToWorker`` on the worker's standard input, the worker answers with
/// ``FromWorker`` on its control pipe (file descriptor 3). Each side decodes only the other's
/// enum, so a message is one of a few typed cases, never a string to interpret.
///
/// The supervisor's first message is ``ToWorker/start(version:resume:)``; the worker's first is
/// ``FromWorker/hello(version:)``. Each side checks the other's version: the two are the same
/// executable, so a mismatch means it was replaced while a chat ran, and the chat stops with a
/// line that says so rather than misreading its worker.
package enum WorkerProtocol {
    /// Changes whenever a message changes.
    package static let version = 16
}

/// The supervisor's messages to its worker.
package enum ToWorker: Codable, Sendable, Equatable {
    /// First, once: the protocol version, and what to reopen after a crash (`nil` on a first start).
    case start(version: Int, resume: WorkerResume?)
    /// To a spare worker (started with `--spare`, its plugins loaded and its store open before
    /// any page wanted it), once, after ``start(version:resume:)``: the chat to open.
    case open(url: String)
    /// An act of the person's. `draft` names the ``MessageStore/Draft`` the supervisor kept of
    /// it (one that sends something: ``ChatAction/sendsSomething``), which the worker forgets
    /// once it queued or refused what it asks.
    case act(ChatAction, draft: Int64? = nil)
    /// Read host.json and the quarantine again (a file changed, SIGHUP, or `/reload`).
    case reload
    /// The store changed under the chat (another process holds the connection and stored an
    /// arrival or a receipt): show what is new now, rather than at the next look.
    case refresh
    /// Run step `number` (from 1) of the scenario.
    case step(number: Int)
}

/// The worker's messages to its supervisor.
package enum FromWorker: Codable, Sendable, Equatable, ChildMessage {
    /// First, once: the protocol version the worker speaks.
    case hello(version: Int)
    /// The chat is open, or the last command is done; what to reopen after a crash.
    case ready(WorkerResume)
    /// The last command did not do what it had to (a scenario's expectation); why, in one line.
    case failed(reason: String, resume: WorkerResume)
    /// The worker is about to exit with this code.
    case exiting(code: Int32)
    /// What the chat says (what an act came to, a notice): the supervisor's front end words it,
    /// in order with the pages.
    case replied(ChatReply)
    /// The page as it is now: the supervisor draws it.
    case page(PageView)
    /// A line for standard error from the host's own code or a line's log: passed on as it is,
    /// and never taken for what a crashed line said last (only what line code writes on the
    /// worker's standard error is).
    case say(line: String)
    /// The builds of the lines the worker serves, before its first answer and whenever they
    /// change: the supervisor watches their files, and tells `imhost plugins` what the chat runs.
    case lines(builds: [LineBuild])
    /// What to reopen changed between commands (another host of the user took the session, or
    /// this one took it back): a worker started after this keeps it so.
    case resume(WorkerResume)
    /// The pictures of the lines the worker opened, when that changed (a page for a browser
    /// only): the browser's server serves them to the page, which never runs line code.
    case pictures([ShippedPicture])

    package static var protocolVersion: Int { WorkerProtocol.version }
    package var helloVersion: Int? { if case .hello(let version) = self { version } else { nil } }
}

/// What a new worker needs to take up where a crashed one was.
package struct WorkerResume: Codable, Sendable, Equatable {
    /// The chat open now.
    package var url: String?
    /// How many messages it shows.
    package var window: Int?
    /// Whether the user wants to be online (`/online`, `/offline`): what they asked, not whether
    /// the broker answered.
    package var online: Bool?
    /// Whether another host of the user took the session and this one stays offline until
    /// `/online`: a new worker does not take it back by itself.
    package var elsewhere: Bool?
    /// The peer of the chat open now: the conversation typed lines are kept as drafts for.
    package var conversation: String?
    /// Where a scenario was.
    package var scenario: ScenarioProgress?
    /// Quarantine holds the supervisor could not write down: a new worker keeps them in memory,
    /// so a crash that cannot be recorded still does not crash again.
    package var quarantine: [Quarantine.Hold]?

    package init(url: String? = nil, window: Int? = nil, online: Bool? = nil, elsewhere: Bool? = nil, conversation: String? = nil,
                scenario: ScenarioProgress? = nil, quarantine: [Quarantine.Hold]? = nil) {
        self.url = url
        self.elsewhere = elsewhere
        self.conversation = conversation
        self.window = window
        self.online = online
        self.scenario = scenario
        self.quarantine = quarantine
    }

    /// Whether there is anything to take up.
    package var isEmpty: Bool { url == nil && scenario == nil && quarantine == nil }
}

/// How far a scenario has come, besides the open chat: what a worker started after a crash needs
/// to go on with the next step as if nothing had happened.
package struct ScenarioProgress: Codable, Sendable, Equatable {
    /// The kill switch the scenario set (host.json does not have it).
    package var killSwitch: KillSwitch?
    /// What the last tap did.
    package var lastTap: String?
    /// Minutes the fixed clock has advanced.
    package var minute: Int64 = 0

    /// A kill switch as scenario steps set it, by names.
    package struct KillSwitch: Codable, Sendable, Equatable {
        package var lines: [String]
        package var messages: [String]
        package var components: [String]

        package init(lines: [String], messages: [String], components: [String]) {
            self.lines = lines
            self.messages = messages
            self.components = components
        }
    }

    package init(killSwitch: KillSwitch? = nil, lastTap: String? = nil, minute: Int64 = 0) {
        self.killSwitch = killSwitch
        self.lastTap = lastTap
        self.minute = minute
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
/// What a supervisor and its chat worker say to each other, one JSON object a line: the
/// supervisor writes ``ToWorker`` on the worker's standard input, the worker answers with
/// ``FromWorker`` on its control pipe (file descriptor 3). Each side decodes only the other's
/// enum, so a message is one of a few typed cases, never a string to interpret.
///
/// The supervisor's first message is ``ToWorker/start(version:resume:)``; the worker's first is
/// ``FromWorker/hello(version:)``. Each side checks the other's version: the two are the same
/// executable, so a mismatch means it was replaced while a chat ran, and the chat stops with a
/// line that says so rather than misreading its worker.
public enum WorkerProtocol {
    /// Changes whenever a message changes.
    public static let version = 11
}

/// The supervisor's messages to its worker.
public enum ToWorker: Codable, Sendable, Equatable {
    /// First, once: the protocol version, and what to reopen after a crash (`nil` on a first start).
    case start(version: Int, resume: WorkerResume?)
    /// A chat command as the person typed it: a `/verb`, or text to send. `draft` names the
    /// ``MessageStore/Draft`` the supervisor kept of it (a text or `/send`), which the worker
    /// forgets once it queued or refused what it asks.
    case command(text: String, draft: Int64? = nil)
    /// Read host.json and the quarantine again (a file changed, SIGHUP, or `/reload`).
    case reload
    /// The store changed under the chat (another process holds the connection and stored an
    /// arrival or a receipt): show what is new now, rather than at the next look.
    case refresh
    /// Run step `number` (from 1) of the scenario.
    case step(number: Int)
    /// The person saw the chat's messages up to number `through` (from 1) in a visible window
    /// (a browser's page says so; a terminal's chat reads what it draws by itself): the peer's
    /// among them are read.
    case seen(through: Int)
}

/// The worker's messages to its supervisor.
public enum FromWorker: Codable, Sendable, Equatable, ChildMessage {
    /// First, once: the protocol version the worker speaks.
    case hello(version: Int)
    /// The chat is open, or the last command is done; what to reopen after a crash.
    case ready(WorkerResume)
    /// The last command did not do what it had to (a scenario's expectation); why, in one line.
    case failed(reason: String, resume: WorkerResume)
    /// The worker is about to exit with this code.
    case exiting(code: Int32)
    /// Text for the chat's standard output (what a command said, a notice): the supervisor
    /// writes it, in order with the pages.
    case out(text: String)
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

    static var protocolVersion: Int { WorkerProtocol.version }
    var helloVersion: Int? { if case .hello(let version) = self { version } else { nil } }
}

/// A picture a line ships (`LineRegistrar.registerPicture`), checked, as it crosses to whoever
/// serves it: the line's version is part of its name, so a page of an older build keeps its own.
public struct ShippedPicture: Codable, Sendable, Equatable {
    public var line: String
    public var version: String
    public var name: String
    public var photo: Photo
    public var bytes: [UInt8]

    public init(line: String, version: String, name: String, photo: Photo, bytes: [UInt8]) {
        self.line = line
        self.version = version
        self.name = name
        self.photo = photo
        self.bytes = bytes
    }

    private enum CodingKeys: String, CodingKey { case line, version, name, photo, data }

    // The bytes as base64 rather than an array of numbers: a quarter more, not four times.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        line = try container.decode(String.self, forKey: .line)
        version = try container.decode(String.self, forKey: .version)
        name = try container.decode(String.self, forKey: .name)
        photo = try container.decode(Photo.self, forKey: .photo)
        guard let data = Data(base64Encoded: try container.decode(String.self, forKey: .data)) else {
            throw DecodingError.dataCorruptedError(forKey: .data, in: container, debugDescription: "not base64")
        }
        bytes = [UInt8](data)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(line, forKey: .line)
        try container.encode(version, forKey: .version)
        try container.encode(name, forKey: .name)
        try container.encode(photo, forKey: .photo)
        try container.encode(Data(bytes).base64EncodedString(), forKey: .data)
    }
}

/// The build of one line a worker serves: the one it opened, or the one it would open.
public struct LineBuild: Codable, Sendable, Equatable {
    public var line: String
    /// The plugin's version, as its descriptor says.
    public var version: String
    /// The plugin file, absolute.
    public var file: String
    /// The identity of the file when the worker examined or opened it.
    public var identity: FileIdentity
    /// Whether the worker has opened the line's library (its code runs in the chat).
    public var opened: Bool

    public init(line: String, version: String, file: String, identity: FileIdentity, opened: Bool) {
        self.line = line
        self.version = version
        self.file = file
        self.identity = identity
        self.opened = opened
    }
}

/// What a new worker needs to take up where a crashed one was.
public struct WorkerResume: Codable, Sendable, Equatable {
    /// The chat open now.
    public var url: String?
    /// How many messages it shows.
    public var window: Int?
    /// Whether the user wants to be online (`/online`, `/offline`): what they asked, not whether
    /// the broker answered.
    public var online: Bool?
    /// Whether another host of the user took the session and this one stays offline until
    /// `/online`: a new worker does not take it back by itself.
    public var elsewhere: Bool?
    /// The peer of the chat open now: the conversation typed lines are kept as drafts for.
    public var conversation: String?
    /// Where a scenario was.
    public var scenario: ScenarioProgress?
    /// Quarantine holds the supervisor could not write down: a new worker keeps them in memory,
    /// so a crash that cannot be recorded still does not crash again.
    public var quarantine: [Quarantine.Hold]?

    public init(url: String? = nil, window: Int? = nil, online: Bool? = nil, elsewhere: Bool? = nil, conversation: String? = nil,
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
    public var isEmpty: Bool { url == nil && scenario == nil && quarantine == nil }
}

/// How far a scenario has come, besides the open chat: what a worker started after a crash needs
/// to go on with the next step as if nothing had happened.
public struct ScenarioProgress: Codable, Sendable, Equatable {
    /// The kill switch the scenario set (host.json does not have it).
    public var killSwitch: KillSwitch?
    /// What the last tap did.
    public var lastTap: String?
    /// Minutes the fixed clock has advanced.
    public var minute: Int64 = 0

    /// A kill switch as scenario steps set it, by names.
    public struct KillSwitch: Codable, Sendable, Equatable {
        public var lines: [String]
        public var messages: [String]
        public var components: [String]

        public init(lines: [String], messages: [String], components: [String]) {
            self.lines = lines
            self.messages = messages
            self.components = components
        }
    }

    public init(killSwitch: KillSwitch? = nil, lastTap: String? = nil, minute: Int64 = 0) {
        self.killSwitch = killSwitch
        self.lastTap = lastTap
        self.minute = minute
    }
}

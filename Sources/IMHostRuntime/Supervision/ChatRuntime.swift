import IMHost
import IMKit

/// A chat's work in a supervised worker, whatever front end drives it: the one layer a front end
/// talks to. It starts the worker (``Supervisor``, which records crashes, quarantines and
/// restarts), hands it what the person does, keeps what sends something as a draft first, moves
/// an open chat to a line's new build, and says what crashed. A terminal's chat (`imhost chat`)
/// and each page of `imhost web` run one with ``Settings/chat`` on; `open`, `play` and `demo`
/// run one without (no drafts, no builds to move to).
///
/// Driven by its owner's loop: wait on ``watched`` (beside the owner's own input) at most
/// ``waitMilliseconds`` ms, then ``idle()`` when nothing came, or ``act(_:)`` with what did.
/// Each returns an exit code when the work is over.
package final class ChatRuntime {
    package let supervisor: Supervisor
    private let output: Output
    private let config: HostConfig
    private let configPath: String
    /// How long one call into a line may take (limits.callSeconds), for the notices.
    private let callLimit: Double
    /// A chat's own: drafts of what sends, a line's new build moved to, and the record of the
    /// open chat `imhost plugins` reads. `nil` for `open` and `play`.
    private let chat: (drafts: DraftKeeper, builds: LineBuildWatch, record: OpenChats.Record)?
    /// Crash notices go to standard error, or into the transcript (`play`), or, when set, here
    /// (a web page tells its person apart from other diagnostics).
    package var noticesToTranscript = false
    package var crashNotices: ((String) -> Void)?

    /// `shows`, when given, draws what the worker shows (a chat's pages and replies, which it
    /// sends as values); otherwise the worker writes to this process's standard output itself.
    /// `chat` keeps drafts and moves to new builds (an open chat's record: `openChat`, default
    /// the data folder's terminal record). `restarts` false stops at the first crash.
    package init(config: HostConfig, configPath: String, dataFolder: String, user: String, workerArguments: [String], output: Output,
                 chat: Bool, openChat: OpenChats.Record? = nil, restarts: Bool = true, shows: ((Supervisor.Shown) -> Void)? = nil) {
        self.output = output
        self.config = config
        self.configPath = configPath
        callLimit = config.limits.callSeconds
        var settings = Self.settings(config: config, dataFolder: dataFolder, workerArguments: workerArguments)
        if !restarts { settings.restartBurst = 0 }
        settings.interrupted = { Interruption.signal }
        supervisor = Supervisor(settings: settings, diagnostics: { line in output.err(line + "\n") }, shows: shows)
        self.chat = chat ? (DraftKeeper(dataFolder: dataFolder, user: user, output: output), LineBuildWatch(),
                            openChat ?? OpenChats.Record(dataFolder: dataFolder)) : nil
    }

    /// Starts the worker; returns an exit code when the work is over already.
    package func start() -> Int32? {
        defer { recordOpenChat() }
        return handle(supervisor.start())
    }

    /// Starts with `spare` for the chat at `url` (that of `workerArguments`), when it still runs;
    /// else as ``start()``.
    package func start(spare: SpareWorker?, url: String) -> Int32? {
        defer { recordOpenChat() }
        return handle(supervisor.start(spare: spare, url: url))
    }

    /// A spare worker for the chats ``init`` would run with these, `workerArguments` naming a
    /// place holder for the chat (``SpareWorker``).
    package static func startSpare(config: HostConfig, dataFolder: String, workerArguments: [String]) -> SpareWorker? {
        SpareWorker.start(settings(config: config, dataFolder: dataFolder, workerArguments: SpareWorker.arguments(workerArguments)))
    }

    private static func settings(config: HostConfig, dataFolder: String, workerArguments: [String]) -> Supervisor.Settings {
        Supervisor.Settings(executable: Executable.path, arguments: ["__worker"] + workerArguments, dataFolder: dataFolder,
                            callLimit: config.limits.callSeconds)
    }

    /// The worker's descriptors: readable when it says something or ends.
    package var watched: [Int32] { supervisor.watched }

    /// How long the owner may wait before calling ``idle()``: short while a line's new file is
    /// still being written.
    package var waitMilliseconds: Int32 { chat?.builds.isSettling == true ? 50 : 500 }

    /// Why the last message was not done as it had to be (a scenario's expectation), if so.
    package private(set) var lastFailure: String?
    /// Whether the last message crashed the worker (and so rewrote the quarantine).
    package private(set) var lastCrashed = false

    /// Nothing came: passes on what the worker said meanwhile, notices a worker that died on its
    /// own, and a line's new build.
    package func idle() -> Int32? {
        defer { recordOpenChat() }
        guard let outcome = supervisor.idle() else {
            lastCrashed = false
            return moveToNewBuilds()
        }
        if let code = handle(outcome) { return code }
        return moveToNewBuilds()
    }

    /// Hands the worker what the person did: one that sends something is kept as a draft
    /// first, so a crash before it is queued loses nothing.
    package func act(_ action: ChatAction) -> Int32? {
        defer { recordOpenChat() }
        let draft = chat?.drafts.keep(action, for: supervisor.resume.conversation)
        if let code = handle(supervisor.send(.act(action, draft: draft))) { return code }
        return moveToNewBuilds()
    }

    /// Hands the worker one message (a scenario's step, a refresh); returns an exit code when
    /// the work is over.
    package func hand(_ message: ToWorker) -> Int32? {
        handle(supervisor.send(message))
    }

    /// Re-reads host.json and the quarantine (a file changed, SIGHUP, `/reload`).
    package func reload() -> Int32? { hand(.reload) }

    /// Ends the worker (its input closed, or `signal`); its exit code.
    @discardableResult
    package func finish(signal: Int32? = nil) -> Int32 { supervisor.finish(signal: signal) }

    /// Moves the work to a new worker (a line's new build); returns an exit code when the work
    /// is over. `between` runs once the old worker has ended and said all it had to, before the
    /// new one starts.
    package func replaceWorker(between: () -> Void = {}) -> Int32? {
        handle(supervisor.replaceWorker(between: between))
    }

    private func recordOpenChat() {
        chat?.record.update(supervisor.builds)
    }

    private func handle(_ outcome: Supervisor.Outcome) -> Int32? {
        lastFailure = nil
        lastCrashed = false
        switch outcome {
        case .done(let failure):
            lastFailure = failure
            return nil
        case .crashed(let crashed):
            lastCrashed = true
            for crash in crashed { say(crash.notice(callLimit: callLimit)) }
            return nil
        case .gaveUp(let crashed, let why):
            lastCrashed = true
            for crash in crashed where crash.record.signal != "not started" { say(crash.notice(callLimit: callLimit)) }
            if !why.isEmpty { output.diagnostic(why) }
            return ExitCode.failure
        case .exited(let code):
            return code
        }
    }

    private func say(_ notice: String) {
        if let crashNotices {
            crashNotices(notice)
        } else if noticesToTranscript { output.out(notice + "\n") } else { output.err(notice + "\n") }
    }

    /// A line's file changed under the chat: vets the new build, then moves the chat to a new
    /// worker on it, or stays on the build it runs, saying why in one line. Returns an exit code
    /// when the chat is over.
    private func moveToNewBuilds() -> Int32? {
        guard let builds = chat?.builds else { return nil }
        let changes = builds.look(at: supervisor.builds)
        guard !changes.isEmpty else { return nil }
        // host.json as it is now: the worker reads it too.
        let current = (try? HostConfig.load(from: configPath)) ?? config
        let verdicts = builds.vet(changes, config: current, scanner: Executable.path, quarantine: supervisor.resume.quarantine ?? [])
        var moved: [String] = []
        for verdict in verdicts {
            switch verdict {
            case .ready(let line, let from, let to):
                moved.append("line \(line) reloaded: \(from) → \(to)")
            case .refused(let line, let version, let why):
                output.diagnostic("imhost: line \(line) stays on \(version) in this chat: \(why)")
            }
        }
        guard !moved.isEmpty else { return nil }
        if let code = replaceWorker() { return code }
        // A new worker that crashed as it opened the new build was restarted, and said so.
        if !lastCrashed {
            for line in moved { output.out(TerminalText.safe(line, newlines: false) + "\n") }
        }
        return nil
    }
}

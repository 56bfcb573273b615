import IMHost
import IMKit

/// One open chat's supervision, whatever front end feeds it: its worker under a supervisor, what
/// the person types kept as drafts, a line's new build moved to, and every crash said. A terminal
/// chat (`imhost chat`) and each page of `imhost web` run one; they differ only in where input
/// comes from and where what the worker shows goes.
///
/// Driven by its owner's loop: wait on ``watched`` (beside the owner's input) at most
/// ``waitMilliseconds`` ms, then ``idle()`` when nothing was typed, or ``hand(_:)`` with what was.
/// Each returns an exit code when the chat is over.
final class ChatSupervision {
    let supervised: SupervisedRun
    private let output: Output
    private let config: HostConfig
    private let configPath: String
    private let builds = LineBuildWatch()
    private let drafts: DraftKeeper
    private let openChat: OpenChats.Record

    /// Starts nothing yet: ``start()`` does. `output` gets the chat's diagnostics and crash
    /// notices, `shows` what the worker shows (its pages and lines).
    init(config: HostConfig, configPath: String, user: String, workerArguments: [String], output: Output,
         openChat: OpenChats.Record? = nil, shows: @escaping (Supervisor.Shown) -> Void) {
        self.output = output
        self.config = config
        self.configPath = configPath
        supervised = SupervisedRun(config: config, dataFolder: config.dataFolder, workerArguments: workerArguments, output: output, shows: shows)
        drafts = DraftKeeper(dataFolder: config.dataFolder, user: user, output: output)
        self.openChat = openChat ?? OpenChats.Record(dataFolder: config.dataFolder)
    }

    /// Starts the worker, which opens the chat; an exit code when the chat is over already.
    func start() -> Int32? {
        defer { openChat.update(supervised.supervisor.builds) }
        return supervised.start()
    }

    /// The worker's descriptors: readable when it says something or ends.
    var watched: [Int32] { supervised.supervisor.watched }

    /// How long the owner may wait before calling ``idle()``: short while a line's new file is
    /// still being written.
    var waitMilliseconds: Int32 { builds.isSettling ? 50 : 500 }

    /// Whether the last message crashed the worker (and so rewrote the quarantine).
    var lastCrashed: Bool { supervised.lastCrashed }

    /// Nothing was typed: passes on what the worker said meanwhile, notices a worker that died
    /// on its own, and a line's new build.
    func idle() -> Int32? {
        defer { openChat.update(supervised.supervisor.builds) }
        if let code = supervised.idle() { return code }
        return moveToNewBuilds()
    }

    /// Re-reads host.json and the quarantine (a file changed, SIGHUP, `/reload`).
    func reload() -> Int32? { supervised.hand(.reload) }

    /// Hands a typed line to the worker: a text or `/send` is kept as a draft first, so a crash
    /// before it is queued loses nothing.
    func hand(_ command: String) -> Int32? {
        defer { openChat.update(supervised.supervisor.builds) }
        let draft = drafts.keep(command, for: supervised.supervisor.resume.conversation)
        if let code = supervised.hand(.command(text: command, draft: draft)) { return code }
        return moveToNewBuilds()
    }

    /// Ends the worker (its input closed, or `signal`); its exit code.
    @discardableResult
    func finish(signal: Int32? = nil) -> Int32 { supervised.supervisor.finish(signal: signal) }

    /// A line's file changed under the chat: vets the new build, then moves the chat to a new
    /// worker on it, or stays on the build it runs, saying why in one line. Returns an exit code
    /// when the chat is over.
    private func moveToNewBuilds() -> Int32? {
        let changes = builds.look(at: supervised.supervisor.builds)
        guard !changes.isEmpty else { return nil }
        // host.json as it is now: the worker reads it too.
        let current = (try? HostConfig.load(from: configPath)) ?? config
        let verdicts = builds.vet(changes, config: current, scanner: CommandLineTool.executable,
                                  quarantine: supervised.supervisor.resume.quarantine ?? [])
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
        if let code = supervised.replaceWorker() { return code }
        // A new worker that crashed as it opened the new build was restarted, and said so.
        if !supervised.lastCrashed {
            for line in moved { output.out(TerminalText.safe(line, newlines: false) + "\n") }
        }
        return nil
    }
}

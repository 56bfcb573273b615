import IMHost
import IMKit

/// A command whose work runs in a supervised worker: starts it, hands it messages, and says
/// what crashed. Shared by `chat`, `open`, `play` and `demo`.
final class SupervisedRun {
    let supervisor: Supervisor
    private let output: Output
    /// Crash notices go to standard error, or into the transcript (`play`).
    var noticesToTranscript = false
    /// How long one call into a line may take (limits.callSeconds), for the notices.
    private let callLimit: Double

    /// `shows`, when given, draws what the worker shows (a chat's pages and lines, which it
    /// sends as values); otherwise the worker writes to this process's standard output itself.
    init(config: HostConfig, dataFolder: String, workerArguments: [String], output: Output, restarts: Bool = true,
         shows: ((Supervisor.Shown) -> Void)? = nil) {
        self.output = output
        callLimit = config.limits.callSeconds
        var settings = Supervisor.Settings(executable: CommandLineTool.executable, arguments: ["__worker"] + workerArguments,
                                           dataFolder: dataFolder, callLimit: config.limits.callSeconds)
        if !restarts { settings.restartBurst = 0 }
        settings.interrupted = { Interruption.signal }
        supervisor = Supervisor(settings: settings, diagnostics: { line in output.err(line + "\n") }, shows: shows)
    }

    /// Starts the worker; returns an exit code when the command is over already.
    func start() -> Int32? {
        handle(supervisor.start())
    }

    /// Hands one message over; returns an exit code when the command is over.
    func hand(_ message: ToWorker) -> Int32? {
        handle(supervisor.send(message))
    }

    /// Moves the chat to a new worker (a line's new build); returns an exit code when the
    /// command is over.
    func replaceWorker() -> Int32? {
        handle(supervisor.replaceWorker())
    }

    /// Between commands: notices a worker that died on its own; returns an exit code when the
    /// command is over. ``lastCrashed`` then says whether it died just now.
    func idle() -> Int32? {
        guard let outcome = supervisor.idle() else {
            lastCrashed = false
            return nil
        }
        return handle(outcome)
    }

    /// Why the last message was not done as it had to be (a scenario's expectation), if so.
    private(set) var lastFailure: String?
    /// Whether the last message crashed the worker.
    private(set) var lastCrashed = false

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
            return CommandLineTool.ExitCode.failure
        case .exited(let code):
            return code
        }
    }

    private func say(_ notice: String) {
        if noticesToTranscript { output.out(notice + "\n") } else { output.err(notice + "\n") }
    }
}

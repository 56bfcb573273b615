import IMHost
import IMKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Runs a chat's work in a worker child and survives it, as VS Code runs extensions in an
/// extension host it restarts.
///
/// The supervisor loads no plugin. It owns the terminal and standard input, and hands the worker
/// one ``ToWorker`` at a time; the worker answers each with a ``FromWorker`` that carries what to
/// reopen after a crash (``WorkerResume``). The supervisor reserves the worker's breadcrumb file
/// and reads it:
///
/// - when the worker dies, the breadcrumb says whose code it was in; the crash is recorded in
///   `<data>/crashes.log`, the line or key is quarantined, and a new worker reopens the same chat
///   with its history. The command that crashed is not replayed.
/// - when the worker stays in one call of line code longer than `limits.callSeconds`
///   (``Watchdog``), it is killed and the call recorded as a hang.
/// - crashes past the ``RestartPolicy`` (three restarts within a minute) stop the chat; a crash
///   of line code that quarantined something new does not count (it cannot happen again).
///
/// A chat moves to a new build of a line by ``replaceWorker()``: a new worker reopens the chat as
/// after a crash, but nothing is recorded or counted, and nothing is replayed.
package final class Supervisor {
    /// How to start and watch workers.
    package struct Settings: Sendable {
        /// The executable to start as the worker (this one).
        package var executable: String
        /// The worker's arguments; the supervisor adds `--breadcrumb-fd 4 --parent PID` (its
        /// breadcrumb is handed over open, as descriptor 4).
        package var arguments: [String]
        /// Where crash records, the quarantine and breadcrumbs go.
        package var dataFolder: String
        /// Seconds one call of line code may take.
        package var callLimit: Double
        /// Restarts allowed within ``restartWindow`` milliseconds; the next crash stops.
        package var restartBurst = 3
        package var restartWindow: Int64 = 60_000
        /// The signal (SIGINT or SIGTERM) that asks the supervisor to stop, if one came.
        package var interrupted: @Sendable () -> Int32? = { nil }

        package init(executable: String, arguments: [String], dataFolder: String, callLimit: Double) {
            self.executable = executable
            self.arguments = arguments
            self.dataFolder = dataFolder
            self.callLimit = callLimit
        }
    }

    /// A crash the supervisor recovered from (or gave up after).
    package struct Crash: Sendable {
        /// The record, as written to `<data>/crashes.log` (with what it cost).
        package var record: CrashRecord
        /// Why the record could not be written, when it could not: the quarantine then holds
        /// for this chat only.
        package var unrecorded: String?
        /// Why it is not in `crashes.log` though its quarantine was written, when it is not.
        package var notLogged: String? = nil
    }

    /// What handing over a command (or starting) came to.
    package enum Outcome: Sendable {
        /// The worker did it; a failure says why it did not do what it had to (an expectation).
        case done(failure: String?)
        /// The worker crashed or hung (more than once, when the new worker crashed too); each was
        /// recorded, and a new worker reopened the chat.
        case crashed([Crash])
        /// The worker crashed too often, or could not be started again; nothing runs any more.
        case gaveUp([Crash], String)
        /// The worker ended on its own with this code (or the supervisor was interrupted).
        case exited(Int32)
    }

    private let settings: Settings
    /// Called with each line the worker writes on standard error, made safe for a terminal.
    private let diagnostics: (String) -> Void
    /// Called as soon as a crash's quarantine is written, before anything else happens: whoever
    /// watches the quarantine file for others' changes takes this one as seen then, and so
    /// still notices a lift another process writes a moment later.
    package var quarantineWritten: (() -> Void)?
    /// Called with what the worker writes on standard output, when the supervisor passes it on
    /// (a terminal it redraws its input line on); `nil`: the worker writes to ours.
    /// Draws what the worker shows: its text and its pages, in the order it sent them.
    private let shows: ((Shown) -> Void)?
    private var watch: ChildWatch<FromWorker>?
    private var reservation: Breadcrumb.Reservation?
    private var restarts: RestartPolicy
    /// What to reopen after a crash: what the worker said last.
    package private(set) var resume = WorkerResume()
    /// Milliseconds from the last crash to the reopened chat.
    package private(set) var lastRecovery: Double?
    /// The builds of the lines the worker serves, as it said last.
    package private(set) var builds: [LineBuild] = []
    /// Whether it was said that the breadcrumb is kept in memory only.
    private var saidInMemory = false
    /// Watches line code the worker runs between commands (drawing a message that arrived).
    private var idleWatchdog: Watchdog
    /// What crashes of line code took out of service in this chat.
    private var holdsTaken: Set<String> = []

    /// What a worker shows, to be drawn by the supervisor's front end.
    package enum Shown: Sendable {
        /// What the chat says, to be worded by the front end.
        case reply(ChatReply)
        case page(PageView)
        /// Pictures the page's lines ship, for a front end that serves them.
        case pictures([ShippedPicture])
    }

    package init(settings: Settings, diagnostics: @escaping (String) -> Void, shows: ((Shown) -> Void)? = nil) {
        self.settings = settings
        self.diagnostics = diagnostics
        self.shows = shows
        restarts = RestartPolicy(burst: settings.restartBurst, window: settings.restartWindow)
        idleWatchdog = Watchdog(seconds: settings.callLimit)
        // A worker that died leaves a closed pipe behind: writing to it must fail, not kill us.
        signal(SIGPIPE, SIG_IGN)
    }

    deinit {
        watch?.kill()
        reservation?.remove()
    }

    /// What to wait on, beside input, while no command runs: the worker's pipes become readable
    /// when it writes or ends. Then call ``idle()``.
    package var watched: [Int32] { watch?.waitable ?? [] }

    /// Starts the worker and waits until it is ready (its chat open and shown).
    package func start() -> Outcome { launch() }

    /// Starts with `spare`, a worker started before its chat was known, when it still runs: told
    /// the chat at `url` (that of this supervisor's arguments), it shows it without a process
    /// started now. One that ended meanwhile is let go, and a worker started as ``start()`` does.
    package func start(spare: SpareWorker?, url: String) -> Outcome {
        guard let spare, spare.isRunning else { return launch() }
        reservation?.remove()
        reservation = spare.reservation
        builds = []
        watch = ChildWatch(spare.child) { [diagnostics] line in diagnostics(TerminalText.safe(line)) }
        return send(.open(url: url))
    }

    /// Starts a worker process with `settings`, told who it dies with and handed its breadcrumb
    /// (`breadcrumb`, as descriptor 4); its input, errors and control pipe are the caller's.
    static func spawn(_ settings: Settings, breadcrumb: Int32) throws(FileSystem.Failure) -> ChildProcess {
        try ChildProcess(executable: settings.executable, arguments: settings.arguments + ["--parent", "\(getpid())", "--breadcrumb-fd", "4"],
                         stdin: .pipe, stdout: .inherit, stderr: .pipe, control: true, handing: [breadcrumb])
    }

    /// Hands one message to the worker and waits for it to be done. What the worker's line code
    /// wrote before does not count as what it said if it crashes now.
    package func send(_ message: ToWorker) -> Outcome {
        idleWatchdog = Watchdog(seconds: settings.callLimit)
        // A worker that cannot take it has ended: waiting says so.
        if let watch, let line = try? JSONLines.encode(message) {
            _ = watch.takeLastWords()
            _ = watch.child.send(String(decoding: line, as: UTF8.self))
        }
        return waitForWorker()
    }

    /// While no command runs: passes on what the worker wrote, and notices a worker that died
    /// on its own (a line's background thread, or drawing a message that arrived), recording it
    /// and starting a new one, and one stuck in line code longer than the limit. Returns what
    /// happened when the worker died, hung or said it is exiting, else `nil`.
    package func idle() -> Outcome? {
        guard let watch else { return nil }
        while true {
            switch watch.next(waiting: 0) {
            case .quiet:
                if let snapshot = reservation?.read(),
                   idleWatchdog.isHung(depth: snapshot.depth, sequence: snapshot.sequence, now: Clock.monotonic(),
                                       running: snapshot.depth == 0 || !watch.child.isStopped) {
                    watch.kill()
                    return died(ending: "hung", snapshot: snapshot)
                }
                return nil
            case .ended(let ended): return died(ending: ended.description)
            case .mismatch(let version): return mismatch(version)
            case .message(.exiting(let code)): return .exited(reap(watch, code: code))
            case .message(.say(let line)): diagnostics(TerminalText.safe(line))
            case .message(.lines(let said)): builds = said
            case .message(.resume(let state)): remember(state)
            case .message(.replied(let reply)): shows?(.reply(reply))
            case .message(.page(let page)): shows?(.page(page))
            case .message(.pictures(let pictures)): shows?(.pictures(pictures))
            case .message: continue
            }
        }
    }

    /// Moves the chat to a new worker, which reopens it where this one is (a line's new build is
    /// installed): the old one is ended as ``finish(signal:)`` ends it. Not a crash: nothing is
    /// recorded or counted toward the restart limit, and no command is replayed.
    package func replaceWorker(between: () -> Void = {}) -> Outcome {
        finish()
        // What the old worker said is all passed on by now: what comes next is the new one's.
        between()
        return launch()
    }

    /// Ends the worker: closes its input (it finalizes and exits), or sends it `signal`; kills
    /// it if it has not ended within two seconds. A worker that dies in line code meanwhile (a
    /// service's `finalize`, say) is recorded, not restarted. Returns its exit code.
    @discardableResult
    package func finish(signal: Int32? = nil) -> Int32 {
        guard let watch else { return 0 }
        if let signal { watch.child.signal(signal) } else { watch.child.closeInput() }
        let deadline = Clock.monotonic() + 2_000_000_000
        var code: Int32?
        var ended: ChildProcess.Termination?
        while ended == nil, Clock.monotonic() < deadline {
            switch watch.next(waiting: 50) {
            case .ended(let how): ended = how
            case .message(.exiting(let said)): code = said
            case .message(.say(let line)): diagnostics(TerminalText.safe(line))
            case .message(.replied(let reply)): shows?(.reply(reply))
            case .message(.page(let page)): shows?(.page(page))
            case .message(.pictures(let pictures)): shows?(.pictures(pictures))
            case .quiet, .message, .mismatch: continue
            }
        }
        let snapshot = reservation?.read()
        // Not ended within the grace: killed, not recorded (it was asked to stop, and may only
        // have been slow).
        let termination = ended ?? watch.kill()
        if ended == nil {
            let busy = snapshot.flatMap { $0.depth > 0 ? $0.frame : nil }.map { frame in
                " (line '\(frame.line ?? "?")' was \(frame.site.phrase(key: frame.key, message: frame.message)))"
            } ?? ""
            diagnostics(TerminalText.safe("imhost: the chat worker did not end within 2 s\(busy); it was killed, so its lines' services were not finalized"))
        }
        if ended != nil, case .signaled(let number) = termination, number != SIGKILL, signal == nil || number != signal,
           let frame = snapshot?.frame, (snapshot?.depth ?? 0) > 0 {
            _ = record(CrashRecord(frame, ending: termination.description, detail: watch.takeLastWords().map { TerminalText.safe($0) }))
        }
        self.watch = nil
        reservation?.remove()
        reservation = nil
        if let code { return code }
        if case .exited(let status) = termination { return status }
        return signal.map { 128 + $0 } ?? 1
    }

    // MARK: Running workers

    private func launch() -> Outcome {
        reservation?.remove()
        reservation = nil
        builds = []
        let breadcrumb: Int32
        do throws(Breadcrumb.Reservation.Unavailable) {
            let reserved = try Breadcrumb.Reservation(dataFolder: settings.dataFolder)
            reservation = reserved
            breadcrumb = reserved.fd
            if let why = reserved.inMemoryBecause, !saidInMemory {
                saidInMemory = true
                diagnostics(TerminalText.safe("imhost: the chat's breadcrumb is kept in memory: \(why). A line that crashes is still named; if imhost itself is killed meanwhile, the next start cannot tell"))
            }
        } catch {
            let record = CrashRecord(nil, ending: "not started", detail: "\(error)")
            return .gaveUp([Crash(record: record, unrecorded: nil)], "imhost: \(error)")
        }
        do {
            let child = try Self.spawn(settings, breadcrumb: breadcrumb)
            watch = ChildWatch(child) { [diagnostics] line in diagnostics(TerminalText.safe(line)) }
        } catch {
            let record = CrashRecord(nil, ending: "not started", detail: "\(error.call): \(error)")
            return .gaveUp([Crash(record: record, unrecorded: nil)],
                           "imhost: cannot start the chat worker (\(error.call) \(settings.executable): \(error))")
        }
        return send(.start(version: WorkerProtocol.version, resume: resume.isEmpty ? nil : resume))
    }

    /// Seconds a new worker has to say hello: one that has not by then (stuck before it could
    /// run any code of ours) is killed, and counts as a crash.
    static let helloSeconds: UInt64 = 15

    /// Waits for the worker's next answer, its death, a hang in line code, or an interruption.
    private func waitForWorker() -> Outcome {
        // A death is handled once the wait holds the dead worker no more: handling it starts a
        // new one and waits for that, and the old one's pipes must be closed by then.
        switch waitForAnswer() {
        case .outcome(let outcome): return outcome
        case .died(let ending, let snapshot): return died(ending: ending, snapshot: snapshot)
        }
    }

    private enum Waited {
        case outcome(Outcome)
        case died(String, Breadcrumb.Snapshot?)
    }

    private func waitForAnswer() -> Waited {
        guard let watch else { return .outcome(.exited(1)) }
        var watchdog = Watchdog(seconds: settings.callLimit)
        while true {
            if let signal = settings.interrupted() {
                return .outcome(.exited(finish(signal: signal)))
            }
            switch watch.next(waiting: 50) {
            case .mismatch(let version):
                return .outcome(mismatch(version))
            case .message(let message):
                switch message {
                case .hello:
                    continue
                case .say(let line):
                    diagnostics(TerminalText.safe(line))
                case .lines(let said):
                    builds = said
                case .resume(let state):
                    remember(state)
                case .replied(let reply):
                    shows?(.reply(reply))
                case .page(let page):
                    shows?(.page(page))
                case .pictures(let pictures):
                    shows?(.pictures(pictures))
                case .ready(let state):
                    remember(state)
                    return .outcome(.done(failure: nil))
                case .failed(let reason, let state):
                    remember(state)
                    return .outcome(.done(failure: reason))
                case .exiting(let code):
                    return .outcome(.exited(reap(watch, code: code)))
                }
            case .ended(let ended):
                return .died(ended.description, nil)
            case .quiet:
                if !watch.heard, Clock.monotonic() - watch.started > Self.helloSeconds * 1_000_000_000 {
                    watch.kill()
                    return .died("did not start: no hello within \(Self.helloSeconds) s", nil)
                }
                // The watchdog: the same frame of line code, unmoved, for longer than the limit.
                if let snapshot = reservation?.read(),
                   watchdog.isHung(depth: snapshot.depth, sequence: snapshot.sequence, now: Clock.monotonic(),
                                   running: snapshot.depth == 0 || !watch.child.isStopped) {
                    watch.kill()
                    return .died("hung", snapshot)
                }
            }
        }
    }

    /// A worker that speaks another protocol: the executable was replaced while the chat ran.
    private func mismatch(_ version: Int) -> Outcome {
        watch?.kill()
        watch = nil
        return .gaveUp([], "imhost: the chat worker speaks protocol \(version), this imhost \(WorkerProtocol.version); start the chat again")
    }

    /// Keeps what the worker said to reopen; quarantine held in memory stays the supervisor's.
    private func remember(_ state: WorkerResume) {
        let held = resume.quarantine
        resume = state
        resume.quarantine = held
    }

    /// Waits for a worker that said it is exiting, killing it if it does not within two seconds.
    private func reap(_ watch: ChildWatch<FromWorker>, code: Int32) -> Int32 {
        if watch.child.wait(milliseconds: 2000) == nil { watch.kill() } else { watch.drainErrors() }
        self.watch = nil
        return code
    }

    /// Writes a crash down and applies its quarantine; when the quarantine cannot be written,
    /// keeps it in memory for the workers this supervisor starts. Returns the crash as kept.
    private func record(_ crash: CrashRecord) -> Crash {
        switch Quarantine.record(crash, dataFolder: settings.dataFolder) {
        case .success(let written):
            quarantineWritten?()
            return Crash(record: written.crash, unrecorded: nil, notLogged: written.notLogged)
        case .failure(let error):
            let remembered = resume.quarantine ?? []
            var kept = crash
            if let scope = Quarantine.scope(of: crash, history: remembered.map(\.crash)) {
                let hold = Quarantine.Hold(crash, scope: scope)
                kept = hold.crash
                resume.quarantine = remembered + [hold]
            }
            return Crash(record: kept, unrecorded: "\(error.call): \(error)")
        }
    }

    /// Records the worker's death, quarantines what it cost, and starts a new worker that
    /// reopens the chat, unless it has crashed too often.
    private func died(ending: String, snapshot known: Breadcrumb.Snapshot? = nil) -> Outcome {
        let began = Clock.monotonic()
        let snapshot = known ?? reservation?.read()
        let frame = (snapshot?.depth ?? 0) > 0 ? snapshot?.frame : nil
        let detail = watch?.takeLastWords().map { TerminalText.safe($0) }
        let crash = record(CrashRecord(frame, ending: ending, detail: detail))
        watch = nil
        if settings.restartBurst == 0 { return .gaveUp([crash], "") }
        // A crash of line code that took something new out of service is the line's: the next
        // worker cannot run into it again, so it does not count toward the limit (thirty messages
        // that crash a builder must not end the chat). A crash that cost nothing new does.
        let hold = crash.record.quarantined.map { [$0, crash.record.line, crash.record.key, crash.record.sender, crash.record.globalID] }
        let linesOwn = hold.map { holdsTaken.insert($0.map { $0 ?? "" }.joined(separator: "\u{0}")).inserted } ?? false
        guard linesOwn || restarts.allowsRestart(at: Clock.now()) else {
            let log = "\(settings.dataFolder)/crashes.log"
            let kept = crash.unrecorded == nil && crash.notLogged == nil ? "The crashes are in \(log)" : "The last could not be written to \(log)"
            return .gaveUp([crash], "imhost: the chat worker crashed \(restarts.recent + 1) times within \(settings.restartWindow / 1000) s; stopping. \(kept)")
        }
        switch launch() {
        case .done:
            lastRecovery = Double(Clock.monotonic() - began) / 1e6
            return .crashed([crash])
        case .crashed(let again):
            return .crashed([crash] + again)
        case .gaveUp(let again, let why):
            return .gaveUp([crash] + again, why)
        case .exited(let code):
            return code == 0 ? .exited(code) : .gaveUp([crash], "imhost: the chat worker could not reopen the chat (exit \(code))")
        }
    }
}

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
/// one command at a time over a pipe; the worker answers each on a pipe of its own with an
/// ``Ack`` that carries what to reopen after a crash (the chat's URL, window and connection).
/// The supervisor reserves the worker's breadcrumb file and reads it:
///
/// - when the worker dies, the breadcrumb says whose code it was in; the crash is recorded in
///   `<data>/crashes.log`, the line or key is quarantined, and a new worker reopens the same chat
///   with its history. The command that crashed is not replayed.
/// - when the worker stays in one call of line code longer than `limits.callSeconds`, it is
///   killed and the call recorded as a hang.
/// - three restarts within a minute are enough: the next crash in that minute stops the chat.
///
/// A worker is watched for its exit itself, not only for its pipes closing: a line that closes
/// the host's pipes, or hands them to a process of its own, cannot make the supervisor wait.
public final class Supervisor {
    /// How to start and watch workers.
    public struct Settings: Sendable {
        /// The executable to start as the worker (this one).
        public var executable: String
        /// The worker's arguments; the supervisor adds `--breadcrumb PATH` and, after a crash,
        /// `--resume STATE`.
        public var arguments: [String]
        /// Where crash records, the quarantine and breadcrumbs go.
        public var dataFolder: String
        /// Seconds one call of line code may take.
        public var callLimit: Double
        /// Restarts allowed within ``restartWindow`` milliseconds; the next crash stops.
        public var restartBurst = 3
        public var restartWindow: Int64 = 60_000
        /// The signal (SIGINT or SIGTERM) that asks the supervisor to stop, if one came.
        public var interrupted: @Sendable () -> Int32? = { nil }

        public init(executable: String, arguments: [String], dataFolder: String, callLimit: Double) {
            self.executable = executable
            self.arguments = arguments
            self.dataFolder = dataFolder
            self.callLimit = callLimit
        }
    }

    /// What the worker says after starting and after each command: one JSON object a line.
    public struct Ack: Codable, Sendable, Equatable {
        /// The chat open now, to reopen after a crash.
        public var url: String?
        /// How many messages it shows.
        public var window: Int?
        /// Whether the user is online.
        public var online: Bool?
        /// State the worker wants back after a crash (a scenario's kill switch, say), as it wrote it.
        public var state: String?
        /// The command failed (a failed expectation); the text says why.
        public var failure: String?
        /// The worker is about to exit with this code.
        public var exit: Int32?
        /// Quarantine entries the supervisor could not write down: a new worker keeps them in
        /// memory, so a crash that cannot be recorded still does not crash again.
        public var quarantine: [Quarantine.Hold]?

        public init(url: String? = nil, window: Int? = nil, online: Bool? = nil, state: String? = nil,
                    failure: String? = nil, exit: Int32? = nil) {
            self.url = url
            self.window = window
            self.online = online
            self.state = state
            self.failure = failure
            self.exit = exit
        }
    }

    /// A crash the supervisor recovered from (or gave up after).
    public struct Crash: Sendable {
        /// The record, as written to `<data>/crashes.log` (with what it cost).
        public var record: CrashRecord
        /// Why the record could not be written, when it could not: the quarantine then holds
        /// for this chat only.
        public var unrecorded: String?
    }

    /// What handing over a command (or starting) came to.
    public enum Outcome: Sendable {
        /// The worker did it.
        case done(Ack)
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
    private var worker: ChildProcess?
    private var reservation: Breadcrumb.Reservation?
    private var control = LineBuffer()
    private var errors = LineBuffer()
    private var lastWords = LastWords()
    private var restarts: [Int64] = []
    /// The state to reopen after a crash: what the acks said last.
    public private(set) var resume = Ack()
    /// Milliseconds from the last crash to the reopened chat.
    public private(set) var lastRecovery: Double?

    public init(settings: Settings, diagnostics: @escaping (String) -> Void) {
        self.settings = settings
        self.diagnostics = diagnostics
        // A worker that died leaves a closed pipe behind: writing to it must fail, not kill us.
        signal(SIGPIPE, SIG_IGN)
    }

    deinit {
        worker?.signal(SIGKILL)
        worker?.wait()
        reservation?.remove()
    }

    /// What to wait on, beside input, while no command runs: the worker's pipes become readable
    /// when it writes or ends. Then call ``idle()``.
    public var watched: [Int32] {
        guard let worker else { return [] }
        return worker.waitable([control.ended ? -1 : worker.control, errors.ended ? -1 : worker.errors])
    }

    /// Starts the worker and waits until it is ready (its chat open and shown).
    public func start() -> Outcome {
        launch()
    }

    /// Hands one command to the worker and waits for it to be done.
    public func send(_ command: String) -> Outcome {
        // A worker that cannot take it has ended: waiting says so.
        _ = worker?.send(command)
        return waitForWorker()
    }

    /// While no command runs: passes on what the worker wrote, and notices a worker that died
    /// on its own (a line's background thread, say), recording it and starting a new one.
    /// Returns what happened when the worker died, else `nil`.
    public func idle() -> Outcome? {
        guard let worker else { return nil }
        let ready = waitReadable(watched, milliseconds: 0)
        drainErrors(ready, from: worker.errors)
        if ready.contains(worker.control) { _ = control.fill(from: worker.control) }
        guard let ended = worker.poll() ?? (control.ended ? stopLostWorker(worker) : nil) else { return nil }
        drainAll(from: worker.errors)
        return died(ending: ended.description)
    }

    /// Ends the worker: closes its input (it finalizes and exits), or sends it `signal`; kills
    /// it if it has not ended within two seconds. A worker that dies in line code meanwhile (a
    /// service's `finalize`, say) is recorded, not restarted. Returns its exit code.
    @discardableResult
    public func finish(signal: Int32? = nil) -> Int32 {
        guard let worker else { return 0 }
        if let signal { worker.signal(signal) } else { worker.closeInput() }
        let deadline = Clock.monotonic() + 2_000_000_000
        var code: Int32?
        while worker.poll() == nil, Clock.monotonic() < deadline {
            let ready = waitReadable(watched, milliseconds: 50)
            drainErrors(ready, from: worker.errors)
            if ready.contains(worker.control) { _ = control.fill(from: worker.control) }
            while let line = control.nextLine() {
                if let ack = try? JSONDecoder().decode(Ack.self, from: Data(line.utf8)), let exit = ack.exit { code = exit }
            }
        }
        let snapshot = reservation?.read()
        var ending: String?
        // Not ended within the grace: killed, not recorded (it was asked to stop, and may only
        // have been slow).
        if worker.poll() == nil { worker.signal(SIGKILL) }
        let ended = worker.wait()
        drainAll(from: worker.errors)
        if case .signaled(let number) = ended, number != SIGKILL, signal == nil || number != signal {
            ending = ended.description
        }
        if let ending, let frame = snapshot?.frame, (snapshot?.depth ?? 0) > 0 {
            _ = record(CrashRecord(frame, ending: ending, detail: lastWords.detail.map { TerminalText.safe($0) }))
        }
        self.worker = nil
        reservation?.remove()
        reservation = nil
        if let code { return code }
        if case .exited(let status) = ended { return status }
        return signal.map { 128 + $0 } ?? 1
    }

    // MARK: Running workers

    private func launch() -> Outcome {
        do {
            reservation?.remove()
            let reserved = try Breadcrumb.Reservation(dataFolder: settings.dataFolder)
            reservation = reserved
            var arguments = settings.arguments + ["--breadcrumb", reserved.path, "--parent", "\(getpid())"]
            if resume.url != nil || resume.state != nil || resume.quarantine != nil, let data = try? JSONEncoder().encode(resume) {
                arguments += ["--resume", String(decoding: data, as: UTF8.self)]
            }
            control = LineBuffer()
            errors = LineBuffer()
            worker = try ChildProcess(executable: settings.executable, arguments: arguments, stdin: .pipe, stdout: .inherit,
                                      stderr: .pipe, control: true)
        } catch {
            let record = CrashRecord(nil, ending: "not started", detail: "\(error.call): \(error)")
            return .gaveUp([Crash(record: record, unrecorded: nil)],
                           "imhost: cannot start the chat worker (\(error.call) in \(settings.dataFolder): \(error))")
        }
        return waitForWorker()
    }

    /// Waits for the worker's next ack, its death, a hang in line code, or an interruption.
    private func waitForWorker() -> Outcome {
        guard let worker else { return .exited(1) }
        var still: (sequence: UInt32, since: UInt64)?
        let limit = UInt64(settings.callLimit * 1e9)
        while true {
            while let line = control.nextLine() {
                guard let ack = try? JSONDecoder().decode(Ack.self, from: Data(line.utf8)) else { continue }
                if let exit = ack.exit {
                    wait(for: worker)
                    drainAll(from: worker.errors)
                    self.worker = nil
                    return .exited(exit)
                }
                if ack.url != nil {
                    resume.url = ack.url
                    resume.window = ack.window
                }
                if ack.online != nil { resume.online = ack.online }
                if ack.state != nil { resume.state = ack.state }
                return .done(ack)
            }
            if let signal = settings.interrupted() {
                return .exited(finish(signal: signal))
            }
            // Its exit, not only its pipes: a line may close them, or hand them to a process of its own.
            if let ended = worker.poll() ?? (control.ended ? stopLostWorker(worker) : nil) {
                // It may have answered just before it ended: read the answers first.
                while !control.ended, !waitReadable([worker.control], milliseconds: 0).isEmpty, control.fill(from: worker.control) {}
                if control.hasLine { continue }
                drainAll(from: worker.errors)
                return died(ending: ended.description)
            }
            let ready = waitReadable(watched, milliseconds: 50)
            drainErrors(ready, from: worker.errors)
            if ready.contains(worker.control) {
                _ = control.fill(from: worker.control)
                continue
            }
            // The watchdog: the same frame of line code, unmoved, for longer than the limit.
            if let snapshot = reservation?.read(), snapshot.depth > 0 {
                let now = Clock.monotonic()
                if let seen = still, seen.sequence == snapshot.sequence {
                    if now - seen.since >= limit {
                        worker.signal(SIGKILL)
                        worker.wait()
                        drainAll(from: worker.errors)
                        return died(ending: "hung", snapshot: snapshot)
                    }
                } else {
                    still = (snapshot.sequence, now)
                }
            } else {
                still = nil
            }
        }
    }

    /// A worker whose answer pipe closed but that has not exited: it lost its way back to us
    /// (line code closed the pipe). It gets a second to end, then it is killed.
    private func stopLostWorker(_ worker: ChildProcess) -> ChildProcess.Termination? {
        let deadline = Clock.monotonic() + 1_000_000_000
        while Clock.monotonic() < deadline {
            if let ended = worker.poll() { return ended }
            _ = waitReadable([], milliseconds: 20)
        }
        worker.signal(SIGKILL)
        worker.wait()
        return .lostPipe
    }

    /// Waits for a worker that said it is exiting, killing it if it does not within two seconds.
    private func wait(for worker: ChildProcess) {
        let deadline = Clock.monotonic() + 2_000_000_000
        while worker.poll() == nil, Clock.monotonic() < deadline { _ = waitReadable([], milliseconds: 10) }
        if worker.poll() == nil { worker.signal(SIGKILL) }
        worker.wait()
    }

    /// Writes a crash down and applies its quarantine; when it cannot be written, keeps the
    /// quarantine in memory for the workers this supervisor starts. Returns the record as kept,
    /// and why it could not be written.
    private func record(_ crash: CrashRecord) -> (CrashRecord, String?) {
        switch Quarantine.record(crash, dataFolder: settings.dataFolder) {
        case .success(let written):
            return (written, nil)
        case .failure(let error):
            let remembered = resume.quarantine ?? []
            var kept = crash
            if let scope = Quarantine.scope(of: crash, history: remembered.map(\.crash)) {
                let entry = Quarantine.Hold(crash, scope: scope)
                kept = entry.crash
                resume.quarantine = remembered + [entry]
            }
            return (kept, "\(error.call) in \(settings.dataFolder): \(error)")
        }
    }

    /// Records the worker's death, quarantines what it cost, and starts a new worker that
    /// reopens the chat, unless it has crashed too often.
    private func died(ending: String, snapshot known: Breadcrumb.Snapshot? = nil) -> Outcome {
        let began = Clock.monotonic()
        let snapshot = known ?? reservation?.read()
        let frame = (snapshot?.depth ?? 0) > 0 ? snapshot?.frame : nil
        let detail = lastWords.detail.map { TerminalText.safe($0) }
        lastWords = LastWords()
        let (written, unrecorded) = record(CrashRecord(frame, ending: ending, detail: detail))
        worker = nil
        let crash = Crash(record: written, unrecorded: unrecorded)
        if settings.restartBurst == 0 { return .gaveUp([crash], "") }
        let now = Clock.now()
        restarts.removeAll { now - $0 > settings.restartWindow }
        if restarts.count >= settings.restartBurst {
            return .gaveUp([crash], "imhost: the chat worker crashed \(restarts.count + 1) times within \(settings.restartWindow / 1000) s; stopping. The crashes are in \(settings.dataFolder)/crashes.log")
        }
        restarts.append(now)
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

    /// Passes on what the worker wrote on standard error, when `fd` is among the `ready` ones.
    private func drainErrors(_ ready: [Int32], from fd: Int32) {
        guard fd >= 0, ready.contains(fd), !errors.ended else { return }
        _ = errors.fill(from: fd)
        while let line = errors.nextLine() { say(line) }
        if errors.ended, let rest = errors.rest() { say(rest) }
    }

    /// Passes on the rest of the worker's standard error once it has ended (not waiting for a
    /// process of the line's that may hold the pipe open).
    private func drainAll(from fd: Int32) {
        while fd >= 0, !errors.ended, !waitReadable([fd], milliseconds: 100).isEmpty {
            drainErrors([fd], from: fd)
        }
    }

    /// Passes on one line the worker wrote on standard error. The Swift runtime's stack trace
    /// after a crash is left out, and its fatal error goes into the crash record instead.
    private func say(_ line: String) {
        guard lastWords.keep(line) else { return }
        if LastWords.isFatalError(line) { return }
        diagnostics(TerminalText.safe(line))
    }
}

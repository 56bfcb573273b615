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
/// one command at a time over a pipe; the worker answers each on its file descriptor 3 with an
/// ``Ack`` that carries what to reopen after a crash (the chat's URL and window). The supervisor
/// reserves the worker's breadcrumb file and reads it:
///
/// - when the worker dies, the breadcrumb says whose code it was in; the crash is recorded in
///   `<data>/crashes.log`, the line or key is quarantined, and a new worker reopens the same chat
///   with its history. The command that crashed is not replayed.
/// - when the worker stays in one call of line code longer than `limits.callSeconds`, it is
///   killed and the call recorded as a hang.
/// - three restarts within a minute are enough: the next crash in that minute stops the chat.
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
        /// State the worker wants back after a crash (a scenario's kill switch, say), as it wrote it.
        public var state: String?
        /// The command failed (a failed expectation); the text says why.
        public var failure: String?
        /// The worker is about to exit with this code.
        public var exit: Int32?

        public init(url: String? = nil, window: Int? = nil, state: String? = nil, failure: String? = nil, exit: Int32? = nil) {
            self.url = url
            self.window = window
            self.state = state
            self.failure = failure
            self.exit = exit
        }
    }

    /// A crash the supervisor recovered from.
    public struct Crash: Sendable {
        /// The record, as written to `<data>/crashes.log`.
        public var record: CrashRecord
        /// One line for a person: whose code crashed doing what, what is quarantined, how to lift it.
        public var notice: String
    }

    /// What handing over a command (or starting) came to.
    public enum Outcome: Sendable {
        /// The worker did it.
        case done(Ack)
        /// The worker crashed or hung; it was recorded, and a new worker reopened the chat.
        case crashed(Crash)
        /// The worker crashed too often; nothing runs any more.
        case gaveUp(Crash, String)
        /// The worker ended on its own with this code.
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
    /// The state to reopen after a crash: the last ack that named a chat.
    public private(set) var resume = Ack()
    /// Milliseconds from the last crash to the reopened chat.
    public private(set) var lastRecovery: Double?

    public init(settings: Settings, diagnostics: @escaping (String) -> Void) {
        self.settings = settings
        self.diagnostics = diagnostics
        // A worker that died leaves a closed pipe behind: writing to it must fail, not kill us.
        signal(SIGPIPE, SIG_IGN)
    }

    /// What to wait on, beside input, while no command runs: the worker's pipes become readable
    /// when it writes or ends. Then call ``idle()``.
    public var watched: [Int32] {
        guard let worker else { return [] }
        return [control.ended ? -1 : worker.control, errors.ended ? -1 : worker.errors].filter { $0 >= 0 }
    }

    /// While no command runs: passes on what the worker wrote, and notices a worker that died
    /// on its own (a line's background thread, say), recording it and starting a new one.
    /// Returns what happened when the worker died, else `nil`.
    public func idle() -> Outcome? {
        guard let worker else { return nil }
        let ready = waitReadable(watched, milliseconds: 0)
        drainErrors(ready, from: worker.errors)
        if ready.contains(worker.control) { _ = control.fill(from: worker.control) }
        guard control.ended else { return nil }
        let ending = worker.wait()
        drainAll(from: worker.errors)
        return died(ending: ending.description)
    }

    deinit {
        worker?.signal(SIGKILL)
        worker?.wait()
        reservation?.remove()
    }

    /// Starts the worker and waits until it is ready (its chat open and shown).
    public func start() -> Outcome {
        launch()
    }

    /// Hands one command to the worker and waits for it to be done.
    public func send(_ command: String) -> Outcome {
        guard let worker, worker.send(command) else {
            return died(ending: worker?.wait().description ?? "not running")
        }
        return waitForWorker()
    }

    /// Ends the worker: closes its input (it finalizes and exits), or sends it `signal`; kills
    /// it if it has not ended within two seconds. Returns its exit code.
    @discardableResult
    public func finish(signal: Int32? = nil) -> Int32 {
        guard let worker else { return 0 }
        if let signal { worker.signal(signal) } else { worker.closeInput() }
        let deadline = Clock.monotonic() + 2_000_000_000
        var code: Int32?
        while worker.poll() == nil, Clock.monotonic() < deadline {
            let ready = waitReadable([control.ended ? -1 : worker.control, errors.ended ? -1 : worker.errors], milliseconds: 50)
            drainErrors(ready, from: worker.errors)
            if ready.contains(worker.control), !control.fill(from: worker.control) { continue }
            while let line = control.nextLine() {
                if let ack = try? JSONDecoder().decode(Ack.self, from: Data(line.utf8)), let exit = ack.exit { code = exit }
            }
        }
        if worker.poll() == nil { worker.signal(SIGKILL) }
        let ended = worker.wait()
        drainAll(from: worker.errors)
        self.worker = nil
        reservation?.remove()
        reservation = nil
        if let code { return code }
        if case .exited(let status) = ended { return status }
        return 1
    }

    // MARK: Running workers

    private func launch() -> Outcome {
        do {
            reservation?.remove()
            let reserved = try Breadcrumb.Reservation(dataFolder: settings.dataFolder)
            reservation = reserved
            var arguments = settings.arguments + ["--breadcrumb", reserved.path]
            if resume.url != nil || resume.state != nil, let data = try? JSONEncoder().encode(resume) {
                arguments += ["--resume", String(decoding: data, as: UTF8.self)]
            }
            control = LineBuffer()
            errors = LineBuffer()
            worker = try ChildProcess(executable: settings.executable, arguments: arguments, stdin: .pipe, stdout: .inherit,
                                      stderr: .pipe, control: true)
        } catch {
            let record = CrashRecord(nil, ending: "not started", detail: "\(error.call): \(error)")
            return .gaveUp(Crash(record: record, notice: "imhost: cannot start the chat worker (\(error.call): \(error))"),
                           "imhost: cannot start the chat worker")
        }
        return waitForWorker()
    }

    /// Waits for the worker's next ack, its death, or a hang in line code.
    private func waitForWorker() -> Outcome {
        guard let worker else { return .exited(1) }
        var still: (sequence: UInt32, since: UInt64)?
        let limit = UInt64(settings.callLimit * 1e9)
        while true {
            while let line = control.nextLine() {
                guard let ack = try? JSONDecoder().decode(Ack.self, from: Data(line.utf8)) else { continue }
                if let exit = ack.exit {
                    worker.wait()
                    drainAll(from: worker.errors)
                    self.worker = nil
                    return .exited(exit)
                }
                if ack.url != nil {
                    resume.url = ack.url
                    resume.window = ack.window
                }
                if ack.state != nil { resume.state = ack.state }
                return .done(ack)
            }
            if control.ended {
                let ending = worker.wait()
                drainAll(from: worker.errors)
                return died(ending: ending.description)
            }
            let ready = waitReadable([worker.control, errors.ended ? -1 : worker.errors], milliseconds: 50)
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

    /// Records the worker's death, quarantines what it cost, and starts a new worker that
    /// reopens the chat, unless it has crashed too often.
    private func died(ending: String, snapshot known: Breadcrumb.Snapshot? = nil) -> Outcome {
        let began = Clock.monotonic()
        let snapshot = known ?? reservation?.read()
        let frame = (snapshot?.depth ?? 0) > 0 ? snapshot?.frame : nil
        let detail = lastWords.detail.map { TerminalText.safe($0) }
        lastWords = LastWords()
        let record = CrashRecord(frame, ending: ending, detail: detail)
        let written: CrashRecord
        var unrecorded = ""
        switch Quarantine.record(record, dataFolder: settings.dataFolder) {
        case .success(let value): written = value
        case .failure(let error):
            written = record
            unrecorded = " (could not record it in \(settings.dataFolder): \(error.call): \(error))"
        }
        worker = nil
        let crash = Crash(record: written, notice: Self.notice(written, callLimit: settings.callLimit) + unrecorded)
        if settings.restartBurst == 0 { return .gaveUp(crash, "") }
        let now = Clock.now()
        restarts.removeAll { now - $0 > settings.restartWindow }
        if restarts.count >= settings.restartBurst {
            return .gaveUp(crash, "imhost: the chat worker crashed \(restarts.count + 1) times within \(settings.restartWindow / 1000) s; stopping. The crashes are in \(settings.dataFolder)/crashes.log")
        }
        restarts.append(now)
        switch launch() {
        case .done:
            lastRecovery = Double(Clock.monotonic() - began) / 1e6
            return .crashed(crash)
        case .crashed(let again):
            return .crashed(Crash(record: again.record, notice: crash.notice + "\n" + again.notice))
        case .gaveUp(let again, let why):
            return .gaveUp(Crash(record: again.record, notice: crash.notice + "\n" + again.notice), why)
        case .exited(let code):
            return code == 0 ? .exited(code) : .gaveUp(crash, "imhost: the chat worker could not reopen the chat (exit \(code))")
        }
    }

    /// Passes on what the worker wrote on standard error, when `fd` is among the `ready` ones.
    private func drainErrors(_ ready: [Int32], from fd: Int32) {
        guard fd >= 0, ready.contains(fd), !errors.ended else { return }
        _ = errors.fill(from: fd)
        while let line = errors.nextLine() { say(line) }
        if errors.ended, let rest = errors.rest() { say(rest) }
    }

    /// Passes on the rest of the worker's standard error once it has ended.
    private func drainAll(from fd: Int32) {
        while fd >= 0, !errors.ended, !waitReadable([fd], milliseconds: 200).isEmpty {
            drainErrors([fd], from: fd)
        }
    }

    /// Passes on one line the worker wrote on standard error. The Swift runtime's stack trace
    /// after a crash is left out, and its fatal error goes into the crash notice and record.
    private func say(_ line: String) {
        guard !line.isEmpty else { return }
        guard lastWords.keep(line) else { return }
        // The runtime's last words go into the crash notice and record, not on their own.
        if LastWords.isFatalError(line) { return }
        diagnostics(TerminalText.safe(line))
    }

    /// One line: whose code crashed doing what, what it cost, and how to lift it.
    public static func notice(_ record: CrashRecord, callLimit: Double) -> String {
        let ending = record.isHang ? "hung (no return within \(Self.seconds(callLimit)))" : "crashed (\(record.signal))"
        let what = record.site.phrase(key: record.key, message: record.message)
        guard let line = record.line else {
            return "imhost: the chat worker \(ending) outside line code; it was restarted. Details: \(record.detail ?? "none")"
        }
        let cost: String
        switch record.quarantined {
        case "key": cost = "message key \(record.key ?? "") is quarantined: its messages show as placeholders"
        case "line": cost = "line '\(line)' is quarantined: its chats open on the legacy page"
        default: cost = "nothing was quarantined"
        }
        let said = record.detail.map { " It said: \($0)." } ?? ""
        return TerminalText.safe("imhost: line '\(line)' \(ending) \(what); \(cost). Lift with: imhost quarantine lift \(line).\(said)")
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What a child the host started says on its control pipe: one message a line, the first a
/// hello with the protocol version it speaks (``FromWorker``, ``ScannerReport``).
package protocol ChildMessage: Decodable {
    /// The version this host speaks.
    static var protocolVersion: Int { get }
    /// The version a hello says; `nil` for every other message.
    var helloVersion: Int? { get }
}

/// Watches a child the host started (the plugin scanner, a chat worker): its control pipe, one
/// message a line; its standard error, kept as last words and passed on; and its end, whichever
/// comes first. The scanner and the supervisor both watch their children through it, and keep
/// their own deadlines: each asks ``next(waiting:)`` for a little while at a time. Messages come
/// decoded; the hello is checked here, and a line that is not a message is skipped.
///
/// The child's end is watched itself, not only its pipes closing: line code may close the
/// pipes, or hand them to a process of its own, and must not make the host wait.
package final class ChildWatch<Message: ChildMessage> {
    /// What the child did.
    package enum Event {
        /// A message on the control pipe.
        case message(Message)
        /// Its hello says it speaks another version of the protocol.
        case mismatch(Int)
        /// It ended (after every message it wrote before it ended was given).
        case ended(ChildProcess.Termination)
        /// Nothing within the time asked.
        case quiet
    }

    package let child: ChildProcess
    private let control = LineBuffer()
    private let errors = LineBuffer()
    /// What it said last on standard error: its fatal error, if it had one.
    private(set) var lastWords = LastWords()
    /// Whether it said hello.
    package private(set) var heard = false
    /// When the watch began (`Clock.monotonic()`): how long it has been silent, if it has not
    /// said hello.
    package let started = Clock.monotonic()
    private let decoder = JSONDecoder()
    /// Called with each line it writes on standard error that is not part of a stack trace or
    /// a fatal error (those name the crash instead).
    private let said: (String) -> Void

    package init(_ child: ChildProcess, said: @escaping (String) -> Void = { _ in }) {
        self.child = child
        self.said = said
    }

    /// The descriptors that become readable when the child writes or ends: to wait on beside
    /// others (a chat's input), then ask ``next(waiting:)``.
    package var waitable: [Int32] {
        child.waitable([control.ended ? -1 : child.control, errors.ended ? -1 : child.errors])
    }

    /// The next thing the child does, waiting at most `milliseconds`. A child whose control pipe
    /// closed while it lives on (line code closed it) gets a second to end, then is killed.
    package func next(waiting milliseconds: Int32) -> Event {
        while true {
            let event = nextLine(waiting: milliseconds)
            guard case .line(let line) = event else { return event.event }
            guard let message = try? decoder.decode(Message.self, from: Data(line.utf8)) else { continue }
            if let version = message.helloVersion {
                guard version == Message.protocolVersion else { return .mismatch(version) }
                heard = true
                continue
            }
            return .message(message)
        }
    }

    private enum Raw {
        case line(String)
        case other(Event)
        var event: Event { if case .other(let event) = self { event } else { .quiet } }
    }

    private func nextLine(waiting milliseconds: Int32) -> Raw {
        if let line = control.nextLine() { return .line(line) }
        if let ended = child.poll() {
            // It may have said something just before it ended: that comes first.
            while !control.ended, !waitReadable([child.control], milliseconds: 0).isEmpty, control.fill(from: child.control) {}
            if let line = control.nextLine() { return .line(line) }
            drainErrors()
            return .other(.ended(ended))
        }
        if control.ended {
            // Its pipe closed: it is ending (its descriptors close before it can be waited for),
            // or line code closed the pipe.
            let ended = stopLost()
            drainErrors()
            return .other(.ended(ended))
        }
        let ready = waitReadable(waitable, milliseconds: milliseconds)
        if ready.contains(child.errors) { readErrors() }
        if ready.contains(child.control) {
            control.fill(from: child.control)
            if let line = control.nextLine() { return .line(line) }
        }
        return .other(.quiet)
    }

    /// Kills the child and waits for it; what it wrote on standard error is read first.
    @discardableResult
    package func kill() -> ChildProcess.Termination {
        child.signal(SIGKILL)
        let ended = child.wait()
        drainErrors()
        return ended
    }

    /// Passes on the rest of standard error once the child has ended, without waiting for a
    /// process of the line's that may hold the pipe open.
    package func drainErrors() {
        while child.errors >= 0, !errors.ended, !waitReadable([child.errors], milliseconds: 100).isEmpty {
            readErrors()
        }
    }

    /// The last words, and forgets them (a new call starts afresh).
    package func takeLastWords() -> String? {
        defer { lastWords = LastWords() }
        return lastWords.detail
    }

    private func readErrors() {
        guard !errors.ended else { return }
        errors.fill(from: child.errors)
        while let line = errors.nextLine() { hear(line) }
        if errors.ended, let rest = errors.rest() { hear(rest) }
    }

    private func hear(_ line: String) {
        guard lastWords.keep(line), !LastWords.isFatalError(line) else { return }
        said(line)
    }

    /// A child whose control pipe closed but that has not exited lost its way back to the host
    /// (line code closed the pipe). It gets a second to end, then it is killed.
    private func stopLost() -> ChildProcess.Termination {
        if let ended = child.wait(milliseconds: 1000) { return ended }
        kill()
        return .lostPipe
    }
}

import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// A chat worker started before any chat wants it: its process running, its lines loaded, its
/// store open, waiting for the chat to show (``ToWorker/open(url:)``). `imhost web` keeps one, so
/// a page a tab opens is drawn without first starting a process; the page's supervisor takes it
/// (``Supervisor/start(spare:url:)``), and a worker it starts after a crash is an ordinary one.
/// It is started with `--spare` (its chat argument is only a place holder): nothing else makes a
/// worker wait for its chat.
///
/// Sendable by hand: it is made on the server's thread and handed whole to one page's thread,
/// which owns it from then on; the server lets go of it as it hands it over (its slot emptied)
/// and never touches it again, so no two threads ever use it.
package final class SpareWorker: @unchecked Sendable {
    let child: ChildProcess
    let reservation: Breadcrumb.Reservation
    /// Whether its breadcrumb was let go (once: the descriptor may be another's after).
    private var released = false
    /// When it was asked to end (its input closed), if it was.
    package private(set) var endingSince: UInt64?

    private init(child: ChildProcess, reservation: Breadcrumb.Reservation) {
        self.child = child
        self.reservation = reservation
    }

    /// The arguments a spare is started with, after `__worker`: a chat worker's (`chatArguments`,
    /// whose chat is a place holder) marked `--spare`.
    package static func arguments(_ chatArguments: [String]) -> [String] { chatArguments + ["--spare"] }

    /// Starts one with `settings` (those of the pages it may serve, ``arguments(_:)``); `nil`
    /// when none could be started, or its breadcrumb could only be kept in memory (the page's own
    /// start says so then).
    package static func start(_ settings: Supervisor.Settings) -> SpareWorker? {
        guard let reservation = try? Breadcrumb.Reservation(dataFolder: settings.dataFolder) else { return nil }
        guard reservation.inMemoryBecause == nil, let child = try? Supervisor.spawn(settings, breadcrumb: reservation.fd) else {
            reservation.remove()
            return nil
        }
        let spare = SpareWorker(child: child, reservation: reservation)
        // It gets ready while it waits: the protocol's first message at once.
        guard let line = try? JSONLines.encode(ToWorker.start(version: WorkerProtocol.version, resume: nil)),
              child.send(String(decoding: line, as: UTF8.self)) else {
            spare.kill()
            return nil
        }
        return spare
    }

    /// Whether it still runs (one that ended is waited for, and its breadcrumb let go).
    package var isRunning: Bool {
        guard child.poll() != nil else { return true }
        release()
        return false
    }

    /// Asks it to end (it was never given a chat): its input closes, and it signs out as a chat
    /// does. ``isRunning`` says when it has; ``kill()`` ends one that takes too long.
    package func end() {
        guard endingSince == nil else { return }
        endingSince = Clock.monotonic()
        child.closeInput()
    }

    /// Ends it outright and waits for it.
    package func kill() {
        child.signal(SIGKILL)
        _ = child.wait()
        release()
    }

    private func release() {
        guard !released else { return }
        released = true
        reservation.remove()
    }
}

import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// A chat worker started before any chat wants it: its process running, its lines loaded, its
/// store open, waiting for the chat to show (``ToWorker/open(url:)``). `imhost web` keeps one, so
/// a page a tab opens is drawn without first starting a process; the page's supervisor takes it
/// (``Supervisor/start(spare:url:)``), and a worker it starts after a crash is an ordinary one.
///
/// Sendable by hand: it is made on the server's thread and handed whole to one page's thread,
/// which owns it from then on; the server lets go of it as it hands it over (its slot emptied)
/// and never touches it again, so no two threads ever use it.
package final class SpareWorker: @unchecked Sendable {
    let child: ChildProcess
    let reservation: Breadcrumb.Reservation

    private init(child: ChildProcess, reservation: Breadcrumb.Reservation) {
        self.child = child
        self.reservation = reservation
    }

    /// Starts one with `settings` (those of the pages it may serve), whose arguments name `-`
    /// for the chat; `nil` when none could be started, or its breadcrumb could only be kept in
    /// memory (the page's own start says so then).
    package static func start(_ settings: Supervisor.Settings) -> SpareWorker? {
        guard let reservation = try? Breadcrumb.Reservation(dataFolder: settings.dataFolder) else { return nil }
        guard reservation.inMemoryBecause == nil,
              let child = try? ChildProcess(executable: settings.executable, arguments: settings.arguments + Supervisor.handOver(),
                                            stdin: .pipe, stdout: .inherit, stderr: .pipe, control: true, handing: [reservation.fd]) else {
            reservation.remove()
            return nil
        }
        let spare = SpareWorker(child: child, reservation: reservation)
        // It gets ready while it waits: the protocol's first message at once.
        guard let line = try? JSONLines.encode(ToWorker.start(version: WorkerProtocol.version, resume: nil)),
              child.send(String(decoding: line, as: UTF8.self)) else {
            spare.end()
            return nil
        }
        return spare
    }

    /// Whether it still runs (one that ended is waited for, and its breadcrumb let go).
    package var isRunning: Bool {
        guard child.poll() != nil else { return true }
        reservation.remove()
        return false
    }

    /// Ends it (it was never given a chat): killed, waited for, its breadcrumb let go.
    package func end() {
        child.signal(SIGKILL)
        _ = child.wait()
        reservation.remove()
    }
}

#if canImport(FoundationEssentials)
import IMHost
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The worker's side of the ``WorkerProtocol``: reads ``ToWorker`` messages from standard
/// input, and answers with ``FromWorker`` on the control pipe its supervisor gave it.
package final class WorkerChannel {
    /// The pipe to the supervisor; `Sendable`, for what is said from other threads.
    package let answers: ControlPipe
    private let input = LineBuffer()
    private let decoder = JSONDecoder()

    /// What reading the supervisor came to.
    package enum Received: Equatable {
        case message(ToWorker)
        /// A line that is not a message: said, and skipped.
        case unreadable(String)
        /// The supervisor closed the worker's input: finish and exit.
        case end
        /// Nothing within the time asked, or one of the descriptors to wake on is readable.
        case quiet
    }

    /// Takes the control pipe over and says hello; `nil` when there is none (not started by a
    /// supervisor).
    package init?() {
        guard let pipe = ControlPipe() else { return nil }
        answers = pipe
        say(.hello(version: WorkerProtocol.version))
    }

    /// Answers the supervisor. A pipe that line code closed cannot carry anything any more:
    /// the worker ends at once (exit 70), and the supervisor sees a worker that lost its way.
    package func say(_ message: FromWorker) {
        guard answers.send(message) else { _exit(70) }
    }

    /// The next message, waiting at most `milliseconds`, or less when one of `wake` becomes
    /// readable (or one of `wakeWriting` writable) first.
    package func receive(waiting milliseconds: Int32, wake: [Int32] = [], wakeWriting: [Int32] = []) -> Received {
        while true {
            if let line = input.nextLine() {
                guard let message = try? decoder.decode(ToWorker.self, from: Data(line.utf8)) else { return .unreadable(line) }
                return .message(message)
            }
            if input.ended { return .end }
            var polls = ([STDIN_FILENO] + wake).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                + wakeWriting.map { pollfd(fd: $0, events: Int16(POLLOUT), revents: 0) }
            let ready = poll(&polls, nfds_t(polls.count), milliseconds)
            if ready < 0 && errno != EINTR {
                input.end()
                continue
            }
            guard ready > 0, polls[0].revents != 0 else { return .quiet }
            input.fill(from: STDIN_FILENO)
        }
    }
}

import IMHost
import IMHostRuntime

/// The words for a command's connection that did not bring its answer (``ConnectionFailure``):
/// the operator's `imhost fleet`, `imhost broker`'s control of a running broker. One line each,
/// made safe for a terminal by the command that says it.
extension ConnectionWords {
    /// `failure` of a connection as `login`.
    static func failure(_ failure: ConnectionFailure, login: String) -> String {
        switch failure {
        case .notConnected(.unreachable(let address, .network(let why), _)):
            "cannot reach the broker at \(address) (\(why)); is it running?"
        case .notConnected(let why):
            offline(why)
        case .inboxRefused(let filter, let reason):
            "the broker refused \(login) reading \(filter) (\(reason))"
        case .noAnswer(let address, let seconds):
            "the broker at \(address) did not answer within \(seconds) s"
        case .went(.takenOver), .went(.connectedElsewhere):
            "another connection as \(login) took the session over (another command at the same time?); try again"
        case .went(.lost(let why)):
            "the connection to the broker was lost (\(why))"
        case .went(.deviceRemoved):
            "the broker ended the connection (an administrator removed or disabled \(login))"
        case .went(let why):
            offline(why)
        }
    }
}

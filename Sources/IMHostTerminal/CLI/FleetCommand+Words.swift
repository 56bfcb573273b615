import IMHost
import IMHostRuntime

/// What `imhost fleet` says when the operator's command fails (``FleetOperator/Failure``): one
/// line, what was refused, why, and what to do.
extension FleetCommand {
    static func line(_ failure: FleetOperator.Failure) -> String {
        let user = TransportID.operatorID
        return switch failure.code {
        case .connection(.inboxRefused(let filter, let reason)), .readRefused(_, let filter, let reason):
            "the broker refused \(user) reading \(filter) (\(reason)); fleet commands run as \(user)"
        case .connection(let failure):
            ConnectionWords.failure(failure, login: user)
        case .publishRefused(let reason):
            "the broker refused the fleet configuration (\(reason)): only \(user) may publish it; run with a host.json whose user is \(user), with its password file"
        case .heldRefused(let why):
            "nothing published: hosts refuse the fleet configuration the broker holds (\(why)), so a change built on it would go nowhere; imhost fleet replace publishes one they apply, above every version they report (--init starts from nothing turned off)"
        case .nothingToReplace:
            "the broker holds no fleet configuration, so there is nothing to replace: hosts keep the one they apply; a change with --init publishes the first"
        case .noConfiguration:
            "there is no fleet configuration on the broker yet; add --init to publish the first one"
        case .wouldRefuse(let why):
            "not published: hosts would refuse it (\(why)); \(fix(why))"
        case .contended:
            "other operators' commands or changes came between ten tries in a row; try again"
        }
    }

    /// What the operator does about a change hosts would refuse.
    private static func fix(_ refusal: FleetConfig.Refusal) -> String {
        switch refusal.kind {
        case .size: "lift some of what it turns off first (imhost fleet show)"
        case .date: "check this machine's clock (date -u) against the versions hosts report (imhost fleet status)"
        case .document: "this is a fault in imhost; report it with the configuration the broker holds (imhost fleet show --json)"
        }
    }
}

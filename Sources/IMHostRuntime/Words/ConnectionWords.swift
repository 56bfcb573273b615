import IMHost
import IMKit

/// The terminal's words for what the connection tells a person (``ConnectionNotice``), why it is
/// offline (``OfflineReason``) and where it stands (``Courier/Status``): one line each, made
/// safe for a terminal (a broker's reason, a topic and a refusal's words come from outside).
package enum ConnectionWords {
    /// A notice, as the chat, `sync` and `play` say it.
    package static func notice(_ notice: ConnectionNotice) -> String { TerminalText.safe(sentence(notice)) }

    /// Why the connection is offline, in one line.
    package static func offline(_ why: OfflineReason) -> String { TerminalText.safe(reason(why)) }

    /// Where the connection stands, as a scenario's failed wait says it.
    package static func status(_ status: Courier.Status) -> String {
        switch status {
        case .online: "online"
        case .connecting: "connecting"
        case .offline(let why): "offline(\(String(reflecting: offline(why))))"
        }
    }

    private static func sentence(_ notice: ConnectionNotice) -> String {
        switch notice {
        case .connected(let address, let user, let again):
            "connected \(again ? "again " : "")to \(address) as \(user)"
        case .outage(let why):
            reason(why)
        case .takenOver(let user):
            "another connection of \(user) took the session over (another device or data folder): this one stays offline; /online takes it back"
        case .connectedElsewhere(let user):
            "\(user) is connected elsewhere: another host signed in as \(user) after this one and holds the session; this one stays offline (what you send waits, queued); /online takes the session back"
        case .stillElsewhere(let user):
            "\(user) is still connected elsewhere: another host took the session before this chat restarted; this one stays offline (what you send waits, queued); /online takes the session back"
        case .inboxNotSubscribed(let why):
            "cannot subscribe to this host's inbox: \(why)"
        case .acl(let problem):
            acl(problem)
        case .refused(let refusal, let sender):
            "refused \(refusal.description)\(sender.map { " from \($0)" } ?? "")"
        case .retainedRefused(let topic):
            "refused a retained message on \(topic) (an inbox takes none: ask the broker's operator to clear it)"
        case .foreignTopic(let topic):
            "refused a message on \(topic), which is not this user's inbox"
        case .refusalsSummed(let count):
            "refused \(count) more envelope\(plural(count)) in the last minute (imhost sync --json counts them by why)"
        case .notStored(let count, let error):
            "\(count) message\(plural(count)) could not be stored (\(error)); they come again"
        case .overBudget(let peer, let budget):
            "refusing \(peer)'s messages for the rest of the day (UTC): past the budget of \(budget.messages) messages or \(budget.bytes) bytes a day from one person (limits.peerMessagesPerDay, limits.peerBytesPerDay in host.json); \(peer) is told"
        case .peerRefused(let refusal, let count):
            "\(count) message\(plural(count)) to \(refusal.peer) failed: \(FailureWords.sentence(.refusedByPeer(refusal), retry: "/retry N"))"
        case .tooLargeForBroker(let refusal):
            "a message to \(refusal.peer) failed: \(FailureWords.sentence(.tooLargeForBroker(refusal), retry: "/retry N"))"
        case .receiptNotApplied(let peer, let error):
            "a receipt from \(peer) could not be applied (\(error)); it will come again"
        case .givenUp(let count, let hours):
            "\(count) message\(plural(count)) not delivered within \(FailureWords.hours(hours)) hours failed; /retry N sends one again"
        case .fleetNotApplied(let why, let unsaid):
            fleet(why) + (unsaid > 0 ? " (and \(unsaid) more not said)" : "")
        case .siblingKnown(let sibling):
            "\(sibling) is another device of \(DynamicSecurity.parse(login: sibling)?.user ?? sibling)'s: what is sent, read or blocked here shows there too"
        case .history(let sibling, let stored, let total, let stalled):
            stalled ? "catching up from \(sibling) stopped after \(stored) message\(plural(stored)) (it had \(total) to compare); it goes on at the next connect"
                : stored == 0 ? "catching up from \(sibling): comparing its \(total) message\(plural(total)) with this device's"
                : "caught up from \(sibling): \(stored) message\(plural(stored)) this device lacked (of \(total) it named)"
        }
    }

    /// The command that makes `login` at the broker: a user's, or a device's (`alice~phone`).
    private static func making(_ login: String) -> String {
        if let parsed = DynamicSecurity.parse(login: login), let device = parsed.device {
            return "imhost broker add-device DIR \(parsed.user) \(device) makes the device and its password file; a removed device's login is refused"
        }
        return "imhost broker add-user DIR \(login) makes a user and its password file"
    }

    private static func reason(_ why: OfflineReason) -> String {
        switch why {
        case .notConnectedYet:
            "not connected yet"
        case .asked:
            "offline, as asked"
        case .passwordUnreadable(let file, let error):
            "cannot read the password in \(file) (\(error)); fix transport.passwordFile in host.json"
        case .clientNotMade(let error):
            "cannot make a connection: \(error)"
        case .refused(let address, let user, let refusal, let passwordFile):
            "the broker at \(address) refused \(user): \(refusal.reason); "
                + (refusal.credentials ? "check transport.passwordFile (\(passwordFile)) against the broker (" + making(user) + ")"
                   : refusal.unavailable ? "it is not serving now (a cluster's node waiting for the others); trying the next"
                   : refusal.wrongVersion ? "set transport.protocol in host.json to the MQTT it speaks (\"5\" or \"3.1.1\")"
                   : "check the broker's log")
        case .unreachable(let address, .network(let why), let retrying):
            "cannot reach the broker at \(address) (\(why)); is it running? (imhost broker run DIR)" + (retrying ? "; retrying" : "")
        case .unreachable(let address, .handshake(let problem), _):
            "cannot connect to the broker at \(address): \(problem)"
        case .lost(let why):
            "the connection to the broker was lost (\(why)); reconnecting"
        case .deviceRemoved(let address, let login):
            "the broker at \(address) no longer takes \(login): this device was removed from "
                + "\(DynamicSecurity.parse(login: login)?.user ?? login)'s devices (imhost broker remove-device), or its password changed; nothing more comes to it; "
                + making(login)
        case .takenOver(let user):
            "another connection of \(user) took the session over"
        case .connectedElsewhere(let user):
            "\(user) is connected elsewhere"
        }
    }

    private static func acl(_ problem: ACLProblem) -> String {
        switch problem {
        case .probeLost:
            "connected, but this host's own messages do not come back through its inbox: check the broker's ACL (pattern read imhost/u/%u/# and pattern write imhost/u/+/from/%u)"
        case .inboxRefused(let reason):
            "the broker refused this host's subscription to its inbox (\(reason)): check the broker's ACL (pattern read imhost/u/%u/#); trying again"
        case .fleetRefused(let reason):
            "the broker refused this host's subscription to the fleet configuration (\(reason)): check the broker's ACL (pattern read \(FleetConfig.topic)); the cached one applies"
        case .publishRefused(let user, let topic, let reason):
            "the broker does not let \(user) publish to \(topic) (\(reason)): check its ACL (pattern write imhost/u/+/from/%u); the message stays queued"
        case .ownInboxRefused(let user):
            "the broker does not let \(user) write to its own inbox: check its ACL (pattern write imhost/u/+/from/%u)"
        }
    }

    private static func fleet(_ why: FleetNotApplied) -> String {
        func kept(_ version: Int64?) -> String { version.map { "version \($0) stays" } ?? "host.json alone applies" }
        return switch why {
        case .removed(let version):
            "the fleet configuration was removed from the broker; \(kept(version)) (the operator publishes a new one with imhost fleet ... --init)"
        case .refused(let error, let version):
            "refused a fleet configuration: \(error); \(kept(version)) (the operator publishes a valid one with imhost fleet replace)"
        case .older(let version, let applied):
            "ignored fleet configuration version \(version): this host applies version \(applied), which is newer; the operator's next change goes above it"
        }
    }

    private static func plural(_ count: Int) -> String { count == 1 ? "" : "s" }
}

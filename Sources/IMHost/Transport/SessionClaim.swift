/// Which host of a user holds the user's broker session, told without the broker's help.
///
/// One user is one session on the broker (its client id is the user name), so a second host of
/// the same user (another data folder, another machine) takes the session over when it connects,
/// and the first is thrown off. mosquitto 2.0 does not say why (no DISCONNECT 0x8E, only a lost
/// connection), and a host that simply reconnects takes the session back: the two would throw
/// each other off forever, each storing part of the conversation.
///
/// So a host that connects to take the session (its first connection in this process, or the
/// user's `/online`) says so in a retained presence record on its own inbox (``Topic/inbox(to:from:)``
/// from the user to itself), which only the user can write and read. A host that lost its
/// connection reconnects without claiming: the broker hands it the retained record when it
/// subscribes, before the probe it sends itself comes back. A record of another connection means
/// another host took the session after this one did: this one leaves at once, stays offline,
/// and says so, until the user says `/online`. Messages that arrived in that moment are not
/// stored or answered: their senders send them again, to the host that holds the session.
///
/// A connection id starts with its data folder's host id (``MessageStore/hostID``): a record
/// with this folder's id was left by an earlier process of this folder (one that was killed;
/// the connection lock says no other runs now), and is as good as this one's own. A host that
/// leaves clears its record (``Courier``), so one that comes later does not take it for a host
/// still there. And a connection that does not claim (`imhost sync`, which must not throw a
/// running chat off) leaves at once when the record is another host's.
struct SessionClaim {
    /// This process's connection, as its presence record names it.
    let connectionID: String
    /// This data folder's host id, the start of its connection ids; `nil` when it has none.
    let host: String?
    /// Whether the next connection takes the session (first connect, or `/online`).
    private(set) var claiming = true
    /// Whether this connection knows it holds the session: it claimed it, saw its own record, or
    /// its probe came back with no record of another.
    private(set) var settled = false
    /// Whether another host of the user took the session from this one, which stays offline
    /// until the user says `/online`.
    private(set) var elsewhere = false

    init(connectionID: String, host: String? = nil) {
        self.host = host
        self.connectionID = host.map { "\($0)-\(connectionID)" } ?? connectionID
    }

    /// The next connection takes the session only when no other host holds it.
    mutating func claimNone() { claiming = false }

    /// What a presence record means for this host.
    enum Verdict: Equatable {
        /// It is this connection's, or this one is taking the session anyway.
        case holding
        /// Another host took the session after this one: leave and stay offline.
        case takenOver
    }

    /// A connection was made. Returns whether this host publishes its presence record now.
    mutating func connected() -> Bool {
        settled = claiming
        defer { claiming = false }
        return claiming
    }

    /// The user asked to be online: the next connection takes the session, whoever holds it.
    mutating func claimNext() {
        claiming = true
        elsewhere = false
    }

    /// Another host of the user holds the session: this one left it (or, started again, stays
    /// where the one before it was left).
    mutating func tookElsewhere() { elsewhere = true }

    /// A presence record arrived (retained at subscribe, or as another host published it).
    mutating func saw(_ id: String) -> Verdict {
        if id == connectionID || settled || host.map({ id.hasPrefix($0 + "-") }) == true {
            settled = true
            return .holding
        }
        return .takenOver
    }

    /// No record of another host came before the probe came back through the inbox (any record
    /// the broker retains comes before it), or before its time ran out. Returns whether this host
    /// must publish its record (there was none: the broker lost it).
    mutating func noRecordCame() -> Bool {
        defer { settled = true }
        return !settled
    }
}

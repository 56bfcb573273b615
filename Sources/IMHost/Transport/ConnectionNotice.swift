/// What the connection tells a person, as values: each case carries what a front end needs to say
/// it (the terminal's words are `ConnectionWords`, in IMHostTerminal). Text from outside (a
/// broker's reason, a topic, a refusal's description) is carried as it came; the words make it
/// safe for their screen.
public enum ConnectionNotice: Sendable, Equatable {
    /// The broker took the connection as `user` (its login: `alice`, or a device's, `alice~phone`);
    /// `again`: after an outage that was said.
    case connected(address: HostConfig.Transport.Address, user: String, again: Bool)
    /// An attempt to connect failed, or the connection was lost: said once an outage. The same
    /// reason ``Courier/Status/offline(_:)`` holds.
    case outage(OfflineReason)
    /// The broker said another connection of `user` took the session over: this one stays
    /// offline until the user says `/online`.
    case takenOver(user: String)
    /// Another host of `user` signed in after this one and holds the session (its presence
    /// record came): this one stays offline, what is sent waits queued, until `/online`.
    case connectedElsewhere(user: String)
    /// A chat's worker started again after another host of `user` took the session: it stays
    /// offline, as the one before it did, until `/online`.
    case stillElsewhere(user: String)
    /// The inbox's subscription could not be asked for (the client's words).
    case inboxNotSubscribed(String)
    /// The broker's ACL keeps this host from something it needs.
    case acl(ACLProblem)
    /// An envelope refused (``Envelope/Refusal/kind`` is what `sync --json` counts it as), and
    /// who sent it, when the topic said.
    case refused(Envelope.Refusal, from: String?)
    /// A retained message in the inbox, refused: nobody but the user's own host retains one there.
    case retainedRefused(topic: String)
    /// A message on a topic that is not this user's inbox, refused.
    case foreignTopic(String)
    /// More envelopes were refused in the minute that ended than were said (at most ten a minute).
    case refusalsSummed(Int)
    /// Arrivals that could not be stored (so not answered: their senders send them again).
    case notStored(count: Int, StoreError)
    /// `peer`'s messages are refused for the rest of the day (UTC): past the budget.
    case overBudget(peer: String, budget: MessageStore.PeerBudget)
    /// A peer refused `count` of the user's messages: they failed.
    case peerRefused(PeerRefusal, count: Int)
    /// One of the user's messages is larger than the broker takes: it failed here, never handed over.
    case tooLargeForBroker(BrokerTooLarge)
    /// A receipt from `peer` could not be applied (it comes again).
    case receiptNotApplied(peer: String, StoreError)
    /// `count` of the user's messages were not delivered within `hours` (`transport.giveUpHours`):
    /// they failed.
    case givenUp(count: Int, hours: Double)
    /// A fleet configuration that came was not applied, and why; `unsaid`: others not said
    /// before it (at most ten a minute are).
    case fleetNotApplied(FleetNotApplied, unsaid: Int)
    /// Catching up from another device of the user (its login): asked for what this one lacks
    /// (`stored` 0), done, or stalled (it goes on at the next connect). `of`: how many messages
    /// that device named.
    case history(from: String, stored: Int, of: Int, stalled: Bool)
    /// This device heard from another device of the user (its login) for the first time.
    case siblingKnown(String)
}

/// Why the connection is offline.
public enum OfflineReason: Sendable, Equatable {
    /// It has not tried yet.
    case notConnectedYet
    /// The user said `/offline`.
    case asked
    /// The password file could not be read (the system's words).
    case passwordUnreadable(file: String, error: String)
    /// The client could not be made (its words).
    case clientNotMade(String)
    /// The broker at `address` refused `user`; `passwordFile` is what to check when it refused
    /// the credentials.
    case refused(address: HostConfig.Transport.Address, user: String, BrokerRefusal, passwordFile: String)
    /// No broker could be reached at `address`; `retrying`: it is tried again as it is.
    case unreachable(address: HostConfig.Transport.Address, Unreachable, retrying: Bool)
    /// The connection was lost (the broker's or the system's words); it reconnects.
    case lost(String)
    /// The broker refused device `login`, which connected before from this data folder: it was
    /// removed from its user's devices (or its password changed).
    case deviceRemoved(address: HostConfig.Transport.Address, login: String)
    /// The broker said another connection of `user` took the session over.
    case takenOver(user: String)
    /// Another host of `user` holds the session.
    case connectedElsewhere(user: String)
}

/// What the broker's ACL keeps this host from.
public enum ACLProblem: Sendable, Equatable {
    /// The probe a host sends itself at connect did not come back through its inbox.
    case probeLost
    /// The inbox's subscription was refused (the broker's words).
    case inboxRefused(String)
    /// The fleet configuration's subscription was refused: the cached one applies.
    case fleetRefused(String)
    /// `user` may not publish to `topic`: the message stays queued.
    case publishRefused(user: String, topic: String, reason: String)
    /// `user` may not write to its own inbox (its probe was refused).
    case ownInboxRefused(user: String)
}

/// Why a fleet configuration that came from the broker was not applied.
public enum FleetNotApplied: Sendable, Equatable {
    /// The broker holds none now; `kept` is the version that stays (`nil`: host.json alone applies).
    case removed(kept: Int64?)
    /// Not one a host takes.
    case refused(FleetConfig.Refusal, kept: Int64?)
    /// Older than the one applied.
    case older(version: Int64, applied: Int64)
}

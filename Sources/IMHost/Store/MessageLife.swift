/// Where one of the user's own messages stands.
public enum OutgoingState: String, Sendable, Codable, CaseIterable {
    /// Stored, waiting to go (or to go again).
    case queued
    /// The broker took it; no receipt yet.
    case sent
    /// The receiver stored it and said so.
    case delivered
    /// The receiver's chat showed it.
    case read
    /// The receiver refused it, with the reason: sent again only by `/retry`.
    case failed
    /// Not delivered within `transport.giveUpHours`: no longer sent, until `/retry`.
    case givenUp = "given-up"
}

/// Where a peer's message stands.
public enum IncomingState: String, Sendable, Codable, CaseIterable {
    /// Stored; not shown in an interactive chat yet (it counts as unread).
    case received
    /// Shown in an interactive chat (or `/read`).
    case read
}

/// The one owner of a message's life, as ``LineTable/allows(_:_:)`` is of a line's: which moves
/// each state may make. The store writes a state only through it: each write's `WHERE` names the
/// states the table allows the move from (``from(_:)``), so a move the table does not list
/// changes nothing. The database refuses a state the code does not know (triggers of migration
/// 4, which list these states; a test holds the two together), and a state read that this code
/// does not know is reported, never read as another.
public enum MessageLife {
    /// The moves of the user's own messages.
    static let outgoing: [OutgoingState: Set<OutgoingState>] = [
        // A receipt may come before the broker's answer does.
        .queued: [.sent, .delivered, .read, .failed, .givenUp],
        .sent: [.delivered, .read, .failed, .givenUp],
        // Read is the last word: a late delivered receipt does not undo it.
        .delivered: [.read],
        .read: [],
        // A peer that refused a message cannot take the refusal back by saying it read it.
        .failed: [.queued],
        // One given up may still have arrived: the receiver's word wins.
        .givenUp: [.queued, .delivered, .read],
    ]

    /// The moves of a peer's messages.
    static let incoming: [IncomingState: Set<IncomingState>] = [
        .received: [.read],
        .read: [],
    ]

    /// Whether one of the user's messages may move from `from` to `to`.
    public static func allows(_ from: OutgoingState, _ to: OutgoingState) -> Bool { outgoing[from]?.contains(to) ?? false }

    /// Whether a peer's message may move from `from` to `to`.
    public static func allows(_ from: IncomingState, _ to: IncomingState) -> Bool { incoming[from]?.contains(to) ?? false }

    /// The states a move to `to` may come from, as an SQL condition on `column`.
    static func from(_ to: OutgoingState, column: String = "state") -> String {
        inList(column, OutgoingState.allCases.filter { allows($0, to) }.map(\.rawValue))
    }

    /// The same for a peer's message.
    static func from(_ to: IncomingState, column: String = "state") -> String {
        inList(column, IncomingState.allCases.filter { allows($0, to) }.map(\.rawValue))
    }

    private static func inList(_ column: String, _ values: [String]) -> String {
        values.isEmpty ? "0" : "\(column) IN (" + values.map { "'\($0)'" }.joined(separator: ", ") + ")"
    }
}

extension MessageState {
    /// One of the user's messages as it stands.
    public init(_ state: OutgoingState) {
        switch state {
        case .queued: self = .queued
        case .sent: self = .sent
        case .delivered: self = .delivered
        case .read: self = .read
        case .failed: self = .failed
        case .givenUp: self = .givenUp
        }
    }

    /// A peer's message as it stands.
    public init(_ state: IncomingState) {
        self = state == .read ? .read : .received
    }

    /// A state as the store holds it, for a message in that direction; ``unknown`` for a value
    /// this code does not know there (it is reported, never taken for another).
    init(stored text: String, outgoing: Bool) {
        if outgoing {
            self = OutgoingState(rawValue: text).map(MessageState.init) ?? .unknown
        } else {
            self = IncomingState(rawValue: text).map(MessageState.init) ?? .unknown
        }
    }
}

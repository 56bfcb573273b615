/// What the user's peers signal and what this host signals them, one of the ``Courier``'s
/// parts: "typing" and "online", both QoS 0 on the peer's inbox (no new subscription; a QoS 0
/// publish makes no JetStream consumer and is not stored, and mosquitto queues none for a
/// client away), never stored, never answered, and only to hosts that announced them. Nothing
/// goes to a blocked peer, and nothing from one is shown.
///
/// Last seen is learned without anything retained or queued: it is when anything last came
/// from the peer (a message, a receipt, a signal), kept in memory by the process holding the
/// connection; before anything came on this connection, the newest of the peer's messages in
/// the store says it.
final class PeerSignals {
    /// Where a peer stands, as far as this host knows.
    struct Seen: Equatable {
        /// It said it is online, less than ``Envelope/Feature/onlineFor`` ago, and not that it left.
        var online = false
        /// When anything last came from it, in ms since 1970.
        var lastSeen: Int64?
    }

    private let store: MessageStore
    private let connection: BrokerConnection
    private let ledger: CourierLedger
    /// Whether the person lets peers see when they are online (`privacy.onlineStatus`): when
    /// not, no online signal goes, and none that comes is shown.
    var showsOnline = true
    /// When each peer was last heard from, and until when each counts as online.
    private var heard: [String: Int64] = [:]
    private var onlineUntil: [String: Int64] = [:]
    /// When this host last signalled typing to each peer.
    private var typingSent: [String: Int64] = [:]
    /// When this host last said it is online, and to whom.
    private var announcedAt: Int64?
    private var announcedTo: [String] = []
    /// The most recent conversations whose peers are told this host is online.
    static let announcedPeers = 20

    init(store: MessageStore, connection: BrokerConnection, ledger: CourierLedger) {
        self.store = store
        self.connection = connection
        self.ledger = ledger
    }

    /// The connection went or came: this host says it is online again at the next service.
    func reset() {
        announcedAt = nil
    }

    /// A peer newly known to take online signals: they are said again at the next service.
    func announceSoon() { announcedAt = nil }

    // MARK: What comes

    /// Something `peer` sent at `time` came (a signal: now; a message: when it says it was
    /// sent, never later than now, so a backlog the broker kept says when, not that it came now).
    func heardFrom(_ peer: String, at time: Int64) { heard[peer] = max(heard[peer] ?? 0, time) }

    /// `peer` is typing: said to whoever shows its chat, unless it is blocked.
    func typingCame(from peer: String, now: Int64) {
        guard (try? store.blocked(peer)) != true else { return }
        ledger.record(.typing(peer: peer))
    }

    /// `peer` says it is online, or leaves.
    func onlineCame(from peer: String, _ online: Bool, now: Int64) {
        guard showsOnline, (try? store.blocked(peer)) != true else { return }
        let was = seen(peer, now: now).online
        if online { onlineUntil[peer] = now + Envelope.Feature.onlineFor } else { onlineUntil[peer] = nil }
        if was != online { ledger.record(.seen(peer: peer)) }
    }

    /// Where `peer` stands now (nothing, when the person shows no one's).
    func seen(_ peer: String, now: Int64) -> Seen {
        guard showsOnline else { return Seen() }
        let last = heard[peer] ?? (try? store.lastHeard(from: peer)) ?? nil
        if heard[peer] == nil, let last { heard[peer] = last }
        return Seen(online: (onlineUntil[peer] ?? 0) > now, lastSeen: last)
    }

    // MARK: What goes

    /// Says the user is typing to `peer`, at most once every ``Envelope/Feature/typingEvery``,
    /// when its host takes it and it is not blocked.
    func typing(to peer: String, now: Int64) {
        guard connection.isOnline, now - (typingSent[peer] ?? 0) >= Envelope.Feature.typingEvery,
              (try? store.features(of: peer))??.contains(Envelope.Feature.typing) == true, (try? store.blocked(peer)) != true else { return }
        if connection.signal(topic: Topic.inbox(to: peer, from: connection.user).name, payload: Envelope.typing.bytes) { typingSent[peer] = now }
    }

    /// While online: says so to the peers of the most recent conversations whose hosts take it,
    /// at connect and every ``Envelope/Feature/onlineEvery``; and counts peers whose time is up as
    /// gone.
    func service(now: Int64) {
        for (peer, until) in onlineUntil where until <= now {
            onlineUntil[peer] = nil
            ledger.record(.seen(peer: peer))
        }
        guard showsOnline, connection.isOnline, now - (announcedAt ?? .min / 2) >= Envelope.Feature.onlineEvery else { return }
        announcedAt = now
        announcedTo = (try? store.peersTaking(Envelope.Feature.online, limit: Self.announcedPeers)) ?? []
        for peer in announcedTo {
            _ = connection.signal(topic: Topic.inbox(to: peer, from: connection.user).name, payload: Envelope.online(true).bytes)
        }
    }

    /// The host leaves: the peers it told it is online hear it is not.
    func goodbye() {
        guard showsOnline, connection.isOnline else { return }
        for peer in announcedTo {
            _ = connection.signal(topic: Topic.inbox(to: peer, from: connection.user).name, payload: Envelope.online(false).bytes)
        }
        announcedTo = []
    }
}

import IMKit

/// What the user tells a peer's host about messages already sent, apart from the messages
/// themselves: a recall, a reaction. Each waits in `peer_notes_out` until the peer's host
/// answers it, and goes only to a host whose receipts announced the feature of its kind (an
/// older host would refuse a kind it does not know, with a notice each time). What each peer's
/// host announced is kept here too (`peer_features`).
public struct PeerNote: Sendable, Equatable {
    /// What it says; the raw value is the feature the peer's host must announce.
    public enum Kind: String, Sendable, CaseIterable {
        case recall, react, revise
    }

    public var peer: String
    public var kind: Kind
    /// The message it is about: its sender (the user or the peer) and that sender's id for it.
    public var sender: String
    public var id: String
    /// A reaction's emoji (`""`: taken back); a revision's number, key and payload
    /// (``revisionValue(_:)``); nothing for a recall.
    public var value: String = ""
    /// When the user did it, in ms since 1970.
    public var at: Int64
    /// How many times it went before.
    public var attempts: Int = 0

    public init(peer: String, kind: Kind, sender: String, id: String, value: String = "", at: Int64, attempts: Int = 0) {
        self.peer = peer
        self.kind = kind
        self.sender = sender
        self.id = id
        self.value = value
        self.at = at
        self.attempts = attempts
    }

    /// The envelope it goes as (`nil`: a revision's value that does not read, which this host
    /// never writes).
    public var envelope: Envelope? {
        switch kind {
        case .recall: .recall(ids: [id], at: at)
        case .react: .react(Envelope.Reaction(id: id, from: sender, emoji: value, at: at))
        case .revise: Self.revision(value, id: id, from: sender, at: at).map(Envelope.revise)
        }
    }

    /// A revision as a note keeps it: `{"rev":N,"key":K,"at":MS,"payload":{...}}`.
    static func revisionValue(_ revision: Envelope.Revision) -> String {
        #"{"rev":\#(revision.number),"key":\#(JSONNode.quoted(revision.key)),"at":\#(revision.at),"payload":\#(revision.payload.json)}"#
    }

    /// The revision a note's value holds (what ``revisionValue(_:)`` wrote); its time is the
    /// value's, or `at` when it has none.
    static func revision(_ value: String, id: String, from sender: String, at: Int64) -> Envelope.Revision? {
        guard case .object(let members)? = try? JSONParser.parse(value).value,
              case .number(let number, _)? = members.member("rev")?.value, case .string(let key)? = members.member("key")?.value,
              let payload = members.member("payload") else { return nil }
        let time = Envelope.milliseconds(members.member("at")) ?? at
        return Envelope.Revision(id: id, from: sender, number: Int(number), key: key, payload: MessagePayload(json: payload.jsonText), at: time)
    }
}

extension MessageStore {
    /// Queues `note`, in the open transaction: a later one of the same kind about the same
    /// message replaces it (a reaction changed again), and goes at once.
    func queue(_ note: PeerNote) throws {
        try database.statement("""
            INSERT INTO peer_notes_out (peer, kind, global_id, sender, value, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT (peer, kind, global_id) DO UPDATE SET value = ?5, at = ?6, attempts = 0, next_at = 0
            """).bind(note.peer, note.kind.rawValue, note.id, note.sender, note.value, note.at).run()
    }

    /// The notes due at `now` for peers whose hosts take their kind, oldest first, at most
    /// `limit`. Those for peers whose hosts said they take no such kind are dropped (a recalled
    /// message stays there); those for peers not heard from since wait.
    public func notesDue(now: Int64, limit: Int) throws(StoreError) -> [PeerNote] {
        guard !isReadOnly else { return [] }
        return try guarded {
            try database.statement("""
                DELETE FROM peer_notes_out WHERE EXISTS (SELECT 1 FROM peer_features f WHERE f.peer = peer_notes_out.peer
                                                         AND ' ' || f.features || ' ' NOT LIKE '% ' || peer_notes_out.kind || ' %')
                """).run()
            let rows = try database.statement("""
                SELECT n.peer, n.kind, n.sender, n.global_id, n.value, n.at, n.attempts FROM peer_notes_out n JOIN peer_features f ON f.peer = n.peer
                WHERE n.next_at <= ? ORDER BY n.at LIMIT ?
                """)
            try rows.bind(now, limit)
            var due: [PeerNote] = []
            while try rows.step() {
                guard let kind = PeerNote.Kind(rawValue: rows.text(1)) else { continue }
                due.append(PeerNote(peer: rows.text(0), kind: kind, sender: rows.text(2), id: rows.text(3), value: rows.text(4), at: rows.int(5),
                                    attempts: Int(rows.int(6))))
            }
            return due
        }
    }

    /// These notes were handed to the broker: each goes again at its `retryAt` unless answered
    /// before. One transaction, not waiting for the disk (as a message's `sent` is not): it
    /// records the connection's own progress, which a power cut may take back at the cost of a
    /// note sent again (its peer keeps a note once). A durable commit here, after each publish,
    /// held up whatever the connection did next by a flush.
    public func notesSent(_ notes: [(note: PeerNote, retryAt: Int64)]) throws(StoreError) {
        guard !isReadOnly, !notes.isEmpty else { return }
        try guarded {
            try database.transaction(durable: false) {
                for (note, retryAt) in notes {
                    try database.statement("UPDATE peer_notes_out SET attempts = attempts + 1, next_at = ? WHERE peer = ? AND kind = ? AND global_id = ? AND at = ?")
                        .bind(retryAt, note.peer, note.kind.rawValue, note.id, note.at).run()
                }
            }
        }
    }

    /// Every note waiting is due now (the connection came back).
    public func makeNotesDue() throws(StoreError) {
        guard !isReadOnly else { return }
        try guarded { try database.statement("UPDATE peer_notes_out SET next_at = 0").run() }
    }

    /// `peer`'s host answered the notes of `kind` about these messages (those made at or before
    /// `at`, when it says: a reaction changed since still goes). Returns how many were waiting.
    @discardableResult
    public func notesAnswered(by peer: String, kind: PeerNote.Kind, ids: [String], at: Int64? = nil) throws(StoreError) -> Int {
        try guarded {
            try database.statement("""
                DELETE FROM peer_notes_out WHERE peer = ? AND kind = ? AND global_id IN (SELECT value FROM json_each(?)) AND (?4 IS NULL OR at <= ?4)
                """).bind(peer, kind.rawValue, Self.jsonList(ids), at).run()
            return database.changes
        }
    }

    // MARK: What a peer's host takes

    /// Remembers what `peer`'s host announced in a receipt (`nil`: a host before features,
    /// which takes none). Written only when it changed.
    public func rememberFeatures(of peer: String, _ features: [String]?, at time: Int64) throws(StoreError) {
        guard !isReadOnly else { return }
        let said = (features ?? []).joined(separator: " ")
        try guarded {
            try database.statement("""
                INSERT INTO peer_features (peer, features, said_at) VALUES (?1, ?2, ?3)
                ON CONFLICT (peer) DO UPDATE SET features = ?2, said_at = ?3 WHERE features != ?2
                """).bind(peer, said, time).run()
        }
    }

    /// What `peer`'s host last announced; `nil` when no receipt of it came since this host knew.
    public func features(of peer: String) throws(StoreError) -> Set<String>? {
        try guarded { try features(ofPeer: peer) }
    }

    /// The peers of the `limit` most recent conversations whose hosts announced `feature`, none
    /// blocked.
    public func peersTaking(_ feature: String, limit: Int) throws(StoreError) -> [String] {
        try guarded {
            let rows = try database.statement("""
                SELECT c.peer FROM conversations c JOIN peer_features f ON f.peer = c.peer
                WHERE ' ' || f.features || ' ' LIKE '% ' || ?1 || ' %' AND c.peer NOT IN (SELECT peer FROM blocked)
                ORDER BY c.updated_at DESC LIMIT ?2
                """)
            try rows.bind(feature, limit)
            var peers: [String] = []
            while try rows.step() { peers.append(rows.text(0)) }
            return peers
        }
    }

    /// When the newest of `peer`'s messages that came over the transport was sent (as it said,
    /// never later than it was stored): when it was last heard from, as far as the store knows.
    public func lastHeard(from peer: String) throws(StoreError) -> Int64? {
        try guarded {
            let find = try database.statement("SELECT max(min(sent_at, stored_at)) FROM messages WHERE sender = ? AND outgoing = 0 AND arrived = 1")
            try find.bind(peer)
            _ = try find.step()
            return find.optionalInt(0)
        }
    }

    func features(ofPeer peer: String) throws -> Set<String>? {
        let find = try database.statement("SELECT features FROM peer_features WHERE peer = ?")
        try find.bind(peer)
        guard try find.step() else { return nil }
        return Set(find.text(0).split(separator: " ").map(String.init))
    }
}

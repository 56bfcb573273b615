#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMKit

/// What a device keeps of its user's other devices (``Migrations``, 8): which it knows and how
/// far it has what each has (`siblings.through`, in that device's own numbering of what it
/// stores), what it has to tell them (`sibling_notes`), and the messages it gives them and takes
/// from them (``Envelope/Sibling``); what they read is kept and applied by ``siblingSaw(_:upTo:)``.
extension MessageStore {
    public typealias SiblingItem = Envelope.Sibling.Item

    /// How the user's own messages sent from its first device are stored at its other devices
    /// (`messages.device`; this device's own name none): no device is named so.
    static let firstDevice = "~"

    /// The user's other devices this one has heard from, by login, with how far this one has
    /// what each has (`nil`: nothing asked of it yet).
    public func siblings() throws(StoreError) -> [String: Int64?] {
        try guarded {
            let rows = try database.statement("SELECT login, through FROM siblings")
            var known: [String: Int64?] = [:]
            while try rows.step() { known[rows.text(0)] = rows.optionalInt(1) }
            return known
        }
    }

    /// The points a `sync` names: those of the `limit` devices heard from most lately that this
    /// one has asked something of (a device removed long ago drops out).
    public func siblingPoints(limit: Int) throws(StoreError) -> [String: Int64] {
        try guarded {
            let rows = try database.statement("SELECT login, through FROM siblings WHERE through IS NOT NULL ORDER BY seen_at DESC LIMIT ?")
            try rows.bind(limit)
            var points: [String: Int64] = [:]
            while try rows.step() { points[rows.text(0)] = rows.int(1) }
            return points
        }
    }

    /// A catch-up from `login` stalled on the chunk that ends at `through`. The first time, it
    /// is noted (the next connect tries it again); the second, the point moves past it and this
    /// returns true: what it could not give is not asked for again.
    public func siblingStalled(_ login: String, at through: Int64) throws(StoreError) -> Bool {
        try refuseIfReadOnly()
        return try guarded {
            try database.transaction {
                let find = try database.statement("SELECT stalled FROM siblings WHERE login = ?")
                try find.bind(login)
                let before = try find.step() ? find.optionalInt(0) : nil
                guard before == through else {
                    try database.statement("UPDATE siblings SET stalled = ? WHERE login = ?").bind(through, login).run()
                    return false
                }
                try database.statement("UPDATE siblings SET stalled = NULL, through = max(coalesce(through, 0), ?) WHERE login = ?").bind(through, login).run()
                return true
            }
        }
    }

    /// Remembers that device `login` of the user exists (it said something).
    public func sawSibling(_ login: String, now: Int64) throws(StoreError) {
        try refuseIfReadOnly()
        try guarded {
            try database.statement("INSERT INTO siblings (login, seen_at) VALUES (?1, ?2) ON CONFLICT (login) DO UPDATE SET seen_at = ?2")
                .bind(login, now).run()
        }
    }

    /// This device has all that `login` had through its `through`.
    public func setSiblingThrough(_ login: String, _ through: Int64) throws(StoreError) {
        try refuseIfReadOnly()
        try guarded {
            try database.statement("""
                INSERT INTO siblings (login, through, seen_at) VALUES (?1, ?2, ?3)
                ON CONFLICT (login) DO UPDATE SET through = max(coalesce(through, 0), ?2)
                """).bind(login, through, Clock.now()).run()
        }
    }

    /// Forgets device `login` (removed from the user's devices).
    public func forgetSibling(_ login: String) throws(StoreError) {
        try refuseIfReadOnly()
        try guarded { try database.statement("DELETE FROM siblings WHERE login = ?").bind(login).run() }
    }

    /// What this device has for another that asked (``Envelope/Sibling/sync(by:since:limit:)``),
    /// in the order it stored them, with its numbering of each: every message after `through`;
    /// with no `through` (a new device), the newest `limit` messages whose photos come to at
    /// most `photoBytes`. The user's own messages and those that came over the transport (not a
    /// scenario's or `/recv`'s, which are this device's alone).
    public func siblingIndex(after through: Int64?, limit: Int, photoBytes: Int) throws(StoreError) -> [(row: Int64, item: SiblingItem)] {
        guard limit > 0 else { return [] }
        return try guarded {
            var start = through ?? 0
            if through == nil {
                // From the newest back, until the count or the photos' bytes are reached.
                let newest = try database.statement("""
                    SELECT m.id, (SELECT coalesce(sum(length(p.bytes)), 0) FROM photos p WHERE p.message = m.id)
                                 + coalesce((SELECT length(v.bytes) FROM voices v WHERE v.message = m.id), 0)
                                 + coalesce((SELECT length(f.bytes) FROM files f WHERE f.message = m.id), 0)
                    FROM messages m WHERE m.outgoing = 1 OR m.arrived = 1 ORDER BY m.id DESC LIMIT ?
                    """)
                try newest.bind(limit)
                var bytes: Int64 = 0
                while try newest.step() {
                    bytes += newest.int(1)
                    if bytes > Int64(photoBytes) { break }
                    start = newest.int(0) - 1
                }
            }
            let rows = try database.statement("""
                SELECT m.id, c.peer, m.global_id, m.outgoing FROM messages m JOIN conversations c ON c.id = m.conversation
                WHERE m.id > ? AND (m.outgoing = 1 OR m.arrived = 1) ORDER BY m.id
                """)
            try rows.bind(start)
            var items: [(row: Int64, item: SiblingItem)] = []
            while try rows.step() {
                items.append((rows.int(0), SiblingItem(peer: rows.text(1), id: rows.text(2), outgoing: rows.int(3) != 0)))
            }
            return items
        }
    }

    /// Those of `items` this device does not have.
    public func lacking(_ items: [SiblingItem]) throws(StoreError) -> [SiblingItem] {
        try guarded {
            // What a chat cleared here held is not lacking: catching up never brings it back.
            let find = try database.statement("""
                SELECT 1 FROM messages WHERE sender = ?1 AND global_id = ?2 UNION ALL SELECT 1 FROM cleared WHERE sender = ?1 AND global_id = ?2
                """)
            return try items.filter { item in
                find.reset()
                try find.bind(item.outgoing ? user : item.peer, item.id)
                return try !find.step()
            }
        }
    }

    /// Copies of `items` as this device has them, for device `by` (this one) to send, until
    /// their payloads and photos come to `byteBudget` (at least one); `device` is this device's
    /// name (its own messages are stored without one). Also: the items it does not have, and
    /// those left for a later ask.
    public func copies(of items: [SiblingItem], by: String, device: String?,
                       byteBudget: Int = .max) throws(StoreError) -> (copies: [Envelope.Sibling.Copy], missing: [SiblingItem], later: [SiblingItem]) {
        try guarded {
            let find = try database.statement("""
                SELECT id, seq, key, payload, sent_at, jump, state, device, reply_sender, reply_id, recalled_at FROM messages
                WHERE sender = ? AND global_id = ?
                """)
            var copies: [Envelope.Sibling.Copy] = [], missing: [SiblingItem] = [], later: [SiblingItem] = []
            var bytes = 0
            for item in items {
                guard bytes < byteBudget || copies.isEmpty else {
                    later.append(item)
                    continue
                }
                find.reset()
                try find.bind(item.outgoing ? user : item.peer, item.id)
                guard try find.step() else {
                    missing.append(item)
                    continue
                }
                let jump = self.jump(find.optionalText(5))
                let message = Envelope.Message(id: item.id, seq: Int(find.optionalInt(1) ?? 0), key: find.text(2), payload: MessagePayload(json: find.text(3)),
                                               sentAt: find.int(4), jump: jump, photos: try photos(ofRow: find.int(0)),
                                               voice: find.text(2) == "voice" ? try voice(ofRow: find.int(0)) : nil,
                                               file: find.text(2) == "file" ? try file(ofRow: find.int(0)) : nil,
                                               device: find.optionalText(7).map { $0 == Self.firstDevice ? nil : $0 } ?? (item.outgoing ? device : nil),
                                               reply: ReplyTo.stored(find.optionalText(8), find.optionalText(9)),
                                               recalledAt: find.optionalInt(10))
                bytes += message.payload.json.utf8.count + message.photos.reduce(0) { $0 + $1.bytes.count } + (message.voice?.bytes.count ?? 0) + (message.file?.bytes.count ?? 0)
                copies.append(Envelope.Sibling.Copy(by: by, peer: item.peer, outgoing: item.outgoing, state: find.text(6), message: message))
            }
            return (copies, missing, later)
        }
    }

    /// Stores what another device of the user copied that this one lacks, in one transaction:
    /// the user's own messages in the state they were in there (never queued here: their
    /// device delivers them), the peers' as arrived, read if they were read there. `device` is
    /// this device's name. Returns the peers whose conversations changed.
    public func storeCopies(_ copies: [Envelope.Sibling.Copy], device: String?) throws(StoreError) -> Set<String> {
        try refuseIfReadOnly()
        return try guarded {
            try database.transaction {
                let now = Clock.now()
                var changed: Set<String> = []
                for copy in copies {
                    let message = copy.message
                    // The user's own messages name the device that sent them: none for this
                    // one, `~` for the user's first device (whose own messages name none).
                    let origin = copy.outgoing ? (message.device == device ? nil : message.device ?? Self.firstDevice) : message.device
                    let incoming = IncomingMessage(from: copy.outgoing ? user : copy.peer, globalID: message.id, seq: message.seq == 0 ? nil : message.seq,
                                                   key: message.key, payload: message.payload, sentAt: message.sentAt, jump: message.jump, arrived: !copy.outgoing,
                                                   photos: message.recalledAt == nil ? message.photos : [],
                                                   voice: message.recalledAt == nil ? message.voice : nil,
                                                   file: message.recalledAt == nil ? message.file : nil, device: origin,
                                                   reply: Self.reply(message.reply, between: user, and: copy.peer))
                    if try isStored(incoming) { continue }
                    // A peer blocked here is blocked on every device: its messages are not kept.
                    if !copy.outgoing, try isBlocked(copy.peer) { continue }
                    let conversation = try self.conversation(with: copy.peer)
                    let place = try self.place(in: conversation)
                    let row: Int64
                    if copy.outgoing {
                        let state = copy.state == "queued" ? "sent" : copy.state
                        // One of another device's sends that came after a later one (a catch-up)
                        // says which shown message it was sent before, as a peer's late one does.
                        var sentBefore: Int?
                        if let origin, let seq = incoming.seq {
                            let later = try database.statement("""
                                SELECT position FROM messages WHERE conversation = ? AND device = ? AND outgoing = 1 AND seq > ? ORDER BY seq, id LIMIT 1
                                """)
                            try later.bind(conversation, origin, seq)
                            sentBefore = try later.step() ? Int(later.int(0)) : nil
                        }
                        try database.statement("""
                            INSERT INTO messages (conversation, position, sender, recipient, global_id, seq, key, payload, sent_at, stored_at,
                                                  outgoing, state, jump, summary, device, sent_before, reply_sender, reply_id)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)
                            """).bind(conversation, place.next, user, copy.peer, message.id, incoming.seq, message.key, message.payload.json, message.sentAt, now,
                                      state, message.jump.map(Self.encode), MessageText.of(key: message.key, payload: message.payload.json), origin, sentBefore,
                                      incoming.reply?.from, incoming.reply?.id).run()
                        row = database.lastInsertedRow
                        if !incoming.photos.isEmpty { try insertPhotos(incoming.photos, message: row) }
                        if let voice = incoming.voice { try insertVoice(voice, message: row) }
                        if let file = incoming.file { try insertFile(file, message: row) }
                    } else {
                        row = try storeIncoming(incoming, at: place, now: now).row
                        if copy.state == "read" { try database.statement("UPDATE messages SET state = 'read' WHERE id = ?").bind(row).run() }
                    }
                    // A message recalled there is stored as recalled: nothing of what it said.
                    if let at = message.recalledAt {
                        try database.statement("UPDATE messages SET payload = '{}', summary = '', recalled_at = ? WHERE id = ?").bind(at, row).run()
                    }
                    let unread = !copy.outgoing && copy.state != "read" ? 1 : 0
                    try database.statement("""
                        UPDATE conversations SET message_count = message_count + 1, last_message = ?, updated_at = max(updated_at, ?), unread = unread + ?
                        WHERE id = ?
                        """).bind(row, message.sentAt, unread, conversation).run()
                    wordsPending = true
                    changed.insert(copy.peer)
                }
                return changed
            }
        }
    }

    /// `reply` when it names a message of one of the conversation's two people, else `nil`:
    /// a reply to anyone else's is shown without its quote.
    static func reply(_ reply: ReplyTo?, between one: String, and other: String) -> ReplyTo? {
        reply.flatMap { $0.from == one || $0.from == other ? $0 : nil }
    }

    // MARK: What this device tells the others

    /// A note for the user's other devices, in the caller's transaction: sent when online.
    func noteSiblings(_ kind: String, peer: String, id: String? = nil, blocked: Bool? = nil, value: String? = nil, sender: String? = nil) throws {
        try database.statement("INSERT INTO sibling_notes (kind, peer, global_id, blocked, queued_at, value, sender) VALUES (?, ?, ?, ?, ?, ?, ?)")
            .bind(kind, peer, id, blocked, Clock.now(), value, sender).run()
    }

    /// The notes waiting to be told, oldest first, as envelopes written by `by`, with their rows.
    public func siblingNotes(by: String, limit: Int) throws(StoreError) -> [(row: Int64, note: Envelope.Sibling)] {
        try guarded {
            let rows = try database.statement("SELECT id, kind, peer, global_id, blocked, queued_at, value, sender FROM sibling_notes ORDER BY id LIMIT ?")
            try rows.bind(limit)
            var notes: [(row: Int64, note: Envelope.Sibling)] = []
            while try rows.step() {
                if rows.text(1) == "seen", let id = rows.optionalText(3) {
                    notes.append((rows.int(0), .seen(by: by, peer: rows.text(2), upTo: id)))
                } else if rows.text(1) == "recalled", let id = rows.optionalText(3) {
                    notes.append((rows.int(0), .recalled(by: by, peer: rows.text(2), id: id, at: rows.int(5))))
                } else if rows.text(1) == "revised" {
                    // One whose value does not read (never written so) is dropped with the rest told.
                    if let id = rows.optionalText(3), let sender = rows.optionalText(7),
                       let revision = PeerNote.revision(rows.optionalText(6) ?? "", id: id, from: sender, at: rows.int(5)) {
                        notes.append((rows.int(0), .revised(by: by, peer: rows.text(2), revision)))
                    }
                } else if rows.text(1) == "reacted", let id = rows.optionalText(3), let sender = rows.optionalText(7) {
                    notes.append((rows.int(0), .reacted(by: by, peer: rows.text(2),
                                                        Envelope.Reaction(id: id, from: sender, emoji: rows.optionalText(6) ?? "", at: rows.int(5)))))
                } else {
                    notes.append((rows.int(0), .block(by: by, peer: rows.text(2), blocked: rows.int(4) != 0)))
                }
            }
            return notes
        }
    }

    /// Notes told (or not to be told: no other device).
    public func dropSiblingNotes(through row: Int64) throws(StoreError) {
        guard !isReadOnly else { return }
        try guarded { try database.statement("DELETE FROM sibling_notes WHERE id <= ?").bind(row).run() }
    }
}

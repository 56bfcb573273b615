import IMKit

/// A message from a peer, as the transport (or `/recv`) hands it to the store.
public struct IncomingMessage: Sendable {
    public var from: String
    public var globalID: String
    public var seq: Int?
    public var key: String
    public var payload: MessagePayload
    public var sentAt: Int64
    public var jump: JumpPage?
    /// It came over the transport from another host (not `/recv`).
    public var arrived: Bool
    /// The photos it carries, each checked (or why it was refused), stored apart from the payload.
    public var photos: [AttachedPhoto]
    /// A voice message's recording, decoded whole (or why it was refused), stored apart too.
    public var voice: AttachedVoice?
    /// A file message's file (or why it was refused), stored apart too.
    public var file: AttachedFile?
    /// The sender's device that wrote it (`nil`: its first device): a sender's messages are in
    /// order by (device, seq), as each device numbers its own.
    public var device: String?
    /// The message it replies to, one of its conversation's two people's.
    public var reply: ReplyTo?

    public init(from: String, globalID: String, seq: Int?, key: String, payload: MessagePayload, sentAt: Int64, jump: JumpPage? = nil,
                arrived: Bool = false, photos: [AttachedPhoto] = [], voice: AttachedVoice? = nil, file: AttachedFile? = nil,
                device: String? = nil, reply: ReplyTo? = nil) {
        self.file = file
        self.voice = voice
        self.reply = reply
        self.device = device
        self.photos = photos
        self.from = from
        self.globalID = globalID
        self.seq = seq
        self.key = key
        self.payload = payload
        self.sentAt = sentAt
        self.jump = jump
        self.arrived = arrived
    }
}

extension MessageStore {
    /// The conversation with `peer`, made if it is new; a peer id that is empty, too long, or has
    /// control or bidirectional characters is refused.
    func conversation(with peer: String) throws -> Int64 {
        if let problem = StorePath.problem(withID: peer) { throw StoreError(.refused, "the peer id \(problem)") }
        let find = try database.statement("SELECT id FROM conversations WHERE peer = ?")
        try find.bind(peer)
        if try find.step() { return find.int(0) }
        try database.statement("INSERT INTO conversations (peer) VALUES (?)").bind(peer).run()
        return database.lastInsertedRow
    }

    /// The conversation with `peer` (made if it is new), its next position, and the `seq` of
    /// the user's next message to the peer: one look-up.
    private func sendingPlace(to peer: String) throws -> (conversation: Int64, position: Int, seq: Int) {
        let find = try database.statement("SELECT id, message_count, next_seq FROM conversations WHERE peer = ?")
        try find.bind(peer)
        if try find.step() { return (find.int(0), Int(find.int(1)), Int(find.int(2))) }
        // A new conversation (the peer id checked as it is made): empty, and the first seq is 1.
        return (try conversation(with: peer), 0, 1)
    }

    /// Stores a message the user sends to `peer` and queues it for delivery, in one durable
    /// transaction: when this returns, both are on disk. It gets a new global id and the next
    /// `seq` to that peer, at the end of the conversation. Its words reach the search index later
    /// (``catchUpSearchIndex(limit:)``, or a search), so this commit stays as small as a send can be.
    @discardableResult
    /// `draft` is the typed line this message comes from: it goes in the same transaction.
    /// `photos` and `voice` are stored with it, apart from its payload.
    public func storeOutgoing(to peer: String, key: String, payload: MessagePayload, at time: Int64, jump: JumpPage? = nil,
                              draft: Int64? = nil, photos: [AttachedPhoto] = [], voice: AttachedVoice? = nil,
                              file: AttachedFile? = nil, reply: ReplyTo? = nil) throws(StoreError) -> StoredMessage {
        try refuseIfReadOnly()
        return try guarded {
            try database.transaction {
                wordsPending = true
                let (conversation, position, seq) = try sendingPlace(to: peer)
                let globalID = GlobalID.make(at: time)
                let text = MessageText.of(key: key, payload: payload.json)
                try database.statement("""
                    INSERT INTO messages (conversation, position, sender, recipient, global_id, seq, key, payload, sent_at, stored_at,
                                          outgoing, state, jump, summary, reply_sender, reply_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 'queued', ?, ?, ?, ?)
                    """).bind(conversation, position, user, peer, globalID, seq, key, payload.json, time, Clock.now(), jump.map(Self.encode), text,
                              reply?.from, reply?.id).run()
                let row = database.lastInsertedRow
                if !photos.isEmpty { try insertPhotos(photos, message: row) }
                if let voice { try insertVoice(voice, message: row) }
                if let file { try insertFile(file, message: row) }
                try database.statement("INSERT INTO outbox (message, peer, queued_at) VALUES (?, ?, ?)").bind(row, peer, time).run()
                if let draft {
                    // The draft is taken in the send's transaction: a send of a draft another
                    // process sent already stores nothing.
                    try database.statement("DELETE FROM drafts WHERE id = ?").bind(draft).run()
                    guard database.changes > 0 else {
                        throw StoreError(.taken, "what was typed was sent already, by another chat of this user")
                    }
                }
                try database.statement("""
                    UPDATE conversations SET message_count = message_count + 1, next_seq = next_seq + 1, last_message = ?, updated_at = ?
                    WHERE id = ?
                    """).bind(row, time, conversation).run()
                return StoredMessage(envelope: envelope(position: position, peer: peer, from: user, to: peer, time: time, key: key,
                                                        payload: payload, globalID: globalID),
                                     position: position, state: .queued, failure: nil, seq: seq, isOutgoing: true, jump: jump, row: row,
                                     reply: reply)
            }
        }
    }

    /// What storing one incoming message came to.
    public enum Arrival: Sendable, Equatable {
        /// Stored now, at this place.
        case stored(StoredMessage)
        /// It was stored before: storing it again changed nothing.
        case duplicate
        /// Its sender is blocked: not stored.
        case blocked
        /// Its sender is past the day's budget (``PeerBudget``): not stored.
        case overBudget
    }

    /// How much one peer's messages may add to the store in a day (UTC).
    public struct PeerBudget: Sendable, Equatable {
        public var messages: Int
        public var bytes: Int

        public init(messages: Int, bytes: Int) {
            self.messages = messages
            self.bytes = bytes
        }

        /// host.json's `limits.peerMessagesPerDay` and `limits.peerBytesPerDay`.
        public init(_ limits: HostConfig.Limits) {
            self.init(messages: limits.peerMessagesPerDay, bytes: limits.peerBytesPerDay)
        }

        /// The day of a time in milliseconds, as the budget counts it.
        public static func day(of time: Int64) -> Int64 { time / 86_400_000 }
    }

    /// Stores messages from peers, in one durable transaction, each once: a message already
    /// stored under its (sender, global id) changes nothing. Each takes the next place in its
    /// conversation, where it arrived: messages already stored never move. One whose `seq` is
    /// lower than one of its sender's stored messages arrived late, and records which shown
    /// message it was sent before (``StoredMessage/sentBefore``). Storing costs the same
    /// whatever `seq` a message claims. With a `budget`, what each sender's messages add in a
    /// day is counted, and a message past it is not stored (``Arrival/overBudget``).
    ///
    /// What a batch learns of a sender (blocked or not, its conversation and next place, what it
    /// spent today) is read once and written back once: a message costs its own rows, not a
    /// dozen statements. Their words reach the search index later, as a send's do
    /// (``catchUpSearchIndex(limit:)``): the index's pages, a third of what one arrival wrote,
    /// are not in the commit an arrival waits for.
    public func storeIncoming(_ messages: [IncomingMessage], budget: PeerBudget? = nil) throws(StoreError) -> [Arrival] {
        try refuseIfReadOnly()
        return try guarded {
            try database.transaction {
                let now = Clock.now(), day = PeerBudget.day(of: now)
                // Only today's counts matter.
                if budget != nil { try database.statement("DELETE FROM peer_budget WHERE day < ?").bind(day).run() }
                var blocked: [String: Bool] = [:]
                var places: [String: Place] = [:]
                var spent: [String: Spent] = [:]
                let arrivals = try messages.map { message -> Arrival in
                    let sender = message.from
                    // A blocked sender's messages and a message stored already cost nothing.
                    let isBlocked = try blocked[sender] ?? self.isBlocked(sender)
                    blocked[sender] = isBlocked
                    if isBlocked { return .blocked }
                    if try isStored(message) { return .duplicate }
                    if let budget {
                        var today = try spent[sender] ?? spentToday(by: sender, day: day)
                        let size = Self.storedBytes(of: message, recipient: user)
                        guard today.messages + 1 <= budget.messages, today.bytes + size <= budget.bytes else { return .overBudget }
                        today.messages += 1
                        today.bytes += size
                        today.changed = true
                        spent[sender] = today
                    }
                    var place = try places[sender] ?? self.place(in: conversation(with: sender))
                    let stored = try storeIncoming(message, at: place, now: now)
                    wordsPending = true
                    place.next += 1
                    place.stored += 1
                    place.last = stored.row
                    places[sender] = place
                    return .stored(stored)
                }
                for place in places.values {
                    try database.statement("""
                        UPDATE conversations SET message_count = message_count + ?, unread = unread + ?, last_message = ?,
                            updated_at = max(updated_at, ?)
                        WHERE id = ?
                        """).bind(place.stored, place.stored, place.last, now, place.conversation).run()
                }
                for (sender, today) in spent where today.changed {
                    try database.statement("""
                        INSERT INTO peer_budget (peer, day, messages, bytes) VALUES (?1, ?2, ?3, ?4)
                        ON CONFLICT (peer, day) DO UPDATE SET messages = ?3, bytes = ?4
                        """).bind(sender, day, today.messages, today.bytes).run()
                }
                return arrivals
            }
        }
    }

    /// A conversation a batch of arrivals adds to: the next place in it, and what the batch
    /// stored there.
    struct Place {
        var conversation: Int64
        var next: Int
        var stored = 0
        var last: Int64 = 0
    }

    /// What a sender spent of its budget today, and whether this batch spent more.
    private struct Spent {
        var messages: Int
        var bytes: Int
        var changed = false
    }

    func place(in conversation: Int64) throws -> Place {
        let count = try database.statement("SELECT message_count FROM conversations WHERE id = ?")
        try count.bind(conversation)
        _ = try count.step()
        return Place(conversation: conversation, next: Int(count.int(0)))
    }

    private func spentToday(by sender: String, day: Int64) throws -> Spent {
        let spent = try database.statement("SELECT messages, bytes FROM peer_budget WHERE peer = ? AND day = ?")
        try spent.bind(sender, day)
        return try spent.step() ? Spent(messages: Int(spent.int(0)), bytes: Int(spent.int(1))) : Spent(messages: 0, bytes: 0)
    }

    /// Whether a message of this sender with this global id is stored, or was, in a chat
    /// cleared since (``clear(_:)``).
    func isStored(_ message: IncomingMessage) throws -> Bool {
        let known = try database.statement("""
            SELECT 1 FROM messages WHERE sender = ?1 AND global_id = ?2 UNION ALL SELECT 1 FROM cleared WHERE sender = ?1 AND global_id = ?2
            """)
        try known.bind(message.from, message.globalID)
        return try known.step()
    }

    /// Stores a message not stored yet, from a sender not blocked, at `place`; its conversation's
    /// counts are the batch's to update.
    func storeIncoming(_ message: IncomingMessage, at place: Place, now: Int64) throws -> StoredMessage {
        let sentBefore = try message.seq.flatMap { seq in try laterMessage(of: message.from, device: message.device, in: place.conversation, than: seq) }
        let text = MessageText.of(key: message.key, payload: message.payload.json)
        try database.statement("""
            INSERT INTO messages (conversation, position, sender, recipient, global_id, seq, key, payload, sent_at, stored_at,
                                  outgoing, state, jump, summary, arrived, sent_before, device, reply_sender, reply_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 'received', ?, ?, ?, ?, ?, ?, ?)
            """).bind(place.conversation, place.next, message.from, user, message.globalID, message.seq, message.key, message.payload.json,
                      message.sentAt, now, message.jump.map(Self.encode), text, message.arrived, sentBefore, message.device,
                      message.reply?.from, message.reply?.id).run()
        let row = database.lastInsertedRow
        if !message.photos.isEmpty { try insertPhotos(message.photos, message: row) }
        if let voice = message.voice { try insertVoice(voice, message: row) }
        if let file = message.file { try insertFile(file, message: row) }
        return StoredMessage(envelope: envelope(position: place.next, peer: message.from, from: message.from, to: user,
                                                time: message.sentAt, key: message.key, payload: message.payload, globalID: message.globalID),
                             position: place.next, state: .received, failure: nil, seq: message.seq, isOutgoing: false,
                             jump: message.jump, row: row, arrived: message.arrived, sentBefore: sentBefore, reply: message.reply)
    }

    /// The position of `sender`'s stored message in `conversation` with the smallest `seq` above
    /// `seq`, when there is one (then a message with `seq` arrived late): one seek in
    /// `messages_by_seq`, however long the conversation.
    private func laterMessage(of sender: String, device: String?, in conversation: Int64, than seq: Int) throws -> Int? {
        let later = try database.statement("""
            SELECT position FROM messages WHERE conversation = ? AND sender = ? AND device IS ? AND outgoing = 0 AND seq > ? ORDER BY seq, id LIMIT 1
            """)
        try later.bind(conversation, sender, device, seq)
        return try later.step() ? Int(later.int(0)) : nil
    }

    /// Stores a message from `peer` as if it had arrived, with a fresh global id, sending
    /// nothing (`/recv`, a scenario's `receive`).
    @discardableResult
    public func storeLocal(from peer: String, key: String, payload: MessagePayload, at time: Int64,
                           photos: [AttachedPhoto] = [], voice: AttachedVoice? = nil) throws(StoreError) -> StoredMessage {
        let arrivals = try storeIncoming([IncomingMessage(from: peer, globalID: GlobalID.make(at: time), seq: nil, key: key,
                                                          payload: payload, sentAt: time, photos: photos, voice: voice)])
        guard case .stored(let stored)? = arrivals.first else {
            throw StoreError(.refused, "'\(peer)' is blocked: nothing from them is stored; /unblock \(peer) first")
        }
        return stored
    }

    /// Remembers the page the conversation with `peer` opens on (the last jump that opened it).
    /// With `unlessKnown`, only for a conversation that has none yet: the page a peer's message
    /// says it was sent from is where a new conversation opens, never where the user moved it.
    public func remember(_ page: JumpPage, for peer: String, unlessKnown: Bool = false) throws(StoreError) {
        guard !isReadOnly else { return }
        try guarded {
            try database.transaction {
                let conversation = try conversation(with: peer)
                try database.statement("""
                    UPDATE conversations SET root_cate_id = ?, cate_id = ?, info_id = ? WHERE id = ? AND (? = 0 OR root_cate_id IS NULL)
                    """).bind(page.rootCateID, page.cateID, page.infoID, conversation, unlessKnown).run()
            }
        }
    }

    /// Marks the peer's messages shown up to (not including) position `end` as read; returns the
    /// global ids of those read now. With `receipts`, a read receipt for each of those that came
    /// over the transport and sits at `start` or later (what the page shows) is queued in the
    /// same transaction (``dueReceipts(now:limit:)``): older ones leave the unread count, and
    /// their sender is not told they were seen. `drawn` says, by global id, how the page drew
    /// the line's messages it shows: their receipts carry it, and each is counted in
    /// ``drawnCounts()`` (with receipts or without).
    /// With `noteSiblings` (unless another device said it), the user's other devices are told
    /// (``noteSiblings(_:peer:id:blocked:)``), so the conversation is read on them too.
    public func markRead(_ peer: String, before end: Int, receipts: Bool = false, shownFrom start: Int = 0,
                         drawn: [String: Drawn] = [:], noteSiblings: Bool = true) throws(StoreError) -> [String] {
        guard !isReadOnly else { return [] }
        return try guarded {
            try database.transaction {
                let find = try database.statement("SELECT id FROM conversations WHERE peer = ?")
                try find.bind(peer)
                guard try find.step() else { return [] }
                let conversation = find.int(0)
                let read = try database.statement("""
                    UPDATE messages SET state = 'read' WHERE conversation = ? AND outgoing = 0 AND \(MessageLife.from(IncomingState.read)) AND position < ?
                    RETURNING global_id, arrived, position, key
                    """)
                try read.bind(conversation, end)
                var ids: [String] = [], arrived: [(id: String, key: String)] = []
                var newest: (position: Int64, id: String)?
                while try read.step() {
                    ids.append(read.text(0))
                    // The other devices are told of the newest that came over the transport:
                    // they can have it (a scenario's or /recv's is this device's alone).
                    if read.int(1) != 0, read.int(2) > newest?.position ?? -1 { newest = (read.int(2), read.text(0)) }
                    // A read receipt says the person saw it: only for what the page shows.
                    if read.int(1) != 0, read.int(2) >= Int64(start) { arrived.append((read.text(0), read.text(3))) }
                }
                if receipts {
                    for (id, _) in arrived {
                        try database.statement("INSERT INTO receipts_out (peer, global_id, state, queued_at, drawn) VALUES (?, ?, 'read', ?, ?)")
                            .bind(peer, id, Clock.now(), drawn[id]?.json).run()
                    }
                }
                for (id, key) in arrived {
                    if let how = drawn[id] { try count(how, key: key) }
                }
                if noteSiblings, let newest, try hasSiblingsNow() { try self.noteSiblings("seen", peer: peer, id: newest.id) }
                try database.statement("""
                    UPDATE conversations SET unread = (SELECT count(*) FROM messages WHERE conversation = ?1 AND outgoing = 0 AND state = 'received')
                    WHERE id = ?1
                    """).bind(conversation).run()
                return ids
            }
        }
    }

    func refuseIfReadOnly() throws(StoreError) {
        guard isReadOnly else { return }
        throw StoreError(.readOnly, "cannot write \(path): " + (readOnlyReason ?? "it is read-only"))
    }

    /// Adds the words of every message not yet in the full-text index to it, in the open
    /// transaction. The index is derived from `messages.summary` and caught up by every write
    /// but a send, and before a search: never behind for long, and never wrong.
    /// Catches the search index up with what was stored since (sends and arrivals leave their
    /// words to this), at most `limit` messages, in a commit that does not wait for the disk: the
    /// index is made from the messages, and what a power cut takes back of it is made again.
    /// The process holding the connection calls it when a service brought nothing; a search
    /// catches up first. Returns whether the index is caught up.
    @discardableResult
    public func catchUpSearchIndex(limit: Int) throws(StoreError) -> Bool {
        guard !isReadOnly, wordsPending else { return true }
        return try guarded {
            // Read inside the transaction, under the write lock: another process catching up
            // (a search, another chat) between the read and the write would otherwise have the
            // same messages indexed twice, and a recall's 'delete' would take out one of them.
            try database.transaction(durable: false) {
                let (indexed, newest) = try indexProgress()
                guard indexed < newest else {
                    wordsPending = false
                    return true
                }
                let bound = try database.statement("SELECT max(id) FROM (SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT ?)")
                try bound.bind(indexed, limit)
                _ = try bound.step()
                let through = bound.int(0)
                try database.statement("""
                    INSERT INTO message_text (rowid, text)
                    SELECT id, summary FROM messages WHERE id > ?1 AND id <= ?2 AND summary != '' ORDER BY id
                    """).bind(indexed, through).run()
                try database.statement("UPDATE search_progress SET indexed_through = ?").bind(through).run()
                wordsPending = through < newest
                return !wordsPending
            }
        }
    }

    func indexNewMessages() throws {
        try Self.indexNewMessages(in: database)
    }

    /// ``indexNewMessages()`` in `database`.
    static func indexNewMessages(in database: Database) throws {
        try database.statement("""
            INSERT INTO message_text (rowid, text)
            SELECT id, summary FROM messages WHERE id > (SELECT indexed_through FROM search_progress) AND summary != '' ORDER BY id
            """).run()
        try database.statement("UPDATE search_progress SET indexed_through = (SELECT coalesce(max(id), 0) FROM messages)").run()
    }

    func envelope(position: Int, peer: String, from: String, to: String, time: Int64, key: String, payload: MessagePayload,
                  globalID: String) -> MessageEnvelope {
        var envelope = MessageEnvelope(id: "m\(position + 1)", conversation: peer, from: from, to: to, timestamp: time, key: key, payload: payload)
        envelope.globalID = globalID
        return envelope
    }

    static func encode(_ page: JumpPage) -> String {
        (try? JSONLines.encode(page)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    // MARK: Blocked peers

    package func isBlocked(_ peer: String) throws -> Bool {
        let find = try database.statement("SELECT 1 FROM blocked WHERE peer = ?")
        try find.bind(peer)
        return try find.step()
    }

    /// Blocks or unblocks `peer`: a blocked peer's messages are not stored.
    /// With `noteSiblings` (unless another device said it), the user's other devices do the same.
    public func setBlocked(_ peer: String, _ blocked: Bool, noteSiblings: Bool = true) throws(StoreError) {
        try refuseIfReadOnly()
        try guarded {
            try database.transaction {
                if blocked {
                    try database.statement("INSERT OR IGNORE INTO blocked (peer, since) VALUES (?, ?)").bind(peer, Clock.now()).run()
                } else {
                    try database.statement("DELETE FROM blocked WHERE peer = ?").bind(peer).run()
                }
                if database.changes > 0, noteSiblings, try hasSiblingsNow() { try self.noteSiblings("block", peer: peer, blocked: blocked) }
            }
        }
    }

    /// Whether another device of the user is known, in the caller's transaction: notes for them
    /// are kept only then.
    func hasSiblingsNow() throws -> Bool {
        try database.statement("SELECT 1 FROM siblings LIMIT 1").step()
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// A message the user sent that waits for delivery, as the connection takes it from the outbox.
public struct QueuedSend: Sendable, Equatable {
    var row: Int64
    public var peer: String
    public var globalID: String
    public var seq: Int?
    public var key: String
    public var payload: MessagePayload
    public var sentAt: Int64
    public var jump: JumpPage?
    /// How many times it has been handed over before.
    public var attempts: Int
    /// The photos it carries, with their bytes.
    public var photos: [AttachedPhoto] = []
    /// A voice message's recording, with its bytes.
    public var voice: AttachedVoice?
    /// A file message's file, with its bytes.
    public var file: AttachedFile?
    /// The message it replies to.
    public var reply: ReplyTo?
}

/// The outbox is a table: a message is queued in the transaction that stores it, and leaves the
/// outbox only when the receiver says it has it (or it fails). Before a process hands a queued
/// message to the connection it claims it, as a lease (its process id and an expiry): two
/// processes of one user never hand one message over at once, and a claim left by a process
/// that was killed expires by itself. Delivered messages are not in the outbox, so they cost a
/// sign-in nothing.
extension MessageStore {
    /// Claims up to `limit` queued messages (oldest first; only `peer`'s when given) whose
    /// lease is free or expired and whose next try is due at `now`, for `leaseMilliseconds`.
    public func claim(limit: Int, peer: String? = nil, now: Int64, leaseMilliseconds: Int64) throws(StoreError) -> [QueuedSend] {
        guard !isReadOnly else { return [] }
        return try guarded {
            try database.transaction(durable: false) {
                let claim = try database.statement("""
                    UPDATE outbox SET lease_pid = ?1, lease_until = ?2, attempts = attempts + 1
                    WHERE message IN (SELECT message FROM outbox WHERE (lease_until IS NULL OR lease_until < ?3) AND next_at <= ?3
                                      AND (?4 IS NULL OR peer = ?4) ORDER BY message LIMIT ?5)
                    RETURNING message
                    """)
                try claim.bind(Int(getpid()), now + leaseMilliseconds, now, peer, limit)
                var rows: [Int64] = []
                while try claim.step() { rows.append(claim.int(0)) }
                return try queuedSends(rows)
            }
        }
    }

    /// These rows of the outbox as the connection hands them over, oldest first.
    func queuedSends(_ rows: [Int64]) throws -> [QueuedSend] {
        guard !rows.isEmpty else { return [] }
        let find = try database.statement("""
            SELECT o.message, o.peer, m.global_id, m.seq, m.key, m.payload, m.sent_at, m.jump, o.attempts,
                   EXISTS (SELECT 1 FROM photos p WHERE p.message = o.message), m.reply_sender, m.reply_id
            FROM outbox o JOIN messages m ON m.id = o.message WHERE o.message IN (SELECT value FROM json_each(?)) ORDER BY o.message
            """)
        try find.bind(Self.jsonList(rows))
        var sends: [QueuedSend] = []
        while try find.step() {
            sends.append(QueuedSend(row: find.int(0), peer: find.text(1), globalID: find.text(2), seq: find.optionalInt(3).map(Int.init),
                                    key: find.text(4), payload: MessagePayload(json: find.text(5)), sentAt: find.int(6),
                                    jump: self.jump(find.optionalText(7)),
                                    attempts: Int(find.int(8)) - 1,
                                    reply: ReplyTo.stored(find.optionalText(10), find.optionalText(11))))
            if find.int(9) != 0 { sends[sends.count - 1].photos = try photos(ofRow: find.int(0)) }
            if find.text(4) == "voice" { sends[sends.count - 1].voice = try voice(ofRow: find.int(0)) }
            if find.text(4) == "file" { sends[sends.count - 1].file = try file(ofRow: find.int(0)) }
        }
        return sends
    }

    /// Gives claimed messages back: the lease ends, and each is tried again at `retryAt`.
    public func release(_ sends: [QueuedSend], retryAt: Int64) throws(StoreError) {
        guard !isReadOnly, !sends.isEmpty else { return }
        try guarded {
            try database.transaction(durable: false) {
                for send in sends {
                    try database.statement("UPDATE outbox SET lease_pid = NULL, lease_until = NULL, next_at = ? WHERE message = ?")
                        .bind(retryAt, send.row).run()
                }
            }
        }
    }

    /// The broker took these: `sent`, still in the outbox until the receiver says it has them.
    /// Returns how many became `sent` now (a resend of a message sent before changes nothing).
    @discardableResult
    public func markSent(_ sends: [QueuedSend]) throws(StoreError) -> Int {
        try markSent(sends, retryAt: nil)
    }

    /// As ``markSent(_:)``, and in the same transaction the leases end and each is tried
    /// again at `retryAt(send)` unless a receipt comes first: what a batch of the broker's
    /// answers costs is one commit, not two a message.
    @discardableResult
    public func markSent(_ sends: [QueuedSend], retryAt: ((QueuedSend) -> Int64)?) throws(StoreError) -> Int {
        guard !isReadOnly, !sends.isEmpty else { return 0 }
        return try guarded {
            try database.transaction(durable: false) {
                try database.statement("""
                    UPDATE messages SET state = 'sent' WHERE id IN (SELECT value FROM json_each(?)) AND \(MessageLife.from(OutgoingState.sent))
                    """).bind(Self.jsonList(sends.map(\.row))).run()
                let changed = database.changes
                if let retryAt {
                    // A statement for each time to try again: sends of one batch mostly share one.
                    for (time, group) in Dictionary(grouping: sends, by: retryAt) {
                        try database.statement("""
                            UPDATE outbox SET lease_pid = NULL, lease_until = NULL, next_at = ? WHERE message IN (SELECT value FROM json_each(?))
                            """).bind(time, Self.jsonList(group.map(\.row))).run()
                    }
                }
                return changed
            }
        }
    }

    /// What a receipt from `peer` for the user's messages `ids` changes: `delivered` (the peer
    /// stored them: they leave the outbox), `read` (its chat showed them). Ids the user never
    /// sent to that peer change nothing. Returns how many changed. `drawn` is what a read
    /// receipt said of how the peer drew them (``keepDrawn(_:by:)``).
    @discardableResult
    public func receipt(from peer: String, ids: [String], state: OutgoingState, at time: Int64,
                        drawn: [String: Drawn] = [:]) throws(StoreError) -> Int {
        guard !isReadOnly, !ids.isEmpty, state == .delivered || state == .read else { return 0 }
        return try guarded {
            // `delivered` lost to a power cut costs a resend the receiver answers again; `read`
            // is confirmed to the peer, which then stops saying it: on disk first.
            try database.transaction(durable: state == .read) {
                // Only a move the message's life allows (never out of failed, never back from
                // read); either way the receiver has them, so they leave the outbox (a failed one
                // is not in it). One statement each, however many ids.
                let ids = Self.jsonList(ids)
                let move = try database.statement("""
                    UPDATE messages SET state = ?, reason = NULL
                    WHERE sender = ? AND recipient = ? AND outgoing = 1 AND global_id IN (SELECT value FROM json_each(?))
                    AND \(MessageLife.from(state))
                    RETURNING id
                    """)
                try move.bind(state.rawValue, user, peer, ids)
                var changed = 0
                while try move.step() { changed += 1 }
                try database.statement("""
                    DELETE FROM outbox WHERE message IN (
                        SELECT id FROM messages WHERE sender = ? AND recipient = ? AND outgoing = 1 AND global_id IN (SELECT value FROM json_each(?)))
                    """).bind(user, peer, ids).run()
                if !drawn.isEmpty { _ = try keepDrawn(drawn, by: peer) }
                return changed
            }
        }
    }

    /// `peer` blocked the user: its host answers the user's messages `ids` so they are not sent
    /// again, and they stay as they are, sent (one still queued becomes sent): a person is not
    /// told they were blocked. Returns how many left the outbox.
    @discardableResult
    public func settleBlocked(to peer: String, ids: [String]) throws(StoreError) -> Int {
        guard !isReadOnly, !ids.isEmpty else { return 0 }
        return try guarded {
            try database.transaction {
                let ids = Self.jsonList(ids)
                try database.statement("""
                    UPDATE messages SET state = 'sent'
                    WHERE sender = ? AND recipient = ? AND outgoing = 1 AND state = 'queued' AND global_id IN (SELECT value FROM json_each(?))
                    """).bind(user, peer, ids).run()
                try database.statement("""
                    DELETE FROM outbox WHERE message IN (
                        SELECT id FROM messages WHERE sender = ? AND recipient = ? AND outgoing = 1 AND global_id IN (SELECT value FROM json_each(?)))
                    """).bind(user, peer, ids).run()
                return database.changes
            }
        }
    }

    /// The user's messages `ids` to `peer` failed (the peer refused them, or they were not
    /// delivered in time): `failed`, with why, out of the outbox.
    @discardableResult
    public func fail(to peer: String, ids: [String], because failure: MessageFailure) throws(StoreError) -> Int {
        guard !isReadOnly, !ids.isEmpty else { return 0 }
        return try guarded {
            try database.transaction {
                var changed = 0
                for id in ids {
                    let find = try database.statement("""
                        SELECT id FROM messages WHERE sender = ? AND recipient = ? AND global_id = ? AND outgoing = 1
                        AND \(MessageLife.from(OutgoingState.failed))
                        """)
                    try find.bind(user, peer, id)
                    guard try find.step() else { continue }
                    let row = find.int(0)
                    try database.statement("UPDATE messages SET state = 'failed', reason = ? WHERE id = ?").bind(failure.stored, row).run()
                    try database.statement("DELETE FROM outbox WHERE message = ?").bind(row).run()
                    changed += 1
                }
                return changed
            }
        }
    }

    /// Gives up every queued message older than `cutoff` (milliseconds since 1970), because
    /// `failure`: `given-up`, out of the outbox. Returns them, for a person.
    public func failOlder(than cutoff: Int64, because failure: MessageFailure) throws(StoreError) -> [(peer: String, globalID: String)] {
        guard !isReadOnly else { return [] }
        return try guarded {
            try database.transaction {
                let old = try database.statement("""
                    UPDATE messages SET state = 'given-up', reason = ?
                    WHERE id IN (SELECT message FROM outbox WHERE queued_at < ?) AND \(MessageLife.from(OutgoingState.givenUp))
                    RETURNING recipient, global_id
                    """)
                try old.bind(failure.stored, cutoff)
                var failed: [(String, String)] = []
                while try old.step() { failed.append((old.text(0), old.text(1))) }
                try database.statement("DELETE FROM outbox WHERE queued_at < ?").bind(cutoff).run()
                return failed
            }
        }
    }

    /// Queues a failed or given-up message again (`/retry N`): `queued`, back in the outbox, due
    /// now.
    public func retry(_ peer: String, number: Int, at time: Int64) throws(StoreError) -> Bool {
        try refuseIfReadOnly()
        return try guarded {
            try database.transaction {
                let find = try database.statement("""
                    SELECT m.id FROM messages m JOIN conversations c ON c.id = m.conversation
                    WHERE c.peer = ? AND m.position = ? AND m.outgoing = 1 AND m.device IS NULL AND \(MessageLife.from(OutgoingState.queued, column: "m.state"))
                    """)
                try find.bind(peer, number - 1)
                guard try find.step() else { return false }
                let row = find.int(0)
                try database.statement("UPDATE messages SET state = 'queued', reason = NULL WHERE id = ?").bind(row).run()
                try database.statement("INSERT OR REPLACE INTO outbox (message, peer, queued_at) VALUES (?, ?, ?)").bind(row, peer, time).run()
                return true
            }
        }
    }

    /// How many of the user's messages wait for delivery.
    public func queuedCount() throws(StoreError) -> Int {
        try guarded {
            let count = try database.statement("SELECT count(*) FROM outbox")
            _ = try count.step()
            return Int(count.int(0))
        }
    }

    /// The user's undelivered messages: `queued`, not yet taken by the broker, and
    /// `sent`, taken and waiting for the receiver's receipt.
    public func outboxCounts() throws(StoreError) -> (queued: Int, sent: Int) {
        try guarded {
            let count = try database.statement("""
                SELECT count(*) FILTER (WHERE m.state = 'queued'), count(*) FROM outbox o JOIN messages m ON m.id = o.message
                """)
            _ = try count.step()
            let queued = Int(count.int(0))
            return (queued, Int(count.int(1)) - queued)
        }
    }
}

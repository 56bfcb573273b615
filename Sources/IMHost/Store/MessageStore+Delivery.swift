#if canImport(Glibc)
import Glibc
#endif

/// What the connection asks of the store beside the outbox's claims: which peers have
/// messages due, when the next one falls due, and the receipts chats queued.
extension MessageStore {
    /// The peers with queued messages due at `now` (lease free or expired, next try due), and
    /// how many each has.
    public func duePeers(now: Int64) throws(StoreError) -> [(peer: String, count: Int)] {
        guard !isReadOnly else { return [] }
        return try guarded {
            let rows = try database.statement("""
                SELECT peer, count(*) FROM outbox WHERE (lease_until IS NULL OR lease_until < ?1) AND next_at <= ?1
                GROUP BY peer ORDER BY min(message)
                """)
            try rows.bind(now)
            var found: [(String, Int)] = []
            while try rows.step() { found.append((rows.text(0), Int(rows.int(1)))) }
            return found
        }
    }

    /// The rows of `peer`'s queued messages due at `now`, oldest first, at most `limit`.
    public func dueRows(for peer: String, now: Int64, limit: Int) throws(StoreError) -> [Int64] {
        try guarded {
            let rows = try database.statement("""
                SELECT message FROM outbox WHERE peer = ?1 AND (lease_until IS NULL OR lease_until < ?2) AND next_at <= ?2
                ORDER BY message LIMIT ?3
                """)
            try rows.bind(peer, now, limit)
            var found: [Int64] = []
            while try rows.step() { found.append(rows.int(0)) }
            return found
        }
    }

    /// Claims these queued messages for `leaseMilliseconds` (those whose lease is free or
    /// expired), oldest first. Two statements, however many.
    public func claim(rows: [Int64], now: Int64, leaseMilliseconds: Int64) throws(StoreError) -> [QueuedSend] {
        guard !isReadOnly, !rows.isEmpty else { return [] }
        return try guarded {
            try database.transaction(durable: false) {
                let claim = try database.statement("""
                    UPDATE outbox SET lease_pid = ?1, lease_until = ?2, attempts = attempts + 1
                    WHERE message IN (SELECT value FROM json_each(?3)) AND (lease_until IS NULL OR lease_until < ?4) RETURNING message
                    """)
                try claim.bind(Int(getpid()), now + leaseMilliseconds, Self.jsonList(rows), now)
                var claimed: [Int64] = []
                while try claim.step() { claimed.append(claim.int(0)) }
                return try queuedSends(claimed)
            }
        }
    }

    /// A list of rows or ids as a JSON array, for `json_each`: one statement for a batch.
    static func jsonList(_ rows: [Int64]) -> String { "[" + rows.map(String.init).joined(separator: ",") + "]" }

    static func jsonList(_ ids: [String]) -> String { "[" + ids.map(JSONNode.quoted).joined(separator: ",") + "]" }

    /// When the next queued message or read receipt falls due, if one is waiting (milliseconds
    /// since 1970).
    public func nextDue(now: Int64) throws(StoreError) -> Int64? {
        try guarded {
            // The sooner of the two; whichever there is, when only one is (min() of NULL is NULL).
            let row = try database.statement("""
                WITH due (message, receipt) AS (
                    SELECT (SELECT min(max(next_at, coalesce(lease_until, 0))) FROM outbox), (SELECT min(next_at) FROM receipts_out))
                SELECT min(coalesce(message, receipt), coalesce(receipt, message)) FROM due
                """)
            _ = try row.step()
            return row.optionalInt(0)
        }
    }

    /// Makes every queued message due now (after a reconnect or a restart: what was sent and not
    /// delivered goes again, oldest first), and ends every lease. Only the process holding the
    /// user's connection lock calls this, and only it publishes: a lease any other process left
    /// (a chat that ended, or was killed, between claiming and the broker's answer) can never
    /// be acted on, so waiting for it to expire would only delay those messages.
    public func makeAllDue() throws(StoreError) {
        guard !isReadOnly else { return }
        try guarded {
            try database.transaction {
                try database.statement("UPDATE outbox SET next_at = 0, lease_pid = NULL, lease_until = NULL").run()
                // Read receipts not confirmed yet go again too: the broker may have lost them.
                try database.statement("UPDATE receipts_out SET next_at = 0").run()
            }
        }
    }

    /// The rows of the user's messages to `peer` among `ids` (their global ids): what a receipt
    /// from `peer` may name. Ids of messages sent to anyone else are not among them.
    public func ownRows(_ ids: [String], to peer: String) throws(StoreError) -> [String: Int64] {
        try guarded {
            var found: [String: Int64] = [:]
            for id in ids {
                let row = try database.statement("SELECT id FROM messages WHERE sender = ? AND recipient = ? AND global_id = ? AND outgoing = 1")
                try row.bind(user, peer, id)
                if try row.step() { found[id] = row.int(0) }
            }
            return found
        }
    }

    /// A read receipt a chat queued: sent, and sent again, until the peer confirms it.
    public struct QueuedReceipt: Sendable, Equatable {
        var row: Int64
        public var peer: String
        public var globalID: String
        public var state: String
        /// How often it was handed to the broker before.
        public var attempts: Int
        /// How this host drew the message, for a line's (the receipt's `drawn` entry).
        public var drawn: Drawn?
    }

    /// Up to `limit` queued receipts due at `now` (never sent, or not confirmed by the time
    /// their next try came), oldest first.
    public func dueReceipts(now: Int64, limit: Int) throws(StoreError) -> [QueuedReceipt] {
        try guarded {
            let rows = try database.statement("SELECT id, peer, global_id, state, attempts, drawn FROM receipts_out WHERE next_at <= ? ORDER BY id LIMIT ?")
            try rows.bind(now, limit)
            var found: [QueuedReceipt] = []
            while try rows.step() {
                found.append(QueuedReceipt(row: rows.int(0), peer: rows.text(1), globalID: rows.text(2), state: rows.text(3), attempts: Int(rows.int(4)),
                                           drawn: rows.optionalText(5).flatMap { Drawn.read(json: $0) }))
            }
            return found
        }
    }

    /// The broker took these receipts: each is sent again at `retryAt(receipt)` unless the peer
    /// confirms it first (the broker drops what it cannot queue, and loses what it had not
    /// saved when it dies). One transaction.
    public func receiptsSent(_ receipts: [QueuedReceipt], retryAt: (QueuedReceipt) -> Int64) throws(StoreError) {
        guard !isReadOnly, !receipts.isEmpty else { return }
        try guarded {
            try database.transaction(durable: false) {
                for receipt in receipts {
                    try database.statement("UPDATE receipts_out SET attempts = attempts + 1, next_at = ? WHERE id = ?")
                        .bind(retryAt(receipt), receipt.row).run()
                }
            }
        }
    }

    /// `peer` confirmed it has the read receipts for these ids of its messages: they are not
    /// sent again. Returns how many were waiting.
    @discardableResult
    public func receiptsConfirmed(by peer: String, ids: [String]) throws(StoreError) -> Int {
        guard !isReadOnly, !ids.isEmpty else { return 0 }
        return try guarded {
            try database.transaction {
                var confirmed = 0
                for id in ids {
                    try database.statement("DELETE FROM receipts_out WHERE peer = ? AND global_id = ?").bind(peer, id).run()
                    confirmed += database.changes
                }
                return confirmed
            }
        }
    }

    /// How many read receipts wait for their peer's confirmation (or to be sent).
    public func unconfirmedReceipts() throws(StoreError) -> Int {
        try guarded {
            let count = try database.statement("SELECT count(*) FROM receipts_out")
            _ = try count.step()
            return Int(count.int(0))
        }
    }

    /// Forgets read receipts queued before `cutoff` that nobody confirmed (a peer whose imhost
    /// is older than confirmations never will); returns how many.
    @discardableResult
    public func dropReceipts(queuedBefore cutoff: Int64) throws(StoreError) -> Int {
        guard !isReadOnly else { return 0 }
        return try guarded {
            try database.statement("DELETE FROM receipts_out WHERE queued_at < ?").bind(cutoff).run()
            return database.changes
        }
    }

    /// Forgets every queued receipt (the user turned read receipts off).
    public func dropQueuedReceipts() throws(StoreError) {
        guard !isReadOnly else { return }
        try guarded { try database.statement("DELETE FROM receipts_out").run() }
    }
}

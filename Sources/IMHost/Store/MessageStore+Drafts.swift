#if canImport(Glibc)
import Glibc
#endif

/// What the user typed into a chat (a text, or `/send`), kept from before any line code runs
/// until it is queued or refused: a chat worker that crashes in between (drawing an arrival, in
/// the input bar, drawing the draft itself) leaves it to the next worker, which takes it up.
extension MessageStore {
    /// A line typed into the chat with `peer`, not yet queued or refused.
    public struct Draft: Sendable, Equatable {
        public var id: Int64
        public var peer: String
        /// As typed: text, or a `/send` command.
        public var typed: String
        /// The process that kept it (a chat's supervisor); `nil` for drafts kept before owners.
        public var owner: Int32?

        /// Whether a chat worker whose supervisor is `supervisor` takes it up: its own
        /// supervisor's (its worker crashed before it was queued), or one whose chat is gone.
        public func isLeft(supervisor: Int32) -> Bool {
            guard let owner else { return true }
            return owner == supervisor || (kill(owner, 0) != 0 && errno == ESRCH)
        }
    }

    /// Keeps a typed line for the chat with `peer`; returns its id.
    public func addDraft(peer: String, typed: String, at time: Int64) throws(StoreError) -> Int64 {
        try refuseIfReadOnly()
        return try guarded {
            try database.statement("INSERT INTO drafts (peer, typed, typed_at, owner) VALUES (?, ?, ?, ?)").bind(peer, typed, time, Int(getpid())).run()
            return database.lastInsertedRow
        }
    }

    /// The drafts of the chat with `peer`, oldest first.
    public func drafts(of peer: String) throws(StoreError) -> [Draft] {
        try guarded {
            let rows = try database.statement("SELECT id, typed, owner FROM drafts WHERE peer = ? ORDER BY id")
            try rows.bind(peer)
            var found: [Draft] = []
            while try rows.step() {
                found.append(Draft(id: rows.int(0), peer: peer, typed: rows.text(1), owner: rows.optionalInt(2).map { Int32(truncatingIfNeeded: $0) }))
            }
            return found
        }
    }

    /// Forgets a draft that was queued or refused; returns whether it was still there.
    @discardableResult
    public func discardDraft(_ id: Int64) throws(StoreError) -> Bool {
        guard !isReadOnly else { return false }
        return try guarded {
            try database.statement("DELETE FROM drafts WHERE id = ?").bind(id).run()
            return database.changes > 0
        }
    }
}

/// The lines each peer's host draws, as its newest receipt said them (`peer_lines`): what a page
/// needs to say before a card goes that the peer will see it as a placeholder.
extension MessageStore {
    /// Keeps what `peer`'s host said it draws (its receipt's ``Envelope/Draws``, its time no
    /// later than when it came), unless the store holds what it said later. Returns whether it
    /// was written.
    @discardableResult
    public func rememberLines(of peer: String, _ draws: Envelope.Draws) throws(StoreError) -> Bool {
        guard !isReadOnly else { return false }
        return try guarded {
            try database.statement("""
                INSERT INTO peer_lines (peer, lines, said_at) VALUES (?1, ?2, ?3)
                ON CONFLICT (peer) DO UPDATE SET lines = ?2, said_at = ?3 WHERE said_at <= ?3
                """).bind(peer, draws.linesJSON, draws.at).run()
            return database.changes > 0
        }
    }

    /// The lines `peer`'s host draws, as its newest receipt said them; `nil` when none said
    /// (nothing is known of its host: a page says nothing).
    public func peerLines(of peer: String) throws(StoreError) -> Envelope.Draws? {
        try guarded { try peerLinesRow(of: peer) }
    }

    /// ``peerLines(of:)``, in the caller's ``guarded(_:)``.
    func peerLinesRow(of peer: String) throws -> Envelope.Draws? {
        let find = try database.statement("SELECT lines, said_at FROM peer_lines WHERE peer = ?")
        try find.bind(peer)
        guard try find.step() else { return nil }
        // Read as a receipt's is: what the file holds is checked again; what does not read
        // says nothing.
        guard let node = try? JSONParser.parse(find.text(0)), let lines = Envelope.Draws.lines(node) else { return nil }
        return Envelope.Draws(at: find.int(1), lines: lines)
    }
}

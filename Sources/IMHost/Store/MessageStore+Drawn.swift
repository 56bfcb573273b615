import IMKit

/// How line messages were drawn: what peers said of the user's (from their read receipts), and
/// how this host drew the ones it showed, counted for its fleet status.
extension MessageStore {
    /// The most rows ``drawnCounts()`` keeps: a peer sending keys of made-up lines grows it no
    /// further (what is counted already keeps counting).
    static let drawnCountRows = 512

    /// Counts one message of `key` this host drew `how`, in the open transaction.
    func count(_ how: Drawn, key: String) throws {
        guard let owner = LineID.owner(ofMessageKey: key) else { return }
        let (kind, name): (String, String) = switch how {
        case .line(_, let version): ("version", version ?? "")
        case .placeholder(let word, _): ("placeholder", word)
        }
        try database.statement("""
            INSERT INTO drawn_counts (line, kind, name, count)
            SELECT ?1, ?2, ?3, 1 WHERE (SELECT count(*) FROM drawn_counts) < ?4
            ON CONFLICT (line, kind, name) DO UPDATE SET count = count + 1
            """).bind(String(owner), kind, name, Self.drawnCountRows).run()
        // Past the limit the insert selects nothing; a row that exists still counts.
        if database.changes == 0 {
            try database.statement("UPDATE drawn_counts SET count = count + 1 WHERE line = ? AND kind = ? AND name = ?")
                .bind(String(owner), kind, name).run()
        }
    }

    /// How this host drew the line messages from other hosts its chats showed, by line.
    public func drawnCounts() throws(StoreError) -> [String: DrawnCounts] {
        try guarded {
            let rows = try database.statement("SELECT line, kind, name, count FROM drawn_counts")
            var counts: [String: DrawnCounts] = [:]
            while try rows.step() {
                let count = Int(rows.int(3))
                if rows.text(1) == "version" {
                    counts[rows.text(0), default: DrawnCounts()].versions[rows.text(2)] = count
                } else {
                    counts[rows.text(0), default: DrawnCounts()].placeholders[rows.text(2)] = count
                }
            }
            return counts
        }
    }

    /// Keeps what `peer`'s read receipt said of how it drew the user's messages to it, by global
    /// id, in the open transaction: only for the user's messages to that peer whose key is a
    /// line's, and a line drawing it only when it is the key's own line. Returns how many it kept.
    func keepDrawn(_ drawn: [String: Drawn], by peer: String) throws -> Int {
        var kept = 0
        for (id, how) in drawn {
            let find = try database.statement("SELECT id, key FROM messages WHERE sender = ? AND recipient = ? AND outgoing = 1 AND global_id = ?")
            try find.bind(user, peer, id)
            guard try find.step(), let owner = LineID.owner(ofMessageKey: find.text(1)) else { continue }
            if case .line(let line, _) = how, line != String(owner) { continue }
            try database.statement("UPDATE messages SET drawn = ? WHERE id = ?").bind(how.json, find.int(0)).run()
            kept += 1
        }
        return kept
    }
}

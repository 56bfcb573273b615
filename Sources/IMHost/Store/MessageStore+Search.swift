extension MessageStore {
    /// The most of the newest messages a short query scans.
    static let shortQueryScan: Int64 = 100_000

    /// Messages whose words hold every one of `words`, newest first, up to `limit`; only the
    /// conversation with `peer` when given. Words of three characters or more are found through
    /// the full-text index (trigrams, so Chinese words are found as Latin ones are); a shorter
    /// word is looked for in the newest messages with `LIKE`. Each word is quoted: nothing typed
    /// is ever read as FTS or LIKE syntax.
    ///
    /// The index is caught up first (sends and arrivals leave their words to a later commit,
    /// ``catchUpSearchIndex(limit:)``). A read-only
    /// store cannot catch it up: the messages past it are looked through with `LIKE` instead.
    public func search(_ words: [String], peer: String?, limit: Int) throws(StoreError) -> [SearchHit] {
        let words = words.filter { !$0.isEmpty }
        guard !words.isEmpty else { return [] }
        return try guarded {
            var (indexed, newest) = try indexProgress()
            if indexed < newest && !isReadOnly {
                try database.transaction { try indexNewMessages() }
                indexed = newest
            }
            if words.contains(where: { $0.count < 3 }) {
                return try scan(words, peer: peer, limit: limit, after: newest - Self.shortQueryScan).map(\.hit)
            }
            var found = try indexedHits(words, peer: peer, limit: limit)
            if indexed < newest {
                found += try scan(words, peer: peer, limit: limit, after: indexed)
                found.sort { $0.row > $1.row }
            }
            return found.prefix(limit).map(\.hit)
        }
    }

    /// How far the full-text index reaches, and the newest message's id.
    func indexProgress() throws -> (indexed: Int64, newest: Int64) {
        let progress = try database.statement("SELECT (SELECT indexed_through FROM search_progress), (SELECT coalesce(max(id), 0) FROM messages)")
        _ = try progress.step()
        return (progress.int(0), progress.int(1))
    }

    private static let hitColumns = "m.id, c.peer, m.position, m.sender, m.key, m.summary, m.sent_at"

    /// The matches in the full-text index.
    private func indexedHits(_ words: [String], peer: String?, limit: Int) throws -> [(row: Int64, hit: SearchHit)] {
        let rows = try database.statement("""
            SELECT \(Self.hitColumns)
            FROM message_text t JOIN messages m ON m.id = t.rowid JOIN conversations c ON c.id = m.conversation
            WHERE message_text MATCH ?1 AND (?2 IS NULL OR c.peer = ?2)
            ORDER BY t.rowid DESC LIMIT ?3
            """)
        try rows.bind(words.map(Self.quoted).joined(separator: " "), peer, limit)
        return try hits(rows)
    }

    /// The matches with `LIKE` among the messages after id `after`.
    private func scan(_ words: [String], peer: String?, limit: Int, after: Int64) throws -> [(row: Int64, hit: SearchHit)] {
        // The SQL has one `LIKE` per word; only their number comes from the input.
        let likes = Array(repeating: "m.summary LIKE ? ESCAPE '\\'", count: words.count).joined(separator: " AND ")
        let rows = try database.statement("""
            SELECT \(Self.hitColumns) FROM messages m JOIN conversations c ON c.id = m.conversation
            WHERE m.id > ? AND \(likes) AND (?\(words.count + 2) IS NULL OR c.peer = ?\(words.count + 2))
            ORDER BY m.id DESC LIMIT ?
            """)
        try rows.bind(max(0, after))
        for (index, word) in words.enumerated() {
            try rows.bind(at: Int32(index + 2), "%" + Self.likeEscaped(word) + "%")
        }
        try rows.bind(at: Int32(words.count + 2), peer)
        try rows.bind(at: Int32(words.count + 3), limit)
        return try hits(rows)
    }

    private func hits(_ rows: Statement) throws -> [(row: Int64, hit: SearchHit)] {
        var found: [(row: Int64, hit: SearchHit)] = []
        while try rows.step() {
            found.append((rows.int(0), SearchHit(peer: rows.text(1), number: Int(rows.int(2)) + 1, from: rows.text(3), key: rows.text(4),
                                                 text: rows.text(5), sentAt: rows.int(6))))
        }
        return found
    }

    /// A word as an FTS5 string: in double quotes, a quote inside doubled.
    static func quoted(_ word: String) -> String {
        "\"" + word.replacing("\"", with: "\"\"") + "\""
    }

    /// A word for LIKE: its `%`, `_` and `\` escaped with `\`.
    static func likeEscaped(_ word: String) -> String {
        var out = ""
        for character in word {
            if character == "%" || character == "_" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out
    }
}

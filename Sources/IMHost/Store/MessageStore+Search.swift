#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
extension MessageStore {
    /// The most of the newest messages a short query scans.
    static let shortQueryScan: Int64 = 100_000

    /// Messages whose words hold every one of `words`, newest first, up to `limit`; only the
    /// conversation with `peer` when given. Words of three characters or more are found through
    /// the full-text index (trigrams, so Chinese words are found as Latin ones are); a shorter
    /// word is looked for in the newest messages with `LIKE`. Each word is quoted: nothing typed
    /// is ever read as FTS or LIKE syntax.
    public func search(_ words: [String], peer: String?, limit: Int) throws(StoreError) -> [SearchHit] {
        let words = words.filter { !$0.isEmpty }
        guard !words.isEmpty else { return [] }
        return try guarded {
            let short = words.contains { $0.count < 3 }
            let rows: Statement
            if short {
                let likes = Array(repeating: "m.summary LIKE ? ESCAPE '\\'", count: words.count).joined(separator: " AND ")
                rows = try database.statement("""
                    SELECT c.peer, m.position, m.sender, m.key, m.summary, m.sent_at FROM messages m JOIN conversations c ON c.id = m.conversation
                    WHERE m.id > (SELECT coalesce(max(id), 0) FROM messages) - ? AND \(likes) AND (?1 IS NULL OR c.peer = ?1)
                    ORDER BY m.id DESC LIMIT ?
                    """.replacing("?1", with: "?\(words.count + 2)"))
                try rows.bind(Self.shortQueryScan)
                for (index, word) in words.enumerated() {
                    try rows.bind(at: Int32(index + 2), "%" + Self.likeEscaped(word) + "%")
                }
                try rows.bind(at: Int32(words.count + 2), peer)
                try rows.bind(at: Int32(words.count + 3), limit)
            } else {
                rows = try database.statement("""
                    SELECT c.peer, m.position, m.sender, m.key, m.summary, m.sent_at
                    FROM message_text t JOIN messages m ON m.id = t.rowid JOIN conversations c ON c.id = m.conversation
                    WHERE message_text MATCH ?1 AND (?2 IS NULL OR c.peer = ?2)
                    ORDER BY t.rowid DESC LIMIT ?3
                    """)
                try rows.bind(words.map(Self.quoted).joined(separator: " "), peer, limit)
            }
            var hits: [SearchHit] = []
            while try rows.step() {
                hits.append(SearchHit(peer: rows.text(0), number: Int(rows.int(1)) + 1, from: rows.text(2), key: rows.text(3),
                                      text: rows.text(4), sentAt: rows.int(5)))
            }
            return hits
        }
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

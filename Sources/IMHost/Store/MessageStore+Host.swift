extension MessageStore {
    /// This data folder's id among the user's hosts: twelve random letters and digits made the
    /// first time it is asked for and kept in the store (a recovered store keeps it). The
    /// session claim starts every connection id with it (``SessionClaim``), so a presence record
    /// an earlier process of this folder left is known as this folder's. `nil` for a read-only
    /// store that has none yet.
    public var hostID: String? {
        let read = { [self] () -> String? in
            try? guarded {
                let fact = try database.statement("SELECT value FROM store_facts WHERE name = 'host id'")
                return try fact.step() ? fact.text(0) : nil
            }
        }
        if let known = read() { return known }
        guard !isReadOnly else { return nil }
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        let made = String((0..<12).map { _ in alphabet.randomElement(using: &generator)! })
        // Two processes of this folder making one at once: the first written wins, for both.
        _ = try? guarded {
            try database.statement("INSERT OR IGNORE INTO store_facts (name, value) VALUES ('host id', ?)").bind(made).run()
        }
        return read()
    }
}

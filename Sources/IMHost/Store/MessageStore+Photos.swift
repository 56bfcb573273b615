/// Photos a message carries, in their own table (``Migrations``, 5): apart from the payload, so a
/// page, a search or the list of conversations never reads their bytes, and the search index
/// never sees them.
extension MessageStore {
    /// Stores `photos` for the message in row `message`, in the caller's transaction.
    func insertPhotos(_ photos: [AttachedPhoto], message: Int64) throws {
        for (position, photo) in photos.enumerated() {
            let insert = try database.statement("""
                INSERT INTO photos (message, position, kind, width, height, bytes, problem) VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            switch photo {
            case .photo(let info, let bytes):
                try insert.bind(message, position, info.kind.rawValue, info.width, info.height, bytes, nil).run()
            case .refused(let why):
                try insert.bind(message, position, nil, nil, nil, nil, why).run()
            }
        }
    }

    /// The photos of the messages at `positions` (from 0) of the conversation with `peer`,
    /// without their bytes, by position: a message without photos is left out.
    public func photoSlots(peer: String, positions: ClosedRange<Int>) throws(StoreError) -> [Int: [PhotoSlot]] {
        try guarded { try photoRows(peer: peer, positions: positions) }
    }

    /// ``photoSlots(peer:positions:)``, in the caller's ``guarded(_:)``.
    func photoRows(peer: String, positions: ClosedRange<Int>) throws -> [Int: [PhotoSlot]] {
        let query = try database.statement("""
            SELECT m.position, p.kind, p.width, p.height, length(p.bytes), p.problem
            FROM conversations c JOIN messages m ON m.conversation = c.id JOIN photos p ON p.message = m.id
            WHERE c.peer = ? AND m.position BETWEEN ? AND ?
            ORDER BY m.position, p.position
            """)
        try query.bind(peer, positions.lowerBound, positions.upperBound)
        var slots: [Int: [PhotoSlot]] = [:]
        while try query.step() {
            slots[Int(query.int(0)), default: []].append(Self.slot(query, from: 1))
        }
        return slots
    }

    /// Photo `index` (from 0) of message `number` (from 1) of the conversation with `peer`, with
    /// its bytes; `nil` when there is no such photo, or it was refused.
    public func photo(peer: String, number: Int, index: Int) throws(StoreError) -> (photo: Photo, bytes: [UInt8])? {
        try guarded {
            let query = try database.statement("""
                SELECT p.kind, p.width, p.height, length(p.bytes), p.problem, p.bytes
                FROM conversations c JOIN messages m ON m.conversation = c.id JOIN photos p ON p.message = m.id
                WHERE c.peer = ? AND m.position = ? AND p.position = ?
                """)
            try query.bind(peer, number - 1, index)
            guard try query.step(), case .photo(let photo) = Self.slot(query, from: 0) else { return nil }
            return (photo, query.blob(5))
        }
    }

    /// The photos of the message in row `message`, with their bytes, in order: what a send puts
    /// in its envelope.
    func photos(ofRow message: Int64) throws -> [AttachedPhoto] {
        let query = try database.statement("SELECT kind, width, height, length(bytes), problem, bytes FROM photos WHERE message = ? ORDER BY position")
        try query.bind(message)
        var photos: [AttachedPhoto] = []
        while try query.step() {
            switch Self.slot(query, from: 0) {
            case .photo(let photo): photos.append(.photo(photo, bytes: query.blob(5)))
            case .refused(let why): photos.append(.refused(why: why))
            }
        }
        return photos
    }

    /// A photo's columns (kind, width, height, size, problem) from `column` on.
    private static func slot(_ row: Statement, from column: Int32) -> PhotoSlot {
        guard let kind = Photo.Kind(rawValue: row.text(column)), row.optionalText(column + 4) == nil else {
            return .refused(row.optionalText(column + 4) ?? "it was stored as a kind this imhost does not know")
        }
        return .photo(Photo(kind: kind, width: Int(row.int(column + 1)), height: Int(row.int(column + 2)), size: Int(row.int(column + 3))))
    }
}

/// What one message carries beside its payload, one row in a table of its own keyed by the
/// message (``Migrations``, 14), as photos are: a voice message's recording (`voices`), a file
/// message's file (`files`). A page reads what each is without its bytes; a front end fetches
/// the bytes of one; a send or a copy between devices takes them whole.
extension MessageStore {
    /// One such table: its name, the columns that say what the attachment is (before its size),
    /// and how a row reads as a slot (its columns from a position on: what it is, its size,
    /// then `problem`).
    struct AttachmentTable<Slot>: Sendable {
        let name: String
        let columns: [String]
        let slot: @Sendable (Statement, Int32) -> Slot
    }

    static let voices = AttachmentTable<VoiceSlot>(name: "voices", columns: ["kind", "milliseconds"]) { row, column in
        guard let kind = Voice.Kind(rawValue: row.text(column)), row.optionalText(column + 3) == nil else {
            return .refused(row.optionalText(column + 3) ?? "it was stored as a kind this imhost does not know")
        }
        return .voice(Voice(kind: kind, milliseconds: Int(row.int(column + 1)), size: Int(row.int(column + 2))))
    }

    static let files = AttachmentTable<FileSlot>(name: "files", columns: ["name", "type"]) { row, column in
        guard let name = row.optionalText(column), row.optionalText(column + 3) == nil else {
            return .refused(row.optionalText(column + 3) ?? "it was stored without a name")
        }
        return .file(SharedFile(name: name, type: row.text(column + 1), size: Int(row.int(column + 2))))
    }

    /// Stores an attachment of the message in row `message`, in the caller's transaction: the
    /// values of `table`'s columns and its bytes, or why it was refused.
    private func insert<Slot>(_ table: AttachmentTable<Slot>, message: Int64, values: [String]?, number: Int?, bytes: [UInt8]?, problem: String?) throws {
        let insert = try database.statement("""
            INSERT INTO \(table.name) (message, \(table.columns.joined(separator: ", ")), bytes, problem) VALUES (?, ?, ?, ?, ?)
            """)
        // The second column is a number for a recording (its length), text for a file (its type).
        if let number {
            try insert.bind(message, values?.first, number, bytes, problem).run()
        } else {
            try insert.bind(message, values?.first, values?.last, bytes, problem).run()
        }
    }

    /// The attachments in `table` of the messages at `positions` (from 0) of the conversation
    /// with `peer`, without their bytes, by position.
    /// In the caller's ``guarded(_:)``.
    func slots<Slot>(_ table: AttachmentTable<Slot>, peer: String, positions: ClosedRange<Int>) throws -> [Int: Slot] {
        let query = try database.statement("""
            SELECT m.position, \(table.columns.map { "a." + $0 }.joined(separator: ", ")), length(a.bytes), a.problem
            FROM conversations c JOIN messages m ON m.conversation = c.id JOIN \(table.name) a ON a.message = m.id
            WHERE c.peer = ? AND m.position BETWEEN ? AND ?
            """)
        try query.bind(peer, positions.lowerBound, positions.upperBound)
        var slots: [Int: Slot] = [:]
        while try query.step() { slots[Int(query.int(0))] = table.slot(query, 1) }
        return slots
    }

    /// The attachment in `table` of message `number` (from 1) of the conversation with `peer`,
    /// and its bytes; `nil` when it has none.
    private func attachment<Slot>(_ table: AttachmentTable<Slot>, peer: String, number: Int) throws(StoreError) -> (Slot, [UInt8])? {
        try guarded {
            let query = try database.statement("""
                SELECT \(table.columns.map { "a." + $0 }.joined(separator: ", ")), length(a.bytes), a.problem, a.bytes
                FROM conversations c JOIN messages m ON m.conversation = c.id JOIN \(table.name) a ON a.message = m.id
                WHERE c.peer = ? AND m.position = ?
                """)
            try query.bind(peer, number - 1)
            guard try query.step() else { return nil }
            return (table.slot(query, 0), query.blob(4))
        }
    }

    /// The attachment in `table` of the message in row `message`, and its bytes.
    private func attachment<Slot>(_ table: AttachmentTable<Slot>, row message: Int64) throws -> (Slot, [UInt8])? {
        let query = try database.statement("SELECT \(table.columns.joined(separator: ", ")), length(bytes), problem, bytes FROM \(table.name) WHERE message = ?")
        try query.bind(message)
        guard try query.step() else { return nil }
        return (table.slot(query, 0), query.blob(4))
    }

    // MARK: Voice recordings

    /// Stores `voice` for the message in row `message`, in the caller's transaction.
    func insertVoice(_ voice: AttachedVoice, message: Int64) throws {
        switch voice {
        case .voice(let info, let bytes):
            try insert(Self.voices, message: message, values: [info.kind.rawValue], number: info.milliseconds, bytes: bytes, problem: nil)
        case .refused(let why):
            try insert(Self.voices, message: message, values: nil, number: nil, bytes: nil, problem: why)
        }
    }

    /// The recordings of the voice messages at `positions` (from 0) of the conversation with
    /// `peer`, without their bytes, by position.
    public func voiceSlots(peer: String, positions: ClosedRange<Int>) throws(StoreError) -> [Int: VoiceSlot] {
        try guarded { try slots(Self.voices, peer: peer, positions: positions) }
    }

    /// The recording of message `number` (from 1) of the conversation with `peer`, with its
    /// bytes; `nil` when it has none, or it was refused.
    public func voice(peer: String, number: Int) throws(StoreError) -> (voice: Voice, bytes: [UInt8])? {
        guard let (slot, bytes) = try attachment(Self.voices, peer: peer, number: number), case .voice(let voice) = slot else { return nil }
        return (voice, bytes)
    }

    /// The recording of the message in row `message`, with its bytes: what a send puts in its envelope.
    func voice(ofRow message: Int64) throws -> AttachedVoice? {
        try attachment(Self.voices, row: message).map { slot, bytes in
            switch slot {
            case .voice(let voice): .voice(voice, bytes: bytes)
            case .refused(let why): .refused(why: why)
            }
        }
    }

    // MARK: Files

    /// Stores `file` for the message in row `message`, in the caller's transaction.
    func insertFile(_ file: AttachedFile, message: Int64) throws {
        switch file {
        case .file(let info, let bytes):
            try insert(Self.files, message: message, values: [info.name, info.type], number: nil, bytes: bytes, problem: nil)
        case .refused(let why):
            try insert(Self.files, message: message, values: nil, number: nil, bytes: nil, problem: why)
        }
    }

    /// The files of the file messages at `positions` (from 0) of the conversation with `peer`,
    /// without their bytes, by position.
    public func fileSlots(peer: String, positions: ClosedRange<Int>) throws(StoreError) -> [Int: FileSlot] {
        try guarded { try slots(Self.files, peer: peer, positions: positions) }
    }

    /// The file of message `number` (from 1) of the conversation with `peer`, with its bytes;
    /// `nil` when it has none, or it was refused.
    public func file(peer: String, number: Int) throws(StoreError) -> (file: SharedFile, bytes: [UInt8])? {
        guard let (slot, bytes) = try attachment(Self.files, peer: peer, number: number), case .file(let file) = slot else { return nil }
        return (file, bytes)
    }

    /// The file of the message in row `message`, with its bytes: what a send puts in its envelope.
    func file(ofRow message: Int64) throws -> AttachedFile? {
        try attachment(Self.files, row: message).map { slot, bytes in
            switch slot {
            case .file(let file): .file(file, bytes: bytes)
            case .refused(let why): .refused(why: why)
            }
        }
    }
}

/// What a peer's message costs the store, as its sender's daily budget counts it
/// (``MessageStore/PeerBudget``): the bytes it puts in the database, not only its payload's.
///
/// A message's row holds its payload, its summary (the words search and the list of
/// conversations show, up to ``MessageText/limit`` characters), its ids, key and page; its
/// summary goes into the trigram search index too, which takes several bytes a byte; and the row's
/// numbers, record header and its three index entries take a little more. Measured on SQLite
/// 3.40 (Debian 12) with `dbstat`, storing text messages of random letters (the search index's
/// worst case: every trigram new) through `imhost chat`:
///
/// | payload | messages | database per message | payload per message | counted here |
/// |---|---|---|---|---|
/// | 52 B | 3,000 | 554 B | 52 B | 621 B |
/// | 312 B | 2,000 | 2,681 B | 312 B | 2,701 B |
/// | 2,012 B | 1,000 | 14,094 B | 2,012 B | 16,301 B |
/// | 60,012 B | 300 | 73,441 B | 60,012 B | 74,301 B |
///
/// The search index took 5.3 to 6.9 bytes a byte of summary (4.5 at 2,000-byte summaries), so
/// a summary byte counts 6; ordinary words take far less (1.5), so real chats are over-counted,
/// never under by more than a few per cent.
extension MessageStore {
    /// Bytes of search index counted for each byte of a message's summary.
    static let searchIndexBytesPerByte = 6
    /// Bytes counted for a row's numbers, its record header and its three index entries.
    static let rowOverheadBytes = 256

    /// What storing `message` for `recipient` adds to the database, in bytes.
    static func storedBytes(of message: IncomingMessage, recipient: String) -> Int {
        let summary = MessageText.of(key: message.key, payload: message.payload.json).utf8.count
        let row = message.payload.json.utf8.count + summary + message.globalID.utf8.count + message.key.utf8.count
            + message.from.utf8.count + recipient.utf8.count + (message.jump.map { encode($0).utf8.count } ?? 0)
        // A photo's bytes are stored as they came, in a row of their own.
        let photos = message.photos.reduce(0) { total, photo in
            let problem = if case .refused(let why) = photo { why.utf8.count } else { 0 }
            return total + photo.bytes.count + problem + rowOverheadBytes
        }
        let voice = message.voice.map { voice in
            let problem = if case .refused(let why) = voice { why.utf8.count } else { 0 }
            return voice.bytes.count + problem + rowOverheadBytes
        } ?? 0
        let file = message.file.map { file in
            let problem = if case .refused(let why) = file { why.utf8.count } else { 0 }
            return file.bytes.count + problem + rowOverheadBytes
        } ?? 0
        return row + summary * searchIndexBytesPerByte + rowOverheadBytes + photos + voice + file
    }
}

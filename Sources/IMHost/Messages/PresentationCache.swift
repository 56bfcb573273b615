import IMKit

/// What one page's builders made of its messages: a page draws its whole window again whenever
/// anything in it changes (a message comes, a card is revised, a receipt arrives), and a builder
/// given the same bytes at the same width makes the same model (IMKit asks builders to keep no
/// state), so each message is built once until its payload, its width or its line changes.
/// Placeholders are never kept: their causes are asked again at every draw. Bounded: what a
/// draw did not use is dropped once the cache holds more than ``limit``.
final class PresentationCache {
    /// Which message, as which bytes, at which width, by which line's builder.
    struct Key: Hashable {
        var sender: String
        var id: String
        var outgoing: Bool
        var width: Int
        var line: String?
        var version: String?
        /// The payload as stored (a revision is other bytes, so another key).
        var payload: String

        init(_ message: MessageEnvelope, outgoing: Bool, width: Int, line: String?, version: String?) {
            sender = message.from
            id = message.globalID ?? message.id
            self.outgoing = outgoing
            self.width = width
            self.line = line
            self.version = version
            payload = message.payload.json
        }
    }

    private var entries: [Key: (model: MessageModel, view: MessageView)] = [:]
    private var used: Set<Key> = []
    /// The most entries kept past a draw.
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// What the builder made of `key`, if it was kept.
    func made(_ key: Key) -> (model: MessageModel, view: MessageView)? {
        guard let made = entries[key] else { return nil }
        used.insert(key)
        return made
    }

    func keep(_ key: Key, model: MessageModel, view: MessageView) {
        // Bounded between draws too (one message revised again and again).
        if entries.count >= 2 * limit { entries = entries.filter { used.contains($0.key) } }
        entries[key] = (model, view)
        used.insert(key)
    }

    /// A draw ended: past the limit, only what it used stays.
    func drawn() {
        if entries.count > limit { entries = entries.filter { used.contains($0.key) } }
        used.removeAll(keepingCapacity: true)
    }
}

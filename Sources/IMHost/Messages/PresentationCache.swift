import IMKit

/// What one page's builders made of its messages: a page draws its whole window again whenever
/// anything in it changes (a message comes, a card is revised, a receipt arrives), and a builder
/// given the same bytes at the same width makes the same model (IMKit asks builders to keep no
/// state), so each message is built once until its payload, its width or its line changes, and
/// what a page shows of it (its card as a page value) is made once too. Placeholders are never kept: their causes are asked again at every draw. Bounded: what a
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

    /// What the builder made of one key, and what a page drew of it (``body``).
    final class Entry {
        let model: MessageModel
        let view: MessageView
        /// What a page shows of it (a card as a page value, a built-in's content), made the
        /// first time a page asks: it follows from the model and view (and the message's key,
        /// which a message keeps through its revisions).
        var body: PageView.Body?
        /// The draw that last used it.
        fileprivate var drawn: Int

        fileprivate init(model: MessageModel, view: MessageView, drawn: Int) {
            self.model = model
            self.view = view
            self.drawn = drawn
        }
    }

    private var entries: [Key: Entry] = [:]
    /// The draw under way: an entry whose ``Entry/drawn`` is this one was used by it.
    private var draw = 0
    /// The most entries kept past a draw.
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// What the builder made of `key`, if it was kept.
    func made(_ key: Key) -> Entry? {
        guard let made = entries[key] else { return nil }
        made.drawn = draw
        return made
    }

    func keep(_ key: Key, model: MessageModel, view: MessageView) -> Entry {
        // Bounded between draws too (one message revised again and again).
        if entries.count >= 2 * limit { dropUnused() }
        let entry = Entry(model: model, view: view, drawn: draw)
        entries[key] = entry
        return entry
    }

    /// A draw ended: past the limit, only what it used stays.
    func drawn() {
        if entries.count > limit { dropUnused() }
        draw &+= 1
    }

    private func dropUnused() {
        entries = entries.filter { $0.value.drawn == draw }
    }
}

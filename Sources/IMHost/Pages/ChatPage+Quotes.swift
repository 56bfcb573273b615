@_spi(Host) import IMKit

/// A reply's quote of the message it answers, as a page shows it: found on the page or in the
/// store, worded by the quoted message's own builder when its line says how (IMKit 1.4).
extension ChatPage {
    /// The quotes of the replies among `messages` (as `presented`, in the same order): each
    /// quoted message is found on the page, or else in the store (and built, as a page would, to
    /// quote it).
    func quoteReplies(_ messages: inout [PageView.Message], presented: [(number: Int, message: PresentedMessage)]) throws {
        let replies = presented.indices.compactMap { index in presented[index].message.reply.map { (index, $0) } }
        guard !replies.isEmpty else { return }
        var shown: [ReplyTo: Int] = [:]
        for (index, message) in messages.enumerated() {
            if let id = message.envelope.globalID { shown[ReplyTo(from: message.envelope.from, id: id)] = index }
        }
        for (index, reply) in replies {
            if let at = shown[reply] {
                messages[index].reply = PageView.Quote(from: reply.from, number: messages[at].number,
                                                       excerpt: excerpt(messages[at].body, presented[at].message))
                continue
            }
            guard let entry = try environment.store.message(from: reply.from, globalID: reply.id), entry.envelope.conversation == conversation,
                  let quoted = present([entry], width: Self.defaultWidth).first?.message else {
                messages[index].reply = PageView.Quote(from: reply.from, number: nil, excerpt: .missing)
                continue
            }
            messages[index].reply = PageView.Quote(from: reply.from, number: entry.number, excerpt: excerpt(Self.body(quoted), quoted))
        }
    }

    /// What a line's builder says a reply quotes of its message (IMKit 1.4), asked in its frame.
    private func lineQuote(_ presented: PresentedMessage) -> String? {
        guard presented.shown.model != nil, let builder = environment.lookup(presented.shown.envelope.key) else { return nil }
        let message = presented.shown
        return environment.lineGuard.run(.builder, builder.mark, key: message.envelope.key, message: message.envelope.id) {
            Self.builderQuote(builder.builder, message)
        }
    }

    private static func builderQuote<Builder: MessageBuilder>(_ builder: Builder, _ message: ShownMessage) -> String? {
        guard let content = message.model?.content as? Builder.Content else { return nil }
        return builder.quote(content, message: message)
    }

    /// What a quote shows of a message drawn as `body`: a line's card or lines as its builder
    /// quotes them (IMKit 1.4), else the card's title or the first line.
    private func excerpt(_ body: PageView.Body, _ presented: PresentedMessage) -> PageView.Quote.Excerpt {
        let key = presented.shown.envelope.key
        switch body {
        case .text(let text):
            if key == "photo" { return .photo(caption: text.isEmpty ? nil : PageView.Quote.excerpt(text)) }
            return .text(PageView.Quote.excerpt(text))
        case .voice(let voice): return .voice(seconds: voice.seconds)
        case .location(let place): return .location(PageView.Quote.excerpt(place.name))
        case .file(let file): return .file(PageView.Quote.excerpt(file.name))
        case .image: return .image
        case .lines(let lines):
            if let quote = lineQuote(presented) { return .text(PageView.Quote.excerpt(quote)) }
            return .text(PageView.Quote.excerpt(lines.first { !$0.trimmingPrefix(while: \.isWhitespace).isEmpty } ?? ""))
        case .card(let card):
            return .text(PageView.Quote.excerpt(lineQuote(presented) ?? card.title))
        case .placeholder: return .placeholder
        case .recalled: return .recalled
        }
    }
}

/// What the host tells a builder about where the message will be shown.
public struct MessageLayout: Sendable, Hashable {
    /// The columns available for the message body, bubble and sender excluded.
    public var width: Int

    /// Creates a layout for a body of `width` columns.
    public init(width: Int) { self.width = max(1, width) }

    /// Wraps text to the layout's width, measured in terminal columns. Control and
    /// bidirectional characters (from a peer's text) are first written as the visible escapes
    /// the terminal will show (`\x1b`, `\u{202e}`, see ``TerminalText``), so the escapes are
    /// measured and wrapped too; `\n` starts a new line.
    public func wrap(_ text: String) -> [String] { TextWidth.wrap(TerminalText.safe(text, newlines: true), width: width) }

    /// A card: a title line, then one `label: value` line per field, each wrapped to the width.
    public func card(title: String, fields: [CardField]) -> [String] {
        var lines = wrap(title)
        for field in fields {
            lines += wrap("\(field.label): \(field.value)")
        }
        return lines
    }
}

/// One `label: value` line of a card (``MessageLayout/card(title:fields:)``).
public struct CardField: Sendable, Hashable {
    /// What the value is, e.g. `"Price"`.
    public var label: String
    /// The value, e.g. `"¥4200/month"`.
    public var value: String

    /// Creates a field.
    public init(_ label: String, _ value: String) {
        self.label = label
        self.value = value
    }
}

/// The laid-out form of one message: its decoded content and the lines it takes, or the card it
/// shows.
public struct MessageModel: Sendable {
    /// The decoded content; a page's tap hook casts it to the line's own type.
    public let content: any Sendable
    /// The laid-out lines, each at most the layout's width in terminal columns. For a card, the
    /// card as text (``MessageLayout/card(_:)``).
    public let lines: [String]
    /// A short summary for lists and notifications, e.g. "[Listing] 2-room flat".
    public let summary: String
    /// The card, for a model made with ``init(content:card:layout:summary:)``; `nil` for one
    /// made of lines. Since IMKit 1.3.
    public let card: MessageCard?

    /// The columns the widest line takes.
    public var columns: Int { lines.map(TextWidth.columns).max() ?? 0 }

    /// The number of lines.
    public var rows: Int { lines.count }

    /// Creates a model. `summary` defaults to the first line.
    public init(content: any Sendable, lines: [String], summary: String? = nil) {
        self.content = content
        self.lines = lines
        self.summary = summary ?? lines.first ?? ""
        card = nil
    }

    /// Creates the model of a card: the browser draws it as a card, the terminal as the box of
    /// text ``lines`` holds (the card laid out for `layout`). `summary` defaults to the card's
    /// title. Since IMKit 1.3.
    public init(content: any Sendable, card: MessageCard, layout: MessageLayout, summary: String? = nil) {
        self.content = content
        self.card = card
        lines = layout.card(card)
        self.summary = summary ?? card.title
    }
}

/// What a message shows inside its cell: lines, or (since IMKit 1.3) a card. The host adds the
/// bubble, alignment and sender.
public struct MessageView: Sendable, Hashable {
    /// The lines of the view, top to bottom; for a card, the card as text.
    public var lines: [String]
    /// The card the view shows, or `nil` for a view of lines. A front end that draws cards
    /// draws this; one that draws text draws the card as text. Since IMKit 1.3.
    public var card: MessageCard?

    /// Creates a view from lines.
    public init(lines: [String]) {
        self.lines = lines
        card = nil
    }

    /// Creates a view of a card, with the card as text for whoever reads a view's lines
    /// (``MessageLayout/card(_:)`` makes them). Since IMKit 1.3.
    public init(card: MessageCard, lines: [String]) {
        self.lines = lines
        self.card = card
    }
}

/// A message as a page sees it: the stored envelope, and the model its builder made.
public struct ShownMessage: Sendable {
    /// The stored message, never changed by showing it.
    public let envelope: MessageEnvelope
    /// The model, or `nil` when the message shows as a placeholder.
    public let model: MessageModel?
    /// Whether the message was sent by the signed-in user.
    public let isOutgoing: Bool

    /// Creates a shown message.
    public init(envelope: MessageEnvelope, model: MessageModel?, isOutgoing: Bool) {
        self.envelope = envelope
        self.model = model
        self.isOutgoing = isOutgoing
    }
}

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

/// The laid-out form of one message: its decoded content and the lines it takes.
public struct MessageModel: Sendable {
    /// The decoded content; a page's tap hook casts it to the line's own type.
    public let content: any Sendable
    /// The laid-out lines, each at most the layout's width in terminal columns.
    public let lines: [String]
    /// A short summary for lists and notifications, e.g. "[Listing] 2-room flat".
    public let summary: String

    /// The columns the widest line takes.
    public var columns: Int { lines.map(TextWidth.columns).max() ?? 0 }

    /// The number of lines.
    public var rows: Int { lines.count }

    /// Creates a model. `summary` defaults to the first line.
    public init(content: any Sendable, lines: [String], summary: String? = nil) {
        self.content = content
        self.lines = lines
        self.summary = summary ?? lines.first ?? ""
    }
}

/// What a message shows inside its cell. The host adds the bubble, alignment and sender.
public struct MessageView: Sendable, Hashable {
    /// The lines of the view, top to bottom.
    public var lines: [String]

    /// Creates a view from lines.
    public init(lines: [String]) { self.lines = lines }
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

/// A structured card: what a builder returns when its message is a listing, an offer or an
/// invitation rather than text. Since IMKit 1.3.
///
/// A front end draws it in its own way: the browser as a card (a picture, the title with its
/// badge, the subtitle, the fields as a table, the buttons as buttons), the terminal as the box
/// of text ``MessageLayout/card(_:)`` lays out, with how to press each button. Return one through
/// ``MessageModel/init(content:card:layout:summary:)``:
///
/// ```swift
/// func model(for note: Note, layout: MessageLayout) throws -> MessageModel {
///     MessageModel(content: note, card: MessageCard(title: "📝 \(note.text)"), layout: layout)
/// }
/// ```
///
/// Every string is shown as written, escaped by each front end: a card cannot carry markup or
/// terminal control sequences.
public struct MessageCard: Sendable, Hashable {
    /// The first line, e.g. `"🏠 Sunny 2-room flat"`.
    public var title: String
    /// A line under the title, e.g. `"Whole flat · Chaoyang"`.
    public var subtitle: String?
    /// `label: value` rows, in order.
    public var fields: [CardField]
    /// A picture for the card; see ``CardImage`` for what is drawn today.
    public var image: CardImage?
    /// A short status beside the title, e.g. `"Available"`.
    public var badge: CardBadge?
    /// Buttons the user may press; each reaches the builder's
    /// ``MessageBuilder/didTapButton(_:content:message:context:)`` with its id.
    public var buttons: [CardButton]
    /// What the card asks (a text, a choice, a date, a time), in order, above its buttons; a
    /// button with ``CardButton/submits`` sends the values. Since IMKit 1.4.
    public var inputs: [CardInput] = []

    /// Creates a card; everything but the title is optional.
    public init(title: String, subtitle: String? = nil, fields: [CardField] = [], image: CardImage? = nil,
                badge: CardBadge? = nil, buttons: [CardButton] = []) {
        self.title = title
        self.subtitle = subtitle
        self.fields = fields
        self.image = image
        self.badge = badge
        self.buttons = buttons
    }

    /// Creates a card that asks something: its `inputs`, sent by a button that
    /// ``CardButton/submits``. Since IMKit 1.4.
    public init(title: String, subtitle: String? = nil, fields: [CardField] = [], image: CardImage? = nil,
                badge: CardBadge? = nil, inputs: [CardInput], buttons: [CardButton]) {
        self.init(title: title, subtitle: subtitle, fields: fields, image: image, badge: badge, buttons: buttons)
        self.inputs = inputs
    }
}

/// A picture a card shows. Since IMKit 1.3.
///
/// Either a picture the line ships, handed to the host when it registers
/// (``LineRegistrar/registerPicture(_:bytes:)``), or one of the photos the card's message
/// carries (a person sent it with the message). Nothing else: a card never names a URL, since
/// fetching a peer's URL would tell that peer who looked at the card, and when. The browser
/// shows the picture; the terminal draws a box with its kind and size. A picture the host does not
/// have (a name not registered, a photo the message does not carry or that was refused) keeps
/// its place, saying so. This enum may grow: a `switch` over it needs `@unknown default`.
public enum CardImage: Sendable, Hashable {
    /// A picture the line registered, by its name, e.g. `.picture("listing")`.
    case picture(String)
    /// The message's photo at `index`, from 0: `.photo(0)` is the first photo sent with it.
    case photo(Int)
}

/// A card's status badge: a word or two, and how it reads. Since IMKit 1.3.
public struct CardBadge: Sendable, Hashable {
    /// How a badge reads; the browser colours it, the terminal shows the text only. May grow:
    /// a `switch` over it needs `@unknown default`.
    public enum Tone: Sendable, Hashable {
        /// Neither good nor bad news: "New", "Invitation".
        case neutral
        /// Good news: "Available", "Verified dealer".
        case positive
        /// Worth a look: "Reserved", "Price changed".
        case warning
        /// Bad news: "Sold", "Expired".
        case negative
    }

    /// What the badge says, e.g. `"Available"`.
    public var text: String
    /// How it reads.
    public var tone: Tone

    /// Creates a badge.
    public init(_ text: String, tone: Tone = .neutral) {
        self.text = text
        self.tone = tone
    }
}

/// A button of a card. Since IMKit 1.3.
///
/// Pressing it (a click in the browser, `/tap N ID` in the terminal) calls the builder's
/// ``MessageBuilder/didTapButton(_:content:message:context:)`` with its ``id``, on whichever
/// page the card is shown; the chat shows what the hook returns, as it shows a tap's answer.
public struct CardButton: Sendable, Hashable {
    /// What the builder's hook receives and what a person types after `/tap N`: 1 to 32 ASCII
    /// letters, digits, `-`, `_` or `.`, starting with a letter or a digit, and unique within
    /// the card. A card with another id shows as a placeholder that says which (its builder
    /// failed), so a mistake shows at once.
    public var id: String
    /// What the button says, e.g. `"Book a viewing"`.
    public var label: String
    /// Whether pressing it sends the card's ``MessageCard/inputs``: the host checks them first
    /// and, when they pass, calls ``MessageBuilder/didSubmit(_:values:content:message:context:)``
    /// instead of `didTapButton`. A plain button (`false`) ignores the inputs. Since IMKit 1.4.
    public var submits: Bool = false

    /// Creates a button.
    public init(id: String, label: String) {
        self.id = id
        self.label = label
    }

    /// Creates a button that sends the card's inputs when `submits`. Since IMKit 1.4.
    public init(id: String, label: String, submits: Bool) {
        self.id = id
        self.label = label
        self.submits = submits
    }

    /// Whether `id` is one a button may have (and a picture's name, for
    /// ``LineRegistrar/registerPicture(_:bytes:)``): 1 to 32 ASCII letters, digits, `-`, `_` or
    /// `.`, starting with a letter or a digit. Since IMKit 1.3.
    public static func isValidID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard let first = bytes.first, bytes.count <= 32 else { return false }
        func letterOrDigit(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }
        return letterOrDigit(first) && bytes.allSatisfy { letterOrDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") }
    }
}

extension MessageLayout {
    /// A card as text, each line at most the layout's width: the title, the subtitle, the
    /// badge (`● Available`), a box where the picture goes, one `label: value` line per field,
    /// then the buttons as `[Label]`, as many to a line as fit. What ``MessageModel`` keeps as
    /// a card's ``MessageModel/lines``. Since IMKit 1.3.
    public func card(_ card: MessageCard) -> [String] {
        self.card(card) { image in
            switch image {
            case .picture(let name): "picture: " + name
            case .photo(let index): "photo \(index + 1)"
            }
        }
    }

    /// A card as text, its picture's box saying what `describe` says of it (the host says the
    /// picture's kind and size).
    @_spi(Host)
    public func card(_ card: MessageCard, describe: (CardImage) -> String) -> [String] {
        var lines = wrap(card.title)
        if let subtitle = card.subtitle { lines += wrap(subtitle) }
        if let badge = card.badge { lines += wrap("● " + badge.text) }
        if let image = card.image { lines += box(TerminalText.safe(describe(image), newlines: false)) }
        for field in card.fields {
            lines += wrap("\(field.label): \(field.value)")
        }
        for input in card.inputs { lines += wrap(Self.text(of: input)) }
        var row = ""
        for button in card.buttons {
            let label = "[" + TextWidth.truncate(TerminalText.safe(button.label), to: max(1, width - 2)) + "]"
            if row.isEmpty {
                row = label
            } else if TextWidth.columns(row) + 1 + TextWidth.columns(label) <= width {
                row += " " + label
            } else {
                lines.append(row)
                row = label
            }
        }
        if !row.isEmpty { lines.append(row) }
        return lines
    }

    /// An input as one line of text: its label (`*` when required), then what it takes, e.g.
    /// `Day*: date 2026-12-01 to 2026-12-31`, `Rooms: one of 1 (one) · 2 (two)`, `Note: text ≤ 200`.
    static func text(of input: CardInput) -> String {
        let label = input.label + (input.isRequired ? "*" : "") + ": "
        let limits = [input.earliest.map { "from " + $0 }, input.latest.map { "to " + $0 }].compactMap { $0 }.joined(separator: " ")
        let options = input.options.map { "\($0.id) (\($0.label))" }.joined(separator: " · ")
        let takes = switch input.kind {
        case .text: "text" + (input.maxLength.map { " ≤ \($0)" } ?? "") + (input.placeholder.map { " (\($0))" } ?? "")
        case .choice: "one of " + options
        case .choices: "any of " + options
        case .date: "date YYYY-MM-DD" + (limits.isEmpty ? "" : " " + limits)
        case .time: "time HH:MM" + (limits.isEmpty ? "" : " " + limits)
        }
        let now = input.value.map { " = " + $0 } ?? (input.initialChoices.isEmpty ? "" : " = " + input.initialChoices.joined(separator: ","))
        return "▸ " + label + takes + now
    }

    /// The place a picture goes, as a box of text naming it.
    private func box(_ name: String) -> [String] {
        guard width >= 6 else { return [TextWidth.truncate("[" + name + "]", to: width)] }
        let text = TextWidth.truncate(name, to: width - 4)
        let inner = TextWidth.columns(text)
        let rule = String(repeating: "─", count: inner + 2)
        return ["┌" + rule + "┐", "│ " + text + " │", "└" + rule + "┘"]
    }
}

/// A rule a card breaks, and where: the path of the mistake in the card, e.g.
/// `buttons[2].id`, with what is wrong there. Since IMKit 1.4.
///
/// The host checks every card a builder makes (``MessageCard/ruleErrors()``): a card that breaks
/// a rule shows as a placeholder saying the first error, in the chat, in `imhost plugins --samples` (for
/// the line's samples) and in the workbench (`imhost preview`). Check your own cards in a test:
///
/// ```swift
/// #expect(try ListingBuilder().render(samplePayload, layout: MessageLayout(width: 40)).card?.ruleErrors() == [])
/// ```
public struct CardRuleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which rule, as a code. May grow: compare with `==`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, e.g. `"not-an-id"`.
        public let name: String
        /// Creates a code. The host uses the predefined ones.
        public init(_ name: String) { self.name = name }
        /// The code's name.
        public var description: String { name }

        /// Text that must say something says nothing (a title, a label).
        public static let empty = Code("empty")
        /// An id that is not 1 to 32 ASCII letters, digits, `-`, `_` or `.`, starting with a
        /// letter or a digit (``CardButton/isValidID(_:)``).
        public static let notAnID = Code("not-an-id")
        /// An id given twice where ids are unique.
        public static let duplicateID = Code("duplicate-id")
        /// More of something than a card holds (``MessageCard/fieldLimit`` and the others).
        public static let tooMany = Code("too-many")
        /// Text longer than a card holds (``MessageCard/textLimit``).
        public static let tooLong = Code("too-long")
        /// A limit that is not a date (or a time) as inputs write them, or an earliest after a latest.
        public static let badLimit = Code("bad-limit")
        /// A choice without options, or options on an input that is not a choice.
        public static let badOptions = Code("bad-options")
        /// Inputs no button submits, or a button that submits a card without inputs.
        public static let nothingSubmits = Code("nothing-submits")
        /// A photo index below 0.
        public static let badImage = Code("bad-image")
    }

    /// Where the mistake is: `title`, `fields[3].label`, `buttons[2].id`, `inputs[0].options[1].id`.
    public let path: String
    /// Which rule.
    public let code: Code
    /// What is there and what would do, in a sentence for the line's author, e.g.
    /// `"book now" has a space; an id is 1 to 32 ASCII letters, digits, '-', '_' or '.'`.
    public let detail: String

    /// Creates an error.
    public init(path: String, code: Code, detail: String) {
        self.path = path
        self.code = code
        self.detail = detail
    }

    /// `path: detail`, e.g. `buttons[2].id: "book now" has a space; ...`.
    public var description: String { path + ": " + detail }
}

extension MessageCard {
    /// The most fields a card shows.
    public static let fieldLimit = 20
    /// The most buttons a card has.
    public static let buttonLimit = 8
    /// The most inputs a card asks.
    public static let inputLimit = 10
    /// The most characters of any one text of a card (a title, a field's value, a label).
    public static let textLimit = 10_000

    /// Every rule the card breaks, in the card's order: a title that says nothing; a field,
    /// button or input without a label; an id that is not an id or is given twice; more fields,
    /// buttons, inputs or options than a card holds; a text longer than ``textLimit``; limits
    /// that are not dates or times; inputs no button submits. Empty when the card is good.
    /// Since IMKit 1.4.
    public func ruleErrors() -> [CardRuleError] {
        var errors: [CardRuleError] = []
        func text(_ value: String, at path: String, required: Bool) {
            if required, value.allSatisfy(\.isWhitespace) {
                errors.append(CardRuleError(path: path, code: .empty, detail: "is empty; say what it is"))
            } else if value.count > Self.textLimit {
                errors.append(CardRuleError(path: path, code: .tooLong, detail: "has \(value.count) characters; a card's texts have at most \(Self.textLimit)"))
            }
        }
        func ids(_ values: [String], at path: (Int) -> String) {
            var seen = Set<String>()
            for (index, id) in values.enumerated() {
                if !CardButton.isValidID(id) {
                    errors.append(CardRuleError(path: path(index), code: .notAnID, detail: Self.whyNotAnID(id)))
                } else if !seen.insert(id).inserted {
                    errors.append(CardRuleError(path: path(index), code: .duplicateID, detail: "\"\(id)\" is given twice; ids are unique here"))
                }
            }
        }
        func count(_ found: Int, _ limit: Int, at path: String, of what: String) {
            if found > limit { errors.append(CardRuleError(path: path, code: .tooMany, detail: "has \(found) \(what); a card has at most \(limit)")) }
        }
        text(title, at: "title", required: true)
        if let subtitle { text(subtitle, at: "subtitle", required: false) }
        if let badge { text(badge.text, at: "badge.text", required: true) }
        if case .photo(let index)? = image, index < 0 {
            errors.append(CardRuleError(path: "image", code: .badImage, detail: "is photo \(index); photos are numbered from 0"))
        }
        count(fields.count, Self.fieldLimit, at: "fields", of: "fields")
        for (index, field) in fields.enumerated() {
            text(field.label, at: "fields[\(index)].label", required: true)
            text(field.value, at: "fields[\(index)].value", required: false)
        }
        count(inputs.count, Self.inputLimit, at: "inputs", of: "inputs")
        ids(inputs.map(\.id)) { "inputs[\($0)].id" }
        for (index, input) in inputs.enumerated() {
            errors += input.ruleErrors(at: "inputs[\(index)]")
        }
        count(buttons.count, Self.buttonLimit, at: "buttons", of: "buttons")
        ids(buttons.map(\.id)) { "buttons[\($0)].id" }
        for (index, button) in buttons.enumerated() {
            text(button.label, at: "buttons[\(index)].label", required: true)
            if button.submits, inputs.isEmpty {
                errors.append(CardRuleError(path: "buttons[\(index)].submits", code: .nothingSubmits, detail: "submits a card that asks nothing; add inputs, or make it a plain button"))
            }
        }
        if !inputs.isEmpty, !buttons.contains(where: \.submits) {
            errors.append(CardRuleError(path: "inputs", code: .nothingSubmits, detail: "no button submits them; give one button submits: true"))
        }
        return errors
    }

    /// Why `id` is not an id, naming the first thing wrong with it.
    static func whyNotAnID(_ id: String) -> String {
        let rule = "an id is 1 to 32 ASCII letters, digits, '-', '_' or '.', starting with a letter or a digit"
        let shown = "\"" + TerminalText.safe(String(id.prefix(40)), newlines: false) + (id.count > 40 ? "…" : "") + "\""
        if id.isEmpty { return "is empty; " + rule }
        if id.utf8.count > 32 { return "\(shown) is \(id.utf8.count) bytes long; " + rule }
        if id.contains(" ") { return "\(shown) has a space; " + rule }
        return "\(shown) is not an id; " + rule
    }
}

extension CardInput {
    /// The rules this input breaks, its paths under `path`.
    func ruleErrors(at path: String) -> [CardRuleError] {
        var errors: [CardRuleError] = []
        if label.allSatisfy(\.isWhitespace) {
            errors.append(CardRuleError(path: path + ".label", code: .empty, detail: "is empty; every input says what it asks, for everyone and for a screen reader"))
        } else if label.count > MessageCard.textLimit {
            errors.append(CardRuleError(path: path + ".label", code: .tooLong, detail: "has \(label.count) characters; a card's texts have at most \(MessageCard.textLimit)"))
        }
        switch kind {
        case .choice, .choices:
            if options.isEmpty {
                errors.append(CardRuleError(path: path + ".options", code: .badOptions, detail: "is empty; a choice offers at least one option"))
            } else if options.count > Self.optionLimit {
                errors.append(CardRuleError(path: path + ".options", code: .tooMany, detail: "has \(options.count) options; an input has at most \(Self.optionLimit)"))
            }
            var seen = Set<String>()
            for (index, option) in options.enumerated() {
                if !CardButton.isValidID(option.id) {
                    errors.append(CardRuleError(path: path + ".options[\(index)].id", code: .notAnID, detail: MessageCard.whyNotAnID(option.id)))
                } else if !seen.insert(option.id).inserted {
                    errors.append(CardRuleError(path: path + ".options[\(index)].id", code: .duplicateID, detail: "\"\(option.id)\" is given twice; ids are unique here"))
                }
                if option.label.allSatisfy(\.isWhitespace) {
                    errors.append(CardRuleError(path: path + ".options[\(index)].label", code: .empty, detail: "is empty; say what the option is"))
                }
            }
        case .text, .date, .time:
            if !options.isEmpty {
                errors.append(CardRuleError(path: path + ".options", code: .badOptions, detail: "are given to an input that is not a choice; remove them"))
            }
        }
        if kind == .text {
            if let minLength, minLength < 0 || minLength > (maxLength ?? Self.textLimit) {
                errors.append(CardRuleError(path: path + ".minLength", code: .badLimit, detail: "is \(minLength); it is 0 to maxLength (\(maxLength ?? Self.textLimit))"))
            }
            if let maxLength, maxLength < 1 || maxLength > Self.textLimit {
                errors.append(CardRuleError(path: path + ".maxLength", code: .badLimit, detail: "is \(maxLength); it is 1 to \(Self.textLimit)"))
            }
        }
        if kind == .date || kind == .time {
            let form = kind == .date ? "a date written YYYY-MM-DD" : "a time written HH:MM"
            let date = kind == .date
            let valid = { (text: String) -> Bool in date ? Self.isDate(text) : Self.isTime(text) }
            for (name, limit) in [("earliest", earliest), ("latest", latest)] {
                if let limit, !valid(limit) {
                    errors.append(CardRuleError(path: path + "." + name, code: .badLimit, detail: "\"\(TerminalText.safe(limit, newlines: false))\" is not \(form)"))
                }
            }
            if let earliest, let latest, valid(earliest), valid(latest), earliest > latest {
                errors.append(CardRuleError(path: path + ".latest", code: .badLimit, detail: "\(latest) is before earliest \(earliest)"))
            }
        } else if earliest != nil || latest != nil {
            errors.append(CardRuleError(path: path + (earliest != nil ? ".earliest" : ".latest"), code: .badLimit, detail: "is given to an input that is neither a date nor a time; remove it"))
        }
        return errors
    }
}

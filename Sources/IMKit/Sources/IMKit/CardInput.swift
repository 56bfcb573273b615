/// Something a card asks: a line of text, a choice among options, a date or a time. Since IMKit 1.4.
///
/// Put inputs in ``MessageCard/inputs`` and give the card a button that submits them
/// (``CardButton/init(id:label:submits:)``). When a person presses it, the host checks every
/// value against the input's own rules (required, length, options, earliest and latest) before
/// the line sees anything: a value that breaks one is said next to its input, on the page, and
/// nothing reaches the line. Values that pass reach the builder's
/// ``MessageBuilder/didSubmit(_:values:content:message:context:)``.
///
/// ```swift
/// MessageCard(title: "🏠 Book a viewing", inputs: [
///     .date(id: "day", label: "Day", required: true, earliest: "2026-12-01"),
///     .time(id: "at", label: "Time", earliest: "09:00", latest: "18:00"),
///     .text(id: "note", label: "A note", placeholder: "Anything the landlord should know", maxLength: 200),
/// ], buttons: [CardButton(id: "book", label: "Book", submits: true)])
/// ```
///
/// Dates are written `YYYY-MM-DD` and times `HH:MM` (24 hours), in the values the hook receives
/// and in the limits: text a person and a line read alike, and compared as written.
public struct CardInput: Sendable, Hashable {
    /// What kind of value an input takes. May grow: a `switch` over it needs `@unknown default`.
    public enum Kind: Sendable, Hashable {
        /// One line of text.
        case text
        /// One of ``CardInput/options``.
        case choice
        /// Any number of ``CardInput/options`` (none, unless required).
        case choices
        /// A day, `YYYY-MM-DD`.
        case date
        /// A time of day, `HH:MM`.
        case time
    }

    /// What the hook's ``CardValues`` name the value by: an id as a button's is
    /// (``CardButton/isValidID(_:)``), unique among the card's inputs.
    public var id: String
    /// What the input asks, shown beside it and read by a screen reader, e.g. `"Day"`. Required.
    public var label: String
    /// What kind of value it takes.
    public var kind: Kind
    /// A hint shown in an empty text input, e.g. `"Anything the landlord should know"`.
    public var placeholder: String?
    /// Whether the card cannot be submitted without a value.
    public var isRequired: Bool
    /// The options of a ``Kind/choice`` or ``Kind/choices`` input, in order; empty for the others.
    public var options: [CardOption]
    /// A text's fewest characters when one is given (a required text has at least 1).
    public var minLength: Int?
    /// A text's most characters; the host keeps every text to ``textLimit`` anyway.
    public var maxLength: Int?
    /// The earliest date (`YYYY-MM-DD`) or time (`HH:MM`) taken, if any.
    public var earliest: String?
    /// The latest date or time taken, if any.
    public var latest: String?
    /// What the input holds when the card is shown: text, an option's id, a date or a time
    /// (for ``Kind/choices``, see ``initialChoices``).
    public var value: String?
    /// The options chosen when the card is shown, for ``Kind/choices``.
    public var initialChoices: [String]

    /// The most characters any text input takes, whatever its ``maxLength``.
    public static let textLimit = 500
    /// The most options an input has.
    public static let optionLimit = 20

    /// Creates an input; the static functions (``text(id:label:placeholder:required:minLength:maxLength:value:)``
    /// and the others) say the same more briefly.
    public init(id: String, label: String, kind: Kind, placeholder: String? = nil, required: Bool = false,
                options: [CardOption] = [], minLength: Int? = nil, maxLength: Int? = nil,
                earliest: String? = nil, latest: String? = nil, value: String? = nil, initialChoices: [String] = []) {
        self.id = id
        self.label = label
        self.kind = kind
        self.placeholder = placeholder
        isRequired = required
        self.options = options
        self.minLength = minLength
        self.maxLength = maxLength
        self.earliest = earliest
        self.latest = latest
        self.value = value
        self.initialChoices = initialChoices
    }

    /// A line of text, of `minLength` to `maxLength` characters when given.
    public static func text(id: String, label: String, placeholder: String? = nil, required: Bool = false,
                            minLength: Int? = nil, maxLength: Int? = nil, value: String? = nil) -> CardInput {
        CardInput(id: id, label: label, kind: .text, placeholder: placeholder, required: required,
                  minLength: minLength, maxLength: maxLength, value: value)
    }

    /// One of `options` (or, with `multiple`, any number of them).
    public static func choice(id: String, label: String, options: [CardOption], multiple: Bool = false,
                              required: Bool = false, value: String? = nil) -> CardInput {
        CardInput(id: id, label: label, kind: multiple ? .choices : .choice, required: required, options: options,
                  value: multiple ? nil : value, initialChoices: multiple ? value.map { [$0] } ?? [] : [])
    }

    /// A day, `YYYY-MM-DD`, between `earliest` and `latest` when given.
    public static func date(id: String, label: String, required: Bool = false, earliest: String? = nil,
                            latest: String? = nil, value: String? = nil) -> CardInput {
        CardInput(id: id, label: label, kind: .date, required: required, earliest: earliest, latest: latest, value: value)
    }

    /// A time of day, `HH:MM`, between `earliest` and `latest` when given.
    public static func time(id: String, label: String, required: Bool = false, earliest: String? = nil,
                            latest: String? = nil, value: String? = nil) -> CardInput {
        CardInput(id: id, label: label, kind: .time, required: required, earliest: earliest, latest: latest, value: value)
    }

    /// Whether `text` is a date as inputs take it: `YYYY-MM-DD`, a real day of the Gregorian calendar.
    public static func isDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }),
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), (1...12).contains(month), day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return day <= days
    }

    /// Whether `text` is a time as inputs take it: `HH:MM`, 00:00 to 23:59.
    public static func isTime(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }),
              let hour = Int(parts[0]), let minute = Int(parts[1]) else { return false }
        return hour < 24 && minute < 60
    }
}

/// One option of a choice input. Since IMKit 1.4.
public struct CardOption: Sendable, Hashable {
    /// What the hook receives when it is chosen: an id as a button's is, unique within the input.
    public var id: String
    /// What a person sees, e.g. `"2 rooms"`.
    public var label: String

    /// Creates an option.
    public init(id: String, label: String) {
        self.id = id
        self.label = label
    }
}

/// The values a person submitted with a card's button, checked by the host against each input's
/// rules: a required input has a value; a text is within its lengths; a choice is among its
/// options; a date or time is well formed and within its limits. Since IMKit 1.4.
public struct CardValues: Sendable, Hashable {
    /// Each input's values by its id: one for a text, a choice, a date or a time; any number for
    /// ``CardInput/Kind/choices``. An input left empty has none.
    public let all: [String: [String]]

    /// Creates values; the host does this, and a line's tests may.
    public init(_ all: [String: [String]]) {
        self.all = all.filter { !$0.value.isEmpty }
    }

    /// The value of input `id` (the first, for several choices), or `nil` when it was left empty.
    public subscript(_ id: String) -> String? { all[id]?.first }

    /// Every value of input `id`: the options chosen, in the card's order.
    public func values(_ id: String) -> [String] { all[id] ?? [] }
}

/// Why a submitted value was refused, by the input it belongs to: what the host says next to the
/// input, in the person's words, and what a line's test can match. Since IMKit 1.4.
public struct CardValueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why, as a code; each front end words it. May grow: compare with `==`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, e.g. `"required"`.
        public let name: String
        /// Creates a code. The host uses the predefined ones.
        public init(_ name: String) { self.name = name }
        /// The code's name.
        public var description: String { name }

        /// A required input was left empty.
        public static let required = Code("required")
        /// A text shorter than its ``CardInput/minLength``.
        public static let tooShort = Code("too-short")
        /// A text longer than its ``CardInput/maxLength`` (or ``CardInput/textLimit``).
        public static let tooLong = Code("too-long")
        /// A value that is none of the input's options.
        public static let notAnOption = Code("not-an-option")
        /// Not a date written `YYYY-MM-DD`.
        public static let notADate = Code("not-a-date")
        /// Not a time written `HH:MM`.
        public static let notATime = Code("not-a-time")
        /// Before the input's ``CardInput/earliest``.
        public static let tooEarly = Code("too-early")
        /// After the input's ``CardInput/latest``.
        public static let tooLate = Code("too-late")
        /// Several values for an input that takes one.
        public static let oneValue = Code("one-value")
        /// A value for no input the card has.
        public static let noSuchInput = Code("no-such-input")
    }

    /// The input's ``CardInput/id``.
    public let input: String
    /// Why.
    public let code: Code
    /// The limit broken, when there is one: a length, a date, a time.
    public let limit: String?

    /// Creates an error.
    public init(input: String, code: Code, limit: String? = nil) {
        self.input = input
        self.code = code
        self.limit = limit
    }

    /// `input: code` and the limit, e.g. `day: too-early (2026-12-01)`.
    public var description: String { "\(input): \(code)" + (limit.map { " (\($0))" } ?? "") }
}

/// Every value a card's check refused (``MessageCard/check(_:)``), one an input at most. Since IMKit 1.4.
public struct CardValueErrors: Error, Sendable, Hashable {
    /// Each input's error, in the card's order.
    public let errors: [CardValueError]

    /// Creates the errors of one check.
    public init(errors: [CardValueError]) { self.errors = errors }
}

extension MessageCard {
    /// Checks what a person submitted against the card's inputs: every value for an input the
    /// card has, each within its input's rules. What the host does before a line's
    /// ``MessageBuilder/didSubmit(_:values:content:message:context:)`` sees a value, so a line's
    /// tests can ask the same. Blank values (only spaces) count as none. Since IMKit 1.4.
    ///
    /// - Returns: the values.
    /// - Throws: ``CardValueErrors``: every error, one an input at most, in the card's order (an
    ///   unknown input's last).
    public func check(_ submitted: [String: [String]]) throws(CardValueErrors) -> CardValues {
        var errors: [CardValueError] = []
        var kept: [String: [String]] = [:]
        for input in inputs {
            let given = (submitted[input.id] ?? []).filter { !$0.allSatisfy(\.isWhitespace) }
            if let error = input.check(given) {
                errors.append(error)
            } else if !given.isEmpty {
                kept[input.id] = input.kind == .choices ? input.options.map(\.id).filter(given.contains) : given
            }
        }
        let known = Set(inputs.map(\.id))
        for id in submitted.keys.sorted() where !known.contains(id) && !(submitted[id] ?? []).isEmpty {
            errors.append(CardValueError(input: id, code: .noSuchInput))
        }
        guard errors.isEmpty else { throw CardValueErrors(errors: errors) }
        return CardValues(kept)
    }
}

extension CardInput {
    /// Why `given` (the non-blank values submitted) is refused, if it is.
    func check(_ given: [String]) -> CardValueError? {
        func refuse(_ code: CardValueError.Code, _ limit: String? = nil) -> CardValueError { CardValueError(input: id, code: code, limit: limit) }
        guard !given.isEmpty else { return isRequired ? refuse(.required) : nil }
        guard kind == .choices || given.count == 1 else { return refuse(.oneValue) }
        switch kind {
        case .text:
            let count = given[0].count
            let most = min(maxLength ?? Self.textLimit, Self.textLimit)
            if count > most { return refuse(.tooLong, "\(most)") }
            if let minLength, count < minLength { return refuse(.tooShort, "\(minLength)") }
        case .choice, .choices:
            let ids = Set(options.map(\.id))
            if !given.allSatisfy(ids.contains) || Set(given).count != given.count { return refuse(.notAnOption) }
        case .date, .time:
            let wellFormed = kind == .date ? Self.isDate(given[0]) : Self.isTime(given[0])
            guard wellFormed else { return refuse(kind == .date ? .notADate : .notATime) }
            // Both forms are fixed-width digits: compared as written, they compare as days and times do.
            if let earliest, given[0] < earliest { return refuse(.tooEarly, earliest) }
            if let latest, given[0] > latest { return refuse(.tooLate, latest) }
        }
        return nil
    }
}

import Testing
@testable @_spi(Host) import IMKit

@Suite("IMKit 1.4's card inputs, rules and revisions")
struct CardInputTests {
    static let booking = MessageCard(title: "Book", inputs: [
        .date(id: "day", label: "Day", required: true, earliest: "2026-12-01", latest: "2026-12-31"),
        .time(id: "at", label: "Time", earliest: "09:00", latest: "18:00"),
        .text(id: "note", label: "Note", minLength: 2, maxLength: 5),
        .choice(id: "rooms", label: "Rooms", options: [CardOption(id: "one", label: "1"), CardOption(id: "two", label: "2")], multiple: true),
        .choice(id: "floor", label: "Floor", options: [CardOption(id: "low", label: "Low"), CardOption(id: "high", label: "High")]),
    ], buttons: [CardButton(id: "book", label: "Book", submits: true)])

    func errors(_ values: [String: [String]]) -> [String] {
        do throws(CardValueErrors) {
            _ = try Self.booking.check(values)
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    @Test("values that keep every input's rules come back as the hook sees them: blanks dropped, several choices in the card's order")
    func goodValues() throws {
        let values = try Self.booking.check(["day": ["2026-12-05"], "at": ["09:00"], "note": ["  "], "rooms": ["two", "one"], "floor": ["high"]])
        #expect(values["day"] == "2026-12-05" && values["at"] == "09:00" && values["note"] == nil)
        #expect(values.values("rooms") == ["one", "two"] && values["floor"] == "high")
        #expect(try Self.booking.check(["day": ["2026-12-31"]]).all == ["day": ["2026-12-31"]], "a limit itself is taken")
    }

    @Test("each broken rule is said by its input, with its code and the limit broken; nothing else of the card is looked at")
    func badValues() {
        #expect(errors([:]) == ["day: required"])
        #expect(errors(["day": ["2026-11-30"], "at": ["18:01"]]) == ["day: too-early (2026-12-01)", "at: too-late (18:00)"])
        #expect(errors(["day": ["2027-01-01"]]) == ["day: too-late (2026-12-31)"])
        for bad in ["2026-02-29", "2026-13-01", "2026-1-05", "05-12-2026", "2026-12-05T10:00", "二〇二六-12-05"] {
            #expect(errors(["day": [bad]]) == ["day: not-a-date"], "\(bad)")
        }
        #expect(errors(["day": ["2028-02-29"]]) == ["day: too-late (2026-12-31)"], "a leap day is a day")
        for bad in ["24:00", "9:00", "09:60", "0900", "09:00:00"] { #expect(errors(["day": ["2026-12-05"], "at": [bad]]) == ["at: not-a-time"], "\(bad)") }
        #expect(errors(["day": ["2026-12-05"], "note": ["x"]]) == ["note: too-short (2)"])
        #expect(errors(["day": ["2026-12-05"], "note": ["abcdef"]]) == ["note: too-long (5)"])
        #expect(errors(["day": ["2026-12-05"], "rooms": ["three"], "floor": ["low", "high"]]) == ["rooms: not-an-option", "floor: one-value"])
        #expect(errors(["day": ["2026-12-05"], "rooms": ["one", "one"]]) == ["rooms: not-an-option"], "an option chosen twice")
        #expect(errors(["day": ["2026-12-05"], "pet": ["cat"]]) == ["pet: no-such-input"])
        // A text is kept to the host's limit whatever the line says.
        let long = MessageCard(title: "t", inputs: [.text(id: "t", label: "T")], buttons: [CardButton(id: "s", label: "S", submits: true)])
        #expect(throws: CardValueErrors.self) { try long.check(["t": [String(repeating: "x", count: CardInput.textLimit + 1)]]) }
    }

    @Test("a card's rules name the path of each mistake: labels, ids, limits, options, counts, and inputs no button sends")
    func rules() {
        #expect(Self.booking.ruleErrors() == [])
        let bad = MessageCard(title: " ", fields: [CardField("", "v")], inputs: [
            .text(id: "a b", label: ""),
            .choice(id: "c", label: "C", options: []),
            .choice(id: "d", label: "D", options: [CardOption(id: "x", label: "X"), CardOption(id: "x", label: "")]),
            .date(id: "e", label: "E", earliest: "2026-12-31", latest: "2026-12-01"),
            .time(id: "f", label: "F", earliest: "9am"),
            .text(id: "c", label: "again", maxLength: 0),
        ], buttons: [CardButton(id: "go", label: "Go")])
        #expect(bad.ruleErrors().map(\.path) == ["title", "fields[0].label", "inputs[0].id", "inputs[5].id", "inputs[0].label", "inputs[1].options",
                                                 "inputs[2].options[1].id", "inputs[2].options[1].label", "inputs[3].latest", "inputs[4].earliest",
                                                 "inputs[5].maxLength", "inputs"], "\(bad.ruleErrors())")
        #expect(bad.ruleErrors().first { $0.path == "inputs[0].id" }?.description == #"inputs[0].id: "a b" has a space; an id is 1 to 32 ASCII letters, digits, '-', '_' or '.', starting with a letter or a digit"#)
        #expect(bad.ruleErrors().last?.code == .nothingSubmits)
        let crowded = MessageCard(title: "t", fields: Array(repeating: CardField("a", "b"), count: MessageCard.fieldLimit + 1),
                                  buttons: (0...MessageCard.buttonLimit).map { CardButton(id: "b\($0)", label: "B") } + [CardButton(id: "s", label: "S", submits: true)])
        #expect(crowded.ruleErrors().map(\.description) == ["fields: has 21 fields; a card has at most 20", "buttons: has 10 buttons; a card has at most 8",
                                                            "buttons[9].submits: submits a card that asks nothing; add inputs, or make it a plain button"])
    }

    @Test("the terminal's text of a card shows each input on a line: required marked, what it takes, its limits")
    func asText() {
        let lines = MessageLayout(width: 60).card(Self.booking)
        #expect(lines.contains("▸ Day*: date YYYY-MM-DD from 2026-12-01 to 2026-12-31"))
        #expect(lines.contains("▸ Rooms: any of one (1) · two (2)"))
        #expect(lines.contains("▸ Note: text ≤ 5"))
    }

    struct Question: Codable, Sendable { var text: String; var answer: String? }
    struct QuestionBuilder: MessageBuilder {
        let key = "demo.question"
        func model(for question: Question, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: question, lines: [question.text])
        }
    }

    @Test("revise hands the host the message and the new content's payload; another key's builder, or a page that cannot revise, is refused by its code")
    func revise() throws {
        let context = CardTests.context
        let message = ShownMessage(envelope: MessageEnvelope(id: "m1", conversation: "u1", from: "u1", to: "me", timestamp: 0, key: "demo.question",
                                                             payload: MessagePayload(json: #"{"text":"when?"}"#)), model: nil, isOutgoing: false)
        #expect(throws: SendError(.notRevisable, "this page cannot revise messages")) {
            try context.revise(message, to: Question(text: "when?", answer: "now"), with: QuestionBuilder())
        }
        nonisolated(unsafe) var handed: [(String, String)] = []
        context.setReviser { (shown, key, payload) throws(SendError) in handed.append((shown.envelope.id + " " + key, payload.json)) }
        try context.revise(message, to: Question(text: "when?", answer: "now"), with: QuestionBuilder())
        #expect(handed.map(\.0) == ["m1 demo.question"] && handed.first?.1 == #"{"answer":"now","text":"when?"}"#)
        let other = ShownMessage(envelope: MessageEnvelope(id: "m2", conversation: "u1", from: "u1", to: "me", timestamp: 0, key: "demo.other",
                                                           payload: MessagePayload(json: "{}")), model: nil, isOutgoing: false)
        do {
            try context.revise(other, to: Question(text: "x"), with: QuestionBuilder())
            Issue.record("another key's message was revised")
        } catch {
            #expect(error.code == .notRevisable)
        }
        #expect(handed.count == 1)
    }
}

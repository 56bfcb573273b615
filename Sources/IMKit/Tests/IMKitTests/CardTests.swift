import Testing
@testable @_spi(Host) import IMKit

@Suite("IMKit 1.3's structured card")
struct CardTests {
    struct Offer: Codable, Sendable, Equatable { var model: String; var price: Int }

    struct OfferBuilder: MessageBuilder {
        let key = "demo.offer"
        func model(for offer: Offer, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: offer, card: MessageCard(title: offer.model, fields: [CardField("Price", "¥\(offer.price)")],
                                                           buttons: [CardButton(id: "call", label: "Call")]),
                         layout: layout)
        }
        func didTapButton(_ button: String, content offer: Offer, message: ShownMessage, context: ChatContext) -> TapResult {
            button == "call" ? .handled("calling about the \(offer.model)") : .ignored
        }
    }

    struct PlainBuilder: MessageBuilder {
        let key = "demo.plain"
        func model(for offer: Offer, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: offer, card: MessageCard(title: offer.model, buttons: [CardButton(id: "call", label: "Call")]), layout: layout)
        }
    }

    static var context: ChatContext { ChatContext(userID: "me", peerID: "u1", rootCateID: 4, cateID: nil, parameters: [:], lineID: "demo",
                                     user: UserContext(userID: "me", transport: Transport(isOnline: true) { (_, _, _) throws(SendError) in
                                         throw SendError(.notStored, "no store")
                                     }),
                                     sender: { (_, _) throws(SendError) in }, opener: { _ in .notFound("none") }) }

    @Test("a card as text: title, subtitle, badge, the picture's box, fields, then as many buttons to a line as fit")
    func text() {
        let card = MessageCard(title: "🏠 Sunny flat", subtitle: "Listing L1", fields: [CardField("Price", "¥4200"), CardField("Rooms", "2")],
                               image: .picture("listing"), badge: CardBadge("Available", tone: .positive),
                               buttons: [CardButton(id: "details", label: "Details"), CardButton(id: "viewing", label: "Book a viewing"),
                                         CardButton(id: "x", label: "X")])
        #expect(MessageLayout(width: 28).card(card) == [
            "🏠 Sunny flat", "Listing L1", "● Available",
            "┌──────────────────┐", "│ picture: listing │", "└──────────────────┘",
            "Price: ¥4200", "Rooms: 2",
            "[Details] [Book a viewing]", "[X]",
        ])
        // A narrow card wraps its text, cuts the picture's name and a button too wide to fit.
        let narrow = MessageLayout(width: 10).card(card)
        #expect(narrow.allSatisfy { TextWidth.columns($0) <= 10 }, "\(narrow)")
        #expect(narrow.contains("│ pictu… │") && narrow.contains("[Book a …]"), "\(narrow)")
        // The smallest card is its title; control characters a peer sent are escaped.
        #expect(MessageLayout(width: 40).card(MessageCard(title: "hi\u{1B}[2J")) == ["hi\\x1b[2J"])
        #expect(MessageLayout(width: 40).card(MessageCard(title: "a", buttons: [CardButton(id: "b", label: "line\nbreak")])) == ["a", "[line\\nbreak]"])
    }

    @Test("a model of a card keeps the card and its text; the default view shows the card; a model of lines has none")
    func modelAndView() throws {
        let builder = OfferBuilder()
        let payload = try builder.payload(for: Offer(model: "Civic", price: 90000))
        let model = try builder.model(for: Offer(model: "Civic", price: 90000), layout: MessageLayout(width: 40))
        #expect(model.card?.title == "Civic")
        #expect(model.lines == ["Civic", "Price: ¥90000", "[Call]"])
        #expect(model.summary == "Civic", "a card's summary is its title")
        #expect(model.rows == 3 && model.columns == 13)
        let view = try builder.render(payload, layout: MessageLayout(width: 40))
        #expect(view.card == model.card && view.lines == model.lines)
        #expect(MessageView(lines: ["a"]).card == nil)
        #expect(MessageModel(content: 1, lines: ["a"]).card == nil)
        #expect(MessageModel(content: 1, card: MessageCard(title: "T"), layout: MessageLayout(width: 9), summary: "S").summary == "S")
    }

    @Test("a button reaches the builder's didTapButton with its id; a builder that does not implement it ignores every button")
    func buttons() throws {
        let offer = Offer(model: "Civic", price: 1)
        let model = try OfferBuilder().model(for: offer, layout: MessageLayout(width: 40))
        let shown = ShownMessage(envelope: MessageEnvelope(id: "m1", conversation: "u1", from: "u1", to: "me", timestamp: 0,
                                                           key: "demo.offer", payload: try OfferBuilder().payload(for: offer)),
                                 model: model, isOutgoing: false)
        #expect(OfferBuilder().didTapButton("call", content: offer, message: shown, context: Self.context) == .handled("calling about the Civic"))
        #expect(OfferBuilder().didTapButton("other", content: offer, message: shown, context: Self.context) == .ignored)
        #expect(PlainBuilder().didTapButton("call", content: offer, message: shown, context: Self.context) == .ignored)
        #expect(OfferBuilder().didTap(offer, message: shown, context: Self.context) == .ignored, "a tap on the card is not a button")
    }

    @Test("IMKit says it is 1.3")
    func version() {
        #expect(IMKitVersion.current == "1.3.0")
    }
}

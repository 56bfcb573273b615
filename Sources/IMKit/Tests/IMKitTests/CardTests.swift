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

    @Test("IMKit says it is 1.4")
    func version() {
        #expect(IMKitVersion.current == "1.4.0")
    }

    @Test("a line's pictures: registered by name as bytes or base64 with what they show; a bad name, a name twice, no bytes, too many bytes, too many pictures, text that is not base64 and alt text that is empty, too long or breaks a line or its direction are refused, saying why")
    func pictures() throws {
        let registrar = LineRegistrar(lineID: "demo", descriptor: nil) { _ in nil }
        try registrar.registerPicture("logo", bytes: [0x89, 0x50, 0x4E, 0x47], alt: "  The demo line's logo ")
        try registrar.registerPicture("badge.v2", base64: "iVBORw0K", alt: "نشان\u{200C}ها 👩‍💻")
        #expect(registrar.pictures.map(\.name) == ["logo", "badge.v2"])
        #expect(registrar.pictures.map(\.alt) == ["The demo line's logo", "نشان\u{200C}ها 👩‍💻"], "trimmed; a joiner and an emoji sequence are words")
        #expect(registrar.pictures.last?.bytes == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A])
        func refusal(_ registrar: LineRegistrar, _ name: String, bytes: [UInt8] = [1], base64: String? = nil, alt: String = "a picture") -> String? {
            do throws(RegistrationError) {
                if let base64 { try registrar.registerPicture(name, base64: base64, alt: alt) } else { try registrar.registerPicture(name, bytes: bytes, alt: alt) }
                return nil
            } catch {
                return error.description
            }
        }
        let fresh = { LineRegistrar(lineID: "demo", descriptor: nil) { _ in nil } }
        #expect(refusal(fresh(), "-logo")?.contains("a picture's name is 1 to 32 ASCII letters") == true)
        #expect(refusal(registrar, "logo")?.contains("registered picture 'logo' twice") == true)
        #expect(refusal(fresh(), "empty", bytes: [])?.contains("of 0 bytes; a picture has 1 to 262144") == true)
        #expect(refusal(fresh(), "huge", bytes: [UInt8](repeating: 0, count: 262_145))?.contains("of 262145 bytes") == true)
        #expect(refusal(fresh(), "text", base64: "not base64!")?.contains("whose text is not base64") == true)
        for alt in ["", "   ", String(repeating: "a", count: LineRegistrar.altLimit + 1), "two\nlines", "line\u{2028}break", "\u{202E}reversed", "\u{2067}isolated"] {
            #expect(refusal(fresh(), "logo", alt: alt)?.contains("registered picture 'logo' with alt text that is empty") == true, "\(alt.debugDescription)")
        }
        #expect(refusal(fresh(), "logo", alt: String(repeating: "长", count: LineRegistrar.altLimit)) == nil)
        let many = fresh()
        for index in 0..<LineRegistrar.pictureLimit { try many.registerPicture("p\(index)", bytes: [1], alt: "picture \(index)") }
        #expect(refusal(many, "one-more")?.contains("more than 16 pictures") == true)
        #expect(many.firstRefusal != nil, "a refusal fails the whole line's registration")
    }

    @Test("without alt text, as lines built against IMKit 1.3 register: taken (a registrar of no plugin stands for one), kept without words")
    @available(*, deprecated, message: "calls the registration without alt text on purpose")
    func picturesWithoutAlt() throws {
        let registrar = LineRegistrar(lineID: "demo", descriptor: nil) { _ in nil }
        try registrar.registerPicture("logo", bytes: [0x89, 0x50, 0x4E, 0x47])
        try registrar.registerPicture("badge", base64: "iVBORw0K")
        #expect(registrar.pictures.map(\.name) == ["logo", "badge"])
        #expect(registrar.pictures.allSatisfy { $0.alt == nil })
    }

    @Test("a card's photo is laid out as a box the host names; by itself IMKit says which photo")
    func photoBox() {
        let card = MessageCard(title: "Flat", image: .photo(0))
        #expect(MessageLayout(width: 30).card(card) == ["Flat", "┌─────────┐", "│ photo 1 │", "└─────────┘"])
        #expect(MessageLayout(width: 30).card(card) { _ in "Photo 640×400" } == ["Flat", "┌───────────────┐", "│ Photo 640×400 │", "└───────────────┘"])
        #expect(CardButton.isValidID("a.b-c_9") && !CardButton.isValidID("") && !CardButton.isValidID("_x") && !CardButton.isValidID(String(repeating: "a", count: 33)))
    }

    @Test("a photo message's lines are its caption; its summary says it is a photo")
    func photoMessage() throws {
        let builder = BuiltinBuilders.Photo()
        let captioned = try builder.model(for: try builder.content(from: MessagePayload(json: #"{"caption":"the balcony"}"#)), layout: MessageLayout(width: 30))
        #expect(captioned.lines == ["the balcony"] && captioned.summary == "[Photo]")
        #expect(try builder.model(for: try builder.content(from: MessagePayload(json: "{}")), layout: MessageLayout(width: 30)).lines.isEmpty)
    }
}

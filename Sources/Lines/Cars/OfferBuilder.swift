import IMKit

/// A car for sale: what a `cars.offer` message carries.
struct Offer: Codable, Sendable, Hashable {
    struct Dealer: Codable, Sendable, Hashable {
        var name: String
        var phone: String
    }

    var id: String
    var model: String
    var year: Int
    /// Price in yuan.
    var price: Int
    /// Kilometres driven.
    var mileage: Int
    /// The dealer selling it; `nil` for a private seller.
    var dealer: Dealer?
    /// The price a buyer offered, in yuan, once one did: the card's revision says so.
    var bid: Int?
}

/// `cars.offer`: a card with the car, its year, price, mileage and seller, a badge for a dealer
/// or a private seller, a button that calls the dealer (a private seller's card has none), a
/// price the buyer may offer (Make an offer: the card then shows the offer, for both), and
/// Save offer, which this version shows and does not act on yet (it answers ignored, on
/// purpose, as the demo's flawed line: the host then draws it disabled, saying it does nothing).
struct OfferBuilder: MessageBuilder {
    let key = "cars.offer"

    func model(for offer: Offer, layout: MessageLayout) throws -> MessageModel {
        var fields = [
            CardField("Price", "¥\(offer.price)"),
            CardField("Mileage", "\(offer.mileage) km"),
            CardField("Seller", offer.dealer?.name ?? "private"),
        ]
        var badge = offer.dealer == nil ? CardBadge("Private seller") : CardBadge("Dealer", tone: .positive)
        var inputs: [CardInput] = []
        var buttons = offer.dealer == nil ? [] : [CardButton(id: "call", label: "Call the dealer")]
        if let bid = offer.bid {
            fields.append(CardField("Offered", "¥\(bid)"))
            badge = CardBadge("Offer made", tone: .warning)
        } else {
            inputs = [.text(id: "price", label: "Your price (yuan)", placeholder: "\(offer.price)", required: true, maxLength: 9)]
            buttons.append(CardButton(id: "bid", label: "Make an offer", submits: true))
        }
        let card = MessageCard(title: "🚗 \(offer.model) (\(offer.year))", subtitle: "Offer \(offer.id)", fields: fields, image: .picture("car"),
                               badge: badge, inputs: inputs, buttons: buttons + [CardButton(id: "save", label: "Save offer")])
        return MessageModel(content: offer, card: card, layout: layout, summary: "[Car] \(offer.model)")
    }

    func didTapButton(_ button: String, content offer: Offer, message: ShownMessage, context: ChatContext) -> TapResult {
        guard button == "call", let dealer = offer.dealer else { return .ignored }
        return .handled("calling \(dealer.name) at \(dealer.phone) about the \(offer.model)")
    }

    /// Make an offer: a whole number of yuan, above 0; the card then shows it, for both.
    func didSubmit(_ button: String, values: CardValues, content offer: Offer, message: ShownMessage, context: ChatContext) -> TapResult {
        guard button == "bid", let text = values["price"] else { return .ignored }
        guard !message.isOutgoing else { return .failed("you are selling this car; a buyer makes an offer") }
        guard let bid = Int(text.filter { $0 != "," && $0 != " " }), bid > 0 else {
            return .failed("\"\(text)\" is not a price: give a whole number of yuan, e.g. \(offer.price)")
        }
        var made = offer
        made.bid = bid
        do {
            try context.revise(message, to: made, with: self)
        } catch {
            return .failed("could not make the offer: \(error)")
        }
        return .handled("offered ¥\(bid) for the \(offer.model)")
    }

    var samples: [MessageSample<Offer>] {
        let dealer = Offer(id: "C7", model: "Honda Civic", year: 2019, price: 89000, mileage: 42000, dealer: Offer.Dealer(name: "Sunrise Motors", phone: "010-5550-0101"))
        var offered = dealer
        offered.bid = 85000
        return [MessageSample("from a dealer", dealer),
                MessageSample("private seller", Offer(id: "C8", model: "Toyota Corolla", year: 2016, price: 52000, mileage: 98000)),
                MessageSample("offer made", offered)]
    }
}

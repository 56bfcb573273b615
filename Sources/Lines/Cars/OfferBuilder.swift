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
}

/// `cars.offer`: a card with the car, its year, price, mileage and seller, a badge for a dealer
/// or a private seller, a button that calls the dealer (a private seller's card has none), and
/// Save offer, which this version shows and does not act on yet (it answers ignored, on
/// purpose, as the demo's flawed line: the host then draws it disabled, saying it does nothing).
struct OfferBuilder: MessageBuilder {
    let key = "cars.offer"

    func model(for offer: Offer, layout: MessageLayout) throws -> MessageModel {
        let card = MessageCard(
            title: "🚗 \(offer.model) (\(offer.year))",
            subtitle: "Offer \(offer.id)",
            fields: [
                CardField("Price", "¥\(offer.price)"),
                CardField("Mileage", "\(offer.mileage) km"),
                CardField("Seller", offer.dealer?.name ?? "private"),
            ],
            image: .picture("car"),
            badge: offer.dealer == nil ? CardBadge("Private seller") : CardBadge("Dealer", tone: .positive),
            buttons: (offer.dealer == nil ? [] : [CardButton(id: "call", label: "Call the dealer")]) + [CardButton(id: "save", label: "Save offer")])
        return MessageModel(content: offer, card: card, layout: layout, summary: "[Car] \(offer.model)")
    }

    func didTapButton(_ button: String, content offer: Offer, message: ShownMessage, context: ChatContext) -> TapResult {
        guard button == "call", let dealer = offer.dealer else { return .ignored }
        return .handled("calling \(dealer.name) at \(dealer.phone) about the \(offer.model)")
    }
}

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

/// `cars.offer`: a card with the car, its year, price and mileage.
struct OfferBuilder: MessageBuilder {
    let key = "cars.offer"

    func model(for offer: Offer, layout: MessageLayout) throws -> MessageModel {
        MessageModel(
            content: offer,
            lines: layout.card(title: "🚗 \(offer.model) (\(offer.year))", fields: [
                CardField("Price", "¥\(offer.price)"),
                CardField("Mileage", "\(offer.mileage) km"),
                CardField("Seller", offer.dealer?.name ?? "private"),
            ]),
            summary: "[Car] \(offer.model)")
    }
}

import IMKit

/// A listing: what a `house.listing` message carries.
struct Listing: Codable, Sendable, Hashable {
    var id: String
    var title: String
    /// Monthly rent or price, in yuan.
    var price: Int
    /// Floor area in square metres.
    var area: Double
    var rooms: Int
}

/// A listing the card cannot show honestly.
struct InvalidListing: Error, CustomStringConvertible {
    var description: String
}

/// `house.listing`: a card with the listing's title, price, area and rooms.
struct ListingBuilder: MessageBuilder {
    let key = "house.listing"

    func model(for listing: Listing, layout: MessageLayout) throws -> MessageModel {
        guard listing.price >= 0, listing.area > 0, listing.rooms >= 0 else {
            throw InvalidListing(description: "listing \(listing.id) has a negative price or rooms, or no area")
        }
        let area = HousePage.area(listing.area)
        return MessageModel(
            content: listing,
            lines: layout.card(title: "🏠 \(listing.title)", fields: [
                ("Price", "¥\(listing.price)"),
                ("Area", "\(area) m²"),
                ("Rooms", "\(listing.rooms)"),
            ]),
            summary: "[Listing] \(listing.title)")
    }
}

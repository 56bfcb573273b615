import IMKit

/// A listing: what a `house.listing` message carries.
///
/// Stored messages keep the shape they were sent in. The first shape had no `id`; so `id` is
/// optional, and every field added later must be optional or have a default, or old messages
/// would stop rendering.
struct Listing: Codable, Sendable, Hashable {
    /// The listing's id; absent in messages stored before listings had one.
    var id: String?
    var title: String
    /// Monthly rent or price, in yuan: any JSON number.
    var price: Double
    /// Floor area in square metres: any JSON number.
    var area: Double
    var rooms: Int
}

/// A listing the card cannot show honestly.
struct InvalidListing: Error, CustomStringConvertible {
    var description: String
}

/// `house.listing`: a card with the listing's title, price, area and rooms. A tap opens the
/// listing's detail, on whichever page the card is shown.
struct ListingBuilder: MessageBuilder {
    let key = "house.listing"

    func model(for listing: Listing, layout: MessageLayout) throws -> MessageModel {
        guard listing.price >= 0, listing.area > 0, listing.rooms >= 0 else {
            throw InvalidListing(description: "a listing needs a price of 0 or more, an area above 0 and 0 rooms or more")
        }
        return MessageModel(
            content: listing,
            lines: layout.card(title: "🏠 \(listing.title)", fields: [
                CardField("Price", "¥\(HouseLine.number(listing.price))"),
                CardField("Area", "\(HouseLine.number(listing.area)) m²"),
                CardField("Rooms", "\(listing.rooms)"),
            ]),
            summary: "[Listing] \(listing.title)")
    }

    func didTap(_ listing: Listing, message: ShownMessage, context: ChatContext) -> TapResult {
        guard let id = listing.id else {
            return .failed("this listing was sent before listings had ids, so its detail cannot be opened")
        }
        context.user.service(ListingService.self)?.remember(listing)
        switch context.open("house://listing/\(id)") {
        case .opened(let what): return .handled("opened \(what)")
        case .notFound(let why), .refused(let why): return .failed("could not open listing \(id): \(why)")
        @unknown default: return .failed("could not open listing \(id)")
        }
    }
}

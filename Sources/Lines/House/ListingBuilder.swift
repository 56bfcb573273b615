import IMKit

/// A listing: what a `house.listing` message carries.
///
/// Stored messages keep the shape they were sent in. The first shape had no `id`, and the
/// status came later still; so both are optional, and every field added later must be optional
/// or have a default, or old messages would stop rendering.
struct Listing: Codable, Sendable, Hashable {
    /// The listing's id; absent in messages stored before listings had one.
    var id: String?
    var title: String
    /// Monthly rent or price, in yuan: any JSON number.
    var price: Double
    /// Floor area in square metres: any JSON number.
    var area: Double
    var rooms: Int
    /// `available`, `reserved` or `let`; absent in messages stored before listings had one.
    var status: String?
    /// The viewing booked on the card (`2026-12-05 10:00`), once the one it was sent to booked
    /// one: the card's revision says so, on both sides.
    var viewing: String?
}

/// A listing the card cannot show honestly.
struct InvalidListing: Error, CustomStringConvertible {
    var description: String
}

/// `house.listing`: a card with the listing's title, price, area and rooms, its status as a
/// badge, and two buttons: Details (as a tap does) and Book a viewing, which sends the day and
/// time asked above it. Booking changes the card in place (a revision): the viewing's day and
/// time, a green badge, no more asking. A tap opens the listing's detail, on whichever page the
/// card is shown.
struct ListingBuilder: MessageBuilder {
    let key = "house.listing"

    func model(for listing: Listing, layout: MessageLayout) throws -> MessageModel {
        guard listing.price >= 0, listing.area > 0, listing.rooms >= 0 else {
            throw InvalidListing(description: "a listing needs a price of 0 or more, an area above 0 and 0 rooms or more")
        }
        var fields = [
            CardField("Price", "¥\(HouseLine.number(listing.price))"),
            CardField("Area", "\(HouseLine.number(listing.area)) m²"),
            CardField("Rooms", "\(listing.rooms)"),
        ]
        let details = CardButton(id: "details", label: "Details")
        let card: MessageCard
        if let viewing = listing.viewing {
            fields.append(CardField("Viewing", viewing))
            card = MessageCard(title: "🏠 \(listing.title)", subtitle: listing.id.map { "Listing \($0)" }, fields: fields, image: .photo(0),
                               badge: CardBadge("Viewing booked", tone: .positive), buttons: [details])
        } else {
            card = MessageCard(
                title: "🏠 \(listing.title)",
                subtitle: listing.id.map { "Listing \($0)" },
                fields: fields,
                // The photo sent with the listing, if the sender sent one.
                image: .photo(0),
                badge: Self.badge(listing.status),
                inputs: [
                    .date(id: "day", label: "Day", required: true),
                    .time(id: "time", label: "Time", required: true, earliest: "09:00", latest: "20:00"),
                ],
                buttons: [details, CardButton(id: "viewing", label: "Book a viewing", submits: true)])
        }
        return MessageModel(content: listing, card: card, layout: layout, summary: "[Listing] \(listing.title)")
    }

    /// The status as a badge: known ones with their tone, any other as written.
    static func badge(_ status: String?) -> CardBadge? {
        switch status {
        case "available": CardBadge("Available", tone: .positive)
        case "reserved": CardBadge("Reserved", tone: .warning)
        case "let": CardBadge("Let", tone: .negative)
        default: status.map { CardBadge($0) }
        }
    }

    func didTap(_ listing: Listing, message: ShownMessage, context: ChatContext) -> TapResult {
        open(listing, context: context)
    }

    func didTapButton(_ button: String, content listing: Listing, message: ShownMessage, context: ChatContext) -> TapResult {
        button == "details" ? open(listing, context: context) : .ignored
    }

    /// Book a viewing: the day and time the host checked (a day, a time from 09:00 to 20:00)
    /// become the card's next revision, on both sides.
    func didSubmit(_ button: String, values: CardValues, content listing: Listing, message: ShownMessage, context: ChatContext) -> TapResult {
        guard button == "viewing", let day = values["day"], let time = values["time"] else { return .ignored }
        guard !message.isOutgoing else { return .failed("you sent this listing; the one you sent it to books a viewing") }
        var booked = listing
        booked.viewing = "\(day) \(time)"
        do {
            try context.revise(message, to: booked, with: self)
        } catch {
            return .failed("could not book the viewing: \(error)")
        }
        let which = listing.id.map { "listing \($0) (\(listing.title))" } ?? listing.title
        return .handled("booked a viewing of \(which) on \(day) at \(time)")
    }

    var samples: [MessageSample<Listing>] {
        [MessageSample("available", Listing(id: "L1001", title: "Sunny 2-room flat", price: 4200, area: 68, rooms: 2, status: "available")),
         MessageSample("reserved, no id", Listing(title: "Studio by the park", price: 2600, area: 30, rooms: 1, status: "reserved")),
         MessageSample("viewing booked", Listing(id: "L1001", title: "Sunny 2-room flat", price: 4200, area: 68, rooms: 2, status: "available",
                                                 viewing: "2026-12-05 10:00"))]
    }

    /// Opens the listing's detail through the line's route.
    private func open(_ listing: Listing, context: ChatContext) -> TapResult {
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

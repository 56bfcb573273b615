import IMKit

/// The housing carrier page: titled by sub-category, with the listing as its top post.
final class HousePage: CarrierPage {
    /// Sub-categories (cateID) of housing, as the app names them.
    static let subCategories: [Int: String] = [
        8: "整租 Whole flat", 10: "合租 Shared flat", 12: "二手房 Resale", 13: "新房 New homes",
    ]

    override var title: String {
        let category = context.cateID.flatMap { Self.subCategories[$0] } ?? "Housing"
        return "\(category) · \(context.peer)"
    }

    override func topPost() -> TopPost? {
        guard let listing = context.parameters["infoID"] else { return nil }
        if let known = context.user.service(ListingService.self)?.listing(listing) {
            return TopPost(title: "📌 \(known.title)", detail: "¥\(known.price) · \(Self.area(known.area)) m² · \(known.rooms) rooms")
        }
        guard let title = context.parameters["title"] else {
            return TopPost(title: "📌 Listing \(listing)", detail: "tap a card for details")
        }
        return TopPost(title: "📌 \(title)", detail: "Listing \(listing) · tap a card for details")
    }

    static func area(_ area: Double) -> String {
        area.rounded() == area ? String(Int(area)) : String(area)
    }

    override func quickReplies() -> [String] {
        ["Is it still available?", "Can I view it this weekend?"]
    }

    override func menuItems() -> [String] { ["Report a fake listing"] }

    override func didSelectMenuItem(_ item: String) -> TapResult {
        guard item == "Report a fake listing", let listing = context.parameters["infoID"] else { return .ignored }
        return .handled("reported listing \(listing) as fake; the housing team will review it")
    }

    override func didTap(_ message: ShownMessage) -> TapResult {
        if let listing = message.model?.content as? Listing {
            context.user.service(ListingService.self)?.remember(listing)
            switch context.open("house://listing/\(listing.id)") {
            case .opened(let what): return .handled("opened \(what)")
            case .notFound(let why), .refused(let why): return .handled("could not open listing \(listing.id): \(why)")
            @unknown default: return .ignored
            }
        }
        return super.didTap(message)
    }
}

import IMKit

/// The housing carrier page: titled by sub-category, with the listing as its top post.
final class HousePage: CarrierPage {
    /// Sub-categories (cateID) of housing, as the app names them.
    static let subCategories: [Int: String] = [
        8: "整租 Whole flat", 10: "合租 Shared flat", 12: "二手房 Resale", 13: "新房 New homes",
    ]

    override var title: String {
        let category = context.cateID.flatMap { Self.subCategories[$0] } ?? "Housing"
        return "\(category) · \(context.peerID)"
    }

    override func topPost() -> TopPost? {
        guard let listing = context.parameters["infoID"] else { return nil }
        if let known = context.user.service(ListingService.self)?.listing(listing) {
            return TopPost(title: "📌 \(known.title)",
                           detail: "¥\(HouseLine.number(known.price)) · \(HouseLine.number(known.area)) m² · \(known.rooms) rooms")
        }
        guard let title = context.parameters["title"] else {
            return TopPost(title: "📌 Listing \(listing)", detail: "tap a card for details")
        }
        return TopPost(title: "📌 \(title)", detail: "Listing \(listing) · tap a card for details")
    }

    override func quickReplies() -> [String] {
        ["Is it still available?", "Can I view it this weekend?"]
    }

    override func menuItems() -> [String] { ["Report a fake listing"] }

    override func didSelectMenuItem(_ item: String) -> TapResult {
        guard item == "Report a fake listing", let listing = context.parameters["infoID"] else { return .ignored }
        return .handled("reported listing \(listing) as fake; the housing team will review it")
    }

    // A chat about no listing has nothing to report: the item is not drawn there.
    override func handlesMenuItem(_ item: String) -> Bool {
        item != "Report a fake listing" || context.parameters["infoID"] != nil
    }
}

import IMKit

/// The used-cars carrier page: a "Test drive" bar item, and a tap on an offer calls its dealer.
final class CarsPage: CarrierPage {
    override var title: String { "二手车 Used cars · \(context.peerID)" }

    override var disabledComponents: ComponentSet { [.dropdownMenu] }

    override func bottomBarItems() -> [String] { ["Test drive"] }

    override func quickReplies() -> [String] { ["What is the lowest price?"] }

    override func didTap(_ message: ShownMessage) -> TapResult {
        guard let offer = message.model?.content as? Offer else { return super.didTap(message) }
        // The bug the demo needs: a private seller's offer has no dealer.
        let dealer = offer.dealer!
        return .handled("calling \(dealer.name) at \(dealer.phone) about the \(offer.model)")
    }
}

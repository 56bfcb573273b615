// Build 0.2.0 of a small line, `rent`: installed over by build 0.3.0 (FixtureRentNew) while a
// chat is open, to show the chat moving to the new build.
import IMKit

final class RentPage: CarrierPage {
    override var title: String { "Rent 0.2.0 with \(context.peerID)" }
}

struct OfferBuilder: MessageBuilder {
    struct Offer: Codable, Sendable { var price: Int }
    let key = "rent.offer"
    func model(for content: Offer, layout: MessageLayout) throws -> MessageModel {
        MessageModel(content: content, lines: layout.wrap("rent \(content.price)"))
    }
}

enum RentLine: BusinessLine {
    static let id = "rent"
    static let displayName = "Rent"
    static let version = "0.2.0"
    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerPage(RentPage.self)
        try registrar.registerBuilder(OfferBuilder())
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: RentLine.self)
}

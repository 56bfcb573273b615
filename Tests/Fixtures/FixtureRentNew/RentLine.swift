// Build 0.3.0 of the `rent` line (0.2.0 is FixtureRentOld): a new title, and offers drawn anew
// with an optional room count, so a chat shows which build it runs.
import IMKit

enum RentLine: BusinessLine {
    static let id = "rent"
    static let displayName = "Rent"
    static let version = "0.3.0"

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerPage(Page.self)
        try registrar.registerBuilder(Offers())
    }

    final class Page: CarrierPage {
        override var title: String { "Rent \(RentLine.version) with \(context.peerID)" }
    }

    struct Offers: MessageBuilder {
        struct Offer: Codable, Sendable {
            var price: Int
            var rooms: Int?
        }
        let key = "rent.offer"
        func model(for offer: Offer, layout: MessageLayout) throws -> MessageModel {
            let rooms = offer.rooms.map { ", \($0) rooms" } ?? ""
            return MessageModel(content: offer, lines: layout.wrap("🏠 ¥\(offer.price) a month\(rooms)"))
        }
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: RentLine.self)
}

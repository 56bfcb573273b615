import IMKit

/// The housing line (rootCateID 1): listing cards, a top post for the listing the chat is about,
/// and a title by sub-category.
enum HouseLine: BusinessLine {
    static let id = "house"
    static let displayName = "Housing"
    static let version = "1.0.0"

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerPage(HousePage.self)
        try registrar.registerBuilder(ListingBuilder())
        try registrar.registerService(ListingService.self)
        try registrar.registerRoute("house://listing/:id", allowExternal: true) { request in
            guard let id = request.parameters["id"], let service = request.user.service(ListingService.self) else {
                throw ListingNotFound(id: request.parameters["id"] ?? "?")
            }
            let listing = try service.open(id)
            return "listing \(id) detail: \(listing.title), ¥\(number(listing.price)), \(listing.rooms) rooms"
        }
    }

    /// A number as people write it: whole numbers without a fraction, any size.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: HouseLine.self)
}

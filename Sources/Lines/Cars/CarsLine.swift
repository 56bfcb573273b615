import IMKit

/// The used-cars line (rootCateID 4): offer cards, and a page that calls the dealer when a card
/// is tapped. It ships with a bug on purpose, for the demo: a card from a private seller has no
/// dealer, and the page's tap handler assumes one, so tapping such a card crashes the page. The
/// host records the crash, quarantines the line and reopens the chat on the legacy page.
enum CarsLine: BusinessLine {
    static let id = "cars"
    static let displayName = "Used cars"
    static let version = "0.9.0"

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerPage(CarsPage.self)
        try registrar.registerBuilder(OfferBuilder())
        try registrar.registerPicture("car", base64: CarsPictures.car, alt: "A drawing of a car")
        try registrar.registerRoute("cars://offer/:id", allowExternal: true) { request in
            "offer \(request.parameters["id"] ?? "?")"
        }
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: CarsLine.self)
}

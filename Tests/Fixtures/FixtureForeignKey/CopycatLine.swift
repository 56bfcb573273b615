import IMKit

/// Registers `house.listing`, which the house line owns: refused, naming both owners.
enum CopycatLine: BusinessLine {
    static let id = "copycat"
    static let displayName = "Copycat"
    static let version = "0.1.0"

    struct ListingBuilder: MessageBuilder {
        struct Listing: Codable, Sendable { var title: String }
        let key = "house.listing"
        func model(for content: Listing, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: content, lines: [content.title])
        }
    }

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerBuilder(ListingBuilder())
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: CopycatLine.self)
}

import IMKit

/// Registers a good key, then a key outside its namespace and swallows the error: the line
/// must still fail, and its good key must not remain.
enum StrayLine: BusinessLine {
    static let id = "stray"
    static let displayName = "Stray"
    static let version = "0.1.0"

    struct Builder: MessageBuilder {
        struct Content: Codable, Sendable { var text: String }
        let key: String
        func model(for content: Content, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: content, lines: [content.text])
        }
    }

    final class StrayPage: CarrierPage {}

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerPage(StrayPage.self)
        try registrar.registerBuilder(Builder(key: "stray.note"))
        try? registrar.registerBuilder(Builder(key: "cars.offer"))
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: StrayLine.self)
}

import IMKit

/// Registers a page and a builder, then throws: none of it may remain.
enum FailingLine: BusinessLine {
    static let id = "failing"
    static let displayName = "Failing"
    static let version = "0.1.0"

    struct NoteBuilder: MessageBuilder {
        struct Note: Codable, Sendable { var text: String }
        let key = "failing.note"
        func model(for content: Note, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: content, lines: layout.wrap(content.text))
        }
    }

    final class FailingPage: CarrierPage {}

    struct BackendDown: Error, CustomStringConvertible {
        var description: String { "listing backend unreachable" }
    }

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerPage(FailingPage.self)
        try registrar.registerBuilder(NoteBuilder())
        throw BackendDown()
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: FailingLine.self)
}

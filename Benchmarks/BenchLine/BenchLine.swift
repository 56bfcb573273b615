// A small business line for the start-up benchmark. The benchmark copies the built library
// and replaces the 19-byte id below with distinct ids of the same length (a plain byte
// substitution: ids of 16 bytes or more are stored as literals, never inline in code).
import IMKit

enum BenchLine: BusinessLine {
    static let id = "benchline-000000000"
    static let displayName = "Bench line"
    static let version = "1.0.0"

    final class Page: CarrierPage {
        override var title: String { "Bench · \(context.peerID)" }
        override var disabledComponents: ComponentSet { [.dropdownMenu] }
    }

    struct NoteBuilder: MessageBuilder {
        struct Note: Codable, Sendable { var text: String }
        let key = "benchline-000000000.note"
        func model(for content: Note, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: content, lines: layout.wrap("📝 " + content.text))
        }
    }

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerPage(Page.self)
        try registrar.registerBuilder(NoteBuilder())
        try registrar.registerRoute("benchline-000000000://note/:id", allowExternal: true) { request in
            "note \(request.parameters["id"] ?? "?")"
        }
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: BenchLine.self)
}

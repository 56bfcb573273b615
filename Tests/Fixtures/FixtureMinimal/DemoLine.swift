// The smallest business line that works, exactly as docs/writing-a-line.md shows it; a test loads it.
import IMKit

final class DemoPage: CarrierPage {
    override var title: String { "Demo chat with \(context.peerID)" }
}

struct GreetingBuilder: MessageBuilder {
    struct Content: Codable, Sendable { var text: String }
    let key = "demo.greeting"
    func model(for content: Content, layout: MessageLayout) throws -> MessageModel {
        MessageModel(content: content, lines: layout.wrap("👋 " + content.text))
    }
}

enum DemoLine: BusinessLine {
    static let id = "demo"
    static let displayName = "Demo"
    static let version = "1.0.0"
    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerPage(DemoPage.self)
        try registrar.registerBuilder(GreetingBuilder())
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: DemoLine.self)
}

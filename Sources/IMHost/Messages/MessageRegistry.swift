import IMKit

/// The message manager: message key → builder, with who registered it. Looking a key up is one
/// hash lookup, however many lines and keys are registered.
public struct MessageRegistry: Sendable {
    private var builders: [String: RegisteredBuilder] = [:]
    /// A registry with the host's built-in builders (text, image, voice, location).
    public static var builtIn: MessageRegistry {
        var registry = MessageRegistry()
        for builder in BuiltinBuilders.all {
            registry.builders[builder.key] = RegisteredBuilder(builder: builder, line: nil, mark: nil, version: nil)
        }
        return registry
    }

    /// The builder registered under `key`.
    public func builder(for key: String) -> RegisteredBuilder? { builders[key] }

    /// Every registered key, sorted.
    public var allKeys: [String] { builders.keys.sorted() }

    /// Adds a line's builders, replacing any under the same keys. The host adds them through a
    /// line's registrar, which refuses keys that are taken; tools use this to build a registry.
    public mutating func add(_ builders: [any MessageBuilder], line: String) {
        add(builders, line: line, mark: LineMark(line: line, file: nil, identity: nil))
    }

    mutating func add(_ added: [any MessageBuilder], line: String, mark: LineMark?, version: String? = nil) {
        for builder in added {
            builders[builder.key] = RegisteredBuilder(builder: builder, line: line, mark: mark, version: version)
        }
    }
}

/// A builder in the registry, and who registered it.
public struct RegisteredBuilder: Sendable {
    public let builder: any MessageBuilder
    /// The line that registered it, or `nil` for the host's built-ins.
    public let line: String?
    /// What a breadcrumb says while the builder runs; `nil` for the host's own.
    let mark: LineMark?
    /// The version of the line that registered it, as its descriptor said, when it said.
    public let version: String?
}

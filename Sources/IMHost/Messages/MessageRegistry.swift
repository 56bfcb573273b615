import IMKit

/// The message manager: message key → builder, with who registered it. Looking a key up is one
/// hash lookup, however many lines and keys are registered.
public struct MessageRegistry: Sendable {
    /// A registered builder and its owner.
    public struct Entry: Sendable {
        public let builder: any MessageBuilder
        /// The line that registered it, or `nil` for the host's built-ins.
        public let line: String?
    }

    private var entries: [String: Entry] = [:]

    /// A registry with the host's built-in builders (text, image, voice, location).
    public static var builtIn: MessageRegistry {
        var registry = MessageRegistry()
        for builder in BuiltinBuilders.all {
            registry.entries[builder.key] = Entry(builder: builder, line: nil)
        }
        return registry
    }

    /// The builder registered under `key`.
    public func entry(for key: String) -> Entry? { entries[key] }

    /// Who owns `key`, said the way an error names it: `line 'house'` or `the host`.
    public func owner(of key: String) -> String? {
        entries[key].map { $0.line.map { "line '\($0)'" } ?? "the host" }
    }

    /// Every key a line registered, sorted.
    public func keys(of line: String) -> [String] {
        entries.filter { $0.value.line == line }.keys.sorted()
    }

    /// Every registered key, sorted.
    public var allKeys: [String] { entries.keys.sorted() }

    /// Adds a line's builders; the registrar has already refused keys that are taken.
    mutating func add(_ builders: [any MessageBuilder], line: String) {
        for builder in builders {
            entries[builder.key] = Entry(builder: builder, line: line)
        }
    }
}

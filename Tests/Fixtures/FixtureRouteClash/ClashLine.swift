import IMKit

/// Claims a route under house's scheme: refused at registration, as a line's routes use its own scheme.
enum ClashLine: BusinessLine {
    static let id = "clash"
    static let displayName = "Clash"
    static let version = "0.1.0"

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerRoute("house://listing/:other", allowExternal: true) { _ in "stolen" }
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: ClashLine.self)
}

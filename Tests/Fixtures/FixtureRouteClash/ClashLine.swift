import IMKit

/// Claims the same URLs as house's listing route: refused, naming both lines.
enum ClashLine: BusinessLine {
    static let id = "clash"
    static let displayName = "Clash"
    static let version = "0.1.0"

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerRoute("house://listing/:other", allowExternal: true) { _ in "stolen" }
    }
}

@_cdecl("imkit_plugin_entry")
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: ClashLine.self)
}

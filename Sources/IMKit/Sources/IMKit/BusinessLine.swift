/// A business line's plugin: who it is, and what it registers.
///
/// The smallest working line is a type conforming to this protocol plus one exported function:
///
/// ```swift
/// import IMKit
///
/// enum DemoLine: BusinessLine {
///     static let id = "demo"
///     static let displayName = "Demo"
///     static let version = "1.0.0"
///     static func register(with registrar: LineRegistrar) throws {
///         try registrar.registerPage(DemoPage.self)
///         try registrar.register(GreetingBuilder())
///     }
/// }
///
/// @_cdecl("imkit_plugin_entry")
/// public func imkitPluginEntry() -> UnsafeRawPointer {
///     PluginEntry.descriptor(for: DemoLine.self)
/// }
/// ```
public protocol BusinessLine {
    /// The line id, `[a-z][a-z0-9_-]{0,31}`; the prefix of every message key the line owns.
    static var id: String { get }
    /// A name for people, e.g. `"Housing"`.
    static var displayName: String { get }
    /// The plugin's own version, e.g. `"1.2.0"`.
    static var version: String { get }

    /// Registers the line's page, builders, routes and services.
    ///
    /// Called once, at start-up, only when the line is enabled in host.json. Throwing, or any
    /// refused registration (even one you catch), fails the whole line: none of its
    /// registrations remain, and its chats open on the legacy page.
    static func register(with registrar: LineRegistrar) throws
}

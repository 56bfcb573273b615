/// A business line's plugin: who it is, and what it registers.
///
/// The smallest working line is a type conforming to this protocol plus one exported function
/// (`imhost new-line NAME` writes a package that starts here):
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
///         try registrar.registerBuilder(GreetingBuilder())
///     }
/// }
///
/// @c(imkit_plugin_entry)
/// public func imkitPluginEntry() -> UnsafeRawPointer {
///     PluginEntry.descriptor(for: DemoLine.self)
/// }
/// ```
///
/// ## Threads
///
/// A chat runs on one thread, the chat's thread. The host calls everything a line registers
/// there, one call at a time: ``register(with:)``, page hooks and taps (``CarrierPage``),
/// builders (``MessageBuilder``), route handlers (``RouteHandler``), services (``Service``) and
/// session-bus handlers (``SessionBus``). So a line needs no locks for state that only these
/// calls touch.
///
/// Pages, contexts, services, the transport and the bus are not `Sendable`: the compiler keeps
/// them on the chat's thread. A line may start background work (a `Task`, a dispatch queue);
/// from there it may use only `Sendable` values: its own, payloads and envelopes, and
/// ``LineLog`` to log. Results reach the chat when the host next asks the line (hooks are called
/// on every render), never by calling into a page from another thread.
///
/// Builders are `Sendable` values with no per-message state, so the host may call them on other
/// threads in a later version without breaking them.
public protocol BusinessLine {
    /// The line id, `[a-z][a-z0-9-]{0,31}`; the prefix of every message key the line owns.
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

extension BusinessLine {
    /// The line's log: each entry one line, prefixed with the line id.
    public static var log: LineLog { LineLog(lineID: id) }
}

/// What a line registers, as the scanner saw it: known before the line's library is opened in
/// the host, so the host can route to it, show its keys and load it only when first needed.
public struct LineManifest: Equatable, Sendable, Codable {
    /// One route and whether URLs from outside the app may open it.
    public struct Route: Equatable, Sendable, Codable {
        public var pattern: String
        public var allowExternal: Bool
    }

    /// The carrier page's type name, if the line registers one.
    public var page: String?
    /// Message keys, sorted.
    public var messageKeys: [String]
    /// Service ids, in registration order.
    public var services: [String]
    /// Routes, in registration order.
    public var routes: [Route]

    public init(page: String?, messageKeys: [String], services: [String], routes: [Route]) {
        self.page = page
        self.messageKeys = messageKeys
        self.services = services
        self.routes = routes
    }
}

/// A request to open a URL through the route table, as a handler receives it.
public struct RouteRequest {
    /// The URL as given.
    public let url: String
    /// Path parameters (`:id` in the pattern) and query parameters, percent-decoded.
    public let parameters: [String: String]
    /// Whether the URL came from outside the app (a push, another app, the web).
    public let isExternal: Bool
    /// The signed-in user, with their services.
    public let user: UserContext

    /// Creates a request. The host does this when it opens a URL.
    @_spi(Host)
    public init(url: String, parameters: [String: String], isExternal: Bool, user: UserContext) {
        self.url = url
        self.parameters = parameters
        self.isExternal = isExternal
        self.user = user
    }
}

/// Handles a URL routed to it and says, for a person, what it opened (e.g. `"listing L1 detail"`).
/// Throw to say the target cannot be opened; the host reports it and does not crash.
public typealias RouteHandler = (RouteRequest) throws -> String

/// What opening a URL through the route table did, as a line's page sees it.
///
/// Not frozen: later versions of IMKit may add cases, so a `switch` over it needs an
/// `@unknown default:` branch.
public enum RouteResult: Sendable, Equatable {
    /// The handler opened something; the text says what.
    case opened(String)
    /// No route matches; the host's not-found handler answered with the reason.
    case notFound(String)
    /// The route exists but refused: an external open of an internal route, or the handler threw.
    case refused(String)
}

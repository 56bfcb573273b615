/// What a line registers, scoped to that line: it can add its own page and builders, never
/// another line's or the host's.
///
/// Registrations are staged. The host keeps them only if the whole of
/// ``BusinessLine/register(with:)`` succeeds and nothing was refused.
public final class LineRegistrar {
    /// The id of the line registering.
    public let lineID: String

    /// The carrier page registered, if any.
    @_spi(Host) public private(set) var page: CarrierPage.Type?
    /// The builders registered, in order.
    @_spi(Host) public private(set) var builders: [any MessageBuilder] = []
    /// The first registration refused; when set, the host fails the line.
    @_spi(Host) public private(set) var firstRefusal: RegistrationError?
    /// The services registered, in order.
    @_spi(Host) public private(set) var services: [any Service.Type] = []
    /// The routes registered, in order.
    @_spi(Host) public private(set) var routes: [RegisteredRoute] = []
    /// The descriptor this registrar registers for (its address identifies the plugin).
    @_spi(Host) public let descriptor: UnsafeRawPointer?

    /// What a registration claims, for the host to say who holds it already.
    @_spi(Host)
    public enum Claim {
        case messageKey(String)
        case service(String)
        case route(shape: String)
    }

    private let owner: (Claim) -> String?

    /// Creates a registrar for `lineID`. `owner` names who already holds a claim
    /// (`line 'house'`, or `the host`), or returns `nil`.
    @_spi(Host)
    public init(lineID: String, descriptor: UnsafeRawPointer?, owner: @escaping (Claim) -> String?) {
        self.lineID = lineID
        self.descriptor = descriptor
        self.owner = owner
    }

    /// Registers the line's carrier page: a subclass of ``CarrierPage``. A line has at most one;
    /// a line without one opens on the platform's base page.
    ///
    /// - Throws: ``RegistrationError`` `.secondPage` when a page is already registered.
    public func registerPage(_ page: CarrierPage.Type) throws(RegistrationError) {
        if let existing = self.page {
            try refuse(.secondPage, "line '\(lineID)' registered a second page \(page) after \(existing); a line has one carrier page. Register only one")
        }
        self.page = page
    }

    /// Registers a message builder under its ``MessageBuilder/key``, which must be
    /// `<lineid>.<name>` for this line.
    ///
    /// - Throws: ``RegistrationError`` `.invalidKey`, `.duplicateKey` (names both owners) or
    ///   `.keyOutsideNamespace`.
    public func registerBuilder(_ builder: some MessageBuilder) throws(RegistrationError) {
        let key = builder.key
        guard LineID.isValidMessageKey(key) else {
            try refuse(.invalidKey, "line '\(lineID)' registered message key '\(key)', which is not '\(lineID).<name>' (name: letters, digits, '_', '-', '.'). Rename the key")
        }
        if builders.contains(where: { $0.key == key }) {
            try refuse(.duplicateKey, "line '\(lineID)' registered message key '\(key)' twice. Register each key once")
        }
        if let owner = owner(.messageKey(key)) {
            try refuse(.duplicateKey, "message key '\(key)' is already registered by \(owner); line '\(lineID)' cannot register it too. Use a key under '\(lineID).'")
        }
        guard let owner = LineID.owner(ofMessageKey: key), owner == lineID[...] else {
            let belongs = LineID.owner(ofMessageKey: key).map { "which belongs to line '\($0)'" }
                ?? "which has no line prefix (such keys belong to the host)"
            try refuse(.keyOutsideNamespace, "line '\(lineID)' registered message key '\(key)', \(belongs). Name it '\(lineID).<name>'")
        }
        builders.append(builder)
    }

    /// Registers a service type, built for each signed-in user. Its ``Service/id`` must be
    /// `<lineid>.<name>` for this line; its dependencies must be the host's services or this
    /// line's (checked when registration ends).
    ///
    /// - Throws: ``RegistrationError`` `.invalidKey`, `.duplicateKey` or `.keyOutsideNamespace`.
    public func registerService(_ service: any Service.Type) throws(RegistrationError) {
        let id = service.id
        guard LineID.isValidMessageKey(id), LineID.owner(ofMessageKey: id) != nil else {
            try refuse(.invalidKey, "line '\(lineID)' registered service id '\(id)', which is not '\(lineID).<name>' (name: letters, digits, '_', '-', '.'). Rename it")
        }
        guard LineID.owner(ofMessageKey: id) == lineID[...] else {
            try refuse(.keyOutsideNamespace, "line '\(lineID)' registered service id '\(id)'; a line's service ids are '\(lineID).<name>'. Rename it")
        }
        if services.contains(where: { $0.id == id }) {
            try refuse(.duplicateKey, "line '\(lineID)' registered service '\(id)' twice. Register each service once")
        }
        if let owner = owner(.service(id)) {
            try refuse(.duplicateKey, "service '\(id)' is already registered by \(owner); line '\(lineID)' cannot register it too")
        }
        services.append(service)
    }

    /// Registers a URL route such as `house://listing/:id`, handled by `handler`. A line's routes
    /// use its own scheme: the line id (`house://` for the `house` line).
    /// `allowExternal` says whether URLs from outside the app (a push, the web) may open it.
    ///
    /// - Throws: ``RegistrationError`` `.invalid` for a malformed pattern, the host's `im`
    ///   scheme or another line's scheme, `.duplicateKey` when this line claims the same
    ///   pattern twice.
    public func registerRoute(_ pattern: String, allowExternal: Bool, handler: @escaping RouteHandler) throws(RegistrationError) {
        let parsed: RoutePattern
        switch RoutePattern.parse(pattern) {
        case .success(let value): parsed = value
        case .failure(let error): try refuse(error.code, "line '\(lineID)': \(error.description)")
        }
        guard parsed.scheme != "im" else {
            try refuse(.invalid, "line '\(lineID)' registered route '\(pattern)'; the im:// scheme is the host's. Use a scheme of your own, e.g. '\(lineID)://'")
        }
        guard parsed.scheme == lineID else {
            let rest = RoutePattern.schemeSeparator(in: pattern).map { String(pattern[$0.upperBound...]) } ?? ""
            try refuse(.invalid, "line '\(lineID)' registered route '\(pattern)'; a line's routes use its own scheme. Write it as '\(lineID)://\(rest)'")
        }
        if let mine = routes.first(where: { $0.pattern.shape == parsed.shape }) {
            try refuse(.duplicateKey, "line '\(lineID)' registered route '\(pattern)', which claims the same URLs as its '\(mine.pattern)'. Register it once")
        }
        if let owner = owner(.route(shape: parsed.shape)) {
            try refuse(.duplicateKey, "route '\(pattern)' is already registered by \(owner); line '\(lineID)' cannot register it too. Use a scheme or path of your own")
        }
        routes.append(RegisteredRoute(pattern: parsed, allowExternal: allowExternal, handler: handler))
    }

    private func refuse(_ code: RegistrationError.Code, _ reason: String) throws(RegistrationError) -> Never {
        let error = RegistrationError(code, reason)
        if firstRefusal == nil { firstRefusal = error }
        throw error
    }
}

/// A route as a line registered it.
@_spi(Host)
public struct RegisteredRoute {
    public let pattern: RoutePattern
    public let allowExternal: Bool
    public let handler: RouteHandler
}

/// A long-lived part of a line or of the host that lives in the signed-in user's context: a
/// listing cache, a connection, a draft store. Register the type with
/// ``LineRegistrar/registerService(_:)``; the host creates one instance per signed-in user.
///
/// The host calls, in this order:
/// 1. `init()`, then ``prepare(in:)`` on every service in dependency order. Use only yourself:
///    other services exist but are not ready.
/// 2. ``initialize(in:)`` in dependency order: every service you declared in
///    ``dependencies`` is initialized already; find it with ``UserContext/service(_:)``.
/// 3. ``online()`` and ``offline()``, repeated as the connection comes and goes (online in
///    dependency order, offline in reverse). A user is signed in online unless the chat starts
///    offline, so `initialize` may see either; react to ``online()`` rather than assume.
/// 4. At sign-out or exit: ``offline()`` (in reverse order, when the user was online), then
///    ``finalize()`` in reverse dependency order. After it, the instance is dropped: nothing
///    crosses to the next user.
///
/// A service that throws from ``prepare(in:)`` or ``initialize(in:)`` is not started (and
/// neither are services that depend on it); the host says so on standard error, naming the
/// service and the error, and the rest of the line goes on.
///
/// A service may depend on the host's services and on its own line's, never another line's.
/// A missing dependency or a cycle fails the line at registration, naming the missing service or
/// the cycle. A service whose `prepare` or `initialize` throws is finalized with the rest.
public protocol Service: AnyObject {
    /// A unique id, `<lineid>.<name>` for a line, e.g. `"house.listings"`.
    static var id: String { get }
    /// The ids of the services this one uses in ``initialize(in:)`` and later.
    static var dependencies: [String] { get }

    /// Creates the service. Do nothing slow here.
    init()
    /// Sets up the service itself. Default: nothing.
    func prepare(in user: UserContext) throws
    /// Connects the service to its dependencies. Default: nothing.
    func initialize(in user: UserContext) throws
    /// The connection is up. Default: nothing.
    func online()
    /// The connection is down. Default: nothing.
    func offline()
    /// The user signs out or the host exits: release everything. Default: nothing.
    func finalize()
}

extension Service {
    /// No dependencies.
    public static var dependencies: [String] { [] }
    /// Does nothing.
    public func prepare(in user: UserContext) throws {}
    /// Does nothing.
    public func initialize(in user: UserContext) throws {}
    /// Does nothing.
    public func online() {}
    /// Does nothing.
    public func offline() {}
    /// Does nothing.
    public func finalize() {}
}

/// The signed-in user and the services built for them. Every chat page's ``ChatContext`` points
/// at the one of the user who opened it.
///
/// Used on the chat's thread only, like the pages and services that hold it.
public final class UserContext {
    /// The signed-in user's id.
    public let userID: String
    /// The host's connection for this user: send messages, and learn when it goes offline and
    /// comes back.
    public let transport: Transport
    private var byID: [String: any Service] = [:]
    private var order: [any Service] = []

    /// Creates an empty context for a user. The host does this at sign-in.
    @_spi(Host)
    public init(userID: String, transport: Transport) {
        self.userID = userID
        self.transport = transport
    }

    /// Adds a built service. The host does this while it builds the user's services.
    @_spi(Host)
    public func add(_ service: any Service) {
        byID[type(of: service).id] = service
        order.append(service)
    }

    /// Removes a service (when it failed to start, or at sign-out).
    @_spi(Host)
    public func remove(_ service: any Service) {
        byID[type(of: service).id] = nil
        order.removeAll { $0 === service }
    }

    /// The services, in the order they were built.
    @_spi(Host)
    public var services: [any Service] { order }

    /// The service of type `type`, or `nil` when it is not registered or its line is not loaded.
    public func service<S: Service>(_ type: S.Type) -> S? {
        byID[type.id] as? S
    }

    /// The service registered under `id`, or `nil`.
    public func service(id: String) -> (any Service)? { byID[id] }

    /// The first service that conforms to `type` (a protocol), or `nil`.
    public func service<P>(conformingTo type: P.Type) -> P? {
        order.lazy.compactMap { $0 as? P }.first
    }

    /// The service of type `type`.
    /// - Throws: ``ServiceError`` with code ``ServiceError/Code/missing`` when there is none.
    public func require<S: Service>(_ type: S.Type) throws(ServiceError) -> S {
        guard let service = service(type) else {
            throw ServiceError(.missing, "service '\(type.id)' is not available for user '\(userID)'; declare it in dependencies, and check its line is loaded")
        }
        return service
    }
}

/// A service that could not be found or built. Catch it and match ``code``; show
/// ``description`` to people.
public struct ServiceError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A stable reason a line can match. New codes may be added in later versions of IMKit.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, e.g. `"missing"`.
        public let name: String
        /// Creates a code. Lines use the predefined codes.
        public init(_ name: String) { self.name = name }
        /// The code's name.
        public var description: String { name }

        /// The service asked for is not running for this user.
        public static let missing = Code("missing")
        /// A declared dependency is not registered, or belongs to another line.
        public static let missingDependency = Code("missing-dependency")
        /// Services depend on each other in a cycle.
        public static let cycle = Code("cycle")
        /// The service threw while it started.
        public static let failed = Code("failed")
    }

    /// Why, as a code.
    public let code: Code
    /// One sentence: which service, and why.
    public let description: String

    /// Creates an error with a code and a sentence a person can act on.
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}

/// The ids of the host's own services, which a line's services may declare in
/// ``Service/dependencies``.
public enum HostServices {
    /// The connection (``Transport``, reached through ``UserContext/transport``): a service that
    /// uses it in ``Service/initialize(in:)`` declares this id.
    public static let transport = "host.transport"
}

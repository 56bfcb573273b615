/// One open chat page's state: who talks to whom, about which category, the page's components,
/// and its session bus. The host makes one per page; a page and its components share it.
///
/// Components find each other here by type (``component(_:)``), never through a property of the
/// page, so a line can mask a component out without breaking the others.
public final class ChatContext {
    /// The signed-in user.
    public let selfUser: String
    /// The other party of the conversation (the jump URL's `peer`).
    public let peer: String
    /// The line category from the jump URL.
    public let rootCateID: Int
    /// The sub-category from the jump URL, if it had one.
    public let cateID: Int?
    /// Every other parameter of the jump URL, passed through unchanged.
    public let parameters: [String: String]
    /// The line whose page this is, or `nil` on the legacy page.
    public let lineID: String?
    /// Events between this page's components. Never shared with another page.
    public let bus = SessionBus()
    /// The signed-in user and their services (the host's and the lines').
    public let user: UserContext

    private var components: [ObjectIdentifier: AnyObject] = [:]
    private let sender: (String, MessagePayload) throws -> Void
    private let opener: (String) -> RouteResult

    /// Creates a context. The host does this when it opens a page.
    @_spi(Host)
    public init(selfUser: String, peer: String, rootCateID: Int, cateID: Int?,
                parameters: [String: String], lineID: String?, user: UserContext,
                sender: @escaping (String, MessagePayload) throws -> Void,
                opener: @escaping (String) -> RouteResult) {
        self.selfUser = selfUser
        self.peer = peer
        self.rootCateID = rootCateID
        self.cateID = cateID
        self.parameters = parameters
        self.lineID = lineID
        self.user = user
        self.sender = sender
        self.opener = opener
    }

    /// Opens a URL through the host's route table, as the app itself (not an external open),
    /// e.g. `house://listing/L1001`.
    public func open(_ url: String) -> RouteResult { opener(url) }

    /// The page's component of type `type`, or `nil` when the page does not show it (masked
    /// out by the line or turned off by the kill switch).
    public func component<Component: AnyObject>(_ type: Component.Type) -> Component? {
        components[ObjectIdentifier(type)] as? Component
    }

    /// Makes `component` findable by its type. A component calls this once, when it is created.
    public func register<Component: AnyObject>(_ component: Component) {
        components[ObjectIdentifier(Component.self)] = component
    }

    /// Sends a message from the signed-in user to the peer: finds the builder registered under
    /// `key`, checks the payload decodes, stores and delivers it.
    ///
    /// - Throws: ``SendError`` when no builder handles `key`, the key is turned off by the kill
    ///   switch, or the payload does not decode.
    public func send(key: String, payload: MessagePayload) throws {
        try sender(key, payload)
    }

    /// Sends typed content through `builder`'s encoding.
    public func send<Builder: MessageBuilder>(_ content: Builder.Content, with builder: Builder) throws {
        try sender(builder.key, try builder.payload(for: content))
    }
}

/// Why a message could not be sent.
public struct SendError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, in one sentence a person can act on.
    public let description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

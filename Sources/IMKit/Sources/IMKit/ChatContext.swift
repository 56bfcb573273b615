/// One open chat page's state: who talks to whom, about which category, the page's components,
/// and its session bus. The host makes one per page; a page and its components share it.
///
/// Components find each other here by type (``component(_:)``), never through a property of the
/// page, so a line can mask a component out without breaking the others.
public final class ChatContext {
    /// The signed-in user's id (the same as ``UserContext/userID``).
    public let userID: String
    /// The other party's user id (the jump URL's `peer`).
    public let peerID: String
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
    private let sender: (String, MessagePayload) throws(SendError) -> Void
    private let opener: (String) -> RouteResult
    private var reviser: ((ShownMessage, String, MessagePayload) throws(SendError) -> Void)?

    /// Creates a context. The host does this when it opens a page.
    @_spi(Host)
    public init(userID: String, peerID: String, rootCateID: Int, cateID: Int?,
                parameters: [String: String], lineID: String?, user: UserContext,
                sender: @escaping (String, MessagePayload) throws(SendError) -> Void,
                opener: @escaping (String) -> RouteResult) {
        self.userID = userID
        self.peerID = peerID
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
    public func registerComponent<Component: AnyObject>(_ component: Component) {
        components[ObjectIdentifier(Component.self)] = component
    }

    /// Sends a message from the signed-in user to the peer: finds the builder registered under
    /// `key`, checks the payload decodes, stores and delivers it.
    ///
    /// - Throws: ``SendError``; its ``SendError/code`` says why (no builder, turned off or
    ///   quarantined, does not decode, too large, not stored).
    public func send(key: String, payload: MessagePayload) throws(SendError) {
        try sender(key, payload)
    }

    /// Sends typed content through `builder`'s encoding.
    ///
    /// - Throws: ``SendError`` as ``send(key:payload:)``, or with code
    ///   ``SendError/Code/undecodable`` when `builder` cannot encode `content`.
    public func send<Builder: MessageBuilder>(_ content: Builder.Content, with builder: Builder) throws(SendError) {
        let payload: MessagePayload
        do {
            payload = try builder.payload(for: content)
        } catch {
            throw SendError(.undecodable, "'\(builder.key)' content does not encode: \(error)")
        }
        try sender(builder.key, payload)
    }

    /// Replaces a card where it stands: `message` (shown on this page, of `builder`'s key)
    /// becomes a new revision with `content`, on this page, on the peer's and on every device
    /// of both. The revision's number only grows: a late older revision never overwrites a
    /// newer, and each host draws the newest it has with its own builder, saying the message
    /// was updated and when. Call it from a hook (``MessageBuilder/didSubmit(_:values:content:message:context:)``,
    /// ``MessageBuilder/didTapButton(_:content:message:context:)``) with the answer:
    ///
    /// ```swift
    /// var booked = listing
    /// booked.viewing = values["day"]
    /// try context.revise(message, to: booked, with: self)
    /// ```
    ///
    /// Since IMKit 1.4.
    ///
    /// - Throws: ``SendError``: ``SendError/Code/notRevisable`` when `builder`'s key is not the
    ///   message's, or the message cannot change (recalled, not yet sent, a host without
    ///   revisions); `.undecodable` when the content does not encode or its payload does not
    ///   decode; `.tooLarge`, `.notStored` as for ``send(key:payload:)``.
    public func revise<Builder: MessageBuilder>(_ message: ShownMessage, to content: Builder.Content, with builder: Builder) throws(SendError) {
        guard builder.key == message.envelope.key else {
            throw SendError(.notRevisable, "'\(builder.key)' cannot revise a message of '\(message.envelope.key)'; revise with the message's own builder")
        }
        let payload: MessagePayload
        do {
            payload = try builder.payload(for: content)
        } catch {
            throw SendError(.undecodable, "'\(builder.key)' content does not encode: \(error)")
        }
        guard let reviser else { throw SendError(.notRevisable, "this page cannot revise messages") }
        try reviser(message, builder.key, payload)
    }

    /// Sets what ``revise(_:to:with:)`` calls: the host's, once, when it opens the page.
    @_spi(Host)
    public func setReviser(_ reviser: @escaping (ShownMessage, String, MessagePayload) throws(SendError) -> Void) {
        self.reviser = reviser
    }
}

/// Why a message could not be sent. Catch it and match ``code``; show ``description`` to people.
public struct SendError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A stable reason a line can match. New codes may be added in later versions of IMKit, so
    /// compare with `==` rather than assuming the list is complete.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, e.g. `"unknown-key"`.
        public let name: String
        /// Creates a code. Lines use the predefined codes.
        public init(_ name: String) { self.name = name }
        /// The code's name.
        public var description: String { name }

        /// No builder is registered for the key.
        public static let unknownKey = Code("unknown-key")
        /// The key cannot be sent now: turned off by the operator, quarantined by the host, its
        /// line unavailable, or a line's key on the legacy page.
        public static let unavailable = Code("unavailable")
        /// The payload does not decode with the key's builder (or the content does not encode).
        public static let undecodable = Code("undecodable")
        /// The payload is larger than the host accepts.
        public static let tooLarge = Code("too-large")
        /// The message could not be stored (disk full, a read-only data folder, a closed page).
        public static let notStored = Code("not-stored")
        /// The message cannot be revised: another key's builder, recalled, not sent yet, or on a
        /// page that cannot revise. Since IMKit 1.4.
        public static let notRevisable = Code("not-revisable")
    }

    /// Why, as a code.
    public let code: Code
    /// What went wrong, in one sentence a person can act on.
    public let description: String

    /// Creates an error with a code and a sentence a person can act on.
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}

/// The signed-in user's connection, as a line sees it: send a message to any user, and learn when
/// the connection goes offline and comes back. Reach it through ``UserContext/transport``.
///
/// A message sent while offline is stored at once and kept pending; the host delivers pending
/// messages, in order, when the connection is back (also after a restart).
///
/// Used on the chat's thread only.
public final class Transport {
    /// Whether the connection is up now.
    public private(set) var isOnline: Bool
    private let sender: (String, MessagePayload, String) throws(SendError) -> MessageEnvelope
    // A bus of its own: observers are held by the ``Subscription`` they get, as on a page's bus.
    private let bus = SessionBus()

    /// The connection went up or down. Published on the transport's own bus.
    struct ConnectionChanged: ChatEvent {
        let isOnline: Bool
    }

    /// Creates the transport. The host does this at sign-in; `sender` stores and delivers.
    @_spi(Host)
    public init(isOnline: Bool, sender: @escaping (_ key: String, _ payload: MessagePayload, _ peerID: String) throws(SendError) -> MessageEnvelope) {
        self.isOnline = isOnline
        self.sender = sender
    }

    /// Sends a message from the signed-in user to `peerID`, in their conversation: checked by
    /// the key's builder, stored, then delivered (now when online, later when offline).
    ///
    /// - Returns: the stored message.
    /// - Throws: ``SendError`` saying what was refused and why.
    @discardableResult
    public func send(key: String, payload: MessagePayload, to peerID: String) throws(SendError) -> MessageEnvelope {
        try sender(key, payload, peerID)
    }

    /// Calls `handler` with the new state each time the connection goes offline or comes back,
    /// for as long as the returned subscription lives. Keep it in a stored property, and
    /// capture `self` `unowned` in the handler (see ``SessionBus``).
    public func observeConnection(_ handler: @escaping (_ isOnline: Bool) -> Void) -> Subscription {
        bus.subscribe(ConnectionChanged.self) { handler($0.isOnline) }
    }

    /// Records a change of the connection and tells the observers. The host calls this.
    @_spi(Host)
    public func setOnline(_ online: Bool) {
        guard online != isOnline else { return }
        isOnline = online
        bus.publish(ConnectionChanged(isOnline: online))
    }
}

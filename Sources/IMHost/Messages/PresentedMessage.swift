import IMKit

/// A message ready to draw: its model and view, or why it shows as a placeholder.
public struct PresentedMessage {
    /// The message as the page's hooks see it (a placeholder has no model).
    public var shown: ShownMessage
    /// What the builder made; `nil` for a placeholder.
    public var view: MessageView?
    /// Why it is a placeholder, if it is.
    public var degrade: Degrade?
    /// Where it stands: queued, sent, delivered, read or failed (the user's own), received or
    /// read (the peer's).
    public var state: MessageState = .received
    /// Why it failed, for one that failed (or the state this imhost does not know).
    public var failure: MessageFailure?
    /// For a message that arrived late, the number of the shown message it was sent before.
    public var sentBefore: Int?
    /// For the user's own message of a line's key: how the peer drew it, as its read receipt said.
    public var peerDrawn: Drawn?
    /// When its sender recalled it: it is neither built nor drawn, only said to be recalled.
    public var recalledAt: Int64?
    /// The message it replies to.
    public var reply: ReplyTo?
    /// Its newest revision, when it was changed in place: what it shows is that revision.
    public var revision: StoredMessage.Revised?
    /// The page's kept presentation it came from, when it was kept (``PresentationCache``).
    var made: PresentationCache.Entry?
}

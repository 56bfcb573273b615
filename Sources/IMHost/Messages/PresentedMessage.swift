import IMKit

/// A message ready to draw: its model and view, or why it shows as a placeholder.
public struct PresentedMessage {
    /// The message as the page's hooks see it (a placeholder has no model).
    public var shown: ShownMessage
    /// What the builder made; `nil` for a placeholder.
    public var view: MessageView?
    /// Why it is a placeholder, if it is.
    public var degrade: Degrade?
    /// Sent while offline and not delivered yet.
    public var pending = false
}

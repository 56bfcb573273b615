@_spi(Host) import IMKit

/// What a page shows, as its hooks and builders made it: the terminal layer draws it.
public struct PageView {
    public var title: String
    public var isLegacy: Bool
    public var lineID: String?
    /// Each component's lines, in the platform's order.
    public var components: [[String]]
    /// The messages shown, oldest first, with their numbers.
    public var messages: [(number: Int, message: PresentedMessage)]
    /// How many messages the conversation holds.
    public var total: Int
}

/// The platform's built-in page components, as a bitmask.
///
/// A page shows every component except those its line masks out through
/// ``CarrierPage/disabledComponents`` and those the operator turns off in host.json's
/// `killSwitch.components`. The platform decides the order; a line cannot reorder them.
public struct ComponentSet: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The bits: one a component.
    public let rawValue: UInt32

    /// Creates a set from its raw bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The item the chat is about (a listing, a job), filled by ``CarrierPage/topPost()``.
    public static let topPost = ComponentSet(rawValue: 1 << 0)
    /// Tappable phrases: the platform's, then the line's.
    public static let quickReplies = ComponentSet(rawValue: 1 << 1)
    /// Photo, voice, video and location, then the line's own items.
    public static let bottomBar = ComponentSet(rawValue: 1 << 2)
    /// Report, block and clear, then the line's own items.
    public static let dropdownMenu = ComponentSet(rawValue: 1 << 3)
    /// Where the user types a message.
    public static let inputBar = ComponentSet(rawValue: 1 << 4)

    /// Every component.
    public static let all: ComponentSet = [.topPost, .quickReplies, .bottomBar, .dropdownMenu, .inputBar]

    /// Each component with its name in host.json, in the platform's fixed order.
    public static let named: [(name: String, component: ComponentSet)] = [
        ("topPost", .topPost), ("quickReplies", .quickReplies), ("bottomBar", .bottomBar),
        ("dropdownMenu", .dropdownMenu), ("inputBar", .inputBar),
    ]

    /// The component named `name` in host.json, e.g. `"quickReplies"`.
    public init?(name: String) {
        guard let match = Self.named.first(where: { $0.name == name }) else { return nil }
        self = match.component
    }

    /// The names of the components in the set, in the platform's order.
    public var names: [String] {
        Self.named.filter { contains($0.component) }.map(\.name)
    }

    public var description: String { "[" + names.joined(separator: ", ") + "]" }
}

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

    /// Each component on its own, in the platform's fixed order.
    public static let platformOrder: [ComponentSet] = [.topPost, .quickReplies, .bottomBar, .dropdownMenu, .inputBar]

    /// The names in host.json, in the same order as ``platformOrder``.
    private static let platformNames = ["topPost", "quickReplies", "bottomBar", "dropdownMenu", "inputBar"]

    /// The component named `name` in host.json, e.g. `"quickReplies"`.
    public init?(name: String) {
        guard let index = Self.platformNames.firstIndex(of: name) else { return nil }
        self = Self.platformOrder[index]
    }

    /// The name in host.json of a single component, e.g. `"quickReplies"`; `nil` for a set of
    /// none or several.
    public var name: String? {
        Self.platformOrder.firstIndex(of: self).map { Self.platformNames[$0] }
    }

    /// The names of the components in the set, in the platform's order.
    public var names: [String] {
        zip(Self.platformOrder, Self.platformNames).filter { contains($0.0) }.map(\.1)
    }

    /// The names in brackets, e.g. `[topPost, inputBar]`.
    public var description: String { "[" + names.joined(separator: ", ") + "]" }
}

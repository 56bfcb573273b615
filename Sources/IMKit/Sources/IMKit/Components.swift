/// A built-in component of a chat page. The platform creates them, in its fixed order, when the
/// page opens; each registers itself in the page's ``ChatContext`` under its type, where other
/// components and the line's page find it with ``ChatContext/component(_:)``.
public protocol PageComponent: AnyObject {
    /// Which component this is.
    static var kind: ComponentSet { get }
    /// The component's text view at a width in terminal columns.
    func render(width: Int) -> [String]
}

/// Quick replies publish this when the user taps a phrase; the input bar sends it as text.
public struct QuickReplyChosen: ChatEvent {
    /// The phrase tapped.
    public let text: String
}

/// The bottom bar publishes this when the user picks an item.
public struct BottomBarItemChosen: ChatEvent {
    /// The item picked, e.g. `"Photo"` or a line's own item.
    public let item: String
}

/// The dropdown menu publishes this when the user picks a platform item (report, block, clear).
public struct MenuItemChosen: ChatEvent {
    /// The item picked.
    public let item: String
}

/// The input bar publishes this after it sent a text message.
public struct TextSent: ChatEvent {
    /// The text sent.
    public let text: String
}

/// The item the chat is about, from ``CarrierPage/topPost()``.
public final class TopPostComponent: PageComponent {
    /// Which component this is.
    public static let kind = ComponentSet.topPost
    private weak var page: CarrierPage?

    init(page: CarrierPage) {
        self.page = page
        page.context.registerComponent(self)
    }

    /// The post shown, asked of the page each time.
    public var post: TopPost? { page?.topPost() }

    /// The component's lines at `width` columns.
    public func render(width: Int) -> [String] {
        guard let post else { return [] }
        return [post.title, post.detail].filter { !$0.isEmpty }.map { TextWidth.truncate($0, to: width) }
    }
}

/// Phrases the user can send with one tap: the platform's, then the line's.
public final class QuickRepliesComponent: PageComponent {
    /// Which component this is.
    public static let kind = ComponentSet.quickReplies
    /// The platform's phrases, always first.
    public static let platformPhrases = ["Hello!", "Is this still available?", "Thanks!"]
    private weak var page: CarrierPage?
    // Unowned: the context owns its components, so it outlives them (a strong reference here
    // would keep every closed page alive).
    private unowned let context: ChatContext

    init(page: CarrierPage) {
        self.page = page
        context = page.context
        page.context.registerComponent(self)
    }

    /// The phrases shown, in order.
    public var phrases: [String] { Self.platformPhrases + (page?.quickReplies() ?? []) }

    /// Whether a tapped phrase can be sent: the input bar sends it, so without one (masked by
    /// the line or turned off by the operator) the phrases are shown as unavailable.
    public var isAvailable: Bool { context.component(InputBarComponent.self) != nil }

    /// Taps the phrase at `index` (from 0, as in ``phrases``; the chat numbers them from 1):
    /// publishes ``QuickReplyChosen``.
    /// - Returns: the phrase, or `nil` when there is no such phrase or the page has no input bar
    ///   to send it (``isAvailable``).
    @discardableResult
    public func tap(at index: Int) -> String? {
        let phrases = self.phrases
        guard isAvailable, phrases.indices.contains(index) else { return nil }
        context.bus.publish(QuickReplyChosen(text: phrases[index]))
        return phrases[index]
    }

    /// The component's lines at `width` columns.
    public func render(width: Int) -> [String] {
        let label = isAvailable ? "Quick replies: " : "Quick replies (unavailable, no input bar): "
        return TextWidth.wrap(label + phrases.enumerated().map { "[\($0.offset + 1)] \($0.element)" }.joined(separator: "  "), width: width)
    }
}

/// Photo, voice, video and location in the platform's order, then the line's items.
public final class BottomBarComponent: PageComponent {
    /// Which component this is.
    public static let kind = ComponentSet.bottomBar
    /// The platform's items, always first and in this order.
    public static let platformItems = ["Photo", "Voice", "Video", "Location"]
    private weak var page: CarrierPage?
    // Unowned: the context owns its components, so it outlives them (a strong reference here
    // would keep every closed page alive).
    private unowned let context: ChatContext

    init(page: CarrierPage) {
        self.page = page
        context = page.context
        page.context.registerComponent(self)
    }

    /// The items shown: the platform's, then the line's (which cannot repeat a platform item).
    public var items: [String] {
        Self.platformItems + (page?.bottomBarItems() ?? []).filter { !Self.platformItems.contains($0) }
    }

    /// Picks the item at `index` (from 0, as in ``items``; the chat numbers them from 1):
    /// publishes ``BottomBarItemChosen``.
    /// - Returns: the item, or `nil` when there is no such item.
    @discardableResult
    public func choose(at index: Int) -> String? {
        let items = self.items
        guard items.indices.contains(index) else { return nil }
        context.bus.publish(BottomBarItemChosen(item: items[index]))
        return items[index]
    }

    /// Picks the item at `index` (from 0) and says what it did: publishes
    /// ``BottomBarItemChosen``, then a line's item goes to the page's
    /// ``CarrierPage/didSelectBottomBarItem(_:)``. A platform item, or a line's item its page
    /// ignores, was chosen and nothing more: `.handled("chose <item>")`.
    /// - Returns: what picking it did, or `nil` when there is no such item. Since IMKit 1.1.
    public func select(at index: Int) -> TapResult? {
        guard let item = choose(at: index) else { return nil }
        guard !Self.platformItems.contains(item), let page else { return .handled("chose \(item)") }
        let result = page.didSelectBottomBarItem(item)
        return result == .ignored ? .handled("chose \(item)") : result
    }

    /// The component's lines at `width` columns.
    public func render(width: Int) -> [String] {
        TextWidth.wrap(items.map { "[\($0)]" }.joined(separator: " "), width: width)
    }
}

/// Report, block and clear, then the line's items.
public final class DropdownMenuComponent: PageComponent {
    /// Which component this is.
    public static let kind = ComponentSet.dropdownMenu
    /// The platform's items, always first.
    public static let platformItems = ["Report", "Block", "Clear"]
    private weak var page: CarrierPage?
    // Unowned: the context owns its components, so it outlives them (a strong reference here
    // would keep every closed page alive).
    private unowned let context: ChatContext

    init(page: CarrierPage) {
        self.page = page
        context = page.context
        page.context.registerComponent(self)
    }

    /// The items shown: the platform's, then the line's.
    public var items: [String] {
        Self.platformItems + (page?.menuItems() ?? []).filter { !Self.platformItems.contains($0) }
    }

    /// Picks the item at `index` (from 0, as in ``items``; the chat numbers them from 1). A
    /// platform item publishes ``MenuItemChosen``; a line's item goes to the page's
    /// ``CarrierPage/didSelectMenuItem(_:)``.
    /// - Returns: what picking it did, or `nil` when there is no such item.
    public func choose(at index: Int) -> TapResult? {
        let items = self.items
        guard items.indices.contains(index) else { return nil }
        let item = items[index]
        if Self.platformItems.contains(item) {
            context.bus.publish(MenuItemChosen(item: item))
            return .handled("chose \(item)")
        }
        return page?.didSelectMenuItem(item) ?? .ignored
    }

    /// The component's lines at `width` columns.
    public func render(width: Int) -> [String] {
        TextWidth.wrap("Menu ☰ " + items.joined(separator: " · "), width: width)
    }
}

/// Where the user types. It sends what is submitted, and the quick replies tapped, as text.
public final class InputBarComponent: PageComponent {
    /// Which component this is.
    public static let kind = ComponentSet.inputBar
    // Unowned: the context owns its components, so it outlives them (a strong reference here
    // would keep every closed page alive).
    private unowned let context: ChatContext
    /// The last error sending, if the last send failed.
    public private(set) var lastError: String?
    /// Sends the quick replies tapped; ends with the input bar.
    private var quickReplies: Subscription?

    init(page: CarrierPage) {
        context = page.context
        page.context.registerComponent(self)
        quickReplies = context.bus.subscribe(QuickReplyChosen.self) { [unowned self] event in
            submit(event.text)
        }
    }

    /// Sends `text` as a `text` message and publishes ``TextSent``.
    /// - Returns: whether it was sent.
    @discardableResult
    public func submit(_ text: String) -> Bool {
        do {
            try context.send(key: BuiltinBuilders.Text().key, payload: MessagePayload(encoding: TextContent(text: text)))
            lastError = nil
            context.bus.publish(TextSent(text: text))
            return true
        } catch {
            lastError = "\(error)"
            return false
        }
    }

    /// The component's lines at `width` columns.
    public func render(width: Int) -> [String] {
        ["> " + TextWidth.pad("type a message", to: max(0, width - 2))]
    }
}

extension CarrierPage {
    /// The components this page shows: all, minus the line's mask, minus what the kill switch
    /// turned off.
    public func shownComponents(killed: ComponentSet) -> ComponentSet {
        ComponentSet.all.subtracting(disabledComponents).subtracting(killed)
    }

    /// Creates the page's components in the platform's order and returns them. The host calls
    /// this once, when the page opens; the page keeps no reference: the context does.
    @_spi(Host)
    public func makeComponents(killed: ComponentSet) -> [any PageComponent] {
        let shown = shownComponents(killed: killed)
        var made: [any PageComponent] = []
        for kind in ComponentSet.platformOrder where shown.contains(kind) {
            switch kind {
            case .topPost: made.append(TopPostComponent(page: self))
            case .quickReplies: made.append(QuickRepliesComponent(page: self))
            case .bottomBar: made.append(BottomBarComponent(page: self))
            case .dropdownMenu: made.append(DropdownMenuComponent(page: self))
            default: made.append(InputBarComponent(page: self))
            }
        }
        return made
    }
}

/// The generic base chat page. A business line subclasses it to make its carrier page and
/// registers the subclass with ``LineRegistrar/registerPage(_:)``.
///
/// The host creates the page when a jump URL routes to the line, with a fresh ``ChatContext``.
/// It then builds the platform's components in the platform's order, skipping those in
/// ``disabledComponents`` and those the kill switch turns off, and asks the hooks below for the
/// line's content. Hooks are called on the chat's thread (see ``BusinessLine``, "Threads"), may
/// be called more than once (each render), and must not block. A subclass overrides only what
/// it needs:
///
/// ```swift
/// final class HousePage: CarrierPage {
///     override var title: String { "Housing chat" }
///     override var disabledComponents: ComponentSet { [.bottomBar] }
/// }
/// ```
open class CarrierPage {
    /// This page's context: the conversation, its components and its session bus.
    public let context: ChatContext

    /// Creates the page for a conversation. Subclasses that override it must call `super`.
    public required init(context: ChatContext) {
        self.context = context
    }

    /// The title shown at the top of the page. Default: `"Chat with <peer>"`.
    open var title: String { "Chat with \(context.peerID)" }

    /// Components this line does not want. The platform shows all others, in its own order.
    open var disabledComponents: ComponentSet { [] }

    /// The item the chat is about, shown by the top-post component. Default: none.
    open func topPost() -> TopPost? { nil }

    /// The line's quick-reply phrases, shown after the platform's.
    open func quickReplies() -> [String] { [] }

    /// The line's bottom-bar items, shown after photo, voice, video and location. When the user
    /// picks one, ``didSelectBottomBarItem(_:)`` is called.
    open func bottomBarItems() -> [String] { [] }

    /// The line's dropdown-menu items, shown after report, block and clear.
    open func menuItems() -> [String] { [] }

    /// Called first when the user taps a message, with the message and the model its builder
    /// made. Return ``TapResult/ignored`` for what you do not handle: the message's own builder
    /// is asked next (``MessageBuilder/didTap(_:message:context:)``), wherever the message is
    /// shown. Override only to handle a message differently on this page. Default: ignored.
    open func didTap(_ message: ShownMessage) -> TapResult { .ignored }

    /// Called when the user picks one of ``menuItems()`` (the platform handles its own items).
    open func didSelectMenuItem(_ item: String) -> TapResult { .ignored }

    /// Called when the user picks one of ``bottomBarItems()`` (the platform handles its own
    /// items: photo, voice, video, location). Return what picking it did, for example
    /// `.handled("asked for a test drive")`, or `.failed(reason)`. Default: ignored.
    ///
    /// Every pick, the platform's and the line's, is also published as ``BottomBarItemChosen``
    /// on the page's bus, as in IMKit 1.0. Since IMKit 1.1.
    open func didSelectBottomBarItem(_ item: String) -> TapResult { .ignored }

    /// Whether this page acts on its own menu item `item` now. The host draws a line's item
    /// only when its page handles it: every control a person sees does something. Return
    /// `false` for an item that would answer ``TapResult/ignored`` here (a "Report this listing"
    /// on a chat that names no listing). Default: `true`. The host asks each time it draws the
    /// page; a line built before IMKit 1.4 has every item drawn, and one that answered ignored
    /// is drawn disabled afterwards, with why. Since IMKit 1.4.
    open func handlesMenuItem(_ item: String) -> Bool { true }

    /// Whether this page acts on its own bottom-bar item `item` now, as
    /// ``handlesMenuItem(_:)`` says for the menu. Default: `true`. Since IMKit 1.4.
    open func handlesBottomBarItem(_ item: String) -> Bool { true }
}

/// The item a chat is about, shown at the top of the page.
public struct TopPost: Sendable, Hashable {
    /// One line, e.g. the listing's title.
    public var title: String
    /// A second line, e.g. its price and size.
    public var detail: String

    /// Creates a top post.
    public init(title: String, detail: String = "") {
        self.title = title
        self.detail = detail
    }
}

/// What a tap did.
///
/// Frozen: a tap either acted, did not apply, or tried and failed, and a `switch` over these
/// three needs no `@unknown default`. No case will be added.
@frozen
public enum TapResult: Sendable, Hashable {
    /// It acted; the text says what happened, e.g. "opened listing 42".
    case handled(String)
    /// It does not act on this message or item.
    case ignored
    /// It tried and failed; the text says why, for the user, e.g. "the listing was removed".
    case failed(String)
}

@_spi(Host) import IMKit

/// What a chat page shows, as a value with no terminal in it: computed where line code runs (a
/// chat's worker, asking the page's hooks and the messages' builders), sent from there to
/// whoever draws it (``FromWorker/page(_:)``), and drawn by each front end in its own way: the
/// terminal as text, the browser as HTML. Strings in it are as lines and peers wrote them: every
/// front end escapes them where it draws.
public struct PageView: Codable, Sendable, Equatable {
    /// The chat's URL, as it was opened.
    public var url: String
    /// The peer: the conversation's id in the store.
    public var conversation: String
    public var title: String
    /// The line whose page this is; `nil` on the legacy page and the base page.
    public var lineID: String?
    public var isLegacy: Bool
    /// Why the converter chose this page.
    public var route: Route
    /// The components shown, in the platform's order.
    public var components: [Component]
    /// The messages shown, oldest first.
    public var messages: [Message]
    /// How many messages the conversation holds (the page shows the newest few).
    public var total: Int
    /// The width in terminal columns the messages' lines were laid out for.
    public var width: Int

    /// Why the converter chose the page: its reason as a word (`routed`, `no-rule`, `killed`,
    /// `fleet-killed`, …), which source turned the line off when one did (`host.json`, `fleet`,
    /// `quarantine`), and a sentence for a person.
    public struct Route: Codable, Sendable, Equatable {
        public var reason: String
        public var source: String?
        public var explanation: String
    }

    /// A component, as data.
    public enum Component: Codable, Sendable, Equatable {
        /// The item the chat is about; `nil` when the page has none to show.
        case topPost(TopPost?)
        /// Phrases sent with one tap, the platform's first; not `available` without an input bar.
        case quickReplies(phrases: [String], available: Bool)
        /// The platform's items, then the line's.
        case bottomBar([Item])
        /// The dropdown menu: the platform's items, then the line's.
        case menu([Item])
        /// Where the user types.
        case inputBar

        /// Which component this is.
        public var kind: ComponentSet {
            switch self {
            case .topPost: .topPost
            case .quickReplies: .quickReplies
            case .bottomBar: .bottomBar
            case .menu: .dropdownMenu
            case .inputBar: .inputBar
            }
        }
    }

    /// The item a chat is about.
    public struct TopPost: Codable, Sendable, Equatable {
        public var title: String
        public var detail: String
    }

    /// A bottom-bar or menu item: the platform's own, or the line's.
    public struct Item: Codable, Sendable, Equatable {
        public var name: String
        public var byLine: Bool
    }

    /// One message as the page shows it.
    public struct Message: Codable, Sendable, Equatable {
        /// Its number in the conversation, from 1 (what `/tap N` counts).
        public var number: Int
        public var envelope: MessageEnvelope
        public var isOutgoing: Bool
        /// Where it stands: queued, sent, delivered, read or failed (the user's own), received or
        /// read (the peer's).
        public var state: MessageState
        /// Why it failed, for one that failed.
        public var failure: String?
        /// The number of the shown message it was sent before, for one that arrived late.
        public var sentBefore: Int?
        /// What its builder drew, or why it shows as a placeholder.
        public var body: Body
        /// For a placeholder, every reason it is one, the deepest first (what `/why` says).
        public var causes: [Degrade] = []
        /// How many lines of its view are not shown (past ``PageView/messageLineLimit``): `nil`
        /// when every line is.
        public var folded: Int?
    }

    /// The most lines one message takes on a page, its fold marker included: a message of ten
    /// thousand lines (a peer's flood of newlines) does not bury the page. The rest is folded,
    /// and ``foldMarker(_:)`` says how much.
    public static let messageLineLimit = 40

    /// `lines` cut to fit ``messageLineLimit`` with the marker, and how many lines are folded
    /// then (`more` folded already, as a page value says): `(lines, 0)` when they all fit.
    public static func fold(_ lines: [String], more: Int = 0) -> (lines: [String], folded: Int) {
        guard lines.count > messageLineLimit || more > 0 else { return (lines, 0) }
        let kept = min(lines.count, messageLineLimit - 1)
        return (Array(lines.prefix(kept)), more + lines.count - kept)
    }

    /// The line that stands for `count` folded lines.
    public static func foldMarker(_ count: Int) -> String {
        "… \(count) more line\(count == 1 ? "" : "s")"
    }

    /// What a message shows.
    public enum Body: Codable, Sendable, Equatable {
        /// Lines laid out for ``PageView/width`` (what IMKit 1.0–1.2 builders make).
        case lines([String])
        /// A placeholder, and why: the deepest cause first.
        case placeholder(Degrade)

        /// The reason, for a placeholder.
        public var degrade: Degrade? {
            if case .placeholder(let why) = self { why } else { nil }
        }
    }

    /// The component of a kind, when the page shows it.
    public func component(_ kind: ComponentSet) -> Component? {
        components.first { $0.kind == kind }
    }
}

extension PageView.Component {
    /// What a component of the page shows now, asked of the page's hooks (run it inside the
    /// page's breadcrumb frame).
    static func of(_ component: any PageComponent) -> PageView.Component? {
        switch component {
        case let post as TopPostComponent:
            return .topPost(post.post.map { PageView.TopPost(title: $0.title, detail: $0.detail) })
        case let replies as QuickRepliesComponent:
            return .quickReplies(phrases: replies.phrases, available: replies.isAvailable)
        case let bar as BottomBarComponent:
            return .bottomBar(bar.items.map { .init(name: $0, byLine: !BottomBarComponent.platformItems.contains($0)) })
        case let menu as DropdownMenuComponent:
            return .menu(menu.items.map { .init(name: $0, byLine: !DropdownMenuComponent.platformItems.contains($0)) })
        case is InputBarComponent:
            return .inputBar
        default:
            return nil
        }
    }
}

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
    /// That line's version, as its manifest says it (for a developer's view).
    public var lineVersion: String? = nil
    public var isLegacy: Bool
    /// Why the converter chose this page.
    public var route: Route
    /// The components shown, in the platform's order.
    public var components: [Component]
    /// The messages shown, oldest first.
    public var messages: [Message]
    /// How many messages the conversation holds (the page shows the newest few).
    public var total: Int
    /// The width in terminal columns of the page the messages' ``Body/lines(_:)`` were laid out
    /// for (those of line builders that draw text). Nothing else in the value has a width: text,
    /// cards, voice and places are wrapped and laid out by each front end.
    public var width: Int
    /// What the peer's host will show of the cards this page sends, when it is not what they
    /// are: its receipts said it has no such line. `nil` when it draws them, or nothing is known
    /// of the peer's host; the person may send them either way.
    public var peerPlaceholder: PeerPlaceholder? = nil

    /// The page's line's messages (``keys``, what its page and `/send KEY` send) will show as a
    /// placeholder at `peer`: a code, which each front end words ("bob's host has no rent line:
    /// he will see a placeholder"). The line id and keys are this host's; the peer is the
    /// conversation's.
    public struct PeerPlaceholder: Codable, Sendable, Equatable {
        /// Why, as a code (this list may grow).
        public enum Code: String, Codable, Sendable {
            /// The peer's host draws no line of that id.
            case noLine = "no-line"
        }

        public var code: Code
        /// The peer, as the conversation names it (a user id).
        public var peer: String
        /// The page's line, which the peer's host lacks.
        public var line: String
        /// The line's message keys, sorted.
        public var keys: [String]

        /// What `peer`'s host will show as a placeholder, and why.
        public init(code: Code, peer: String, line: String, keys: [String]) {
            self.code = code
            self.peer = peer
            self.line = line
            self.keys = keys
        }
    }

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
        /// Its number among the component's items, from 1 (what `/bar N` and `/menu N` count,
        /// and what a front end that does not show every item still chooses by).
        public var number: Int
        /// For a line's item: whether its page acts on it now (IMKit 1.4's
        /// `handlesMenuItem(_:)`/`handlesBottomBarItem(_:)`); one it does not is not drawn.
        public var handled = true
        /// For a line's item that answered "ignored" when chosen on this page: drawn disabled.
        public var ignored = false

        /// Whether a front end shows it: a platform item that acts (not one of
        /// ``PageView/inactivePlatformItems``), a line's item its page handles. Every front end
        /// still chooses by ``number``.
        public var isShown: Bool { byLine ? handled : !PageView.inactivePlatformItems.contains(name) }
    }

    /// The platform's items that do nothing yet, so no front end shows them (every control on a
    /// page does something) and choosing one is refused as no such item: Video until a video
    /// message exists.
    public static let inactivePlatformItems: Set<String> = ["Video"]

    /// One message as the page shows it.
    public struct Message: Codable, Sendable, Equatable {
        /// Its number in the conversation, from 1 (what `/tap N` counts).
        public var number: Int
        public var envelope: MessageEnvelope
        public var isOutgoing: Bool
        /// Where it stands: queued, sent, delivered, read or failed (the user's own), received or
        /// read (the peer's).
        public var state: MessageState
        /// Why it failed, for one that failed (or the state this imhost does not know): a code
        /// and its data, which each front end words.
        public var failure: MessageFailure?
        /// The number of the shown message it was sent before, for one that arrived late.
        public var sentBefore: Int?
        /// What its builder drew, or why it shows as a placeholder.
        public var body: Body
        /// For a placeholder, every reason it is one, the deepest first (what `/why` says).
        public var causes: [Degrade] = []
        /// How many lines of its view are not shown (past ``PageView/messageLineLimit``): `nil`
        /// when every line is.
        public var folded: Int?
        /// For the user's own message of a line's key: how the peer's host drew it, as its read
        /// receipt said (``Drawn/said(at:)`` words it); `nil` until one says.
        public var peerDrawn: Drawn?
        /// The photos it carries, in order (their bytes are fetched apart): a card may show one
        /// as its image; the rest show after the body.
        public var photos: [PhotoSlot] = []
        /// A voice message's recording (its bytes are fetched apart, by the front end that
        /// plays it), with the length decoded from it, or why it is not played; `nil` for a
        /// message without one (any other, or a voice message that only names a `url`).
        public var voice: VoiceSlot? = nil
        /// A file message's file (downloaded apart, by the front end that offers it), or why it
        /// is not offered; `nil` for any other message.
        public var file: FileSlot? = nil
        /// The message it replies to, quoted; `nil` for one that replies to none.
        public var reply: Quote? = nil
        /// The reactions to it, by emoji in the order they were first given, each with who gave
        /// it (user ids: the signed-in user's or the peer's).
        public var reactions: [Reaction] = []
        /// For the user's own message that may still be recalled: until when (ms since 1970,
        /// its sending time and `limits.recallSeconds`); `nil` otherwise.
        public var recallableUntil: Int64? = nil
        /// When it was changed in place (a card's new revision, IMKit 1.4): which revision it
        /// shows, who made it and when; `nil` for a message as it was sent.
        public var revised: StoredMessage.Revised? = nil

        /// The photos shown after the body: all but the one its card shows as its image.
        public var photosAfterBody: [(index: Int, slot: PhotoSlot)] {
            let inCard: Int? = if case .photo(let index)? = body.card?.image { index } else { nil }
            return photos.enumerated().filter { $0.offset != inCard }.map { ($0.offset, $0.element) }
        }
    }

    /// One emoji of a message's reactions, and who reacted with it.
    public struct Reaction: Codable, Sendable, Equatable {
        public var emoji: String
        public var people: [String]
    }

    /// What a reply shows of the message it answers.
    public struct Quote: Codable, Sendable, Equatable {
        /// Who wrote the quoted message: a user id, the signed-in user's or the peer's.
        public var from: String
        /// Its number in this conversation when it is stored here (a click goes to it).
        public var number: Int?
        public var excerpt: Excerpt

        /// What of it is quoted, as content: each front end words and draws it.
        public enum Excerpt: Codable, Sendable, Equatable {
            /// Its first words (a text's, a line's own quote, a card's title), on one line, at
            /// most ``Quote/excerptLength`` characters.
            case text(String)
            /// A photo message, with its caption's first words when it has one.
            case photo(caption: String?)
            /// A voice message of this many seconds.
            case voice(seconds: Int)
            /// A place, by its name.
            case location(String)
            /// A file, by its name.
            case file(String)
            /// A picture at an address (the built-in `image`).
            case image
            /// Its sender recalled it.
            case recalled
            /// It shows as a placeholder here.
            case placeholder
            /// It is not in this store (cleared, or never came).
            case missing
        }

        /// The most characters of a quote's words.
        public static let excerptLength = 100

        /// `text` as a quote shows it: one line, at most ``excerptLength`` characters, an
        /// ellipsis where it was cut.
        public static func excerpt(_ text: String) -> String {
            let line = text.split(whereSeparator: \.isNewline).map { $0.trimmingPrefix(while: \.isWhitespace) }.joined(separator: " ")
            return line.count > excerptLength ? String(line.prefix(excerptLength - 1)) + "…" : String(line)
        }
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
        /// Text as its sender wrote it, newlines and all (the built-in `text`, and a photo's
        /// caption, empty without one): each front end wraps it for itself.
        case text(String)
        /// A voice message (the built-in `voice`): its length, and where its sender said the
        /// recording is (never fetched by the host).
        case voice(VoiceContent)
        /// A place (the built-in `location`).
        case location(LocationContent)
        /// A file its sender sent (the built-in `file`): its name and size as the payload says;
        /// the file itself is the message's ``Message/file``.
        case file(FileContent)
        /// A picture at an address its sender gave (the built-in `image`; never fetched).
        case image(ImageContent)
        /// Lines a line's builder laid out for ``PageView/width``'s message column (what IMKit
        /// 1.0–1.2 builders make), drawn as they are, in a fixed-width font.
        case lines([String])
        /// A placeholder, and why: the deepest cause first.
        case placeholder(Degrade)
        /// A structured card (IMKit 1.3), which each front end lays out for itself.
        case card(Card)
        /// Its sender recalled it: nothing of what it said is kept (each front end says who
        /// recalled it: the message's sender).
        case recalled

        /// The reason, for a placeholder.
        public var degrade: Degrade? {
            if case .placeholder(let why) = self { why } else { nil }
        }

        /// The card, for a card.
        public var card: Card? {
            if case .card(let card) = self { card } else { nil }
        }
    }

    /// A card as its builder made it (IMKit's `MessageCard`), its strings as the line wrote
    /// them: the terminal draws it as a box of text, the browser as a card.
    public struct Card: Codable, Sendable, Equatable {
        public var title: String
        public var subtitle: String?
        public var fields: [Field]
        public var image: Image?
        public var badge: Badge?
        public var buttons: [Button]
        /// What the card asks (IMKit 1.4), above its buttons; `nil` when nothing, and left out
        /// of the JSON.
        public var inputs: [Input]? = nil

        /// A `label: value` row.
        public struct Field: Codable, Sendable, Equatable {
            public var label: String
            public var value: String
        }

        /// A picture the card shows: one its line registered, or one of its message's photos.
        public enum Image: Codable, Sendable, Equatable {
            /// A picture a line ships, by name; `line`, `version` and `photo` say which and what
            /// it is when the host has it (`nil`: the line registered none by that name), `alt`
            /// what it shows in the line's words (`nil`: a line built before IMKit 1.4 gave none).
            case picture(name: String, line: String? = nil, version: String? = nil, photo: Photo? = nil, alt: String? = nil)
            /// The message's photo at `index`, from 0 (``PageView/Message/photos``).
            case photo(index: Int)
        }

        /// The status badge: its text, and how it reads.
        public struct Badge: Codable, Sendable, Equatable {
            public var text: String
            public var tone: Tone
        }

        /// How a badge reads (IMKit's `CardBadge.Tone`); a tone this host does not know reads neutral.
        public enum Tone: String, Codable, Sendable, Equatable {
            case neutral, positive, warning, negative
        }

        /// A button: the id `/tap N ID` names and the builder's hook receives, and its label.
        public struct Button: Codable, Sendable, Equatable {
            public var id: String
            public var label: String
            /// `true` once it answered "ignored" when pressed on this page: a front end draws it
            /// disabled, saying it does nothing (a card's buttons are what its builder says it
            /// handles); `nil` otherwise, and left out of the JSON.
            public var ignored: Bool? = nil
            /// `true` when pressing it sends the card's inputs (IMKit 1.4's `submits`); `nil` otherwise.
            public var submits: Bool? = nil
        }

        /// Something the card asks (IMKit's `CardInput`): the host checks what a person gives
        /// against these rules before the line sees it.
        public struct Input: Codable, Sendable, Equatable {
            /// What kind of value it takes; a kind this host does not know is taken as text.
            public enum Kind: String, Codable, Sendable, Equatable {
                case text, choice, choices, date, time
            }
            /// One option of a choice.
            public struct Option: Codable, Sendable, Equatable {
                public var id: String
                public var label: String
            }
            public var id: String
            public var label: String
            public var kind: Kind
            public var placeholder: String?
            public var required: Bool?
            public var options: [Option]?
            public var minLength: Int?
            public var maxLength: Int?
            public var earliest: String?
            public var latest: String?
            /// What it holds when shown: text, an option's id, a date, a time; the options chosen
            /// for `choices`.
            public var value: String?
            public var chosen: [String]?

            /// The page's value of a card's input.
            init(_ input: CardInput) {
                id = input.id
                label = input.label
                kind = switch input.kind {
                case .text: .text
                case .choice: .choice
                case .choices: .choices
                case .date: .date
                case .time: .time
                @unknown default: .text
                }
                placeholder = input.placeholder
                required = input.isRequired ? true : nil
                options = input.options.isEmpty ? nil : input.options.map { Option(id: $0.id, label: $0.label) }
                minLength = input.minLength
                maxLength = input.maxLength
                earliest = input.earliest
                latest = input.latest
                value = input.value
                chosen = input.initialChoices.isEmpty ? nil : input.initialChoices
            }

            /// The input as IMKit has it, to check values and lay it out as text.
            var cardInput: CardInput {
                let kind: CardInput.Kind = switch self.kind {
                case .text: .text
                case .choice: .choice
                case .choices: .choices
                case .date: .date
                case .time: .time
                }
                return CardInput(id: id, label: label, kind: kind, placeholder: placeholder, required: required ?? false,
                                 options: (options ?? []).map { CardOption(id: $0.id, label: $0.label) }, minLength: minLength,
                                 maxLength: maxLength, earliest: earliest, latest: latest, value: value, initialChoices: chosen ?? [])
            }
        }

        /// The page's value of a builder's card.
        public init(_ card: MessageCard) {
            title = card.title
            subtitle = card.subtitle
            fields = card.fields.map { Field(label: $0.label, value: $0.value) }
            image = card.image.flatMap { image in
                switch image {
                case .picture(let name): .picture(name: name)
                case .photo(let index): .photo(index: index)
                @unknown default: nil
                }
            }
            badge = card.badge.map { badge in
                let tone: Tone = switch badge.tone {
                case .neutral: .neutral
                case .positive: .positive
                case .warning: .warning
                case .negative: .negative
                @unknown default: .neutral
                }
                return Badge(text: badge.text, tone: tone)
            }
            buttons = card.buttons.map { Button(id: $0.id, label: $0.label, submits: $0.submits ? true : nil) }
            inputs = card.inputs.isEmpty ? nil : card.inputs.map(Input.init)
        }

        /// The card as IMKit has it, for laying it out as text (`MessageLayout.card(_:)`).
        public var messageCard: MessageCard {
            MessageCard(title: title, subtitle: subtitle, fields: fields.map { CardField($0.label, $0.value) },
                        image: image.map { image -> CardImage in
                            switch image {
                            case .picture(let name, _, _, _, _): .picture(name)
                            case .photo(let index): .photo(index)
                            }
                        },
                        badge: badge.map { badge -> CardBadge in
                            let tone: CardBadge.Tone = switch badge.tone {
                            case .neutral: .neutral
                            case .positive: .positive
                            case .warning: .warning
                            case .negative: .negative
                            }
                            return CardBadge(badge.text, tone: tone)
                        },
                        inputs: (inputs ?? []).map(\.cardInput),
                        buttons: buttons.map { CardButton(id: $0.id, label: $0.label, submits: $0.submits ?? false) })
        }
    }

    /// The platform's menu item that blocks the peer, and what it says once the peer is blocked.
    public static let blockItem = "Block", unblockItem = "Unblock"
    /// The platform's menu item that clears the chat on this device.
    public static let clearItem = "Clear"
    /// The platform's menu item that reports the peer to the app's operator.
    public static let reportItem = "Report"

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
            return .bottomBar(bar.items.enumerated().map { .init(name: $1, byLine: !BottomBarComponent.platformItems.contains($1), number: $0 + 1) })
        case let menu as DropdownMenuComponent:
            return .menu(menu.items.enumerated().map { .init(name: $1, byLine: !DropdownMenuComponent.platformItems.contains($1), number: $0 + 1) })
        case is InputBarComponent:
            return .inputBar
        default:
            return nil
        }
    }
}

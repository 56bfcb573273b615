@_spi(Host) import IMKit

/// One open chat: the page the converter chose (a line's carrier page or the legacy page), its
/// context and components, and the conversation's messages as this page shows them.
///
/// Every call into the line's page (its hooks, taps, the actions its components pass on) and
/// into builders runs inside a breadcrumb frame.
public final class ChatPage {
    /// Why this page was chosen.
    public let decision: Converter.Decision
    /// The line's page, or the legacy page.
    public let carrier: CarrierPage
    /// Whether this is the legacy page.
    public let isLegacy: Bool
    /// The conversation's id in the store.
    public let conversation: String
    /// The components shown, in the platform's order.
    public let components: [any PageComponent]
    /// How many of the newest messages the page shows; `showOlder` raises it.
    public private(set) var window: Int

    let environment: PageEnvironment

    /// The page's context: session, components and bus.
    public var context: ChatContext { carrier.context }

    /// The line whose page this is, or `nil` on the legacy page.
    public var lineID: String? { context.lineID }
    /// That line's version, as its manifest says it (no line code runs to say it).
    public var lineVersion: String? { lineID.flatMap(environment.lineVersion) }

    init(decision: Converter.Decision, pageType: CarrierPage.Type, peer: String, window: Int, environment: PageEnvironment) {
        self.decision = decision
        self.environment = environment
        self.window = window
        isLegacy = environment.isLegacy
        conversation = peer
        let relay = SendRelay()
        let jump = decision.jump
        let parameters = Dictionary(jump.parameters.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        let lineID: String? = if case .line(let id) = decision.target { id } else { nil }
        let context = ChatContext(userID: environment.user.userID, peerID: peer, rootCateID: jump.rootCateID, cateID: jump.cateID,
                                  parameters: parameters, lineID: lineID, user: environment.user,
                                  sender: { (key, payload) throws(SendError) in
                                      guard let page = relay.page else { throw SendError(.notStored, "the chat page is closed") }
                                      try page.send(key: key, payload: payload)
                                  },
                                  opener: environment.open)
        context.setReviser { (message, key, payload) throws(SendError) in
            guard let page = relay.page else { throw SendError(.notStored, "the chat page is closed") }
            try page.revise(message, key: key, payload: payload)
        }
        (carrier, components) = environment.lineGuard.run(.pageOpen, environment.mark, key: String(describing: pageType)) {
            let carrier = pageType.init(context: context)
            return (carrier, carrier.makeComponents(killed: environment.killedComponents))
        }
        relay.page = self
    }

    /// Lets the context send through the page without keeping it alive.
    private final class SendRelay {
        weak var page: ChatPage?
    }

    /// The component of a type, if the page shows it.
    public func component<Component: PageComponent>(_ type: Component.Type) -> Component? {
        context.component(type)
    }

    // MARK: Messages

    /// Sends a message from the signed-in user: the key's builder must exist, be allowed here and
    /// decode the payload; then it is stored.
    ///
    /// - Throws: ``SendError`` saying what was refused and why.
    @discardableResult
    /// `photos` travel with it, beside the payload.
    public func send(key: String, payload: MessagePayload, photos: [AttachedPhoto] = [], voice: AttachedVoice? = nil,
                     file: AttachedFile? = nil) throws(SendError) -> MessageEnvelope {
        try environment.sender.send(key: key, payload: payload, to: context.peerID, fromLegacyPage: isLegacy, jump: page, photos: photos,
                                    voice: voice, file: file).envelope
    }

    /// Makes `payload` the next revision of `message`, shown on this page (a hook's
    /// `ChatContext.revise`): kept, drawn where the message stands, and sent to the peer's host
    /// and the user's other devices. The page counts it (``revisions``), so its front end redraws.
    ///
    /// - Throws: ``SendError`` saying what was refused and why.
    public func revise(_ message: ShownMessage, key: String, payload: MessagePayload) throws(SendError) {
        guard !isLegacy else { throw SendError(.unavailable, "the legacy page revises no message") }
        _ = try environment.sender.revise(message.envelope, key: key, payload: payload, peer: conversation)
        revisions += 1
    }

    /// The page this chat was opened on: its jump's rootCateID, cateID and infoID.
    public var page: JumpPage {
        JumpPage(rootCateID: decision.jump.rootCateID, cateID: decision.jump.cateID, infoID: context.parameters["infoID"])
    }

    /// Stores a message from the peer, as if it had arrived. It is kept whatever its key: a
    /// message this host cannot show is shown as a placeholder, never dropped.
    @discardableResult
    public func receive(key: String, payload: MessagePayload, photos: [AttachedPhoto] = []) throws(SendError) -> MessageEnvelope {
        try environment.sender.receive(key: key, payload: payload, from: context.peerID, photos: photos).envelope
    }

    /// The messages the page shows now, oldest first, each with its number (its position in the
    /// conversation, from 1), laid out for a page `width` columns wide.
    /// The builders together get `limits.drawSeconds`: the newest messages are drawn first, and
    /// a line's message left when the time is spent is a placeholder (``Degrade/drawingTooSlow(seconds:)``),
    /// tried again at the next draw.
    public func presented(width: Int) throws -> [(number: Int, message: PresentedMessage)] {
        try present(environment.store.stored(of: conversation, endingBefore: nil, limit: window), width: width,
                    budget: environment.limits.drawSeconds)
    }

    private var presenter: MessagePresenter {
        var presenter = MessagePresenter(lookup: environment.lookup, degrade: environment.degrade, legacy: isLegacy, lineGuard: environment.lineGuard)
        presenter.payloadLimit = environment.limits.payloadBytes
        presenter.degradeMessage = environment.degradeMessage
        presenter.cache = presentations
        return presenter
    }

    /// What this page's builders made, reused from one draw to the next (``PresentationCache``).
    private lazy var presentations = PresentationCache(limit: 2 * max(window, 50))

    /// `budget`, in seconds, bounds the builders' time for the whole list (see ``presented(width:)``).
    func present(_ entries: [StoredMessage], width: Int, budget: Double? = nil) -> [(number: Int, message: PresentedMessage)] {
        let presenter = presenter
        let bodyWidth = Self.bodyWidth(forPage: width)
        let start = Clock.monotonic()
        let limit = budget.map { UInt64($0 * 1_000_000_000) }
        // Newest first: what the person reads first is drawn first when time runs short.
        var presented: [(number: Int, message: PresentedMessage)] = []
        presented.reserveCapacity(entries.count)
        for entry in entries.reversed() {
            let spent = limit.map { Clock.monotonic() - start >= $0 } ?? false
            // A recalled message has nothing to build: no line sees it.
            var message = entry.recalledAt != nil
                ? PresentedMessage(shown: ShownMessage(envelope: entry.envelope, model: nil, isOutgoing: entry.isOutgoing), view: nil, degrade: nil)
                : presenter.present(entry.envelope, outgoing: entry.isOutgoing, width: bodyWidth, origin: Self.origin(of: entry),
                                    outOfTime: spent ? budget : nil)
            message.recalledAt = entry.recalledAt
            message.reply = entry.reply
            message.state = entry.state
            message.failure = entry.failure
            message.sentBefore = entry.sentBefore.map { $0 + 1 }
            message.peerDrawn = entry.peerDrawn
            message.revision = entry.revision
            presented.append((entry.number, message))
        }
        if entries.count > 1 { presentations.drawn() }
        presented.reverse()
        return presented
    }

    /// Who sent a message that came from another host, and its global id: line code that crashes
    /// on it is recorded against that message alone. `nil` for the user's own and `/recv`'s.
    static func origin(of entry: StoredMessage) -> Breadcrumb.MessageOrigin? {
        entry.arrived ? Breadcrumb.MessageOrigin(id: entry.envelope.id, sender: entry.envelope.from, globalID: entry.envelope.globalID) : nil
    }

    /// The messages shown, as the page's hooks see them (a placeholder has no model).
    public func shownMessages() throws -> [ShownMessage] {
        try presented(width: Self.defaultWidth).map(\.message.shown)
    }

    /// Shows `count` more older messages; returns how many more are now shown. With nothing
    /// older, the window stays as it is (so messages that arrive later still show).
    @discardableResult
    public func showOlder(_ count: Int) throws -> Int {
        let total = try environment.store.count(of: conversation)
        let shown = min(window, total)
        let more = min(count, total - shown)
        if more > 0 { window = shown + more }
        return more
    }

    /// How many messages the conversation holds.
    public func messageCount() throws -> Int { try environment.store.count(of: conversation) }

    // MARK: What the page shows

    /// The width pages are drawn at when none is given.
    public static let defaultWidth = 72

    /// The page width whose message column is the 72 columns IMKit 1.0–1.2 builders were
    /// written for: what a front end that wraps text itself (the browser) asks for, so a line's
    /// own lines come as their builders meant them.
    public static let linesPageWidth = 108

    /// The columns a message body gets on a page `width` columns wide.
    public static func bodyWidth(forPage width: Int) -> Int {
        max(8, min(width - 8, width * 2 / 3))
    }

    /// What the page shows at `width` columns, asked of the line's hooks and builders now: the
    /// title, each component's data, and the messages, as a value any front end draws.
    public func view(width: Int) throws -> PageView {
        var (title, components) = environment.lineGuard.run(.pageHook, environment.mark, key: "title and components") {
            (carrier.title, self.components.compactMap(PageView.Component.of))
        }
        // What the page shows of the conversation, read in one go (the line's hooks above and
        // its builders below run outside it).
        let read = try environment.store.window(of: conversation, limit: window, peerLines: !isLegacy && lineID != nil)
        // The platform's Block item says what choosing it does: Unblock, once the peer is blocked.
        let blocked = read.blocked
        // A line's item: whether its page acts on it (IMKit 1.4), and whether it answered
        // ignored here; asked of the line inside its frame.
        components = environment.lineGuard.run(.pageHook, environment.mark, key: "handled items") {
            components.map { component in
                switch component {
                case .menu(let items):
                    return .menu(items.map { item in
                        var item = item
                        if !item.byLine, item.name == PageView.blockItem, blocked { item.name = PageView.unblockItem }
                        if item.byLine {
                            item.handled = carrier.handlesMenuItem(item.name)
                            item.ignored = ignoredItems.contains(.menu(item.name))
                        }
                        return item
                    })
                case .bottomBar(let items):
                    return .bottomBar(items.map { item in
                        var item = item
                        if item.byLine {
                            item.handled = carrier.handlesBottomBarItem(item.name)
                            item.ignored = ignoredItems.contains(.bar(item.name))
                        }
                        return item
                    })
                default:
                    return component
                }
            }
        }
        let entries = read.entries
        let list = present(entries, width: width, budget: environment.limits.drawSeconds)
        var messages = list.indices.map { index in
            let (number, presented) = list[index]
            var message = PageView.Message(number: number, envelope: presented.shown.envelope, isOutgoing: presented.shown.isOutgoing,
                                           state: presented.state, failure: presented.failure, sentBefore: presented.sentBefore,
                                           body: Self.body(presented))
            // A line's lines longer than a page gives one message are folded here, before they
            // travel (text and cards are laid out by each front end, which folds them as it draws).
            if case .lines(let lines) = message.body {
                let folded = PageView.fold(lines)
                message.body = .lines(folded.lines)
                if folded.folded > 0 { message.folded = folded.folded }
            }
            message.peerDrawn = presented.peerDrawn
            message.revised = presented.revision
            // A message the budget turned away has that one cause: asking for more would run its
            // slow builder again.
            if case .drawingTooSlow? = presented.degrade {
                message.causes = [presented.degrade!]
            } else if presented.view == nil, presented.recalledAt == nil {
                // A placeholder's causes, asked of the row in hand (a recalled message is none).
                message.causes = causes(of: entries[index])
            }
            return message
        }
        try quoteReplies(&messages, presented: list)
        let recallWindow = Int64(environment.limits.recallSeconds) * 1000, now = Clock.now()
        for index in messages.indices {
            let message = messages[index]
            for (person, emoji) in read.reactions[message.number - 1] ?? [] {
                if let at = messages[index].reactions.firstIndex(where: { $0.emoji == emoji }) {
                    messages[index].reactions[at].people.append(person)
                } else {
                    messages[index].reactions.append(PageView.Reaction(emoji: emoji, people: [person]))
                }
            }
            let recalled = if case .recalled = message.body { true } else { false }
            if message.isOutgoing, !recalled, message.state != .failed, message.state != .givenUp, recallWindow > 0,
               message.envelope.timestamp + recallWindow > now {
                messages[index].recallableUntil = message.envelope.timestamp + recallWindow
            }
            messages[index].photos = read.photos[messages[index].number - 1] ?? []
            if !recalled {
                messages[index].voice = read.voices[message.number - 1]
                messages[index].file = read.files[message.number - 1]
            }
            messages[index].body = resolvePicture(messages[index])
            markIgnoredButtons(&messages[index])
        }
        let reason = decision.reason
        return PageView(url: decision.url, conversation: conversation, title: title, lineID: lineID,
                        lineVersion: lineVersion, isLegacy: isLegacy,
                        route: PageView.Route(reason: reason.rawValue, source: reason.source, explanation: decision.explanation),
                        components: components, messages: messages, total: read.total, width: width,
                        peerPlaceholder: peerPlaceholder(read.peerLines))
    }

    /// What the peer's host will show of this page's line's messages, when its receipts said it
    /// has no such line; `nil` when it has, when nothing is known of it, and on a page without a
    /// line or one whose line has no message keys.
    private func peerPlaceholder(_ said: Envelope.Draws?) -> PageView.PeerPlaceholder? {
        guard !isLegacy, let line = lineID, let said, said.lines[line] == nil else { return nil }
        let keys = environment.lineKeys(line)
        return keys.isEmpty ? nil : PageView.PeerPlaceholder(code: .noLine, peer: conversation, line: line, keys: keys)
    }

    /// A card's picture named by a line, with which line's picture it is and what it is, when
    /// the card's line registered it.
    private func resolvePicture(_ message: PageView.Message) -> PageView.Body {
        guard case .card(var card) = message.body, case .picture(let name, _, _, _, _)? = card.image,
              let line = LineID.owner(ofMessageKey: message.envelope.key).map(String.init) else { return message.body }
        if let found = environment.picture(line, name) {
            card.image = .picture(name: name, line: line, version: found.version, photo: found.picture.photo, alt: found.picture.alt)
        }
        return .card(card)
    }

    /// How `view` (this page's) drew the peer's messages of a line's key, by their global ids:
    /// what their read receipts tell the sender. By the line at its version, or as a placeholder
    /// and why; a message the drawing budget turned away is left out (it is drawn next time).
    public func drawn(in view: PageView) -> [String: Drawn] {
        var drawn: [String: Drawn] = [:]
        for message in view.messages where !message.isOutgoing {
            let key = message.envelope.key
            guard let id = message.envelope.globalID, let owner = LineID.owner(ofMessageKey: key) else { continue }
            if let degrade = message.body.degrade {
                drawn[id] = Drawn.placeholder(degrade, key: key, lineKnown: environment.lineServes(String(owner)))
            } else {
                drawn[id] = .line(String(owner), version: environment.lookup(key)?.version.flatMap { Drawn.isVersion($0) ? $0 : nil })
            }
        }
        return drawn
    }

    /// What a presented message shows: a built-in message as what it is (its text, its voice,
    /// its place), a card, a line's lines, or why it is a placeholder.
    /// Kept with the page's presentation it came from, it is made once.
    static func body(_ presented: PresentedMessage) -> PageView.Body {
        if presented.recalledAt != nil { return .recalled }
        guard let view = presented.view else { return .placeholder(presented.degrade ?? .unknownKey) }
        if let kept = presented.made?.body { return kept }
        let body = builtIn(presented) ?? view.card.map { .card(PageView.Card($0)) } ?? .lines(view.lines)
        presented.made?.body = body
        return body
    }

    /// A message of a built-in key (no line's prefix) as its content: the host's own builders
    /// made it, and each front end draws it for itself. `nil` for a line's message.
    private static func builtIn(_ presented: PresentedMessage) -> PageView.Body? {
        guard LineID.owner(ofMessageKey: presented.shown.envelope.key) == nil else { return nil }
        switch presented.shown.model?.content {
        case let text as TextContent: return .text(text.text)
        case let photo as PhotoContent: return .text(photo.caption ?? "")
        case let voice as VoiceContent: return .voice(voice)
        case let place as LocationContent: return .location(place)
        case let file as FileContent: return .file(file)
        case let image as ImageContent: return .image(image)
        default: return nil
        }
    }

    /// Message number `number` (as shown, from 1) as the page shows it now, or `nil` when no
    /// message on screen has that number. Only that message is read and built.
    public func message(_ number: Int, width: Int = ChatPage.defaultWidth) throws -> PresentedMessage? {
        try stored(number).flatMap { present([$0], width: width).first?.message }
    }

    /// Every reason message number `number` shows as a placeholder, the deepest first; empty
    /// when it shows normally, `nil` when no message on screen has that number.
    public func causes(_ number: Int) throws -> [Degrade]? {
        try stored(number).map(causes(of:))
    }

    /// Every reason `entry` shows as a placeholder, as ``causes(_:)`` says it.
    private func causes(of entry: StoredMessage) -> [Degrade] {
        presenter.causes(of: entry.envelope, outgoing: entry.isOutgoing, width: Self.bodyWidth(forPage: Self.defaultWidth),
                         origin: Self.origin(of: entry))
    }

    /// Message number `number` as stored, when it is on screen.
    func stored(_ number: Int) throws -> StoredMessage? {
        let total = try messageCount()
        guard number >= 1, number <= total, number > total - window else { return nil }
        return try environment.store.stored(of: conversation, endingBefore: number, limit: 1).first
    }

    // MARK: What answered ignored (the actions mark it, the view draws it disabled)

    /// A line's item that answered ignored when chosen on this page (drawn disabled from then on).
    enum LineItem: Hashable {
        case menu(String), bar(String)
    }

    /// The line's items that answered ignored on this page.
    var ignoredItems: Set<LineItem> = []

    /// A card's button that answered ignored when pressed on this page, by its message's id
    /// (sender and id: unique in a conversation) and its own.
    struct CardButtonKey: Hashable {
        var sender: String, message: String, button: String
    }

    /// The cards' buttons that answered ignored on this page (drawn disabled from then on).
    var ignoredButtons: Set<CardButtonKey> = []
    /// How many revisions this page made (a hook revised a card): a front end redraws after one.
    public internal(set) var revisions = 0
}

@_spi(Host) import IMKit

/// What a chat page needs from the host, handed to it when it opens: the user, the store, how
/// to find a message's builder and why a key cannot show, the connection, and the breadcrumb
/// guard every call into line code goes through.
struct PageEnvironment {
    let user: UserContext
    var userID: String { user.userID }
    let store: any ConversationStore
    let clock: () -> Int64
    let lineGuard: LineGuard
    /// The page's line, for breadcrumbs; `nil` on the legacy page (host code).
    let mark: LineMark?
    let isLegacy: Bool
    /// The builder for a key, opening its line first if need be.
    let lookup: (String) -> RegisteredBuilder?
    /// Why messages of a key cannot show now (turned off, quarantined, line unavailable).
    let degrade: (String) -> Degrade?
    let transport: MessageTransport?
    let killedComponents: ComponentSet
    let limits: HostConfig.Limits
    let open: (String) -> RouteResult

    /// Sends a message from the signed-in user to `peer`, in their conversation: the key's
    /// builder must exist, be allowed (on the legacy page: built-in keys only) and decode the
    /// payload; then it is stored and handed to the connection. Pages and a line's ``Transport`` both
    /// send through here.
    func send(key: String, payload: MessagePayload, to peer: String) throws(SendError) -> MessageEnvelope {
        if isLegacy, let line = LineID.owner(ofMessageKey: key) {
            throw SendError(.unavailable, "the legacy page sends built-in messages only; '\(key)' belongs to line '\(line)'")
        }
        if let why = degrade(key) {
            throw SendError(.unavailable, "message key '\(key)' cannot be sent now: \(why)")
        }
        guard let entry = lookup(key) else {
            if let why = degrade(key) { throw SendError(.unavailable, "message key '\(key)' cannot be sent now: \(why)") }
            throw SendError(.unknownKey, "no builder is registered for message key '\(key)'; check the key, or load the line that owns it")
        }
        if isLegacy, let line = entry.line {
            throw SendError(.unavailable, "the legacy page sends built-in messages only; '\(key)' belongs to line '\(line)'")
        }
        if let why = lineGuard.run(.builder, entry.mark, key: key, { Self.validate(entry.builder, payload) }) {
            throw SendError(.undecodable, "'\(key)' payload does not decode: \(why)")
        }
        try Self.check(payload, limits)
        if store.isReadOnly {
            let folder = (store as? FileConversationStore).map { " (\($0.folder))" } ?? ""
            throw SendError(.notStored, "cannot send: the data folder\(folder) is read-only, so messages can be read but not stored; make it writable")
        }
        // Queued for delivery before it is stored, under the store's lock: a message is never
        // stored without being queued (a queued message that was never stored is dropped at
        // the next sign-in).
        let message = try store(key: key, payload: payload, from: userID, to: peer, conversation: peer) { message in
            try transport?.queue(message)
        }
        transport?.deliverIfOnline(message)
        return message
    }

    /// Refuses a payload larger than `limits.payloadBytes`, or nested deeper than
    /// ``HostConfig/Limits/nestingDepth``: in one pass over its bytes, before anything decodes it.
    static func check(_ payload: MessagePayload, _ limits: HostConfig.Limits) throws(SendError) {
        let size = payload.json.utf8.count
        guard size <= limits.payloadBytes else {
            throw SendError(.tooLarge, "the payload is \(size) bytes; the limit is \(limits.payloadBytes) (limits.payloadBytes in host.json)")
        }
        var depth = 0, inString = false, escaped = false
        for byte in payload.json.utf8 {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                guard depth <= HostConfig.Limits.nestingDepth else {
                    throw SendError(.tooLarge, "the payload nests deeper than \(HostConfig.Limits.nestingDepth) levels")
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
    }

    /// Why the builder cannot decode `payload`, or `nil` when it can.
    private static func validate<Builder: MessageBuilder>(_ builder: Builder, _ payload: MessagePayload) -> String? {
        do {
            _ = try builder.content(from: payload)
            return nil
        } catch {
            return PayloadDiagnosis.describe(error, payload: payload, as: Builder.Content.self)
        }
    }

    /// Stores a message at the end of its conversation, numbered by the store under its lock;
    /// `beforeStoring` runs with the numbered message before it is written. The caller has
    /// checked the payload against the limits (``check(_:_:)``).
    func store(key: String, payload: MessagePayload, from: String, to: String, conversation: String,
               beforeStoring: (MessageEnvelope) throws -> Void = { _ in }) throws(SendError) -> MessageEnvelope {
        do {
            return try store.append(to: conversation) { position in
                let message = MessageEnvelope(id: "m\(position + 1)", conversation: conversation,
                                              from: from, to: to, timestamp: clock(), key: key, payload: payload)
                try beforeStoring(message)
                return message
            }
        } catch {
            throw SendError(.notStored, "the message could not be stored: \(error)")
        }
    }
}

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

    private let environment: PageEnvironment

    /// The page's context: session, components and bus.
    public var context: ChatContext { carrier.context }

    /// The line whose page this is, or `nil` on the legacy page.
    public var lineID: String? { context.lineID }

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
        let context = ChatContext(userID: environment.userID, peerID: peer, rootCateID: jump.rootCateID, cateID: jump.cateID,
                                  parameters: parameters, lineID: lineID, user: environment.user,
                                  sender: { (key, payload) throws(SendError) in
                                      guard let page = relay.page else { throw SendError(.notStored, "the chat page is closed") }
                                      try page.send(key: key, payload: payload)
                                  },
                                  opener: environment.open)
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
    public func send(key: String, payload: MessagePayload) throws(SendError) -> MessageEnvelope {
        try environment.send(key: key, payload: payload, to: context.peerID)
    }

    /// Stores a message from the peer, as if it had arrived. It is kept whatever its key: a
    /// message this host cannot show is shown as a placeholder, never dropped.
    @discardableResult
    public func receive(key: String, payload: MessagePayload) throws(SendError) -> MessageEnvelope {
        try PageEnvironment.check(payload, environment.limits)
        return try environment.store(key: key, payload: payload, from: context.peerID, to: environment.userID, conversation: conversation)
    }

    /// The messages the page shows now, oldest first, each with its number (its position in the
    /// conversation, from 1), laid out for a page `width` columns wide.
    public func presented(width: Int) throws -> [(number: Int, message: PresentedMessage)] {
        try present(environment.store.messages(of: conversation, endingBefore: nil, limit: window), width: width)
    }

    private var presenter: MessagePresenter {
        MessagePresenter(lookup: environment.lookup, degrade: environment.degrade, legacy: isLegacy, lineGuard: environment.lineGuard)
    }

    private func present(_ entries: [(position: Int, message: MessageEnvelope)], width: Int)
        -> [(number: Int, message: PresentedMessage)] {
        let presenter = presenter
        let bodyWidth = Self.bodyWidth(forPage: width)
        let transport = environment.transport
        return entries.map { entry in
            var presented = presenter.present(entry.message, outgoing: entry.message.from == environment.userID, width: bodyWidth)
            presented.pending = transport?.isPending(entry.message) ?? false
            return (entry.position + 1, presented)
        }
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

    /// The columns a message body gets on a page `width` columns wide.
    public static func bodyWidth(forPage width: Int) -> Int {
        max(8, min(width - 8, width * 2 / 3))
    }

    /// What the page shows at `width` columns, asked of the line's hooks and builders now: the
    /// title, each component's lines, and the messages. The terminal draws it.
    public func view(width: Int) throws -> PageView {
        let (title, componentLines) = environment.lineGuard.run(.pageHook, environment.mark, key: "title and components") {
            (carrier.title, components.map { $0.render(width: width - 1) })
        }
        return PageView(title: title, isLegacy: isLegacy, lineID: lineID, components: componentLines,
                        messages: try presented(width: width), total: try messageCount())
    }

    /// Message number `number` (as shown, from 1) as the page shows it now, or `nil` when no
    /// message on screen has that number. Only that message is read and built.
    public func message(_ number: Int, width: Int = ChatPage.defaultWidth) throws -> PresentedMessage? {
        let total = try messageCount()
        guard number >= 1, number <= total, number > total - window else { return nil }
        let stored = try environment.store.messages(of: conversation, endingBefore: number, limit: 1)
        return present(stored, width: width).first?.message
    }

    // MARK: User actions

    /// Taps message number `number` (as shown, from 1). Placeholders do nothing; other messages
    /// go to the page's tap hook, then, when the page ignores them, to their builder's (each in
    /// a breadcrumb frame of its own line: a card roaming on another line's page is still its
    /// line's to handle, and its line's to blame).
    /// - Returns: what the tap did, or `nil` when no message has that number.
    public func tap(_ number: Int) throws -> TapResult? {
        guard let presented = try message(number) else { return nil }
        guard presented.shown.model != nil else { return .ignored }
        let message = presented.shown
        let byPage = environment.lineGuard.run(.tap, environment.mark, key: message.envelope.key, message: message.envelope.id) {
            carrier.didTap(message)
        }
        guard byPage == .ignored, let builder = environment.lookup(message.envelope.key) else { return byPage }
        let context = context
        return environment.lineGuard.run(.tap, builder.mark, key: message.envelope.key, message: message.envelope.id) {
            Self.builderTap(builder.builder, message, context)
        }
    }

    private static func builderTap<Builder: MessageBuilder>(_ builder: Builder, _ message: ShownMessage, _ context: ChatContext) -> TapResult {
        guard let content = message.model?.content as? Builder.Content else { return .ignored }
        return builder.didTap(content, message: message, context: context)
    }

    /// Taps quick reply `number` (from 1), which the input bar sends as text.
    /// - Returns: the phrase, or `nil` when the page has no quick replies or no such phrase.
    public func quickReply(_ number: Int) -> String? {
        guard let replies = component(QuickRepliesComponent.self) else { return nil }
        return environment.lineGuard.run(.action, environment.mark, key: "quick reply \(number)") { replies.tap(at: number - 1) }
    }

    /// The dropdown menu's items, the platform's then the line's; `nil` when the page has no menu.
    public func menuItems() -> [String]? {
        guard let menu = component(DropdownMenuComponent.self) else { return nil }
        return environment.lineGuard.run(.pageHook, environment.mark, key: "menu items") { menu.items }
    }

    /// Picks dropdown-menu item `number` (from 1): the platform handles its own items, the
    /// line's page the rest. `nil` when there is no menu or no such item.
    public func chooseMenuItem(_ number: Int) -> TapResult? {
        guard let menu = component(DropdownMenuComponent.self) else { return nil }
        return environment.lineGuard.run(.action, environment.mark, key: "menu item \(number)") { menu.choose(at: number - 1) }
    }

    /// Picks bottom-bar item `number` (from 1); `nil` when there is no bar or no such item.
    public func chooseBarItem(_ number: Int) -> String? {
        guard let bar = component(BottomBarComponent.self) else { return nil }
        return environment.lineGuard.run(.action, environment.mark, key: "bar item \(number)") { bar.choose(at: number - 1) }
    }

    /// Why the page does not show `component`: the operator's kill switch, or the line's mask.
    public func whyHidden(_ component: ComponentSet) -> String {
        environment.killedComponents.contains(component) ? "turned off by killSwitch.components in host.json"
            : "the line's page hides it (disabledComponents)"
    }

    /// Types `text` into the input bar and sends it. Returns `nil` when it was sent, else why not.
    public func submitText(_ text: String) -> String? {
        guard let bar = component(InputBarComponent.self) else {
            return "this page has no input bar (\(whyHidden(.inputBar))); use /send text {\"text\":\"...\"}"
        }
        let sent = environment.lineGuard.run(.action, environment.mark, key: "input bar") { bar.submit(text) }
        return sent ? nil : "not sent: " + (bar.lastError ?? "the input bar refused it")
    }
}

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

@_spi(Host) import IMKit

/// One open chat: the page the converter chose (a line's carrier page or the legacy page), its
/// context and components, and the conversation's messages as this page shows them.
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

    private let host: ChatHost
    /// How many of the newest messages the page shows; `showOlder` raises it.
    public private(set) var window: Int

    /// The page's context: session, components and bus.
    public var context: ChatContext { carrier.context }

    /// The line whose page this is, or `nil` on the legacy page.
    public var lineID: String? { context.lineID }

    init(decision: Converter.Decision, pageType: CarrierPage.Type, isLegacy: Bool, host: ChatHost,
         peer: String, killedComponents: ComponentSet, window: Int) {
        self.decision = decision
        self.isLegacy = isLegacy
        self.host = host
        self.window = window
        conversation = peer
        let relay = SendRelay()
        let jump = decision.jump
        let parameters = Dictionary(jump.parameters.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        let lineID: String? = if case .line(let id) = decision.target { id } else { nil }
        let context = ChatContext(selfUser: host.selfUser, peer: peer, rootCateID: jump.rootCateID, cateID: jump.cateID,
                                  parameters: parameters, lineID: lineID, user: host.user,
                                  sender: { key, payload in
                                      guard let page = relay.page else { throw SendError("the chat page is closed") }
                                      try page.send(key: key, payload: payload)
                                  },
                                  opener: { [weak host] url in
                                      guard let host else { return .refused("the host is gone") }
                                      do {
                                          switch try host.open(route: url) {
                                          case .opened(let what): return .opened(what)
                                          case .page(let page): return .opened("chat page \(page.decision.url)")
                                          }
                                      } catch let error as ChatHost.OpenError {
                                          return error.kind == .notFound ? .notFound(error.description) : .refused(error.description)
                                      } catch {
                                          return .refused("\(error)")
                                      }
                                  })
        carrier = pageType.init(context: context)
        components = carrier.makeComponents(killed: killedComponents)
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
    public func send(key: String, payload: MessagePayload) throws -> MessageEnvelope {
        guard let entry = host.messageEntry(for: key) else {
            throw SendError("no builder is registered for message key '\(key)'; check the key, or load the line that owns it")
        }
        if host.config.killSwitch.messages.contains(key) {
            throw SendError("message key '\(key)' is turned off by killSwitch.messages in host.json")
        }
        if isLegacy && entry.line != nil {
            throw SendError("the legacy page sends built-in messages only; '\(key)' belongs to line '\(entry.line!)'")
        }
        do {
            try validate(entry.builder, payload)
        } catch {
            throw SendError("'\(key)' payload does not decode: \(MessagePresenter.describe(error))")
        }
        let message = try store(key: key, payload: payload, from: host.selfUser, to: context.peer)
        try host.transport?.submit(message)
        return message
    }

    /// Stores a message from the peer, as if it had arrived. It is kept whatever its key: a
    /// message this host cannot show is shown as a placeholder, never dropped.
    @discardableResult
    public func receive(key: String, payload: MessagePayload) throws -> MessageEnvelope {
        try store(key: key, payload: payload, from: context.peer, to: host.selfUser)
    }

    private func validate<Builder: MessageBuilder>(_ builder: Builder, _ payload: MessagePayload) throws {
        _ = try builder.content(from: payload)
    }

    private func store(key: String, payload: MessagePayload, from: String, to: String) throws -> MessageEnvelope {
        let position = try host.store.count(of: conversation)
        let message = MessageEnvelope(id: "m\(position + 1)", conversation: conversation,
                                      from: from, to: to, timestamp: host.clock(), key: key, payload: payload)
        try host.store.append(message)
        return message
    }

    /// The messages the page shows now, oldest first, each with its number (its position in the
    /// conversation, from 1), as presented at `width`.
    func presented(width: Int) throws -> [(number: Int, message: MessagePresenter.Presented)] {
        try present(host.store.messages(of: conversation, endingBefore: nil, limit: window), width: width)
    }

    private func present(_ entries: [(position: Int, message: MessageEnvelope)], width: Int)
        -> [(number: Int, message: MessagePresenter.Presented)] {
        let presenter = MessagePresenter(lookup: { [host] in host.messageEntry(for: $0) },
                                         killedKeys: Set(host.config.killSwitch.messages), legacy: isLegacy)
        let bodyWidth = PageRenderer.bodyWidth(forPage: width)
        let transport = host.transport
        return entries.map { entry in
            var presented = presenter.present(entry.message, outgoing: entry.message.from == host.selfUser, width: bodyWidth)
            presented.pending = transport?.isPending(entry.message) ?? false
            return (entry.position + 1, presented)
        }
    }

    /// The messages shown, as the page's hooks see them (a placeholder has no model).
    public func shownMessages() throws -> [ShownMessage] {
        try presented(width: PageRenderer.defaultWidth).map(\.message.shown)
    }

    /// Shows `count` more older messages; returns how many more are now shown.
    @discardableResult
    public func showOlder(_ count: Int) throws -> Int {
        let total = try host.store.count(of: conversation)
        let before = min(window, total)
        window = min(total, window + count)
        return window - before
    }

    // MARK: User actions

    /// Taps message number `number` (as shown, from 1). Placeholders do nothing; other messages
    /// go to the page's tap hook.
    /// - Returns: what the tap did, or `nil` when no message has that number.
    public func tap(_ number: Int) throws -> TapResult? {
        // Only the tapped message is read and built, not the whole screen.
        let total = try host.store.count(of: conversation)
        guard number >= 1, number <= total, number > total - window else { return nil }
        let stored = try host.store.messages(of: conversation, endingBefore: number, limit: 1)
        guard let entry = present(stored, width: PageRenderer.defaultWidth).first else { return nil }
        guard entry.message.shown.model != nil else { return .ignored }
        return carrier.didTap(entry.message.shown)
    }

    /// Taps quick reply `number` (from 1), which the input bar sends as text.
    /// - Returns: the phrase, or `nil` when the page has no quick replies or no such phrase.
    public func quickReply(_ number: Int) -> String? {
        component(QuickRepliesComponent.self)?.tap(number - 1)
    }

    // MARK: Rendering

    /// The page as text: title, components, then messages, at `width` terminal columns.
    public func render(width: Int = PageRenderer.defaultWidth, colors: Bool = false) throws -> String {
        PageRenderer(width: width, colors: colors).render(self, messages: try presented(width: width),
                                                           total: try host.store.count(of: conversation))
    }
}

@_spi(Host) import IMKit

/// What a person does on a page: taps a message or one of its card's buttons, a quick reply, a
/// menu or bar item, a reply, the input bar. Each reaches the line's hook inside its line's frame.
extension ChatPage {
    /// Taps message number `number` (as shown, from 1). Placeholders do nothing; other messages
    /// go to the page's tap hook, then, when the page ignores them, to their builder's (each in
    /// a breadcrumb frame of its own line: a card roaming on another line's page is still its
    /// line's to handle, and its line's to blame).
    /// - Returns: what the tap did, or `nil` when no message has that number.
    public func tap(_ number: Int) throws -> TapResult? {
        guard let entry = try stored(number), let presented = present([entry], width: Self.defaultWidth).first?.message else { return nil }
        guard presented.shown.model != nil else { return .ignored }
        let message = presented.shown
        // A crash on another host's message is recorded against that message, as in its builder.
        let crumb = Self.origin(of: entry)?.crumb ?? message.envelope.id
        let byPage = environment.lineGuard.run(.tap, environment.mark, key: message.envelope.key, message: crumb) {
            carrier.didTap(message)
        }
        guard byPage == .ignored, let builder = environment.lookup(message.envelope.key) else { return byPage }
        let context = context
        return environment.lineGuard.run(.tap, builder.mark, key: message.envelope.key, message: crumb) {
            Self.builderTap(builder.builder, message, context)
        }
    }

    private static func builderTap<Builder: MessageBuilder>(_ builder: Builder, _ message: ShownMessage, _ context: ChatContext) -> TapResult {
        guard let content = message.model?.content as? Builder.Content else { return .ignored }
        return builder.didTap(content, message: message, context: context)
    }

    /// Why a button press does not reach a line: the message is a placeholder, shows no card
    /// with buttons, its card has no button of that id, or the values its inputs were given
    /// break their rules (IMKit 1.4: the line sees none of them).
    public enum ButtonRefusal: Error, Equatable {
        case placeholder
        case noButtons
        /// The id pressed, and the ids the card has.
        case unknown(String, buttons: [String])
        /// Each input's error, in the card's order.
        case invalid([CardValueError])
        /// The card changed (another revision) since the values were given for it.
        case stale
    }

    /// Presses button `id` of message number `number`'s card (as shown, from 1): its builder's
    /// `didTapButton` answers, in a breadcrumb frame of the card's line, on whichever page the
    /// card is shown. The page is not asked: a card's buttons are its builder's. Only an id the
    /// card shows now reaches the line. A button that submits the card's inputs (IMKit 1.4)
    /// checks `values` (each input's, by id) against the inputs' rules first, and reaches the
    /// builder's `didSubmit` with them only when every one passes.
    /// - Returns: what pressing it did, or why it was refused; `nil` when no message has that number.
    /// `revision`, when given, is the revision of the card the values were given for: a card
    /// changed since is refused (``ButtonRefusal/stale``), as values meant for another.
    public func tapButton(_ number: Int, _ id: String, values: [String: [String]] = [:], revision: Int? = nil) throws -> Result<TapResult, ButtonRefusal>? {
        guard let entry = try stored(number), let presented = present([entry], width: Self.defaultWidth).first?.message else { return nil }
        if let revision, revision != (entry.revision?.number ?? 0) { return .failure(.stale) }
        guard let view = presented.view else { return .failure(.placeholder) }
        guard let card = view.card, !card.buttons.isEmpty else { return .failure(.noButtons) }
        guard let button = card.buttons.first(where: { $0.id == id }) else { return .failure(.unknown(id, buttons: card.buttons.map(\.id))) }
        var checked: CardValues?
        if button.submits {
            // Several choices typed in a terminal come as one value, `a,b` (an option's id has no
            // comma); an input not named at all holds what the card showed in it (a browser's
            // form names every input, an emptied one with "").
            var values = values
            for input in card.inputs {
                if input.kind == .choices { values[input.id] = values[input.id]?.flatMap { $0.split(separator: ",").map(String.init) } }
                if values[input.id] == nil { values[input.id] = input.kind == .choices ? input.initialChoices : input.value.map { [$0] } }
            }
            do throws(CardValueErrors) {
                checked = try card.check(values)
            } catch {
                return .failure(.invalid(error.errors))
            }
        }
        guard let builder = environment.lookup(presented.shown.envelope.key) else { return .success(.ignored) }
        let message = presented.shown
        let crumb = Self.origin(of: entry)?.crumb ?? message.envelope.id
        let context = context
        let result = environment.lineGuard.run(.tap, builder.mark, key: message.envelope.key, message: crumb) {
            Self.builderButton(builder.builder, id, checked, message, context)
        }
        if result == .ignored, let global = message.envelope.globalID {
            ignoredButtons.insert(CardButtonKey(sender: message.envelope.from, message: global, button: id))
        }
        return .success(result)
    }

    private static func builderButton<Builder: MessageBuilder>(_ builder: Builder, _ id: String, _ values: CardValues?, _ message: ShownMessage,
                                                               _ context: ChatContext) -> TapResult {
        guard let content = message.model?.content as? Builder.Content else { return .ignored }
        if let values { return builder.didSubmit(id, values: values, content: content, message: message, context: context) }
        return builder.didTapButton(id, content: content, message: message, context: context)
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
        let items = menu.items
        let result = environment.lineGuard.run(.action, environment.mark, key: "menu item \(number)") { menu.choose(at: number - 1) }
        if result == .ignored, items.indices.contains(number - 1), !DropdownMenuComponent.platformItems.contains(items[number - 1]) {
            ignoredItems.insert(.menu(items[number - 1]))
        }
        return result
    }

    func markIgnoredButtons(_ message: inout PageView.Message) {
        guard !ignoredButtons.isEmpty, case .card(var card) = message.body, let id = message.envelope.globalID else { return }
        for index in card.buttons.indices {
            if ignoredButtons.contains(CardButtonKey(sender: message.envelope.from, message: id, button: card.buttons[index].id)) { card.buttons[index].ignored = true }
        }
        message.body = .card(card)
    }

    /// Picks bottom-bar item `number` (from 1): the platform handles its own items, the line's
    /// page the rest. `nil` when there is no bar or no such item.
    public func chooseBarItem(_ number: Int) -> TapResult? {
        guard let bar = component(BottomBarComponent.self) else { return nil }
        let items = bar.items
        guard items.indices.contains(number - 1) else { return nil }
        let item = items[number - 1]
        guard !BottomBarComponent.platformItems.contains(item) else {
            return environment.lineGuard.run(.action, environment.mark, key: "bar item \(number)") { bar.select(at: number - 1) }
        }
        // A line's item: chosen (the bus hears it), then its page's answer, as IMKit's
        // select(at:) does, but keeping an answer of ignored (which select words "chose X").
        let result = environment.lineGuard.run(.action, environment.mark, key: "bar item \(number)") { () -> TapResult in
            bar.choose(at: number - 1)
            return carrier.didSelectBottomBarItem(item)
        }
        guard result == .ignored else { return result }
        ignoredItems.insert(.bar(item))
        return .handled("chose \(item)")
    }

    /// Why the page does not show `component`: the operator's kill switch, or the line's mask.
    public func whyHidden(_ component: ComponentSet) -> String {
        environment.componentPlace(component).map { "turned off by \($0)" } ?? "the line's page hides it (disabledComponents)"
    }

    /// What a reply to message `number` (as shown, from 1) would quote.
    public enum ReplyTarget: Equatable {
        case message(ReplyTo)
        /// No message has that number.
        case missing
        /// It was recalled: nothing of it to quote.
        case recalled
    }

    /// The message number `number` names, for a reply to it.
    public func replyTarget(_ number: Int) throws -> ReplyTarget {
        guard let entry = try stored(number), let id = entry.envelope.globalID else { return .missing }
        return entry.recalledAt != nil ? .recalled : .message(ReplyTo(from: entry.envelope.from, id: id))
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

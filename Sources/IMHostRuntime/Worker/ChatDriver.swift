import IMHost
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// Does what a ``ChatAction`` asks of an open chat: the one executor of a person's acts, for a
/// chat in a terminal or a browser (its worker) and a scenario played (`play`). The same act
/// does the same thing everywhere, and comes to the same ``ChatReply``, which each front end
/// words.
package final class ChatDriver {
    /// What doing an action came to.
    package struct Outcome {
        /// What it has to say.
        package var replies: [ChatReply] = []
        /// The page changed: draw it again.
        package var redraw = false
        /// Why it could not be done (a step of a scenario fails with it).
        package var refusal: ChatRefusal?

        package init(replies: [ChatReply] = [], redraw: Bool = false, refusal: ChatRefusal? = nil) {
            self.replies = replies
            self.redraw = redraw
            self.refusal = refusal
        }

        static func reply(_ reply: ChatReply, redraw: Bool = false) -> Outcome { Outcome(replies: [reply], redraw: redraw) }
        static func refused(_ refusal: ChatRefusal) -> Outcome { Outcome(refusal: refusal) }
    }

    package let host: ChatHost
    package let configPath: String
    /// The chat open now.
    package private(set) var page: ChatPage?
    /// Its URL, which a restarted worker reopens (`/open` may change it).
    package private(set) var url: String?
    /// What the last tap did, and of which message, for a scenario's expectations.
    package private(set) var lastTap: (number: Int, tap: ChatReply.Tap)?

    package init(host: ChatHost, configPath: String) {
        self.host = host
        self.configPath = configPath
    }

    /// Opens the chat `url` names (a jump URL, or a line's page URL), showing `window` messages.
    package func openChat(_ url: String, window: Int) throws {
        switch try host.open(route: url, window: window) {
        case .page(let page):
            self.page = page
            self.url = url
        case .opened(let what):
            throw JumpURL.Malformed(description: "\(url) is not a chat (it opened \(what)); give a chat jump URL")
        }
    }

    /// Opens the chat again under the configuration now in force, as a live reload does.
    package func reopen() throws {
        guard let url, let page else { return }
        try openChat(url, window: page.window)
    }

    package func perform(_ action: ChatAction) -> Outcome {
        switch action {
        case .chats:
            do throws(StoreError) {
                return .reply(.conversations(try host.store?.conversations() ?? []))
            } catch {
                return .refused(ChatRefusal(.failed, action.verb, detail: "\(error)"))
            }
        case .search(let text):
            let words = text.split(separator: " ").map(String.init)
            do throws(StoreError) {
                return .reply(.found(words: words, hits: try host.store?.search(words, peer: nil, limit: 20) ?? []))
            } catch {
                return .refused(ChatRefusal(.failed, action.verb, detail: "\(error)"))
            }
        case .reload: return reload()
        case .open(let url): return open(url)
        default: break
        }
        guard let page else { return .refused(ChatRefusal(.noChat, action.verb)) }
        do {
            return try perform(action, on: page)
        } catch {
            return .refused(ChatRefusal(.failed, action.verb, detail: "\(error)"))
        }
    }

    private func perform(_ action: ChatAction, on page: ChatPage) throws -> Outcome {
        switch action {
        case .text(let text):
            if text.isEmpty { return Outcome() }
            if let why = page.submitText(text) { return .refused(ChatRefusal(.textRefused, action.verb, detail: why)) }
            return Outcome(redraw: true)
        case .send(let key, let payload), .receive(let key, let payload):
            do throws(SendError) {
                if case .send = action { try page.send(key: key, payload: MessagePayload(json: payload)) } else {
                    try page.receive(key: key, payload: MessagePayload(json: payload))
                }
                return Outcome(redraw: true)
            } catch {
                // /recv sends nothing: what it could not do is store.
                let code: ChatRefusal.Code = if case .send = action { .notSent } else { .notStored }
                return .refused(ChatRefusal(code, action.verb, detail: "\(error)"))
            }
        case .reply(let number, let text):
            let reply: ReplyTo
            switch try page.replyTarget(number) {
            case .message(let target): reply = target
            case .missing: return .refused(ChatRefusal(.noMessage, action.verb, number: number))
            case .recalled: return .refused(ChatRefusal(.notQuotable, action.verb, number: number))
            }
            if text.isEmpty { return Outcome() }
            if let why = host.sending(reply: reply, { page.submitText(text) }) { return .refused(ChatRefusal(.textRefused, action.verb, detail: why)) }
            return Outcome(redraw: true)
        case .recall(let number):
            return try recall(number, on: page)
        case .typing:
            host.typing(to: page.conversation)
            return Outcome()
        case .react(let number, let emoji):
            guard emoji.isEmpty || Envelope.Reaction.emoji.contains(emoji) else {
                return .refused(ChatRefusal(.notAReaction, action.verb, number: number, detail: emoji))
            }
            guard let store = host.store else { return .refused(ChatRefusal(.noSignIn, action.verb)) }
            switch try store.react(page.conversation, number: number, emoji: emoji, at: host.clock()) {
            case .reacted:
                host.wakeConnection()
                return .reply(.reacted(number: number, emoji: emoji), redraw: true)
            case .noMessage: return .refused(ChatRefusal(.noMessage, action.verb, number: number))
            case .recalled: return .refused(ChatRefusal(.notReactable, action.verb, number: number))
            }
        case .withPhotos(let key, let payload, let files, let receive):
            return withPhotos(key: key, payload: payload, files: files, receive: receive, verb: action.verb, on: page)
        case .photo(let data):
            let limit = host.config.limits.photoBytes
            guard data.count <= limit else { return .refused(ChatRefusal(.photoTooLarge, action.verb, file: "the photo", limit: limit)) }
            do throws(Photo.Refusal) {
                let photo = try AttachedPhoto.reading(Array(data), limit: limit)
                return send(key: "photo", payload: "{}", photos: [photo], receive: false, verb: action.verb, on: page)
            } catch {
                return .refused(ChatRefusal(.notAPhoto, action.verb, detail: "\(error)", file: "the photo"))
            }
        case .voiceFile(let file):
            let bytes: [UInt8]
            do throws(FileSystem.Failure) {
                bytes = try FileSystem.readBytes(Self.expandingHome(file), limit: Voice.byteLimit + 1)
            } catch {
                return .refused(ChatRefusal(.unreadableFile, action.verb, detail: "\(error)", file: file))
            }
            return sendVoice(bytes, file: file, verb: action.verb, on: page)
        case .voice(let data):
            return sendVoice(Array(data), file: "the recording", verb: action.verb, on: page)
        case .fileFrom(let path):
            let bytes: [UInt8]
            do throws(FileSystem.Failure) {
                // A byte more than the limit says "too large" without reading a huge file.
                bytes = try FileSystem.readBytes(Self.expandingHome(path), limit: host.config.limits.fileBytes + 1)
            } catch {
                return .refused(ChatRefusal(.unreadableFile, action.verb, detail: "\(error)", file: path))
            }
            return sendFile(bytes, name: FileSystem.baseName(path), file: path, verb: action.verb, on: page)
        case .file(let name, let data):
            return sendFile(Array(data), name: name, file: "the file", verb: action.verb, on: page)
        case .tap(let number, let button?):
            return try press(button, of: number, on: page)
        case .submit(let number, let button, let values, let revision):
            return try press(button, of: number, on: page, values: values, revision: revision)
        case .tap(let number, nil):
            guard let shown = try page.message(number) else { return .refused(ChatRefusal(.noMessage, action.verb, number: number)) }
            if shown.degrade != nil {
                lastTap = (number, .placeholder)
                return .reply(.tapped(number: number, button: nil, .placeholder))
            }
            let before = try page.messageCount()
            guard let result = try page.tap(number) else { return .refused(ChatRefusal(.noMessage, action.verb, number: number)) }
            let tap = ChatReply.Tap(result)
            lastTap = (number, tap)
            return .reply(.tapped(number: number, button: nil, tap), redraw: try page.messageCount() != before)
        case .why(let number):
            guard let message = try page.message(number), let causes = try page.causes(number) else {
                return .refused(ChatRefusal(.noMessage, action.verb, number: number))
            }
            return .reply(.why(number: number, key: message.shown.envelope.key, causes: causes, state: message.state, failure: message.failure))
        case .quick(let number):
            guard let replies = page.component(QuickRepliesComponent.self) else {
                return .refused(ChatRefusal(.noComponent, action.verb, component: "quick replies", detail: page.whyHidden(.quickReplies)))
            }
            guard replies.isAvailable else {
                return .refused(ChatRefusal(.quickRepliesUnavailable, action.verb, detail: page.whyHidden(.inputBar)))
            }
            guard let phrase = page.quickReply(number) else {
                return .refused(ChatRefusal(.noSuchItem, action.verb, number: number, component: "quick reply"))
            }
            return .reply(.quickSent(number: number, phrase: phrase), redraw: true)
        case .menu(let number):
            guard let items = page.menuItems() else {
                return .refused(ChatRefusal(.noComponent, action.verb, component: "dropdown menu", detail: page.whyHidden(.dropdownMenu)))
            }
            guard let number else { return .reply(.menu(items)) }
            guard let result = page.chooseMenuItem(number) else {
                return .refused(ChatRefusal(.noSuchItem, action.verb, number: number, component: "item"))
            }
            switch items.indices.contains(number - 1) ? items[number - 1] : nil {
            // The platform's Clear and Report do nothing by themselves: the terminal has no way to
            // ask first, so they say what does (the browser asks, then sends the act).
            case PageView.clearItem?:
                return .reply(.clearAsks)
            case PageView.reportItem?:
                return .reply(.reportAsks)
            // The platform's Block item blocks the peer, as /block does; once blocked, it
            // unblocks (the page calls it Unblock then).
            case PageView.blockItem?:
                let blocked = (try? host.store?.isBlocked(page.conversation)) == true
                var outcome = setBlocked(page.conversation, !blocked, verb: blocked ? "/unblock" : "/block")
                outcome.redraw = true
                return outcome
            default:
                // What the item did may have changed the page (a message sent, a chat cleared).
                return .reply(.menuChose(ChatReply.Tap(result)), redraw: true)
            }
        case .bar(let number):
            guard page.component(BottomBarComponent.self) != nil else {
                return .refused(ChatRefusal(.noComponent, action.verb, component: "bottom bar", detail: page.whyHidden(.bottomBar)))
            }
            // The platform's items that do nothing yet are shown nowhere, and chosen by none.
            let platform = BottomBarComponent.platformItems
            if platform.indices.contains(number - 1), PageView.inactivePlatformItems.contains(platform[number - 1]) {
                return .refused(ChatRefusal(.noSuchItem, action.verb, number: number, component: "item"))
            }
            guard let result = page.chooseBarItem(number) else {
                return .refused(ChatRefusal(.noSuchItem, action.verb, number: number, component: "item"))
            }
            return .reply(.barChose(ChatReply.Tap(result)), redraw: true)
        case .more(let count):
            let more = try page.showOlder(count)
            return .reply(.older(more), redraw: more > 0)
        case .route:
            return .reply(.route(url: page.decision.url, ChatReply.Route(page.decision)))
        case .read:
            // How the page draws them now is what their receipts say.
            let read = try markShownRead(page, view: try? page.view(width: ChatPage.defaultWidth))
            return .reply(.read(read))
        case .seen(let through):
            try markShownRead(page, view: try? page.view(width: ChatPage.defaultWidth), through: through)
            return Outcome()
        case .retry(let number):
            guard let store = host.store, try store.retry(page.conversation, number: number, at: host.clock()) else {
                return .refused(ChatRefusal(.notRetryable, action.verb, number: number))
            }
            host.wakeConnection()
            return .reply(.retried(number), redraw: true)
        case .block(let peer), .unblock(let peer):
            let blocking = if case .block = action { true } else { false }
            var outcome = setBlocked(peer ?? page.conversation, blocking, verb: action.verb)
            // The page's menu says Block or Unblock by it.
            outcome.redraw = outcome.refusal == nil && (peer ?? page.conversation) == page.conversation
            return outcome
        case .clear:
            guard let store = host.store else { return .refused(ChatRefusal(.noSignIn, action.verb)) }
            do throws(StoreError) {
                let count = try store.clear(page.conversation)
                return .reply(.cleared(peer: page.conversation, count: count), redraw: true)
            } catch {
                return .refused(ChatRefusal(.failed, action.verb, detail: "\(error)"))
            }
        case .report:
            guard let store = host.store else { return .refused(ChatRefusal(.noSignIn, action.verb)) }
            do throws(StoreError) {
                // Kept before anything else runs: no line code comes between the act and the store.
                try store.report(page.conversation, url: page.decision.url, line: page.lineID, lineVersion: page.lineVersion, at: host.clock())
                // Whoever holds the connection sends it now; an offline device, when it is back.
                host.wakeConnection()
                return .reply(.reported(peer: page.conversation, broker: host.hasTransport))
            } catch {
                return .refused(ChatRefusal(.failed, action.verb, detail: "\(error)"))
            }
        case .offline:
            return .reply(.connection(online: false, connection(host.setOnline(false))))
        case .online:
            return .reply(.connection(online: true, connection(host.setOnline(true))))
        case .reload, .open, .chats, .search:
            return Outcome()
        }
    }

    /// Recalls the user's message `number`, within `limits.recallSeconds` of sending it.
    private func recall(_ number: Int, on page: ChatPage) throws -> Outcome {
        guard let store = host.store else { return .refused(ChatRefusal(.noSignIn, "/recall")) }
        let limit = host.config.limits.recallSeconds, now = host.clock()
        switch try store.recall(page.conversation, number: number, at: now, limit: Int64(limit) * 1000) {
        case .recalled(let text, let takes):
            // Whoever holds the connection tells the peer and the user's other devices now; then
            // the words leave the files (or, while another process reads, when it is idle).
            host.wakeConnection()
            store.scrubFiles()
            return .reply(.recalled(number: number, peer: page.conversation, text: text, peerTakes: takes), redraw: true)
        case .notOwn:
            return .refused(ChatRefusal(.notOwnMessage, "/recall", number: number, detail: page.conversation))
        case .tooLate(let sentAt):
            return .refused(ChatRefusal(.recallTooLate, "/recall", number: number, detail: FailureWords.duration(seconds: Int(max(0, now - sentAt) / 1000)),
                                        limit: limit))
        case .already:
            return .refused(ChatRefusal(.recalledAlready, "/recall", number: number))
        case .noMessage:
            return .refused(ChatRefusal(.noMessage, "/recall", number: number))
        }
    }

    /// What the host said of being online, as a value.
    private func connection(_ said: ChatHost.OnlineAnswer) -> ChatReply.Connection {
        switch said {
        case .online: .online
        case .offline: .offline
        case .noTransport(let file): .noTransport(configFile: file)
        case .heldElsewhere(let holder): .heldElsewhere(holder: holder)
        }
    }

    /// Presses button `id` of message `number`'s card: its line answers, as a tap's does; an id
    /// the card does not have is refused, naming the ones it has.
    private func press(_ id: String, of number: Int, on page: ChatPage, values: [String: [String]] = [:], revision: Int? = nil) throws -> Outcome {
        let before = try page.messageCount(), revisions = page.revisions
        guard let pressed = try page.tapButton(number, id, values: values, revision: revision) else { return .refused(ChatRefusal(.noMessage, "/tap", number: number)) }
        switch pressed {
        case .failure(.placeholder):
            lastTap = (number, .placeholder)
            return .reply(.tapped(number: number, button: id, .placeholder))
        case .failure(.noButtons):
            return .refused(ChatRefusal(.noButtons, "/tap", number: number))
        case .failure(.unknown(_, let buttons)):
            return .refused(ChatRefusal(.noSuchButton, "/tap", number: number, component: id, items: buttons))
        case .failure(.stale):
            return .refused(ChatRefusal(.staleCard, "/tap", number: number, component: id))
        case .failure(.invalid(let errors)):
            var refusal = ChatRefusal(.invalidValues, "/tap", number: number, component: id)
            refusal.inputs = errors.map(ChatRefusal.InputError.init)
            return .refused(refusal)
        case .success(let result):
            let tap = ChatReply.Tap(result, button: true)
            lastTap = (number, tap)
            // A button that answered ignored is drawn disabled from now on.
            return .reply(.tapped(number: number, button: id, tap), redraw: try result == .ignored || page.messageCount() != before || page.revisions != revisions)
        }
    }

    /// Blocks or unblocks `peer`: a blocked peer's messages are answered `refused` and not stored.
    private func setBlocked(_ peer: String, _ blocked: Bool, verb: String) -> Outcome {
        guard let store = host.store else { return .refused(ChatRefusal(.noSignIn, verb)) }
        if let problem = StorePath.problem(withID: peer) { return .refused(ChatRefusal(.badPeer, verb, detail: problem)) }
        do throws(StoreError) {
            try store.setBlocked(peer, blocked)
        } catch {
            return .refused(ChatRefusal(.failed, verb, detail: "\(error)"))
        }
        return .reply(blocked ? .blocked(peer) : .unblocked(peer))
    }

    /// Marks the peer's messages the page shows as read (those up to number `through`, when
    /// given); returns how many were read now. Their read receipts go at once: the process
    /// holding the connection is woken. `view`, the page as it was drawn, says how its line
    /// messages were drawn: their receipts tell the sender.
    @discardableResult
    package func markShownRead(_ page: ChatPage, view: PageView? = nil, through: Int? = nil) throws -> Int {
        guard let store = host.store else { return 0 }
        let count = try page.messageCount()
        let receipts = host.config.transport?.readReceipts ?? false
        let read = try store.markRead(page.conversation, before: min(count, max(0, through ?? count)), receipts: receipts,
                                      shownFrom: max(0, count - page.window),
                                      drawn: view.map(page.drawn(in:)) ?? [:]).count
        if receipts, read > 0 { host.wakeConnection() }
        return read
    }

    /// Opens a URL through the route table: a chat becomes the open chat; a line's route says
    /// what it opened.
    private func open(_ target: String) -> Outcome {
        do {
            switch try host.open(route: target, window: page?.window ?? 20) {
            case .opened(let what):
                return .reply(.opened(what))
            case .page(let opened):
                page = opened
                url = target
                return .reply(.openedPage(legacy: opened.isLegacy, line: opened.lineID, route: ChatReply.Route(opened.decision)), redraw: true)
            }
        } catch {
            return .refused(ChatRefusal(.failed, "/open", detail: "\(error)"))
        }
    }

    /// Reads host.json again; a valid one applies at once and the chat reopens under it (the
    /// conversation is the same), an invalid one is refused and the last good one stays.
    private func reload() -> Outcome {
        let config: HostConfig
        do {
            config = try HostConfig.load(from: configPath)
        } catch {
            return .refused(ChatRefusal(.reloadRefused, "/reload", detail: error.description))
        }
        host.apply(config)
        let file = FileSystem.baseName(configPath)
        guard page != nil else { return .reply(.reloaded(file: file, route: nil)) }
        do {
            try reopen()
        } catch {
            return .refused(ChatRefusal(.reopenFailed, "/reload", detail: "\(error)"))
        }
        return .reply(.reloaded(file: file, route: ChatReply.Route(page!.decision)), redraw: true)
    }
}

extension ChatAction {
    /// How the verb is typed, to name it in what it says.
    package var verb: String {
        switch self {
        case .text: "text"
        case .send: "/send"
        case .receive: "/recv"
        case .withPhotos(let key, _, _, let receive): receive ? "/recv" : key == "photo" ? "/photo" : "/send"
        case .photo: "/photo"
        case .voice, .voiceFile: "/voice"
        case .file, .fileFrom: "/file"
        case .tap, .submit: "/tap"
        case .why: "/why"
        case .quick: "/quick"
        case .menu: "/menu"
        case .bar: "/bar"
        case .more: "/more"
        case .route: "/route"
        case .open: "/open"
        case .offline: "/offline"
        case .online: "/online"
        case .reload: "/reload"
        case .chats: "/chats"
        case .search: "/search"
        case .read: "/read"
        case .seen: "seen"
        case .retry: "/retry"
        case .reply: "/reply"
        case .recall: "/recall"
        case .react: "/react"
        case .typing: "typing"
        case .block: "/block"
        case .unblock: "/unblock"
        case .clear: "/clear"
        case .report: "/report"
        }
    }
}

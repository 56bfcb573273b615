import IMHost
import IMKit

/// Does what a ``ChatAction`` asks of an open chat: the one executor of chat verbs, for a chat
/// typed into (`chat`) and a scenario played (`play`). The same verb does the same thing and
/// says it in the same words in both.
final class ChatDriver {
    /// What doing an action came to.
    struct Outcome {
        /// Lines that say what happened, for a person.
        var said: [String] = []
        /// The page changed: draw it again.
        var redraw = false
        /// Why it could not be done, in one line (a step of a scenario fails with it).
        var failure: String?
        /// The failure is the host's diagnostic (`imhost: …`, on standard error), not a reply.
        var isDiagnostic = false
        /// The chat should end (`/quit`).
        var quit = false

        static func failed(_ why: String, diagnostic: Bool = false) -> Outcome {
            Outcome(failure: why, isDiagnostic: diagnostic)
        }
    }

    let host: ChatHost
    let configPath: String
    /// The chat open now.
    private(set) var page: ChatPage?
    /// Its URL, which a restarted worker reopens (`/open` may change it).
    private(set) var url: String?
    /// What the last tap did, for a scenario's expectations.
    private(set) var lastTap: String?

    init(host: ChatHost, configPath: String) {
        self.host = host
        self.configPath = configPath
    }

    /// Opens the chat `url` names (a jump URL, or a line's page URL), showing `window` messages.
    func openChat(_ url: String, window: Int) throws {
        switch try host.open(route: url, window: window) {
        case .page(let page):
            self.page = page
            self.url = url
        case .opened(let what):
            throw JumpURL.Malformed(description: "\(url) is not a chat (it opened \(what)); give a chat jump URL")
        }
    }

    /// Opens the chat again under the configuration now in force, as a live reload does.
    func reopen() throws {
        guard let url, let page else { return }
        try openChat(url, window: page.window)
    }

    func perform(_ action: ChatAction) -> Outcome {
        switch action {
        case .help: return Outcome(said: [ChatVerb.help])
        case .quit: return Outcome(quit: true)
        case .chats:
            do throws(StoreError) {
                return Outcome(said: StoreViews.lines(try host.store?.conversations() ?? []))
            } catch {
                return .failed("/chats: \(error)")
            }
        case .search(let text):
            let words = text.split(separator: " ").map(String.init)
            do throws(StoreError) {
                return Outcome(said: StoreViews.lines(try host.store?.search(words, peer: nil, limit: 20) ?? [], words: words))
            } catch {
                return .failed("/search: \(error)")
            }
        case .reload: return reload()
        case .open(let url): return open(url)
        default: break
        }
        guard let page else { return .failed("no chat is open; open one first, e.g. /open im://chat?rootCateID=1&cateID=12&peer=u1") }
        do {
            return try perform(action, on: page)
        } catch {
            return .failed("\(action.verb): \(error)")
        }
    }

    private func perform(_ action: ChatAction, on page: ChatPage) throws -> Outcome {
        switch action {
        case .text(let text):
            if text.isEmpty { return Outcome() }
            if let why = page.submitText(text) { return .failed(why) }
            return Outcome(redraw: true)
        case .send(let key, let payload), .receive(let key, let payload):
            do throws(SendError) {
                if case .send = action { try page.send(key: key, payload: MessagePayload(json: payload)) } else {
                    try page.receive(key: key, payload: MessagePayload(json: payload))
                }
                return Outcome(redraw: true)
            } catch {
                // /recv sends nothing: what it could not do is store.
                if case .send = action { return .failed("\(action.verb): not sent: \(error)") }
                return .failed("\(action.verb): not stored: \(error)")
            }
        case .withPhotos(let key, let payload, let files, let receive):
            var photos: [AttachedPhoto] = []
            let limit = host.config.limits.photoBytes
            for file in files {
                let home = Environment.value("HOME").flatMap { $0.isEmpty ? nil : $0 }
                let path = file.hasPrefix("~/") && home != nil ? home! + file.dropFirst() : file
                let bytes: [UInt8]
                do throws(FileSystem.Failure) {
                    // A byte more than the limit says "too large" without reading a huge file.
                    bytes = try FileSystem.readBytes(path, limit: limit + 1)
                } catch {
                    return .failed("\(action.verb): not sent: cannot read \(TerminalText.safe(file)): \(error)")
                }
                // Read to one byte past the limit: its size is not known past that.
                guard bytes.count <= limit else {
                    return .failed("\(action.verb): not sent: \(TerminalText.safe(file)) is larger than a photo may be: \(limit) bytes (limits.photoBytes in host.json)")
                }
                do throws(Photo.Refusal) {
                    photos.append(try AttachedPhoto.reading(bytes, limit: limit))
                } catch {
                    return .failed("\(action.verb): not sent: \(TerminalText.safe(file)) is not a photo this host sends: \(error)")
                }
            }
            do throws(SendError) {
                if receive {
                    try page.receive(key: key, payload: MessagePayload(json: payload), photos: photos)
                } else {
                    try page.send(key: key, payload: MessagePayload(json: payload), photos: photos)
                }
                return Outcome(redraw: true)
            } catch {
                return .failed("\(action.verb): \(receive ? "not stored" : "not sent"): \(error)")
            }
        case .tap(let number, let button?):
            return try press(button, of: number, on: page)
        case .tap(let number, nil):
            guard let shown = try page.message(number) else { return .failed("/tap: there is no message #\(number) on screen") }
            if shown.degrade != nil {
                lastTap = "nothing happens: it shows as a placeholder (/why \(number) says why)"
                return Outcome(said: ["tap #\(number): \(lastTap!)"])
            }
            let before = try page.messageCount()
            guard let result = try page.tap(number) else { return .failed("/tap: there is no message #\(number) on screen") }
            lastTap = result.outcome
            return Outcome(said: ["tap #\(number): \(result.outcome)"], redraw: try page.messageCount() != before)
        case .why(let number):
            guard let message = try page.message(number), let causes = try page.causes(number) else {
                return .failed("/why: there is no message #\(number) on screen")
            }
            let why = causes.isEmpty ? "it shows normally, through its builder" : causes.map(\.description).joined(separator: "; and ")
            var state = message.state.rawValue
            if let failure = message.failure { state += ": " + failure }
            return Outcome(said: ["why #\(number) (\(message.shown.envelope.key)): \(why)", "  state: \(state)"])
        case .quick(let number):
            guard let replies = page.component(QuickRepliesComponent.self) else {
                return .failed("/quick: this page has no quick replies (\(page.whyHidden(.quickReplies)))")
            }
            guard replies.isAvailable else {
                return .failed("/quick: quick replies are unavailable: the page has no input bar to send them (\(page.whyHidden(.inputBar)))")
            }
            guard let phrase = page.quickReply(number) else { return .failed("/quick: there is no quick reply \(number)") }
            return Outcome(said: ["quick reply \(number): sent \"\(phrase)\""], redraw: true)
        case .menu(let number):
            guard let items = page.menuItems() else { return .failed("/menu: this page has no dropdown menu (\(page.whyHidden(.dropdownMenu)))") }
            guard let number else {
                return Outcome(said: ["menu: " + items.enumerated().map { "[\($0.offset + 1)] \($0.element)" }.joined(separator: "  ")])
            }
            guard let result = page.chooseMenuItem(number) else { return .failed("/menu: there is no item \(number)") }
            // The platform's Block item blocks the peer, as /block does.
            if items.indices.contains(number - 1), items[number - 1] == "Block" {
                var outcome = setBlocked(page.conversation, true)
                outcome.said.insert("menu: \(result.outcome)", at: 0)
                return outcome
            }
            // What the item did may have changed the page (a message sent, a chat cleared).
            return Outcome(said: ["menu: \(result.outcome)"], redraw: true)
        case .bar(let number):
            guard page.component(BottomBarComponent.self) != nil else {
                return .failed("/bar: this page has no bottom bar (\(page.whyHidden(.bottomBar)))")
            }
            guard let result = page.chooseBarItem(number) else { return .failed("/bar: there is no item \(number)") }
            return Outcome(said: ["bar: \(result.outcome)"], redraw: true)
        case .more(let count):
            let more = try page.showOlder(count)
            if more == 0 { return Outcome(said: ["/more: no older messages; the whole conversation is shown"]) }
            return Outcome(said: ["more: \(more) older message\(more == 1 ? "" : "s") shown"], redraw: true)
        case .route:
            let decision = page.decision
            return Outcome(said: ["route: \(decision.url)", "  \(decision.reason.rawValue): \(decision.explanation)"])
        case .read:
            // How the page draws them now is what their receipts say.
            let read = try markShownRead(page, view: try? page.view(width: ChatPage.defaultWidth))
            return Outcome(said: ["read: \(read) message\(read == 1 ? "" : "s") marked read"])
        case .retry(let number):
            guard let store = host.store, try store.retry(page.conversation, number: number, at: host.clock()) else {
                return .failed("/retry: #\(number) is not a failed message of yours in this chat")
            }
            host.wakeConnection()
            return Outcome(said: ["retry: #\(number) is queued again"], redraw: true)
        case .block(let peer), .unblock(let peer):
            let blocking = if case .block = action { true } else { false }
            return setBlocked(peer ?? page.conversation, blocking)
        case .offline:
            return Outcome(said: ["/offline: " + host.setOnline(false)])
        case .online:
            return Outcome(said: ["/online: " + host.setOnline(true)])
        case .help, .quit, .reload, .open, .chats, .search:
            return Outcome()
        }
    }

    /// Presses button `id` of message #`number`'s card: its line answers, as a tap's does; an id
    /// the card does not have is refused in one line that names the ones it has.
    private func press(_ id: String, of number: Int, on page: ChatPage) throws -> Outcome {
        let before = try page.messageCount()
        guard let pressed = try page.tapButton(number, id) else { return .failed("/tap: there is no message #\(number) on screen") }
        let shownID = TerminalText.safe(id)
        switch pressed {
        case .failure(.placeholder):
            lastTap = "nothing happens: it shows as a placeholder (/why \(number) says why)"
            return Outcome(said: ["tap #\(number) \(shownID): \(lastTap!)"])
        case .failure(.noButtons):
            return .failed("/tap: message #\(number) has no buttons; /tap \(number) taps it")
        case .failure(.unknown(_, let buttons)):
            return .failed("/tap: message #\(number) has no button '\(shownID)'; its buttons: \(buttons.joined(separator: ", "))")
        case .success(let result):
            lastTap = result == .ignored ? "nothing happens (the card's builder does not act on this button)" : result.outcome
            return Outcome(said: ["tap #\(number) \(shownID): \(lastTap!)"], redraw: try page.messageCount() != before)
        }
    }

    /// Blocks or unblocks `peer`: a blocked peer's messages are answered `refused` and not stored.
    private func setBlocked(_ peer: String, _ blocked: Bool) -> Outcome {
        let verb = blocked ? "/block" : "/unblock"
        guard let store = host.store else { return .failed("\(verb): nobody is signed in") }
        if let problem = StorePath.problem(withID: peer) { return .failed("\(verb): the peer id \(problem)") }
        do throws(StoreError) {
            try store.setBlocked(peer, blocked)
        } catch {
            return .failed("\(verb): \(error)")
        }
        return Outcome(said: [blocked ? "blocked \(peer): their messages are refused and not stored; /unblock \(peer) takes them again"
                                      : "unblocked \(peer): their messages are taken again (those refused meanwhile are not)"])
    }

    /// Marks the peer's messages the page shows as read (those up to number `through`, when
    /// given); returns how many were read now. Their read receipts go at once: the process
    /// holding the connection is woken. `view`, the page as it was drawn, says how its line
    /// messages were drawn: their receipts tell the sender.
    @discardableResult
    func markShownRead(_ page: ChatPage, view: PageView? = nil, through: Int? = nil) throws -> Int {
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
                return Outcome(said: ["opened \(what)"])
            case .page(let opened):
                page = opened
                url = target
                return Outcome(said: ["opened the \(opened.isLegacy ? "legacy" : "\(opened.lineID ?? "base")") page: \(opened.decision.reason.rawValue): \(opened.decision.explanation)"],
                               redraw: true)
            }
        } catch {
            return .failed("/open: \(error)")
        }
    }

    /// Reads host.json again; a valid one applies at once and the chat reopens under it (the
    /// conversation is the same), an invalid one is refused and the last good one stays.
    private func reload() -> Outcome {
        let config: HostConfig
        do {
            config = try HostConfig.load(from: configPath)
        } catch {
            return .failed("imhost: reload refused: \(error.description); keeping the last good configuration", diagnostic: true)
        }
        host.apply(config)
        guard page != nil else { return Outcome(said: ["reloaded \(FileSystem.baseName(configPath))"]) }
        do {
            try reopen()
        } catch {
            return .failed("imhost: reload: cannot reopen the chat: \(error)", diagnostic: true)
        }
        let decision = page!.decision
        return Outcome(said: ["reloaded \(FileSystem.baseName(configPath)): \(decision.reason.rawValue): \(decision.explanation)"], redraw: true)
    }
}

extension ChatAction {
    /// The action as a person would type it in a chat, for a scenario's transcript.
    var typed: String {
        switch self {
        case .text(let text): "type \"\(text)\""
        case .send(let key, let payload): "/send \(key) \(payload)"
        case .receive(let key, let payload): "/recv \(key) \(payload)"
        case .withPhotos("photo", "{}", let files, false) where files.count == 1: "/photo \(files[0])"
        case .withPhotos(let key, let payload, let files, let receive):
            // A scenario's files by name: the transcript is the same wherever it runs.
            "\(receive ? "/recv" : "/send") \(key) \(payload) with photos \(files.map(FileSystem.baseName).joined(separator: ", "))"
        case .tap(let number, let button): "/tap \(number)" + (button.map { " \($0)" } ?? "")
        case .why(let number): "/why \(number)"
        case .quick(let number): "/quick \(number)"
        case .menu(let number): "/menu" + (number.map { " \($0)" } ?? "")
        case .bar(let number): "/bar \(number)"
        case .more(let count): "/more \(count)"
        case .open(let url): "/open \(url)"
        case .search(let words): "/search \(words)"
        case .retry(let number): "/retry \(number)"
        case .block(let peer): "/block" + (peer.map { " \($0)" } ?? "")
        case .unblock(let peer): "/unblock" + (peer.map { " \($0)" } ?? "")
        default: verb
        }
    }

    /// How the verb is typed, to name it in what it says.
    var verb: String {
        switch self {
        case .text: "text"
        case .send: "/send"
        case .receive: "/recv"
        case .withPhotos(let key, _, _, let receive): receive ? "/recv" : key == "photo" ? "/photo" : "/send"
        case .tap: "/tap"
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
        case .retry: "/retry"
        case .block: "/block"
        case .unblock: "/unblock"
        case .help: "/help"
        case .quit: "/quit"
        }
    }
}

extension TapResult {
    /// What a tap did, for a person.
    var outcome: String {
        switch self {
        case .handled(let what): what
        case .ignored: "nothing happens (neither the page nor the message's builder acts on it)"
        case .failed(let why): "failed: \(why)"
        }
    }
}

import IMHost
import IMKit

/// An interactive chat: one page, opened from a jump URL, driven by lines a person types (or a
/// script pipes in). Plain text sends a text message; `/commands` do the rest. A bad command
/// gets one line saying what was wrong, and the chat goes on.
final class ChatSession {
    static let help = """
        Type a line to send it as text (start it with // to send a line beginning with /).
          /send KEY JSON   send a message of any kind, e.g. /send location {"name":"Home","latitude":1,"longitude":2}
          /recv KEY JSON   receive a message from the peer, e.g. /recv house.listing {"id":"L1",...}
          /tap N           tap message #N
          /why N           why message #N shows as a placeholder, in full
          /quick N         tap quick reply N
          /menu [N]        show the dropdown menu, or pick item N
          /bar N           pick bottom-bar item N
          /more            show 20 older messages
          /route           why this page was chosen
          /open URL        open a URL through the route table, e.g. /open house://listing/L1001
          /offline         drop the connection: what you send waits as pending
          /online          reconnect: pending messages are delivered, in order
          /reload          read host.json again (also on SIGHUP or when the file changes)
          /help            this text
          /quit            leave (end of input does too)
        """

    let host: ChatHost
    /// The URL of the chat open now (`/open` may change it); a restarted worker reopens it.
    private(set) var url: String
    let configPath: String
    let output: Output
    let renderer: PageRenderer
    private(set) var page: ChatPage

    /// Opens the chat `url` names (a jump URL or a line's page URL), showing `window` messages.
    init(host: ChatHost, url: String, window: Int = 20, configPath: String, output: Output, width: Int, colors: Bool) throws {
        self.host = host
        self.url = url
        self.configPath = configPath
        self.output = output
        renderer = PageRenderer(width: width, colors: colors)
        page = try Self.openPage(host, url, window: window)
    }

    private static func openPage(_ host: ChatHost, _ url: String, window: Int) throws -> ChatPage {
        switch try host.open(route: url, window: window) {
        case .page(let page): return page
        case .opened(let what): throw JumpURL.Malformed(description: "\(url) is not a chat (it opened \(what)); give a chat jump URL")
        }
    }

    func show() {
        do {
            output.out(try renderer.render(page))
        } catch {
            output.diagnostic("imhost chat: cannot read the conversation: \(error)")
        }
    }

    /// Handles one line. Returns false when the chat should end.
    func handle(_ line: String) -> Bool {
        let trimmed = line.trimmingSpaces
        if trimmed.isEmpty { return true }
        if trimmed.hasPrefix("//") || !trimmed.hasPrefix("/") {
            let text = trimmed.hasPrefix("//") ? String(trimmed.dropFirst()) : trimmed
            if let why = page.submitText(text) { say(why) } else { show() }
            return true
        }
        let parts = trimmed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
        let command = parts[0]
        switch command {
        case "/quit", "/exit":
            return false
        case "/help":
            output.out(Self.help + "\n")
        case "/send", "/recv":
            guard parts.count == 3 else { return say("usage: \(command) KEY JSON, e.g. \(command) text {\"text\":\"hi\"}") }
            do {
                _ = try JSONParser.parse(parts[2])
            } catch {
                return say("\(command): the JSON is not valid at column \(error.position.column): \(error.message)")
            }
            do {
                let payload = MessagePayload(json: parts[2])
                if command == "/send" { try page.send(key: parts[1], payload: payload) } else { try page.receive(key: parts[1], payload: payload) }
                show()
            } catch {
                say("\(command): not sent: \(error)")
            }
        case "/tap":
            guard let number = number(parts, command) else { return true }
            do {
                let before = try page.messageCount()
                if let shown = try page.message(number), shown.degrade != nil {
                    return say("tap #\(number): nothing happens: it shows as a placeholder (/why \(number) says why)")
                }
                guard let result = try page.tap(number) else { return say("/tap: there is no message #\(number) on screen") }
                if try page.messageCount() != before { show() }
                say("tap #\(number): \(result.outcome)")
            } catch {
                say("/tap: \(error)")
            }
        case "/why":
            guard let number = number(parts, command) else { return true }
            do {
                guard let message = try page.message(number) else { return say("/why: there is no message #\(number) on screen") }
                say("why #\(number) (\(message.shown.envelope.key)): " + (message.degrade.map { "\($0)" } ?? "it shows normally, through its builder"))
            } catch {
                say("/why: \(error)")
            }
        case "/quick":
            guard let number = number(parts, command) else { return true }
            guard let replies = page.component(QuickRepliesComponent.self) else {
                return say("/quick: this page has no quick replies (\(page.whyHidden(.quickReplies)))")
            }
            guard replies.isAvailable else {
                return say("/quick: quick replies are unavailable: the page has no input bar to send them (\(page.whyHidden(.inputBar)))")
            }
            if page.quickReply(number) == nil { return say("/quick: there is no quick reply \(number)") }
            show()
        case "/menu":
            guard let items = page.menuItems() else { return say("/menu: this page has no dropdown menu (\(page.whyHidden(.dropdownMenu)))") }
            if parts.count == 1 {
                say("menu: " + items.enumerated().map { "[\($0.offset + 1)] \($0.element)" }.joined(separator: "  "))
            } else if let number = number(parts, command) {
                guard let result = page.chooseMenuItem(number) else { return say("/menu: there is no item \(number)") }
                // What the item did may have changed the page (a message sent, a chat cleared).
                show()
                say("menu: \(result.outcome)")
            }
        case "/bar":
            guard page.component(BottomBarComponent.self) != nil else { return say("/bar: this page has no bottom bar (\(page.whyHidden(.bottomBar)))") }
            guard let number = number(parts, command) else { return true }
            guard let item = page.chooseBarItem(number) else { return say("/bar: there is no item \(number)") }
            show()
            say("bar: chose \(item)")
        case "/more":
            do {
                let more = try page.showOlder(20)
                if more == 0 { say("/more: no older messages; the whole conversation is shown") } else { show() }
            } catch {
                say("/more: \(error)")
            }
        case "/route":
            let decision = page.decision
            say("route: \(decision.url)")
            say("  \(decision.reason.rawValue): \(decision.explanation)")
        case "/reload":
            reload()
        case "/offline":
            host.setOnline(false)
            show()
            say("offline: messages you send now wait as pending until /online")
        case "/online":
            let delivered = host.setOnline(true)
            show()
            say("online: delivered \(delivered.count) pending message\(delivered.count == 1 ? "" : "s")"
                + (delivered.isEmpty ? "" : " (" + delivered.map { "\($0.conversation) \($0.id)" }.joined(separator: ", ") + ")"))
        case "/open":
            guard parts.count >= 2 else { return say("usage: /open URL") }
            do {
                let target = parts.dropFirst().joined(separator: " ")
                switch try host.open(route: target) {
                case .opened(let what): say("opened \(what)")
                case .page(let opened):
                    page = opened
                    url = target
                    show()
                }
            } catch {
                say("/open: \(error)")
            }
        default:
            let names = ["/send", "/recv", "/tap", "/why", "/quick", "/menu", "/bar", "/more", "/route", "/open", "/reload",
                         "/offline", "/online", "/help", "/quit"]
            let hint = closestMatch(to: command, among: names).map { "; did you mean \($0)?" } ?? ""
            say("unknown command \(command)\(hint); type /help")
        }
        return true
    }

    /// Reads host.json again; a valid one applies at once and the page reopens under it (the
    /// conversation is the same), an invalid one is refused and the last good one stays.
    func reload() {
        let config: HostConfig
        do {
            config = try HostConfig.load(from: configPath)
        } catch {
            output.diagnostic("imhost: reload refused: \(error.description); keeping the last good configuration")
            return
        }
        host.apply(config)
        do {
            page = try Self.openPage(host, url, window: page.window)
            show()
            say("reloaded \(FileSystem.baseName(configPath)): \(page.decision.reason.rawValue): \(page.decision.explanation)")
        } catch {
            output.diagnostic("imhost: reload: cannot reopen the chat: \(error)")
        }
    }

    private func number(_ parts: [String], _ command: String) -> Int? {
        guard parts.count == 2, let number = Int(parts[1]), number > 0 else {
            say("usage: \(command) N, with N a number from 1")
            return nil
        }
        return number
    }

    /// One status line: what it quotes (a peer's text in a tap's outcome, a URL) may hold a
    /// newline, which must not start a line that looks like the host's own.
    @discardableResult
    private func say(_ text: String) -> Bool {
        output.out(TerminalText.safe(text, newlines: false) + "\n")
        return true
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

extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return String(text)
    }
}

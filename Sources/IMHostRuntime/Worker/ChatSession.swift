import IMHost
import IMKit

/// An interactive chat: one page, opened from a jump URL, driven by lines a person types (or a
/// script pipes in). Plain text sends a text message; `/verbs` (``ChatVerb``) do the rest, run by
/// the same ``ChatDriver`` that plays scenarios. A bad command gets one line saying what was
/// wrong, and the chat goes on.
final class ChatSession {
    let host: ChatHost
    let driver: ChatDriver
    let output: Output
    /// Where the page goes, as a value: to the supervisor, which draws it.
    let draw: (PageView) -> Void
    /// The width pages are laid out for.
    let width: Int
    /// Whether what the page draws counts as read (a terminal); otherwise only what the front
    /// end says was seen does (``seen(through:)``).
    let readsWhatItDraws: Bool

    /// The page open now.
    var page: ChatPage { driver.page! }
    /// The URL of the chat open now (`/open` may change it); a restarted worker reopens it.
    var url: String { driver.url! }

    /// Opens the chat `url` names (a jump URL or a line's page URL), showing `window` messages.
    init(host: ChatHost, url: String, window: Int = 20, configPath: String, output: Output, width: Int, readsWhatItDraws: Bool = true,
         draw: @escaping (PageView) -> Void) throws {
        self.host = host
        self.readsWhatItDraws = readsWhatItDraws
        driver = ChatDriver(host: host, configPath: configPath)
        self.output = output
        self.draw = draw
        self.width = width
        try driver.openChat(url, window: window)
    }

    /// Draws the page. In a terminal, what it shows of the peer's messages counts as read: this
    /// is the chat a person reads.
    func show(onlyIfChanged: Bool = false) {
        do {
            let view = try page.view(width: width)
            if onlyIfChanged, view == shown { return }
            draw(view)
            shown = view
            if readsWhatItDraws { try driver.markShownRead(page, view: view) }
            sayUntold()
        } catch {
            output.diagnostic("imhost chat: cannot read the conversation: \(error)")
        }
    }

    /// The page as last drawn.
    private var shown: PageView?

    /// Peers in other conversations whose arrivals were said since the page was last drawn,
    /// with how many came after that line: a flood is one line a peer a draw, not one a batch.
    private var toldArrivals: [(peer: String, since: Int)] = []

    /// Says what arrived from other peers since their line, once the page is drawn again.
    private func sayUntold() {
        let untold = toldArrivals.filter { $0.since > 0 }
        toldArrivals = []
        for (peer, count) in untold { sayArrived(count, from: peer, more: true) }
    }

    private func sayArrived(_ count: Int, from peer: String, more: Bool = false) {
        let unread = (try? host.store?.unreadCount(of: peer)) ?? nil
        say("\(count)\(more ? " more" : "") new message\(count == 1 ? "" : "s") from \(peer)\(unread.map { " (\($0) unread)" } ?? ""): imhost chat --peer \(peer), or /chats")
    }

    /// The front end says the person saw the messages up to number `through` in a visible
    /// window: the peer's among them that the page shows are read, and told as drawn.
    func seen(through: Int) {
        do {
            try driver.markShownRead(page, view: shown, through: through)
        } catch {
            output.diagnostic("imhost chat: cannot read the conversation: \(error)")
        }
    }

    /// Draws the page again if it would look different now (a message arrived, a state changed).
    func showIfChanged() { show(onlyIfChanged: true) }

    /// Shows what the connection did: its notices, one line each; messages that arrived in this
    /// conversation, and state changes of the user's own, by drawing the page again (once);
    /// messages in other conversations, one line each, with how to open them.
    func present(_ events: [Courier.Event]) {
        var redraw = false
        for event in events {
            switch event {
            case .notice(let notice):
                say(ConnectionWords.notice(notice))
            case .arrived(let peer, let messages):
                if peer == page.conversation {
                    redraw = true
                } else if let told = toldArrivals.firstIndex(where: { $0.peer == peer }) {
                    toldArrivals[told].since += messages.count
                } else {
                    sayArrived(messages.count, from: peer)
                    toldArrivals.append((peer, 0))
                }
            case .changed(let peers):
                if peers.contains(page.conversation) { redraw = true }
            case .fleetApplied(let version, let summary):
                // As a host.json edit does: the chat reopens on the page the converter now picks.
                do {
                    try driver.reopen()
                    say("fleet configuration version \(version) applied (\(summary)): \(page.decision.reason.rawValue): \(page.decision.explanation)")
                    redraw = true
                } catch {
                    output.diagnostic("imhost: fleet configuration version \(version) applied; cannot reopen the chat: \(error)")
                }
            case .fleet:
                break
            }
        }
        if redraw { showIfChanged() }
    }

    /// Handles one typed line. Returns false when the chat should end.
    func handle(_ line: String) -> Bool {
        guard !line.trimmingSpaces.isEmpty else { return true }
        switch ChatVerb.parse(typed: line) {
        case .failure(let usage):
            say(usage.description)
            return true
        case .success(let action):
            return perform(action)
        }
    }

    /// Does an action and shows what it came to. Returns false when the chat should end.
    @discardableResult
    func perform(_ action: ChatAction) -> Bool {
        let outcome = driver.perform(action)
        if outcome.quit { return false }
        if outcome.redraw { show() }
        for line in outcome.said { say(line) }
        if let failure = outcome.failure {
            if outcome.isDiagnostic { output.diagnostic(failure) } else { say(failure) }
        }
        return true
    }

    /// One status line: what it quotes (a peer's text in a tap's outcome, a URL) may hold a
    /// newline, which must not start a line that looks like the host's own. The help is the
    /// host's own text, several lines.
    private func say(_ text: String) {
        if text == ChatVerb.help {
            output.out(text + "\n")
        } else {
            output.out(TerminalText.safe(text, newlines: false) + "\n")
        }
    }
}

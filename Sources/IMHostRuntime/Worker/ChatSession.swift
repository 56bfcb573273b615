import IMHost
import IMKit

/// An open chat in its worker: one page, opened from a jump URL, acted on by ``ChatAction``s
/// (run by the same ``ChatDriver`` that plays scenarios), drawn as a value for the supervisor,
/// and saying what happened as ``ChatReply``s, which the front end words.
package final class ChatSession {
    package let host: ChatHost
    package let driver: ChatDriver
    /// Where the page goes, as a value: to the supervisor, which draws it.
    private let draw: (PageView) -> Void
    /// Where what the chat says goes: to the supervisor, which words it.
    private let reply: (ChatReply) -> Void
    /// Where the host's own trouble goes (standard error).
    private let output: Output
    /// The width pages are laid out for.
    package let width: Int
    /// Whether what the page draws counts as read (a terminal); otherwise only what the front
    /// end says was seen does (``ChatAction/seen(through:)``).
    package let readsWhatItDraws: Bool

    /// The page open now.
    package var page: ChatPage { driver.page! }
    /// The URL of the chat open now (`/open` may change it); a restarted worker reopens it.
    package var url: String { driver.url! }

    /// Opens the chat `url` names (a jump URL or a line's page URL), showing `window` messages.
    package init(host: ChatHost, url: String, window: Int = 20, configPath: String, output: Output, width: Int, readsWhatItDraws: Bool = true,
                 draw: @escaping (PageView) -> Void, reply: @escaping (ChatReply) -> Void) throws {
        self.host = host
        self.readsWhatItDraws = readsWhatItDraws
        driver = ChatDriver(host: host, configPath: configPath)
        self.output = output
        self.draw = draw
        self.reply = reply
        self.width = width
        try driver.openChat(url, window: window)
    }

    /// Draws the page. In a terminal, what it shows of the peer's messages counts as read: this
    /// is the chat a person reads.
    package func show(onlyIfChanged: Bool = false) {
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
    /// with how many came after that: a flood is one reply a peer a draw, not one a batch.
    private var toldArrivals: [(peer: String, since: Int)] = []
    /// When the peer's typing was last said (once a burst: again only after a pause).
    private var typingSaidAt: Int64 = 0
    private var typingLastCame: Int64 = 0

    /// Says what arrived from other peers since their reply, once the page is drawn again.
    private func sayUntold() {
        let untold = toldArrivals.filter { $0.since > 0 }
        toldArrivals = []
        for (peer, count) in untold { sayArrived(count, from: peer, more: true) }
    }

    private func sayArrived(_ count: Int, from peer: String, more: Bool = false) {
        let unread = (try? host.store?.unreadCount(of: peer)) ?? nil
        reply(.arrived(peer: peer, count: count, unread: unread, more: more))
    }

    /// Draws the page again if it would look different now (a message arrived, a state changed).
    package func showIfChanged() { show(onlyIfChanged: true) }

    /// Shows what the connection did: its notices; messages that arrived in this conversation,
    /// and state changes of the user's own, by drawing the page again (once); messages in other
    /// conversations, a reply each.
    package func present(_ events: [Courier.Event]) {
        var redraw = false
        for event in events {
            switch event {
            case .notice(let notice):
                reply(.notice(ConnectionWords.notice(notice), .init(notice)))
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
                    reply(.fleetApplied(version: Int(version), summary: summary, route: ChatReply.Route(page.decision)))
                    redraw = true
                } catch {
                    reply(.fleetAppliedNotReopened(version: Int(version), why: "\(error)"))
                }
            case .typing(let peer) where peer == page.conversation:
                let now = Clock.now()
                if now - typingLastCame > Envelope.Feature.typingShown { typingSaidAt = 0 }
                typingLastCame = now
                if typingSaidAt == 0 {
                    typingSaidAt = now
                    reply(.peerTyping(peer))
                }
            case .seen(let peer) where peer == page.conversation:
                if let seen = host.seen(peer) { reply(.peerSeen(peer, online: seen.online, lastSeen: seen.lastSeen)) }
            case .fleet, .typing, .seen:
                break
            }
        }
        if redraw { showIfChanged() }
    }

    /// The front end says the person saw the messages up to number `through` in a visible
    /// window: the peer's among them that the page shows are read, and told as drawn.
    package func seen(through: Int) {
        do {
            try driver.markShownRead(page, view: shown, through: through)
        } catch {
            output.diagnostic("imhost chat: cannot read the conversation: \(error)")
        }
    }

    /// Does an action and says what it came to.
    package func perform(_ action: ChatAction) {
        if case .seen(let through) = action { return seen(through: through) }
        let outcome = driver.perform(action)
        if outcome.redraw { show() }
        for said in outcome.replies { reply(said) }
        if let refusal = outcome.refusal { reply(.refused(refusal)) }
    }
}

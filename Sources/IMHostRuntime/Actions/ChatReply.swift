import IMHost
import IMKit

/// What an action came to, or what the chat has to say by itself, as data: the worker sends it
/// to its front end (``FromWorker/replied(_:)``), and each front end words it (``ChatWords`` is
/// the terminal's and a scenario's). Nothing here is a sentence made for a person, but what
/// lines, peers and the core said, carried as it was.
package enum ChatReply: Codable, Equatable, Sendable {
    // MARK: Answers to actions

    /// The conversations, newest first (`/chats`).
    case conversations([ConversationSummary])
    /// Messages holding every one of `words`, newest first (`/search`).
    case found(words: [String], hits: [SearchHit])
    /// host.json was read again and applied: the chat reopened on `route` (`nil` with no chat open).
    case reloaded(file: String, route: Route?)
    /// A URL opened a chat, on the legacy page, a line's or the base page.
    case openedPage(legacy: Bool, line: String?, route: Route)
    /// A URL opened something else: what its line's route said it opened.
    case opened(String)
    /// Message N was tapped, or its button pressed.
    case tapped(number: Int, button: String?, Tap)
    /// Why message N shows as it does: every cause, the deepest first (none: through its
    /// builder), and where it stands.
    case why(number: Int, key: String, causes: [Degrade], state: MessageState, failure: MessageFailure?)
    /// Quick reply N was sent.
    case quickSent(number: Int, phrase: String)
    /// The menu's items.
    case menu([String])
    /// A menu item was picked, and what it did.
    case menuChose(Tap)
    /// A bottom-bar item was picked, and what it did.
    case barChose(Tap)
    /// This many older messages are shown now (0: the whole conversation was shown already).
    case older(Int)
    /// Why this page: its URL, and the converter's reason.
    case route(url: String, Route)
    /// This many of the peer's messages were marked read.
    case read(Int)
    /// Failed message N is queued again.
    case retried(Int)
    /// Message N was recalled here: `text` is what it said (for the input, to edit it again);
    /// `peerTakes` whether the peer's host takes recalls (`false`: an older host, which keeps
    /// the message; `nil`: not known yet, the recall goes once its host says).
    case recalled(number: Int, peer: String, text: String?, peerTakes: Bool?)
    /// The user reacted to message N with `emoji` (`""`: took the reaction back).
    case reacted(number: Int, emoji: String)
    case blocked(String)
    case unblocked(String)
    /// The chat with the peer was cleared on this device: this many messages left it.
    case cleared(peer: String, count: Int)
    /// The menu's Clear, chosen where nothing asks the person first (the terminal): what
    /// clears the chat (`/clear`).
    case clearAsks
    /// The peer was reported: kept in the store, and sent to the operator at once when online,
    /// when this device is next online otherwise; `broker`: host.json names one (without, the
    /// report stays on this device until it does).
    case reported(peer: String, broker: Bool)
    /// The menu's Report, chosen where nothing asks the person first (the terminal): what
    /// reports (`/report`).
    case reportAsks
    /// The peer is typing (said once a burst: again only after a pause).
    case peerTyping(String)
    /// The peer came online, or left (`lastSeen`: when it was last heard from).
    case peerSeen(String, online: Bool, lastSeen: Int64?)
    /// What asking to be online or offline came to.
    case connection(online: Bool, Connection)

    // MARK: What the chat says by itself

    /// The connection's news, in ``ConnectionWords``' words (the connection's notices are the
    /// transport's values, which do not travel; only a terminal's chat holds its connection in
    /// its worker, and says them).
    case notice(String, Gist)
    /// Messages arrived in another conversation (`more`: after those said already), with its
    /// unread count.
    case arrived(peer: String, count: Int, unread: Int?, more: Bool)
    /// The operator's fleet configuration was applied, and the chat reopened on `route`.
    case fleetApplied(version: Int, summary: String, route: Route)
    /// The fleet configuration was applied, and the chat could not reopen.
    case fleetAppliedNotReopened(version: Int, why: String)
    /// What was typed before a worker crashed is taken up now.
    case draftTakenUp(ChatAction)
    /// What was asked could not be done.
    case refused(ChatRefusal)

    /// Why the converter chose a page: its reason's word and its explanation.
    /// What a connection's notice means to the person, for a front end that words it for them
    /// (the browser): the notice's own words are a developer's (addresses, logins, topics).
    package enum Gist: String, Codable, Equatable, Sendable {
        /// Connected (`again`: after an outage that was said).
        case connected, connectedAgain
        /// Offline: it reconnects by itself; what is sent waits.
        case offline
        /// Another window or device of the person holds the session: this one is offline.
        case elsewhere
        /// This device was removed from the person's devices (or its password changed).
        case deviceRemoved
        /// Messages that could not be delivered were given up.
        case givenUp
        /// A catch-up from another device of the person.
        case caughtUp
        /// Something only a developer or an operator acts on (refused envelopes, ACLs, the fleet).
        case technical

        package init(_ notice: ConnectionNotice) {
            self = switch notice {
            case .connected(_, _, let again): again ? .connectedAgain : .connected
            case .outage(.deviceRemoved): .deviceRemoved
            case .outage(.takenOver), .outage(.connectedElsewhere), .takenOver, .connectedElsewhere, .stillElsewhere: .elsewhere
            case .outage(.asked), .outage(.notConnectedYet): .technical
            case .outage: .offline
            case .givenUp: .givenUp
            case .history: .caughtUp
            default: .technical
            }
        }
    }

    package struct Route: Codable, Equatable, Sendable {
        package var reason: String
        package var explanation: String

        package init(_ decision: Converter.Decision) {
            reason = decision.reason.rawValue
            explanation = decision.explanation
        }
    }

    /// What a tap, a menu item or a bar item did.
    package enum Tap: Codable, Equatable, Sendable {
        /// The message shows as a placeholder: nothing happens.
        case placeholder
        /// Nobody acts on it (`button`: a card's builder does not act on this button).
        case ignored(button: Bool)
        /// It did this, in the line's or the platform's words.
        case handled(String)
        case failed(String)

        package init(_ result: TapResult, button: Bool = false) {
            switch result {
            case .handled(let what): self = .handled(what)
            case .ignored: self = .ignored(button: button)
            case .failed(let why): self = .failed(why)
            @unknown default: self = .failed("an answer this host does not know")
            }
        }
    }

    /// Where being online stands, as the host said it.
    package enum Connection: Codable, Equatable, Sendable {
        case online, offline
        /// Without a transport in host.json nothing goes anywhere.
        case noTransport(configFile: String)
        /// Another process holds the user's connection (its words), and sends what this chat sends.
        case heldElsewhere(holder: String?)
    }
}

/// Why an action could not be done: a code, the action as it is typed, and the data its words
/// need (what the core, a line or the store said is carried as it said it).
package struct ChatRefusal: Error, Codable, Equatable, Sendable {
    package enum Code: String, Codable, Sendable {
        /// No chat is open.
        case noChat
        /// No message of that number is on screen.
        case noMessage
        /// The message's card has no buttons.
        case noButtons
        /// The card has no button of that id (`items`: those it has).
        case noSuchButton
        /// The card changed (a new revision) since the values were given for it.
        case staleCard
        /// The values given to the card's inputs break their rules (`inputs`: each input's
        /// error; `component`: the button pressed): nothing reached the line.
        case invalidValues
        /// The page has no such component (`detail`: why it is hidden).
        case noComponent
        /// Quick replies cannot be sent: the page has no input bar (`detail`: why).
        case quickRepliesUnavailable
        /// There is no such item (quick reply, menu or bar item).
        case noSuchItem
        /// The message is not a failed one of the user's.
        case notRetryable
        /// Nobody is signed in.
        case noSignIn
        /// The peer id cannot be one (`detail`: why).
        case badPeer
        /// The input bar or the page refused the text (`detail`: the page's words).
        case textRefused
        /// Not sent, or not stored (`detail`: the error).
        case notSent
        case notStored
        /// A photo's file cannot be read (`file`, `detail`: the error).
        case unreadableFile
        /// A photo's file is larger than `limit` bytes.
        case photoTooLarge
        /// A photo's file is not a picture this host sends (`detail`: why).
        case notAPhoto
        /// A voice message's file or recording is not one this host sends (`detail`: why).
        case notAVoice
        /// A file cannot be sent (`detail`: why: empty, too large, no name).
        case notAFile
        /// The action failed (`detail`: the error).
        case failed
        /// host.json could not be read again (`detail`: why); the last good one stays.
        case reloadRefused
        /// The chat could not reopen after a reload (`detail`: why).
        case reopenFailed
        /// Only the sender recalls a message: #`number` is the peer's.
        case notOwnMessage
        /// #`number` was sent longer ago than `limit` seconds (`limits.recallSeconds`).
        case recallTooLate
        /// #`number` was recalled already.
        case recalledAlready
        /// A reply to a message that shows no content: a recalled one.
        case notQuotable
        /// A reaction to a recalled message.
        case notReactable
        /// Not one of the reactions a person may give (`detail`: what was given).
        case notAReaction
    }

    package var code: Code
    /// The action as a person would type it (`/tap`), naming what was refused.
    package var verb: String
    package var number: Int?
    /// Which component, or which of a card's buttons was asked for.
    package var component: String?
    package var detail: String?
    package var file: String?
    package var limit: Int?
    package var items: [String]?
    /// For ``Code/invalidValues``: each input's error.
    package var inputs: [InputError]?

    /// Why one input's value was refused (IMKit's `CardValueError`, as data).
    package struct InputError: Codable, Equatable, Sendable {
        /// The input's id.
        package var input: String
        /// IMKit's code, e.g. `required`, `too-early`.
        package var code: String
        /// The limit broken: a length, a date, a time.
        package var limit: String?

        package init(_ error: CardValueError) {
            input = error.input
            code = error.code.name
            limit = error.limit
        }
    }

    package init(_ code: Code, _ verb: String, number: Int? = nil, component: String? = nil, detail: String? = nil, file: String? = nil,
                 limit: Int? = nil, items: [String]? = nil) {
        self.code = code
        self.verb = verb
        self.number = number
        self.component = component
        self.detail = detail
        self.file = file
        self.limit = limit
        self.items = items
    }

    /// Whether it is the host's diagnostic (standard error) rather than an answer in the chat.
    package var isDiagnostic: Bool { code == .reloadRefused || code == .reopenFailed }
}

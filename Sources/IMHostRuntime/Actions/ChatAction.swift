#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMKit

/// Every act of a person in a chat, as a value: what the terminal parses its verbs into once,
/// what the browser posts as JSON, and what a scenario's steps are. The chat's worker does it
/// (``ChatDriver``), whatever front end asked. Messages are named by their number in the
/// conversation, from 1 (a page's ``PageView/Message/number``).
package enum ChatAction: Codable, Equatable, Sendable {
    /// Text typed into the input bar, sent as a text message (whatever it starts with).
    case text(String)
    case send(key: String, payload: String)
    /// Store a message as the peer's, sending nothing (a scenario, a demo).
    case receive(key: String, payload: String)
    /// Send (or, with `receive`, store as the peer's) a message with photos read from files
    /// (`/photo PATH`: key `photo`, no caption; a scenario's `send` or `receive` with `"photos"`).
    case withPhotos(key: String, payload: String, files: [String], receive: Bool = false)
    /// Send a photo picked in a front end, its bytes (base64 in JSON), as the built-in `photo`
    /// message without a caption. Kept as a draft with them until it is queued.
    case photo(Data)
    /// Send a voice message from a file (`/voice PATH`): WebM or Ogg with Opus, at most
    /// ``Voice/byteLimit`` bytes and ``Voice/secondsLimit`` seconds, decoded whole first.
    case voiceFile(String)
    /// Send a voice message recorded in a front end, its bytes (base64 in JSON). Kept as a draft
    /// with them until it is queued.
    case voice(Data)
    /// Send a file (`/file PATH`): a document up to `limits.fileBytes`, its name the path's last
    /// part, its type read from its bytes.
    case fileFrom(String)
    /// Send a file picked in a front end: its name as the browser gave it, and its bytes (base64
    /// in JSON). Kept as a draft with them until it is queued.
    case file(name: String, Data)
    /// Send text as a reply to message N (the user's own or the peer's): it shows with a quote
    /// of that message, on both sides.
    case reply(to: Int, text: String)
    /// Recall the user's message N, sent within `limits.recallSeconds`: it is replaced by a
    /// mark that it was recalled on every device of both people; what it said comes back as
    /// this device's input, to edit and send again.
    case recall(Int)
    /// React to message N with one of the short set of emoji (``Envelope/Reaction/emoji``), or
    /// take the reaction back (`""`): one a person a message.
    case react(Int, emoji: String)
    /// The person is typing in the input (a front end says so at most every 3 s): the peer's
    /// host is told, QoS 0, never stored.
    case typing
    /// Tap message N, or (with a button id) press that button of its card.
    case tap(Int, button: String? = nil)
    /// Press button `button` of message N's card with values for its inputs (by input id; a
    /// choice of several, several values): the host checks them against the inputs' rules
    /// before the line sees them (IMKit 1.4). `revision`, when given, is the card's revision the
    /// values were given for (a front end that showed it): a card changed since is refused.
    case submit(Int, button: String, values: [String: [String]], revision: Int? = nil)
    /// Why message N shows as it does.
    case why(Int)
    /// Send quick reply N.
    case quick(Int)
    /// Show the menu (`nil`), or pick item N.
    case menu(Int?)
    /// Pick bottom-bar item N.
    case bar(Int)
    /// Show this many older messages.
    case more(Int)
    /// Why this page was chosen.
    case route
    /// Open a URL through the route table: a chat, or a line's page.
    case open(String)
    case offline
    case online
    /// Read host.json and the quarantine again.
    case reload
    /// The list of conversations.
    case chats
    /// Messages holding every word.
    case search(String)
    /// Mark what the page shows as read (a terminal's chat does this by itself as it draws).
    case read
    /// The person saw the messages up to number N in a visible window (a browser's page says
    /// so): the peer's among them are read.
    case seen(through: Int)
    /// Queue failed message N again.
    case retry(Int)
    /// Block or unblock a peer (`nil`: the open chat's).
    case block(String?)
    case unblock(String?)
    /// Clear the open chat on this device (its messages leave this store; the user's other
    /// devices keep theirs). A front end asks the person first.
    case clear
    /// Report the open chat's peer to the app's operator (what, whom, when, which line: the
    /// peer's last messages go with it). A front end asks the person first.
    case report

    /// Whether it sends something, so what was asked is kept as a draft before the worker (and
    /// any line code) sees it: a crash before it is queued loses nothing.
    package var sendsSomething: Bool {
        switch self {
        case .text(let text), .reply(_, let text): !text.isEmpty
        case .send, .photo, .voice, .voiceFile, .file, .fileFrom: true
        default: false
        }
    }
}

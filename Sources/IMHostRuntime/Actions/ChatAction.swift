import IMHost
import IMKit

/// What a chat is asked to do, its arguments parsed: a typed line in `chat` and a step of a
/// scenario in `play` both become one of these, and ``ChatDriver`` does it.
enum ChatAction: Equatable, Sendable {
    /// Text typed into the input bar, sent as a text message.
    case text(String)
    case send(key: String, payload: String)
    case receive(key: String, payload: String)
    /// Send (or, with `receive`, store as the peer's) a message with photos read from files
    /// (`/photo PATH`: key `photo`, no caption; a scenario's `send` or `receive` with `"photos"`).
    case withPhotos(key: String, payload: String, files: [String], receive: Bool = false)
    /// Tap message #N, or (with a button id) press that button of its card.
    case tap(Int, button: String? = nil)
    case why(Int)
    case quick(Int)
    /// Show the menu (`nil`), or pick item N.
    case menu(Int?)
    case bar(Int)
    case more(Int)
    case route
    case open(String)
    case offline
    case online
    case reload
    /// The list of conversations.
    case chats
    /// Messages holding every word.
    case search(String)
    /// Mark what the page shows as read (an interactive chat does this by itself).
    case read
    /// Queue failed message #N again.
    case retry(Int)
    /// Block or unblock a peer (`nil`: the open chat's).
    case block(String?)
    case unblock(String?)
    case help
    case quit
}

@_spi(Host) import IMHost
import IMKit

/// The documents `imhost web` serves: the start page (the user's conversations, and a jump URL
/// to open) and a chat's frame, which its page fills and keeps live. Their script and style are
/// files of their own (``WebAssets``): no inline script, as the Content-Security-Policy forbids.
public enum WebDocument {
    /// One conversation on the start page.
    public struct Conversation: Sendable {
        public var peer: String
        /// The URL it opens on (its last page).
        public var url: String
        /// Its line, when the page it opens on is known to be one's.
        public var line: String?
        public var lastText: String?
        public var lastFromPeer: Bool
        public var unread: Int
        /// Milliseconds since 1970.
        public var updatedAt: Int64

        public init(peer: String, url: String, line: String?, lastText: String?, lastFromPeer: Bool, unread: Int, updatedAt: Int64) {
            self.peer = peer
            self.url = url
            self.line = line
            self.lastText = lastText
            self.lastFromPeer = lastFromPeer
            self.unread = unread
            self.updatedAt = updatedAt
        }
    }

    /// A page of the server. `page`: a chat's page id, named in the head too, where the script
    /// (not deferred: it is kept by the browser, and runs as the head is read) starts the page's
    /// stream before the body is laid out.
    private static func document(title: String, body: String, attributes: String = "", page: String? = nil, scheme: Frame.Scheme? = nil,
                                 script: String = "app.js", say: WebLanguage) -> String {
        // Dark colours come from their own sheet: when the system prefers dark, or always on a
        // frame the workbench shows dark (never on one it shows light).
        let dark = switch scheme {
        case nil: "<link rel=\"stylesheet\" href=\"\(WebAssets.href("dark.css"))\" media=\"(prefers-color-scheme: dark)\">"
        case .dark?: "<link rel=\"stylesheet\" href=\"\(WebAssets.href("dark.css"))\">"
        case .light?: ""
        }
        return """
        <!DOCTYPE html>
        <html lang="\(say.htmlTag)"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1, interactive-widget=resizes-content"><meta name="color-scheme" content="\(scheme?.rawValue ?? "light dark")">
        <title>\(PageHTML.escape(title))</title><link rel="icon" href="\(WebAssets.href("icon.svg"))"><link rel="stylesheet" href="\(WebAssets.href("app.css"))">\(dark)\(page.map { "<meta name=\"imhost-page\" content=\"\(PageHTML.escape($0))\">" } ?? "")<script src="\(WebAssets.href(script))"></script></head>
        <body\(attributes)>\(body)</body></html>
        """
    }

    /// How the workbench (`imhost preview`) frames a chat: one message of it alone (`only`, its
    /// number), light or dark whatever the system prefers (`scheme`).
    public struct Frame: Sendable, Equatable {
        public enum Scheme: String, Sendable { case light, dark }
        public var only: Int?
        public var scheme: Scheme?

        /// From a chat's request: `&only=N&scheme=light|dark`, or `&in=workbench` for the whole
        /// chat (no way back: the workbench is around it); `nil` when it asks none.
        init?(_ request: HTTPRequest) {
            only = request.argument("only").flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
            scheme = request.argument("scheme").flatMap(Scheme.init(rawValue:))
            guard only != nil || scheme != nil || request.argument("in") == "workbench" else { return nil }
        }

        /// One message alone, in a scheme: a sample's frame (the whole chat's is not).
        var isSample: Bool { only != nil || scheme != nil }
    }

    /// The workbench's page (`imhost preview`): its script lays out the samples from the state
    /// its stream says (``Workbench``), each in frames of the samples' chat `chat`.
    public static func workbench(chat: String, axe: Bool) -> String {
        document(title: "imhost · workbench", body: """
            <header class="title"><h1>Workbench</h1><p class="build" aria-live="polite"></p></header>
            <main id="workbench" data-chat="\(PageHTML.escape(chat))"\(axe ? " data-axe" : "")><p class="opening">Opening the samples…</p></main>
            """, attributes: " class=\"workbench\"", script: "workbench.js", say: .english)
    }

    /// The start page: `user`'s conversations, newest first, and a form to open a jump URL.
    public static func start(user: String, conversations: [Conversation], dev: Bool = false, say: WebLanguage = .english) -> String {
        document(title: "imhost · \(user)", body: """
            <nav class="back">\(notifySettings(say))</nav>
            <header class="title"><h1>\(say("Chats of {0}", PageHTML.escape(user)))</h1></header>
            <main><form class="open" action="/chat" method="get" aria-label="\(say("Open a chat"))"><label>\(say("Open a jump URL"))
            <input name="url" required placeholder="im://chat?rootCateID=1&amp;cateID=12&amp;peer=u42"></label><button type="submit">\(say("Open"))</button></form>
            \(searchForm("", say))
            <section id="conversations" aria-label="\(say("Chats"))" data-live="list">\(list(conversations, dev: dev, say: say))</section></main>
            """, attributes: " class=\"start\"", say: say)
    }

    /// What the page offers of the browser's notifications: a button that asks for them (only
    /// when clicked, never on load; shown while the browser has not been asked), and whether a
    /// notification shows the message's words or only who sent it (the latter by default).
    static func notifySettings(_ say: WebLanguage) -> String {
        "<button type=\"button\" class=\"notify-ask\" hidden>" + say("Notify me of new messages") + "</button>"
            + "<label class=\"notify-text\" hidden><input type=\"checkbox\" data-notify-text> " + say("Show message text in notifications") + "</label>"
    }

    /// The longest search taken, in characters, and the most results shown.
    public static let searchLength = 200, searchHits = 50

    /// The search box of the start page and the results page.
    static func searchForm(_ query: String, _ say: WebLanguage) -> String {
        "<form class=\"search\" action=\"/search\" method=\"get\" role=\"search\"><label>" + say("Search messages") + " "
            + "<input type=\"search\" name=\"q\" maxlength=\"\(searchLength)\" value=\"" + PageHTML.escape(query) + "\"></label><button type=\"submit\">" + say("Search") + "</button></form>"
    }

    /// The messages a search found, newest first: each with its chat, who wrote it and when,
    /// its words with those searched for marked, and a link that opens its chat at it.
    public static func search(user: String, query: String, words: [String], hits: [(hit: SearchHit, url: String)], say: WebLanguage = .english) -> String {
        let results: String
        if words.isEmpty {
            results = "<p class=\"empty\">" + say("Type words to find the messages that hold all of them.") + "</p>"
        } else if hits.isEmpty {
            results = "<p class=\"empty\" role=\"status\">" + say("No message holds {0}.", words.map { "“" + PageHTML.escape($0) + "”" }.joined(separator: say(" and "))) + "</p>"
        } else {
            let newest = hits.count == searchHits ? say(" (the newest)") : ""
            let items = hits.map { hit, url -> String in
                let link = "/chat?url=" + percentEncoded(url) + "#m\(hit.number)"
                let who = hit.from == hit.peer ? "" : say("me: ")
                let head = "<li><a href=\"" + PageHTML.escape(link) + "\"><strong>" + PageHTML.escape(hit.peer) + "</strong> " + PageHTML.time(hit.sentAt)
                return head + "<span class=\"last\" dir=\"auto\">" + who + marked(hit.text, words) + "</span></a></li>"
            }
            results = "<p class=\"count\" role=\"status\">" + say(hits.count == 1 ? "{0} message" : "{0} messages", "\(hits.count)") + newest + "</p><ul class=\"conversations results\">"
                + items.joined() + "</ul>"
        }
        return document(title: say("Search") + " · imhost · \(user)", body: """
            <nav class="back"><a href="/">\(say("← Chats"))</a></nav>
            <header class="title"><h1>\(say("Search the chats of {0}", PageHTML.escape(user)))</h1></header>
            <main>\(searchForm(query, say))
            <section id="results" aria-label="\(say("Results"))">\(results)</section></main>
            """, attributes: " class=\"start\"", say: say)
    }

    /// `text`, escaped, with each of `words` it holds marked (case as written; the first of
    /// overlapping ones wins).
    static func marked(_ text: String, _ words: [String]) -> String {
        var out = "", rest = Substring(text)
        while !rest.isEmpty {
            let found = words.compactMap { word in rest.range(of: word, options: .caseInsensitive).map { ($0, word) } }.min { $0.0.lowerBound < $1.0.lowerBound }
            guard let (range, _) = found, !range.isEmpty else {
                out += PageHTML.escape(String(rest))
                break
            }
            out += PageHTML.escape(String(rest[..<range.lowerBound])) + "<mark>" + PageHTML.escape(String(rest[range])) + "</mark>"
            rest = rest[range.upperBound...]
        }
        return out
    }

    /// The list of conversations, as the start page shows it (and a live update replaces it).
    public static func list(_ conversations: [Conversation], dev: Bool = false, say: WebLanguage = .english) -> String {
        guard !conversations.isEmpty else { return "<p class=\"empty\">" + say("No conversations yet. Open a jump URL above.") + "</p>" }
        return "<ul class=\"conversations\">" + conversations.map { chat in
            "<li><a href=\"/chat?url=" + PageHTML.escape(percentEncoded(chat.url)) + "\"><strong>" + PageHTML.escape(chat.peer) + "</strong>"
                + (dev ? chat.line.map { " <span class=\"tag dev\">" + PageHTML.escape($0) + "</span>" } ?? "" : "")
                + (chat.unread > 0 ? " <span class=\"unread\">" + say("{0} unread", "\(chat.unread)") + "</span>" : "")
                + " " + PageHTML.time(chat.updatedAt)
                + "<span class=\"last\" dir=\"auto\">" + (chat.lastFromPeer ? "" : say("me: ")) + PageHTML.escape(chat.lastText ?? "") + "</span></a></li>"
        }.joined() + "</ul>"
    }

    /// A chat's frame for page `id`: the page's body arrives by its event stream.
    ///
    /// Notices come to `#notices`, three at most, each its own `role=status` (or `role=alert`)
    /// element that goes after a few seconds (not while hovered or focused); every one is kept in
    /// `#notice-log`, which the Notices button opens. With `dev`, a toggle shows the developer's
    /// view (elements of class `dev`, and the notices' developer words).
    ///
    /// `textLimit` is what the store takes of a text message, in bytes of its JSON: the page
    /// refuses a longer one at once, keeping it in the input (the worker would refuse it too).
    ///
    /// `frame`: the workbench's frame of it (``Frame``): no way back, one message alone.
    public static func chat(page id: String, url: String, dev: Bool = false, textLimit: Int = 64 * 1024, say: WebLanguage = .english, frame: Frame? = nil) -> String {
        let toggle = dev ? "<label class=\"dev-toggle\"><input type=\"checkbox\" data-dev-toggle checked> " + say("Developer view") + "</label>" : ""
        return document(title: "imhost · chat", body: """
            <nav class="back"><a href="/">\(say("← Chats"))</a>\(toggle)<button type="button" class="notices-open" aria-controls="notice-dialog" hidden>\(say("Notices")) <span class="count"></span></button>\(notifySettings(say))</nav>
            <div id="page" data-page="\(PageHTML.escape(id))" data-text-limit="\(textLimit)"><p class="opening">\(say("Opening the chat…"))</p></div>
            <div id="notices" class="notices"></div>
            <div id="announce" class="visually-hidden" aria-live="polite" aria-atomic="true"></div>
            <dialog id="notice-dialog" aria-labelledby="notice-title"><h2 id="notice-title">\(say("Notices"))</h2><ol id="notice-log"></ol>
            <form method="dialog"><button>\(say("Close"))</button></form></dialog>
            """, attributes: " class=\"chat" + (dev ? " dev-on" : "") + (frame.map { $0.isSample ? " framed embedded" : " embedded" } ?? "") + "\"" + (dev ? " data-dev" : "")
                + (frame?.only.map { " data-only=\"\($0)\"" } ?? ""), page: id, scheme: frame?.scheme, say: say)
    }

    /// The page for a request refused or not found, when a person's browser asked for a page:
    /// what happened, in their words; the server's reason folded under it; the way back.
    public static func error(status: Int, reason: String, say: WebLanguage = .english) -> String {
        let (title, text) = switch status {
        case 404: ("Page not found", "There is no page at this address.")
        case 400: ("This address is not right", "The link is incomplete or damaged. Open the chat again from your chats.")
        case 403: ("Not allowed", "This page cannot be opened this way. Open it from your chats.")
        case 413: ("Too large", "What was sent is larger than this page takes.")
        case 429, 503: ("Too many chats open", "Close a chat you are not using, then open this one again.")
        default: ("Something went wrong", "The page could not be shown.")
        }
        return document(title: "imhost · " + say(title), body: """
            <nav class="back"><a href="/">\(say("← Chats"))</a></nav>
            <main class="refusal"><h1>\(say(title))</h1><p>\(say(text))</p><details><summary>\(say("Details"))</summary><p>\(PageHTML.escape(reason))</p></details>
            <p><a href="/">\(say("Back to your chats"))</a></p></main>
            """, attributes: " class=\"refused\"", say: say)
    }

    /// A page that says why something was refused, with the way back to the chats.
    public static func refusal(title: String, text: String, say: WebLanguage = .english) -> String {
        document(title: "imhost · " + title, body: """
            <nav class="back"><a href="/">\(say("← Chats"))</a></nav>
            <main class="refusal"><h1>\(PageHTML.escape(title))</h1><p>\(PageHTML.escape(text))</p></main>
            """, attributes: " class=\"refused\"", say: say)
    }

    /// `text` percent-encoded for a query value.
    public static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF")
                out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
            }
        }
        return out
    }
}

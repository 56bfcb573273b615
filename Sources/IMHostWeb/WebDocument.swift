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

    private static func document(title: String, body: String, attributes: String = "") -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(PageHTML.escape(title))</title><link rel="icon" href="/static/icon.svg"><link rel="stylesheet" href="/static/app.css"><script src="/static/app.js" defer></script></head>
        <body\(attributes)>\(body)</body></html>
        """
    }

    /// The start page: `user`'s conversations, newest first, and a form to open a jump URL.
    public static func start(user: String, conversations: [Conversation]) -> String {
        document(title: "imhost · \(user)", body: """
            <header class="title"><h1>Chats of \(PageHTML.escape(user))</h1></header>
            <form class="open" action="/chat" method="get"><label>Open a jump URL
            <input name="url" required placeholder="im://chat?rootCateID=1&amp;cateID=12&amp;peer=u42"></label><button type="submit">Open</button></form>
            <main id="conversations" data-live="list">\(list(conversations))</main>
            """, attributes: " class=\"start\"")
    }

    /// The list of conversations, as the start page shows it (and a live update replaces it).
    public static func list(_ conversations: [Conversation]) -> String {
        guard !conversations.isEmpty else { return "<p class=\"empty\">No conversations yet. Open a jump URL above.</p>" }
        return "<ul class=\"conversations\">" + conversations.map { chat in
            "<li><a href=\"/chat?url=" + PageHTML.escape(percentEncoded(chat.url)) + "\"><strong>" + PageHTML.escape(chat.peer) + "</strong>"
                + (chat.line.map { " <span class=\"tag\">" + PageHTML.escape($0) + "</span>" } ?? "")
                + (chat.unread > 0 ? " <span class=\"unread\">\(chat.unread) unread</span>" : "")
                + " <time>" + PageHTML.clockTime(chat.updatedAt) + "</time>"
                + "<span class=\"last\">" + (chat.lastFromPeer ? "" : "me: ") + PageHTML.escape(chat.lastText ?? "") + "</span></a></li>"
        }.joined() + "</ul>"
    }

    /// A chat's frame for page `id`: the page's body arrives by its event stream.
    public static func chat(page id: String, url: String) -> String {
        document(title: "imhost · chat", body: """
            <nav class="back"><a href="/">← chats</a></nav>
            <div id="page" data-page="\(PageHTML.escape(id))"><p class="opening">Opening \(PageHTML.escape(url))…</p></div>
            <aside id="said" aria-live="polite"></aside>
            """, attributes: " class=\"chat\"")
    }

    /// A page that says why something was refused, with the way back to the chats.
    public static func refusal(title: String, text: String) -> String {
        document(title: "imhost · " + title, body: """
            <nav class="back"><a href="/">← chats</a></nav>
            <main class="refusal"><h1>\(PageHTML.escape(title))</h1><p>\(PageHTML.escape(text))</p></main>
            """, attributes: " class=\"refused\"")
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

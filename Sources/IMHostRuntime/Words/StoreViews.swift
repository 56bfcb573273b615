import IMHost
import IMKit

/// How conversations and search results are shown, by `imhost chats` and `/chats`, and by
/// `imhost search` and `/search`: one line each, everything from outside made safe.
package enum StoreViews {
    /// A conversation as `--json` gives it.
    package struct Conversation: Encodable {
        package var peer: String
        package var unread: Int
        package var messages: Int
        package var updatedAt: Int64
        package var lastKey: String?
        package var lastText: String?
        package var lastFromPeer: Bool
        package var page: JumpPage?
        /// The jump URL that opens it on its page (`imhost chat --peer` opens this).
        package var url: String
    }

    package static func json(_ summary: ConversationSummary) -> Conversation {
        Conversation(peer: summary.peer, unread: summary.unread, messages: summary.messages, updatedAt: summary.updatedAt,
                     lastKey: summary.lastKey, lastText: summary.lastText, lastFromPeer: summary.lastFromPeer, page: summary.page,
                     url: url(summary.peer, page: summary.page))
    }

    /// The URL a conversation opens on: its last page, or the legacy page when none is known.
    package static func url(_ peer: String, page: JumpPage?) -> String {
        (page ?? JumpPage(rootCateID: 0)).url(peer: peer)
    }

    /// One line a conversation: peer, unread count, time, the last message, its page.
    package static func lines(_ list: [ConversationSummary]) -> [String] {
        guard !list.isEmpty else { return ["No conversations yet."] }
        return list.map { summary in
            let unread = summary.unread > 0 ? "\(summary.unread) unread" : ""
            let who = summary.lastFromPeer ? "" : "me: "
            let last = summary.lastKey.map { key in "\(who)[\(key)] \(summary.lastText ?? "")" } ?? ""
            let page = summary.page.map { " · opens on rootCateID \($0.rootCateID)" + ($0.cateID.map { ", cateID \($0)" } ?? "") + ($0.infoID.map { ", infoID \($0)" } ?? "") } ?? ""
            let text = TerminalText.safe(summary.peer).padding(16, cut: false) + " " + unread.padding(10) + " " + time(summary.updatedAt)
                + "  " + TextWidth.truncate(TerminalText.safe(last, newlines: false), to: 48) + page
            return TerminalText.safe(text, newlines: false)
        }
    }

    /// A search result as `--json` gives it.
    package struct Hit: Encodable {
        package var peer: String
        package var number: Int
        package var from: String
        package var key: String
        package var text: String
        package var sentAt: Int64
    }

    package static func json(_ hit: SearchHit) -> Hit {
        Hit(peer: hit.peer, number: hit.number, from: hit.from, key: hit.key, text: hit.text, sentAt: hit.sentAt)
    }

    /// One line a result: the conversation, the message's number, who, when, and its text.
    package static func lines(_ hits: [SearchHit], words: [String]) -> [String] {
        guard !hits.isEmpty else { return ["No message matches \(words.map { "\"\($0)\"" }.joined(separator: " "))."] }
        return hits.map { hit in
            TerminalText.safe("\(hit.peer) #\(hit.number) \(hit.from) · \(time(hit.sentAt)) · [\(hit.key)] " + TextWidth.truncate(hit.text, to: 60),
                              newlines: false)
        }
    }

    /// `2026-01-05 09:04` in UTC.
    package static func time(_ milliseconds: Int64) -> String {
        let stamp = Clock.iso8601(milliseconds)
        return String(stamp.prefix(16)).replacing("T", with: " ")
    }
}

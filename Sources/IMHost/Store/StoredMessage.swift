import IMKit

/// Where a message stands, whichever its direction, as pages and tools show it: an outgoing one
/// is `queued` (stored, waiting to go), `sent` (the broker took it), `delivered` (the receiver
/// stored it and said so), `read` (the receiver's chat showed it), `failed` (with a reason) or
/// `given-up` (not delivered in time); an incoming one is `received`, then `read` once an
/// interactive chat has shown it. Each direction's states and their moves are their own types
/// (``OutgoingState``, ``IncomingState``, ``MessageLife``); `unknown` is a stored value this code
/// does not know, reported as such.
public enum MessageState: String, Sendable, Codable, CaseIterable {
    case queued, sent, delivered, read, failed, received
    case givenUp = "given-up"
    case unknown
}

/// A message as the store keeps it: the envelope lines see, and where it stands.
public struct StoredMessage: Sendable, Equatable {
    /// What lines see: `id` is `m<number>`, its place in the conversation.
    public var envelope: MessageEnvelope
    /// Its place in the conversation, from 0.
    public var position: Int
    public var state: MessageState
    /// Why it failed, for a failed or given-up one; for a state this imhost does not know, that state.
    public var failure: MessageFailure?
    /// The sender's count of its messages to this peer, from 1, when known.
    public var seq: Int?
    /// Sent by the signed-in user.
    public var isOutgoing: Bool
    /// The page the sender was on, when it said.
    public var jump: JumpPage?
    /// The row in the store.
    var row: Int64
    /// It came over the transport from another host (not `/recv`, not the user's own).
    public var arrived = false
    /// For a message that arrived late (its sender had sent a message stored here already after
    /// it), the position of the shown message it was sent before; it shows where it arrived.
    public var sentBefore: Int?
    /// For the user's own message of a line's key: how the peer drew it, as its read receipt said.
    public var peerDrawn: Drawn?
    /// The message it replies to.
    public var reply: ReplyTo?
    /// When its sender recalled it: nothing of what it said is kept.
    public var recalledAt: Int64?
    /// Its newest revision, when it was changed in place (IMKit 1.4): the envelope's payload is
    /// that revision's.
    public var revision: Revised?

    /// Which revision a message shows, who made it and when.
    public struct Revised: Sendable, Equatable, Codable {
        /// From 1 (the first payload is revision 0).
        public var number: Int
        /// The user id of whoever made it: the user or the peer.
        public var by: String
        /// When, in milliseconds since 1970.
        public var at: Int64

        public init(number: Int, by: String, at: Int64) {
            self.number = number
            self.by = by
            self.at = at
        }
    }

    /// Its number as the chat shows it, from 1.
    public var number: Int { position + 1 }
}

/// The page a conversation opens on, or a sender was on: a jump's rootCateID, cateID and infoID.
public struct JumpPage: Sendable, Equatable, Codable {
    public var rootCateID: Int
    public var cateID: Int?
    public var infoID: String?

    public init(rootCateID: Int, cateID: Int? = nil, infoID: String? = nil) {
        self.rootCateID = rootCateID
        self.cateID = cateID
        self.infoID = infoID
    }
}

/// One conversation, as `imhost chats` lists it.
public struct ConversationSummary: Sendable, Equatable, Codable {
    public var peer: String
    /// The newest message's key and a short text of it (a text's words, a card's strings).
    public var lastKey: String?
    public var lastText: String?
    public var lastFromPeer: Bool
    public var unread: Int
    /// When its newest message was sent, in milliseconds since 1970.
    public var updatedAt: Int64
    public var messages: Int
    /// The page it opens on.
    public var page: JumpPage?
}

/// A message a search found.
public struct SearchHit: Sendable, Equatable, Codable {
    public var peer: String
    /// Its number in the conversation, from 1.
    public var number: Int
    public var from: String
    public var key: String
    public var text: String
    public var sentAt: Int64
}

/// Why the store refused or failed: one line naming the file and what to do.
public struct StoreError: Error, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable {
        /// The disk is full, or a file-size limit was reached.
        case full
        /// The folder or file cannot be written.
        case readOnly
        /// The database is damaged, or not a database.
        case damaged
        /// An id or a value it will not take.
        case refused
        /// The typed line a send came from was sent already, by another chat of the user.
        case taken
        /// Anything else SQLite or the system said.
        case failed
    }

    public var code: Code
    public var description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}

extension MessageEnvelope {
    /// The key a stored line that does not read as a message is shown under (a 1.0 log's damaged
    /// line, imported): no line's key can be this (keys have no spaces or parentheses), so it is
    /// never handed to a builder.
    package static let unreadableKey = "(unreadable line)"
}

extension JumpPage {
    /// The chat jump URL that opens this page for `peer`: the page the converter picks for it.
    public func url(peer: String) -> String {
        var query = "rootCateID=\(rootCateID)"
        if let cateID { query += "&cateID=\(cateID)" }
        query += "&peer=" + Self.encoded(peer)
        if let infoID { query += "&infoID=" + Self.encoded(infoID) }
        return "im://chat?" + query
    }

    /// A query value with every byte but RFC 3986's unreserved ones percent-encoded.
    static func encoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return out
    }
}

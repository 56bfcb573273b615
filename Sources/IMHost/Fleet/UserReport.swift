#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A person's report of someone they chat with (the menu's Report): what, whom, when and which
/// line. The host keeps it in its store until the broker takes it, retained on
/// ``Topic/report(user:id:)``, where only the operator reads it (`imhost reports`) and clears it
/// once handled. Who reported is the topic's user, which the broker's rules vouch for (a user
/// writes only its own reports): nothing in the document says it.
///
///     {"v":1,"id":"…","at":ms,"peer":"alice","url":"imhost://chat?…","line":"house","lineVersion":"1.2.0",
///      "messages":[{"id":"…","at":ms,"key":"text","text":"…"}]}
public struct UserReport: Codable, Sendable, Equatable {
    /// The document's version.
    public static let version = 1
    /// The most of the peer's last messages a report carries, and the most characters of each,
    /// and bytes (UTF-8: a character may take many).
    public static let messageLimit = 5, excerptCharacters = 280, excerptBytes = 1024
    /// The most bytes of the chat's URL a report carries.
    public static let urlBytes = 2048
    /// The most bytes a report takes (oldest messages left out until it fits); one read that is
    /// longer is refused.
    public static let byteLimit = 16 << 10

    public var v: Int
    /// The report's id (a ``GlobalID``): its topic's last level.
    public var id: String
    /// When it was made, milliseconds since 1970 (the reporter's clock).
    public var at: Int64
    /// Whom it reports.
    public var peer: String
    /// The chat's URL as it was opened (its rootCateID, cateID and infoID say what it was about).
    public var url: String
    /// The line whose page the chat was on, and its version; `nil` on the base or legacy page.
    public var line: String?
    public var lineVersion: String?
    /// The peer's last messages in the chat, oldest first: what the person saw.
    public var messages: [Message]

    /// One of the peer's messages, as the report carries it.
    public struct Message: Codable, Sendable, Equatable {
        /// The id its sender gave it.
        public var id: String
        /// When the peer sent it (the peer's clock).
        public var at: Int64
        /// Its key (`text`, `house.listing`, …).
        public var key: String
        /// What search shows of it, at most ``UserReport/excerptCharacters`` characters.
        public var text: String

        public init(id: String, at: Int64, key: String, text: String) {
            self.id = UserReport.cut(id, bytes: 128)
            self.at = at
            self.key = UserReport.cut(key, bytes: 128)
            self.text = UserReport.cut(String(text.prefix(UserReport.excerptCharacters)), bytes: UserReport.excerptBytes)
        }
    }

    public init(id: String, at: Int64, peer: String, url: String, line: String?, lineVersion: String?, messages: [Message]) {
        v = Self.version
        self.id = id
        self.at = at
        self.peer = peer
        self.url = Self.cut(url, bytes: Self.urlBytes)
        self.line = line
        self.lineVersion = lineVersion
        self.messages = Array(messages.suffix(Self.messageLimit))
        // Whatever its parts, the report fits: the oldest messages give way.
        while bytes.count > Self.byteLimit, !self.messages.isEmpty { self.messages.removeFirst() }
    }

    /// `text` cut to at most `bytes` bytes of UTF-8, at a character's end.
    static func cut(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var kept = "", count = 0
        for character in text {
            let size = character.utf8.count
            guard count + size <= bytes else { break }
            kept.append(character)
            count += size
        }
        return kept
    }

    /// The document, as it is retained.
    public var bytes: [UInt8] { (try? JSONLines.encode(self)) ?? [] }

    /// A report as read from the broker: `nil` when it is too long or not a report.
    public static func read(_ payload: [UInt8]) -> UserReport? {
        guard payload.count <= byteLimit, let report = try? JSONDecoder().decode(UserReport.self, from: Data(payload)),
              report.v == version else { return nil }
        return report
    }
}

/// A report as the operator reads it from the broker: who made it and in which of their slots
/// (its topic's levels, which the broker vouches for), and the report (`nil`: not one that can
/// be read).
public struct FiledReport: Sendable, Equatable {
    public var by: String
    public var slot: Int
    public var report: UserReport?

    /// What `imhost reports close` names it by: the report's id, or `USER/SLOT` for one that
    /// cannot be read.
    public var id: String { report?.id ?? "\(by)/\(slot)" }
}

import IMKit

/// How a receiver's host drew one of a line's messages (a card, or a line's lines), as its read
/// receipt tells the sender (the receipt's `drawn` member, docs/reference/wire.md): by the line
/// at a version, or as a placeholder, with a word for why and a short reason for a person.
///
/// Only messages whose key is a line's (`<line>.<name>`) are told: text and the built-ins are
/// drawn by every host alike. A value read from a peer is checked and cut
/// (``read(_:key:)``); its words reach a page only through a front end, which escapes them.
public enum Drawn: Sendable, Equatable, Codable {
    /// The line's builder drew it: the line, and its version when the host knew it.
    case line(String, version: String?)
    /// A placeholder: a word for why (``Drawn/notInstalled``, …; a word this host does not know,
    /// from a newer one, is kept), and a short reason for the sender's user.
    case placeholder(String, reason: String)

    /// No plugin provides the key's line there.
    public static let notInstalled = "not-installed"
    /// The line or the key is turned off there (host.json's kill switch, the fleet's, or the
    /// line disabled).
    public static let turnedOff = "turned-off"
    /// The line is rolled out to a share of users, and the receiver is not among them.
    public static let notRolledOut = "not-rolled-out"
    /// The receiver's host holds the sender's messages of the key: several crashed their line.
    public static let held = "held"
    /// The line, the key or the message is quarantined there after a crash.
    public static let quarantined = "quarantined"
    /// The line was refused or failed to load there.
    public static let lineFailed = "line-failed"
    /// The line is there, at a version without this key.
    public static let unknownKey = "unknown-key"
    /// The builder failed.
    public static let builderFailed = "builder-failed"
    /// The payload does not decode with the receiver's builder.
    public static let undecodable = "undecodable"
    /// The chat was open on the legacy page, which shows built-in messages only.
    public static let legacyPage = "legacy-page"
    /// The payload is over the receiver's limit.
    public static let tooLarge = "too-large"
    /// The stored message does not read.
    public static let unreadable = "unreadable"

    /// The longest reason kept, in bytes (a refusal's, ``Envelope/reasonBytes``).
    public static let reasonBytes = Envelope.reasonBytes

    /// How a host drew a message of `key` that showed as a placeholder for `degrade`;
    /// `lineKnown` says whether anything on the host knows the key's line (a plugin provides it,
    /// or host.json names it). `nil` for a key that is not a line's, and for a message the
    /// page's drawing budget turned away (it is drawn again at the next draw).
    public static func placeholder(_ degrade: Degrade, key: String, lineKnown: Bool) -> Drawn? {
        guard let owner = LineID.owner(ofMessageKey: key) else { return nil }
        let line = String(owner)
        let (word, reason): (String, String)
        switch degrade {
        case .unknownKey:
            (word, reason) = lineKnown ? (unknownKey, "line \(line) has no \(key)") : (notInstalled, "line \(line) not installed")
        case .killedKey: (word, reason) = (turnedOff, "\(key) turned off")
        case .quarantinedKey: (word, reason) = (quarantined, "\(key) quarantined after a crash")
        case .quarantinedMessage: (word, reason) = (quarantined, "this message quarantined after a crash")
        case .heldSender: (word, reason) = (held, "your \(key) messages held after crashes")
        case .lineUnavailable(_, let why, _):
            switch why {
            case .killed, .fleetKilled, .lineDisabled: (word, reason) = (turnedOff, "line \(line) turned off")
            case .outsideRollout: (word, reason) = (notRolledOut, "line \(line) not rolled out to them")
            case .lineMissing: (word, reason) = (notInstalled, "line \(line) not installed")
            case .lineRefused, .lineFailed: (word, reason) = (lineFailed, "line \(line) failed to load")
            case .quarantined: (word, reason) = (quarantined, "line \(line) quarantined after a crash")
            }
        case .legacyPage: (word, reason) = (legacyPage, "opened on the legacy page")
        case .undecodable: (word, reason) = (undecodable, "payload does not decode (\(degrade.short))")
        case .builderFailed: (word, reason) = (builderFailed, "line \(line)'s builder failed")
        case .unreadable: (word, reason) = (unreadable, "unreadable")
        case .tooLarge(_, let limit): (word, reason) = (tooLarge, "payload over their limit of \(limit) bytes")
        case .drawingTooSlow: return nil
        }
        return .placeholder(word, reason: cut(reason))
    }

    /// What the sender's page says of its message at `peer`: "drawn by house 1.3.0 at bob",
    /// "shown as a placeholder at bob: line rent not installed". As read: a front end escapes it.
    public func said(at peer: String) -> String {
        switch self {
        case .line(let line, let version): "drawn by \(line)\(version.map { " " + $0 } ?? "") at \(peer)"
        case .placeholder(let word, let reason): "shown as a placeholder at \(peer): \(reason.isEmpty ? word : reason)"
        }
    }

    /// Whether it is a placeholder.
    public var isPlaceholder: Bool {
        if case .placeholder = self { true } else { false }
    }

    // MARK: The wire's form

    /// As the receipt's `drawn` member holds it: `{"line":"house","version":"1.3.0"}`, or
    /// `{"placeholder":"not-installed","reason":"line rent not installed"}`.
    public var json: String {
        switch self {
        case .line(let line, let version):
            #"{"line":\#(JSONNode.quoted(line))"# + (version.map { #","version":\#(JSONNode.quoted($0))"# } ?? "") + "}"
        case .placeholder(let word, let reason):
            #"{"placeholder":\#(JSONNode.quoted(word)),"reason":\#(JSONNode.quoted(reason))}"#
        }
    }

    /// Reads one entry of a receipt's `drawn` member leniently: `nil` for anything that is not
    /// what a host writes. A line must be a line id (and, given `key`, the key's own line), a
    /// version 1 to 32 of `A-Z a-z 0-9 . + _ -` (one that is not is left out), a word 1 to 32 of
    /// `a-z 0-9 -`; a reason is cut to ``reasonBytes`` (kept as it came: each front end escapes it).
    static func read(_ node: JSONNode, key: String? = nil) -> Drawn? {
        guard case .object(let members) = node.value else { return nil }
        if case .string(let line)? = members.member("line")?.value {
            guard LineID.isValid(line) else { return nil }
            if let key, LineID.owner(ofMessageKey: key).map(String.init) != line { return nil }
            var version: String?
            if case .string(let text)? = members.member("version")?.value, isVersion(text) { version = text }
            return .line(line, version: version)
        }
        guard case .string(let word)? = members.member("placeholder")?.value, Envelope.RefusalCode.isValid(word) else { return nil }
        var reason = ""
        if case .string(let text)? = members.member("reason")?.value { reason = cut(text) }
        return .placeholder(word, reason: reason)
    }

    /// Reads a stored entry (its ``json``); `nil` when it does not read.
    static func read(json text: String, key: String? = nil) -> Drawn? {
        guard let node = try? JSONParser.parse(text) else { return nil }
        return read(node, key: key)
    }

    /// A version as the wire carries it: 1 to 32 of `A-Z a-z 0-9 . + _ -`.
    public static func isVersion(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    /// `text` cut to ``reasonBytes``, between characters.
    static func cut(_ text: String) -> String {
        guard text.utf8.count > reasonBytes else { return text }
        var kept = "", used = 0
        for character in text {
            let size = character.utf8.count
            guard used + size <= reasonBytes - 3 else { break }
            kept.append(character)
            used += size
        }
        return kept + "…"
    }
}

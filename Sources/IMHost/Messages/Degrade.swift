/// Why a message shows as a placeholder instead of through its builder. The stored message is
/// never changed: once the cause is gone, it renders again.
public enum Degrade: Equatable, Sendable, Codable, CustomStringConvertible {
    /// No builder is registered for the key.
    case unknownKey
    /// The operator turned the key off: where ("killSwitch.messages in host.json", "the fleet
    /// configuration (version N)").
    case killedKey(String)
    /// The host quarantined the key after its builder crashed.
    case quarantinedKey(String)
    /// The host quarantined this one message (from another host) after line code crashed on it.
    case quarantinedMessage(String)
    /// The host holds this sender's messages of this key: several crashed their line.
    case heldSender(sender: String, key: String, why: String)
    /// The key's line is unavailable: killed, quarantined, disabled, refused or failed.
    case lineUnavailable(line: String, reason: UnavailableReason, why: String)
    /// The legacy page shows built-in messages only.
    case legacyPage
    /// The payload does not decode; the text says which field and what was expected.
    case undecodable(String)
    /// The builder threw.
    case builderFailed(String)
    /// The stored line is not a message the host can read.
    case unreadable(String)
    /// The stored payload is larger than the payload limit (written by another tool, or under a
    /// larger limit): it is not drawn. Its size and the limit, in bytes.
    case tooLarge(size: Int, limit: Int)
    /// The page's builders took all of `limits.drawSeconds` (these seconds) before this
    /// message's turn: it is tried again at the next draw.
    case drawingTooSlow(seconds: Double)

    /// The whole reason, for `/why` and `--json`: one line, quoting what a line or a payload
    /// said as it is (whoever draws it escapes it).
    public var description: String {
        switch self {
        case .unknownKey: "no builder is registered for its key: no installed line registers it, or its line is not loaded"
        case .killedKey(let place): "the key is turned off by \(place)"
        case .quarantinedKey(let why): "the key is quarantined: \(why)"
        case .quarantinedMessage(let why): "this message is quarantined: \(why); it stays stored, and shows again once lifted"
        case .heldSender(let sender, let key, let why):
            "\(key) messages from \(sender) are held: \(Quarantine.heldAfter) of them crashed their line within ten minutes (the last \(why)); they stay stored, and show again once lifted (imhost quarantine lift \(key))"
        case .lineUnavailable(_, _, let why): why
        case .legacyPage: "the legacy page shows built-in messages only"
        case .undecodable(let why): "the payload does not decode: \(why)"
        case .builderFailed(let why): "the builder failed: \(why)"
        case .unreadable(let why): "the stored line does not read: \(why)"
        case .tooLarge(let size, let limit): "its payload is \(size) bytes, over the limit of \(limit) (limits.payloadBytes in host.json): it is kept as stored, and not drawn"
        case .drawingTooSlow(let seconds):
            "drawing this page took longer than \(seconds.formatted) s (limits.drawSeconds in host.json) before this message's turn: a line's builders are slow; it is drawn again at the next draw"
        }
    }

    /// A few words for the placeholder itself (quoting as ``description`` does).
    public var short: String {
        switch self {
        case .unknownKey: "unknown key"
        case .killedKey: "turned off"
        case .quarantinedKey, .quarantinedMessage: "quarantined"
        case .heldSender: "held"
        case .lineUnavailable(let line, let reason, _):
            switch reason {
            case .killed, .fleetKilled: "line \(line) turned off"
            case .outsideRollout: "line \(line) not rolled out to you"
            case .quarantined: "line \(line) quarantined"
            case .lineDisabled: "line \(line) disabled"
            default: "line \(line) unavailable"
            }
        case .legacyPage: "legacy page"
        case .undecodable(let why):
            // "missing field 'price'", "field 'year': expected a whole number": without what was found.
            if let found = why.firstRange(of: ", found "), why.distance(from: why.startIndex, to: found.lowerBound) <= 40 {
                String(why[..<found.lowerBound])
            } else {
                why.count <= 40 ? why : "does not decode"
            }
        case .builderFailed: "builder failed"
        case .unreadable: "unreadable"
        case .tooLarge: "too large"
        case .drawingTooSlow: "drawing took too long"
        }
    }
}

private extension Double {
    /// Seconds as host.json writes them: "1", "0.5".
    var formatted: String { self == rounded() ? String(Int(self)) : String(self) }
}

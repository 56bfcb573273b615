/// The words of a message that search finds and the list of conversations shows: a text
/// message's text, and a card's string values in the order written. Made once, when the message
/// is stored; the payload itself is never changed.
enum MessageText {
    /// The most kept of a message's words, in characters.
    static let limit = 2000

    static func of(key: String, payload: String) -> String {
        if key == "text", let text = plainText(payload) { return text.utf8.count <= limit || text.count <= limit ? text : String(text.prefix(limit)) }
        guard let root = try? JSONParser.parse(payload) else { return "" }
        var found: [String] = []
        var length = 0
        func walk(_ node: JSONNode) {
            guard length < limit else { return }
            switch node.value {
            case .string(let text):
                found.append(text)
                length += text.count
            case .object(let members): members.forEach { walk($0.value) }
            case .array(let elements): elements.forEach(walk)
            default: break
            }
        }
        // A text message's words are its text; a card's, every string in it.
        if key == "text", case .object(let members) = root.value, let text = members.member("text") {
            walk(text)
        } else {
            walk(root)
        }
        var joined = found.joined(separator: " · ")
        // A photo's words say it is one (its bytes are never words), then its caption.
        if key == "photo" { joined = "[Photo]" + (joined.isEmpty ? "" : " " + joined) }
        // A file's: that it is one, and its name (never its bytes).
        if key == "file", case .object(let members) = root.value, case .string(let name)? = members.member("name")?.value {
            joined = "[File] " + name
        }
        return joined.count > limit ? String(joined.prefix(limit)) : joined
    }

    /// The text of a payload that is exactly `{"text":"…"}` with nothing to unescape: what most
    /// messages are, read without building a tree (a send's other costs are that small). The
    /// parser reads the same string out of it; anything else (an escape, a space, another
    /// member) is `nil`, and goes to the parser.
    static func plainText(_ payload: String) -> String? {
        let bytes = payload.utf8
        let head = #"{"text":""#.utf8, tail = #""}"#.utf8
        guard bytes.count >= head.count + tail.count, bytes.starts(with: head), bytes.reversed().starts(with: tail.reversed()) else { return nil }
        let inner = bytes.dropFirst(head.count).dropLast(tail.count)
        guard !inner.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return nil }
        return String(payload[inner.startIndex..<inner.endIndex])
    }
}

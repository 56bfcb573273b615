/// Turns user and conversation ids into file names that stay inside the data folder, whatever
/// the id: every byte but `A-Z a-z 0-9 _ -` is written as `%XX`, so `/`, `.` and `..` never
/// reach the file system, and two ids never share a name.
package enum StorePath {
    /// Why a user or peer id is refused where it enters (a jump URL's `peer`, host.json's
    /// `user`, `--user`), or `nil` when it is fine: not empty, at most ``maximumIDLength`` bytes,
    /// no control or bidirectional characters (they would reach a terminal, or make one id read
    /// as another), and no U+FFFD (what invalid UTF-8 decodes to). An id is otherwise taken
    /// exactly as written: it is not normalized, so "é" written as one code point and as "e"
    /// with a combining accent are two ids, as they are to the server that issued them.
    package static func problem(withID id: String) -> String? {
        if id.isEmpty { return "is empty" }
        if id.utf8.count > maximumIDLength { return "is \(id.utf8.count) bytes long; the limit is \(maximumIDLength)" }
        if !PlainText.isPlain(id) {
            return "has control or bidirectional characters (\(id)); ids are plain text"
        }
        // U+FFFD is what bytes that are not UTF-8 decode to: two different ids would meet in it.
        if id.unicodeScalars.contains("\u{FFFD}") {
            return "holds U+FFFD, the replacement character: bytes that are not UTF-8 turn into it, so two ids could become one; give the id as UTF-8"
        }
        return nil
    }

    /// The longest id accepted, in UTF-8 bytes (an encoded name must fit in 255 bytes).
    static let maximumIDLength = 80

    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    static func fileName(for id: String, kind: String) throws(Refused) -> String {
        guard !id.isEmpty else { throw Refused(description: "\(kind) id is empty") }
        guard id.utf8.count <= maximumIDLength else {
            throw Refused(description: "\(kind) id is \(id.utf8.count) bytes long; the limit is \(maximumIDLength)")
        }
        guard !id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw Refused(description: "\(kind) id contains a control character")
        }
        var name = ""
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                name.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                name += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return name
    }
}

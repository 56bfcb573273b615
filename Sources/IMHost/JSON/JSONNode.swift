/// A JSON value that remembers where it was written, so configuration errors can point at the
/// line and column. Objects keep their keys in the order written.
///
/// Foundation's JSONSerialization forgets positions and key order; this parser is small, strict
/// (RFC 8259, no comments, no trailing commas), and used for host.json, scenario files and the
/// JSON typed into a chat (`/send`), which need a position to point at.
package struct JSONNode: Sendable {
    package enum Value: Sendable {
        case object([(key: String, keyPosition: SourcePosition, value: JSONNode)])
        case array([JSONNode])
        case string(String)
        case number(Double, text: String)
        case bool(Bool)
        case null
    }

    package let value: Value
    package let position: SourcePosition

    /// What a person calls this kind of value, for "expected X, found Y" messages.
    package var kindName: String {
        switch value {
        case .object: "an object"
        case .array: "an array"
        case .string(let s): "the string \"\(s)\""
        case .number(_, let text): "the number \(text)"
        case .bool(let b): "\(b)"
        case .null: "null"
        }
    }
}

/// An object's members, in the order written (the parser refuses a key written twice).
extension Array where Element == (key: String, keyPosition: SourcePosition, value: JSONNode) {
    /// The member named `key`, if the object has one: the one way every reader looks a member up.
    package func member(_ key: String) -> JSONNode? { first { $0.key == key }?.value }
}

/// A line and column in a text file, both counted from 1; columns count characters.
package struct SourcePosition: Sendable, Hashable, CustomStringConvertible {
    package var line: Int
    package var column: Int
    package var description: String { "\(line):\(column)" }
}

extension JSONNode {
    /// The value as compact JSON text, keys in the order written.
    package var jsonText: String {
        switch value {
        case .object(let members):
            "{" + members.map { Self.quoted($0.key) + ":" + $0.value.jsonText }.joined(separator: ",") + "}"
        case .array(let elements):
            "[" + elements.map(\.jsonText).joined(separator: ",") + "]"
        case .string(let text): Self.quoted(text)
        case .number(_, let text): text
        case .bool(let flag): flag ? "true" : "false"
        case .null: "null"
        }
    }

    package static func quoted(_ text: String) -> String {
        // Most text (ids, keys, words) has nothing to escape: one pass over its bytes.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) { return "\"" + text + "\"" }
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

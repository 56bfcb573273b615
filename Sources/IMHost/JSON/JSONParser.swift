/// A JSON syntax error at a position.
package struct JSONSyntaxError: Error, Sendable, Equatable {
    package var position: SourcePosition
    package var message: String
}

/// Parses JSON text into ``JSONNode``s.
package struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    /// The last position computed, so the next one counts only the bytes since (the parser only
    /// moves forward): positions cost O(1) each, not O(line length).
    private var counted = (index: 0, column: 1)

    package static func parse(_ text: String) throws(JSONSyntaxError) -> JSONNode {
        var parser = JSONParser(bytes: Array(text.utf8))
        parser.skipWhitespace()
        let node = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index < parser.bytes.count {
            throw parser.error("unexpected \(parser.describeCurrent()) after the end of the document")
        }
        return node
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var position: SourcePosition {
        mutating get {
            // Columns count characters, not bytes: count UTF-8 lead bytes since the line start.
            if counted.index < lineStart || counted.index > index { counted = (lineStart, 1) }
            var column = counted.column
            for byte in bytes[counted.index..<index] where byte & 0xC0 != 0x80 { column += 1 }
            counted = (index, column)
            return SourcePosition(line: line, column: column)
        }
    }

    private mutating func error(_ message: String, at position: SourcePosition? = nil) -> JSONSyntaxError {
        JSONSyntaxError(position: position ?? self.position, message: message)
    }

    private func describeCurrent() -> String {
        guard index < bytes.count else { return "end of file" }
        let byte = bytes[index]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x" + (hex.count == 1 ? "0" + hex : hex)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                index += 1
            case UInt8(ascii: "\r") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "\n"):
                // CR LF: the LF ends the line.
                index += 1
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                // A lone CR ends a line too, as old editors write it: positions stay right.
                index += 1
                line += 1
                lineStart = index
            default:
                return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONNode {
        guard depth < 512 else { throw error("nesting deeper than 512 levels") }
        guard index < bytes.count else { throw error("unexpected end of file, expected a value") }
        let start = position
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth, start: start)
        case UInt8(ascii: "["): return try parseArray(depth: depth, start: start)
        case UInt8(ascii: "\""): return JSONNode(value: .string(try parseString()), position: start)
        case UInt8(ascii: "t"): try expectWord("true"); return JSONNode(value: .bool(true), position: start)
        case UInt8(ascii: "f"): try expectWord("false"); return JSONNode(value: .bool(false), position: start)
        case UInt8(ascii: "n"): try expectWord("null"); return JSONNode(value: .null, position: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber(start: start)
        default: throw error("unexpected \(describeCurrent()), expected a value")
        }
    }

    private mutating func expectWord(_ word: StaticString) throws(JSONSyntaxError) {
        let start = position
        let count = word.utf8CodeUnitCount
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: count)
        guard index + count <= bytes.count, bytes[index..<index + count].elementsEqual(expected) else {
            throw error("unexpected \(describeCurrent()), expected a value", at: start)
        }
        index += count
    }

    private mutating func parseObject(depth: Int, start: SourcePosition) throws(JSONSyntaxError) -> JSONNode {
        index += 1
        var members: [(key: String, keyPosition: SourcePosition, value: JSONNode)] = []
        // Keys seen, to refuse a duplicate: a look through the few keys of a small object, a set
        // once it grows (a linear search alone made large objects quadratic).
        var keys: Set<String> = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return JSONNode(value: .object(members), position: start)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("unexpected \(describeCurrent()), expected a key in double quotes")
            }
            let keyPosition = position
            let key = try parseString()
            let repeated: Bool
            if members.count < 8 {
                repeated = members.contains { $0.key == key }
            } else {
                if keys.isEmpty { keys = Set(members.map(\.key)) }
                repeated = !keys.insert(key).inserted
            }
            guard !repeated else {
                throw error("key \"\(key)\" appears twice in the same object", at: keyPosition)
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("unexpected \(describeCurrent()), expected ':' after key \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            members.append((key, keyPosition, try parseValue(depth: depth + 1)))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of file, expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; break }
            throw error("unexpected \(describeCurrent()), expected ',' or '}'")
        }
        return JSONNode(value: .object(members), position: start)
    }

    private mutating func parseArray(depth: Int, start: SourcePosition) throws(JSONSyntaxError) -> JSONNode {
        index += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return JSONNode(value: .array(elements), position: start)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of file, expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; break }
            throw error("unexpected \(describeCurrent()), expected ',' or ']'")
        }
        return JSONNode(value: .array(elements), position: start)
    }

    private mutating func parseNumber(start: SourcePosition) throws(JSONSyntaxError) -> JSONNode {
        let begin = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while parser.index < parser.bytes.count,
                  (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index]) { parser.index += 1 }
            return parser.index - from
        }
        let integerStart = index
        let integerDigits = digits(&self)
        guard integerDigits > 0 else { throw error("a number needs digits after '-'", at: start) }
        if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") {
            throw error("a number cannot start with 0 (leading zeros are not JSON)", at: start)
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw error("a number needs digits after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw error("a number needs digits in its exponent") }
        }
        let text = String(decoding: bytes[begin..<index], as: UTF8.self)
        guard let number = Double(text) else { throw error("\(text) is not a number", at: start) }
        return JSONNode(value: .number(number, text: text), position: start)
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        // Most strings have no escapes: take them straight from the bytes.
        var end = index + 1
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            defer { index = end + 1 }
            return String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
        }
        let start = position
        index += 1
        var scalars: [UInt8] = []
        while true {
            guard index < bytes.count else { throw error("a string is not closed (missing '\"')", at: start) }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: scalars, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error("a string is not closed (missing '\"')", at: start) }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): scalars.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): scalars.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("a \\u escape for a high surrogate must be followed by a low surrogate")
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("invalid low surrogate in \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("\\u escape is not a valid character") }
                    scalars.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    throw error("unknown escape '\\\(Character(Unicode.Scalar(escape)))' in a string")
                }
            case 0x00..<0x20:
                throw error(byte == 0x0A ? "a string is not closed before the end of the line" : "control character in a string must be escaped")
            default:
                scalars.append(byte)
                index += 1
            }
        }
    }

    /// Exactly four hex digits (no sign, no fewer): `\u+041` and `\u41` are refused.
    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("\\u must be followed by four hex digits") }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("\\u must be followed by four hex digits")
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }
}

import IMKit

/// Says why a payload does not decode, naming the field and what it should hold: "missing field
/// 'price'", "field 'year': expected a whole number, found 2017.5".
///
/// Foundation's JSONDecoder reports a number that does not fit its type (2017.5 or 1e19 for an
/// `Int`) as "not valid JSON", with no field. So when it fails without a field, the payload is
/// parsed here and decoded again by ``DiagnosingDecoder``, which knows where it is; that second
/// decoding runs only for a payload that already failed, never on the way to showing a message.
enum PayloadDiagnosis {
    /// Why `payload` does not decode as `Content`, given the error the builder threw.
    static func describe<Content>(_ error: any Error, payload: MessagePayload, as content: Content.Type) -> String {
        if case DecodingError.dataCorrupted(let context) = error, context.codingPath.isEmpty {
            let root: JSONNode
            do {
                root = try JSONParser.parse(payload.json)
            } catch {
                return "not valid JSON at column \(error.position.column): \(error.message)"
            }
            if let decodable = content as? any Decodable.Type {
                do {
                    _ = try decodable.init(from: DiagnosingDecoder(node: root, codingPath: []))
                } catch {
                    return describe(error)
                }
            }
        }
        return describe(error)
    }

    /// A decoding error, said briefly.
    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing field '\(path(context.codingPath + [key]))'"
        case DecodingError.valueNotFound(let type, let context):
            return "\(subject(context.codingPath)): expected \(kind(of: type)), found null"
        case DecodingError.typeMismatch(let type, let context):
            let found = context.debugDescription.hasPrefix("found ") ? ", " + context.debugDescription
                : Self.found(inFoundation: context.debugDescription).map { ", found \($0)" } ?? ""
            return "\(subject(context.codingPath)): expected \(kind(of: type))\(found)"
        case DecodingError.dataCorrupted(let context):
            guard !context.codingPath.isEmpty else { return context.debugDescription }
            return "\(subject(context.codingPath)): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }

    /// "field 'dealer.phone'", or "the payload" for the payload itself.
    static func subject(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "the payload" : "field '\(path(keys))'"
    }

    /// `dealer.phone`, `tags[1]`.
    static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == "\(index)" {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text.isEmpty ? "(the payload)" : text
    }

    /// What a person calls a value of `type`.
    static func kind(of type: Any.Type) -> String {
        switch type {
        case is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type,
             is UInt.Type, is UInt64.Type, is UInt32.Type, is UInt16.Type, is UInt8.Type: "a whole number"
        case is Double.Type, is Float.Type: "a number"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is [String: Any].Type, is KeyedObject.Type: "an object"
        case is [Any].Type, is UnkeyedList.Type: "a list"
        default: "\(type)"
        }
    }

    /// "a string" from Foundation's "Expected to decode Int but found a string instead."
    private static func found(inFoundation text: String) -> String? {
        guard let start = text.firstRange(of: "but found "),
              let end = text[start.upperBound...].firstRange(of: " instead") else { return nil }
        let found = String(text[start.upperBound..<end.lowerBound])
        // Foundation says "found number" and "found a string"; say each with an article.
        switch found {
        case "number": return "a number"
        case "array", "an array": return "a list"
        case "dictionary", "a dictionary": return "an object"
        case "bool": return "true or false"
        default: return found
        }
    }

    /// Stand-ins for "an object" and "a list" in errors about containers.
    enum KeyedObject {}
    enum UnkeyedList {}
}

/// A `Decoder` over a parsed ``JSONNode`` that knows where it is, for ``PayloadDiagnosis``:
/// every error carries the path of the field and says what was found.
struct DiagnosingDecoder: Decoder {
    let node: JSONNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = node.value else {
            throw mismatch(PayloadDiagnosis.KeyedObject.self, node, codingPath)
        }
        return KeyedDecodingContainer(Keyed<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = node.value else {
            throw mismatch(PayloadDiagnosis.UnkeyedList.self, node, codingPath)
        }
        return Unkeyed(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        Single(node: node, codingPath: codingPath)
    }

    struct Index: CodingKey {
        var intValue: Int?
        var stringValue: String { "\(intValue ?? 0)" }
        init(_ index: Int) { intValue = index }
        init?(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { return nil }
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let members: [(key: String, keyPosition: SourcePosition, value: JSONNode)]
        let codingPath: [any CodingKey]
        var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }

        func contains(_ key: Key) -> Bool { members.contains { $0.key == key.stringValue } }

        private func node(_ key: Key) throws -> JSONNode {
            guard let node = members.member(key.stringValue) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing"))
            }
            return node
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            guard case .null = try node(key).value else { return false }
            return true
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try T(from: DiagnosingDecoder(node: node(key), codingPath: codingPath + [key]))
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try DiagnosingDecoder(node: node(key), codingPath: codingPath + [key]).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try DiagnosingDecoder(node: node(key), codingPath: codingPath + [key]).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "super decoders are not supported"))
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            DiagnosingDecoder(node: try node(key), codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        let items: [JSONNode]
        let codingPath: [any CodingKey]
        var currentIndex = 0
        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        init(items: [JSONNode], codingPath: [any CodingKey]) {
            self.items = items
            self.codingPath = codingPath
        }

        private mutating func next() throws -> DiagnosingDecoder {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath + [Index(currentIndex)], debugDescription: "the list ends here"))
            }
            defer { currentIndex += 1 }
            return DiagnosingDecoder(node: items[currentIndex], codingPath: codingPath + [Index(currentIndex)])
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, case .null = items[currentIndex].value else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: next()) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try next().container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

        mutating func superDecoder() throws -> any Decoder { try next() }
    }

    struct Single: SingleValueDecodingContainer {
        let node: JSONNode
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool {
            if case .null = node.value { return true }
            return false
        }

        func decode(_ type: Bool.Type) throws -> Bool {
            guard case .bool(let value) = node.value else { throw mismatch(type, node, codingPath) }
            return value
        }

        func decode(_ type: String.Type) throws -> String {
            guard case .string(let value) = node.value else { throw mismatch(type, node, codingPath) }
            return value
        }

        func decode(_ type: Double.Type) throws -> Double {
            guard case .number(let value, let text) = node.value else { throw mismatch(type, node, codingPath) }
            // JSONDecoder refuses a number too large for a Double (1e400) as "not valid JSON".
            guard value.isFinite else {
                throw DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "found \(text), too large for a number"))
            }
            // ...and one so small it rounds to zero (1e-400) the same way.
            if value == 0, text.prefix(while: { $0 != "e" && $0 != "E" }).contains(where: { ("1"..."9").contains($0) }) {
                throw DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "found \(text), too small for a number"))
            }
            return value
        }

        func decode(_ type: Float.Type) throws -> Float {
            let value = try decode(Double.self)
            guard Float(value).isFinite else {
                guard case .number(_, let text) = node.value else { throw mismatch(type, node, codingPath) }
                throw DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "found \(text), too large for a number"))
            }
            return Float(value)
        }

        func decode(_ type: Int.Type) throws -> Int { try integer() }
        func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
        func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
        func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
        func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
        func decode(_ type: UInt.Type) throws -> UInt { try integer() }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try T(from: DiagnosingDecoder(node: node, codingPath: codingPath))
        }

        /// A whole number of type `T`, from the number's text so nothing is rounded on the way.
        private func integer<T: FixedWidthInteger>() throws -> T {
            guard case .number(_, let text) = node.value else { throw mismatch(T.self, node, codingPath) }
            if let value = T(text) { return value }
            let isWhole = !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
            throw DecodingError.typeMismatch(T.self, .init(
                codingPath: codingPath,
                debugDescription: isWhole ? "found \(text), outside \(T.min)…\(T.max)" : "found \(text)"))
        }
    }
}

/// "expected X, found Y": the error for a value of the wrong kind.
private func mismatch(_ type: Any.Type, _ node: JSONNode, _ codingPath: [any CodingKey]) -> DecodingError {
    let found: String = switch node.value {
    case .object: "an object"
    case .array: "a list"
    case .string(let text): "the string \"\(text.count > 24 ? String(text.prefix(24)) + "…" : text)\""
    case .number(_, let text): text
    case .bool(let value): "\(value)"
    case .null: "null"
    }
    if case .null = node.value {
        return DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "found null"))
    }
    return DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "found \(found)"))
}

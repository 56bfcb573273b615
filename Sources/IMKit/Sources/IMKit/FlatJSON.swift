/// A fast reader for the payloads of the built-in messages: one JSON object whose values are
/// strings (without escapes), numbers, booleans or null. Anything else makes it give up, and the
/// builder falls back to `JSONDecoder`, which also words the errors. Showing a message is
/// dominated by decoding its payload; for the common messages this takes a fraction of the time.
///
/// It reads a value only where `JSONDecoder` would read the same value, and gives up everywhere
/// else (a differential test holds it to that): numbers follow JSON's grammar exactly (no `01`,
/// `5.`, `+1`); a number with an exponent is left to `JSONDecoder` (which refuses what does not
/// fit a `Double`); a whole number is one written as digits only.
struct FlatJSON {
    enum Value {
        case string(String)
        /// A number without an exponent; `isWhole` when written as digits only.
        case number(Double, isWhole: Bool)
        case bool(Bool)
        case null
    }

    private var members: [(key: String, value: Value)] = []

    /// The most keys this reader takes; more, and it gives up.
    static let maximumMembers = 32

    /// Reads `text`, or returns `nil` when it is not a flat object this reader handles.
    init?(_ text: String) {
        var text = text
        guard let members = text.withUTF8({ Self.parse($0) }) else { return nil }
        self.members = members
    }

    func string(_ key: String) -> String? {
        guard case .string(let value)? = members.first(where: { $0.key == key })?.value else { return nil }
        return value
    }

    func number(_ key: String) -> Double? {
        guard case .number(let value, _)? = members.first(where: { $0.key == key })?.value else { return nil }
        return value
    }

    func integer(_ key: String) -> Int? {
        guard case .number(let value, true)? = members.first(where: { $0.key == key })?.value, abs(value) < 1e15 else { return nil }
        return Int(value)
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> [(key: String, value: Value)]? {
        var index = 0
        func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }
        func string() -> String? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                if bytes[index] == UInt8(ascii: "\\") || bytes[index] < 0x20 { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }
        func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }
        func value() -> Value? {
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                // JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?, and no exponent here.
                let start = index
                func digits() -> Int {
                    let from = index
                    while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
                    return index - from
                }
                if bytes[index] == UInt8(ascii: "-") { index += 1 }
                let integerStart = index
                let integerDigits = digits()
                guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { return nil }
                var isWhole = true
                if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                    index += 1
                    isWhole = false
                    guard digits() > 0 else { return nil }
                }
                if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") { return nil }
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                return Double(text).map { .number($0, isWhole: isWhole) }
            default: return nil
            }
        }
        var members: [(key: String, value: Value)] = []
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipSpace()
                guard let key = string() else { return nil }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                skipSpace()
                guard let value = value() else { return nil }
                // Built-in payloads have a handful of keys, found by a short search; a payload
                // with many is left to JSONDecoder, so a hostile one costs linear time, not this
                // search's square.
                guard members.count < Self.maximumMembers, !members.contains(where: { $0.key == key }) else { return nil }
                members.append((key, value))
                skipSpace()
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                guard bytes[index] == UInt8(ascii: "}") else { return nil }
                index += 1
                break
            }
        }
        skipSpace()
        return index == bytes.count ? members : nil
    }
}

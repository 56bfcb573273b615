/// The rules for line ids and message keys, shared by the registrar and the host.
public enum LineID {
    /// The longest valid line id.
    public static let maximumLength = 32

    /// Whether `id` is a line id: `[a-z][a-z0-9-]{0,31}`, and not `im` (the host's own URL
    /// scheme). A line id is also the scheme of the line's routes (`house://...`), which is why
    /// it has no `_` or capital letters.
    public static func isValid(_ id: String) -> Bool {
        // One pass over the bytes, no copy: the host checks every line id on every start.
        if let valid = id.utf8.withContiguousStorageIfAvailable({ isValid(bytes: $0) }) { return valid }
        return isValid(bytes: id.utf8)
    }

    private static func isValid<Bytes: Sequence<UInt8>>(bytes: Bytes) -> Bool {
        var count = 0
        var first: UInt8 = 0, second: UInt8 = 0
        for byte in bytes {
            let letter = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
            guard count == 0 ? letter
                : letter || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") else { return false }
            if count == 0 { first = byte } else if count == 1 { second = byte }
            count += 1
            if count > maximumLength { return false }
        }
        // Not "im", checked on the bytes (a String comparison costs more than the loop).
        return count > 0 && !(count == 2 && first == UInt8(ascii: "i") && second == UInt8(ascii: "m"))
    }

    /// The line that owns a message key: the part before the first `.`, or `nil` for a host
    /// built-in key such as `"text"`.
    public static func owner(ofMessageKey key: String) -> Substring? {
        guard let dot = key.firstIndex(of: ".") else { return nil }
        return key[..<dot]
    }

    /// Whether a message key is well formed: a built-in name, or `<lineid>.<name>`, where a name
    /// is one or more of `a-z A-Z 0-9 _ - .` and does not start or end with `.`.
    public static func isValidMessageKey(_ key: String) -> Bool {
        func isName(_ s: Substring) -> Bool {
            guard let first = s.first, let last = s.last, first != ".", last != "." else { return false }
            return s.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                    || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            }
        }
        guard let owner = owner(ofMessageKey: key) else { return isName(key[...]) }
        return isValid(String(owner)) && isName(key[key.index(after: owner.endIndex)...])
    }
}

/// A chat jump URL as callers already send it: `im://chat?rootCateID=1&cateID=12&peer=u42`,
/// plus any further parameters, which pass through to the page unchanged.
public struct JumpURL: Sendable, Hashable {
    /// The line category.
    public var rootCateID: Int
    /// The sub-category, when the URL has one.
    public var cateID: Int?
    /// The other party, when the URL has one (opening a chat needs it; routing does not).
    public var peer: String?
    /// The query exactly as written, without the `?`.
    public var query: String

    /// Every parameter, percent-decoded, in the order written.
    public var parameters: [(name: String, value: String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (Self.percentDecoded(parts[0]) ?? String(parts[0]),
                    parts.count > 1 ? Self.percentDecoded(parts[1]) ?? String(parts[1]) : "")
        }
    }

    /// The URL of a line's page, with the caller's query unchanged.
    public func url(forLine line: String) -> String { "im://chat/\(line)?\(query)" }

    /// The URL as callers write it, which the legacy page takes.
    public var legacyURL: String { "im://chat?\(query)" }

    /// Why a jump URL was refused.
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Parses a jump URL.
    ///
    /// - Throws: ``Malformed`` when the URL is not `im://chat?…`, `rootCateID` is missing, or an
    ///   id is not a whole number from 0 to 2147483647, or a parameter is given twice.
    public static func parse(_ text: String) throws(Malformed) -> JumpURL {
        let prefix = "im://chat"
        guard text.hasPrefix(prefix) else {
            throw Malformed(description: "\"\(text)\" is not a chat jump URL; expected im://chat?rootCateID=<n>&cateID=<n>&peer=<id>")
        }
        var rest = text.utf8.dropFirst(prefix.utf8.count)
        if rest.first == UInt8(ascii: "/") { rest = rest.dropFirst() }
        guard rest.isEmpty || rest.first == UInt8(ascii: "?") else {
            throw Malformed(description: "\"\(text)\" has a path after im://chat; callers send im://chat?rootCateID=<n>&…, and the converter picks the page")
        }
        let query = Substring(rest.dropFirst())
        if let hash = query.utf8.firstIndex(of: UInt8(ascii: "#")) {
            throw Malformed(description: "jump URLs have no fragment; remove \"\(query[hash...])\"")
        }
        var rootCateID: Int?
        var cateID: Int?
        var peer: String?
        for pair in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            let name = pair[pair.startIndex..<equals]
            let value = equals == pair.endIndex ? pair[equals..<equals] : pair[pair.index(after: equals)...]
            if name.elementsEqual("rootCateID".utf8) {
                guard rootCateID == nil else { throw Malformed(description: "rootCateID is given twice; give it once") }
                rootCateID = try id(value, name: "rootCateID")
            } else if name.elementsEqual("cateID".utf8) {
                guard cateID == nil else { throw Malformed(description: "cateID is given twice; give it once") }
                cateID = try id(value, name: "cateID")
            } else if name.elementsEqual("peer".utf8) {
                guard peer == nil else { throw Malformed(description: "peer is given twice; give it once") }
                guard let decoded = percentDecoded(Substring(value)), !decoded.isEmpty else {
                    throw Malformed(description: "peer \"\(Substring(value))\" is empty or badly percent-encoded")
                }
                peer = decoded
            }
        }
        guard let rootCateID else {
            throw Malformed(description: "\"\(text)\" has no rootCateID; add rootCateID=<n>")
        }
        return JumpURL(rootCateID: rootCateID, cateID: cateID, peer: peer, query: String(query))
    }

    private static func id(_ value: Substring.UTF8View.SubSequence, name: String) throws(Malformed) -> Int {
        var result = 0
        guard !value.isEmpty, value.count <= 10 else {
            throw Malformed(description: "\(name) \"\(Substring(value))\" is not a whole number from 0 to \(Int32.max)")
        }
        for byte in value {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                throw Malformed(description: "\(name) \"\(Substring(value))\" is not a whole number from 0 to \(Int32.max)")
            }
            result = result * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard result <= Int(Int32.max) else {
            throw Malformed(description: "\(name) \(result) is larger than \(Int32.max)")
        }
        return result
    }

    /// Decodes `%XX` escapes and `+` as a space; `nil` when an escape is broken or not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return String(text) }
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        func hex(_ byte: UInt8?) -> UInt8? {
            switch byte {
            case let b? where b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"): b - UInt8(ascii: "0")
            case let b? where b >= UInt8(ascii: "a") && b <= UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
            case let b? where b >= UInt8(ascii: "A") && b <= UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = hex(iterator.next()), let low = hex(iterator.next()) else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

#if canImport(Glibc)
import Glibc
#endif
import IMKit

/// A chat jump URL as callers already send it: `im://chat?rootCateID=1&cateID=12&peer=u42`,
/// plus any further parameters, which pass through to the page unchanged.
public struct JumpURL: Sendable, Hashable {
    /// The line category.
    public var rootCateID: Int
    /// The sub-category, when the URL has one.
    public var cateID: Int?
    /// The other party, when the URL has one (opening a chat needs it; routing does not).
    public var peer: String?
    /// The URL as given.
    private let text: String
    /// Where the query starts in `text`, in UTF-8 bytes.
    private let queryOffset: Int

    /// The query exactly as written, without the `?`.
    public var query: String {
        let utf8 = text.utf8
        return String(Substring(utf8[utf8.index(utf8.startIndex, offsetBy: queryOffset)...]))
    }

    /// Every parameter, percent-decoded, in the order written.
    public var parameters: [(name: String, value: String)] { Self.decodeQuery(query[...]) }

    /// A query's `name=value` pairs, percent-decoded, in the order written (a part that does not
    /// decode is kept as written).
    static func decodeQuery(_ query: Substring) -> [(name: String, value: String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (percentDecoded(parts[0]) ?? String(parts[0]),
                    parts.count > 1 ? percentDecoded(parts[1]) ?? String(parts[1]) : "")
        }
    }

    /// The URL of a line's page, with the caller's query unchanged.
    public func url(forLine line: String) -> String { "im://chat/\(line)?\(query)" }

    /// The URL as callers write it, which the legacy page takes.
    public var legacyURL: String { "im://chat?\(query)" }

    /// Why a jump URL was refused.
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        /// One line, quoting the URL's text as it is: whoever draws it escapes it.
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Parses a jump URL in one pass over its bytes; only the peer is copied out.
    ///
    /// - Throws: ``Malformed`` when the URL is not `im://chat?…`, `rootCateID` is missing, or an
    ///   id is not a whole number from 0 to 2147483647, or a parameter is given twice.
    public static func parse(_ text: String) throws(Malformed) -> JumpURL {
        let (jump, line) = try parseChat(text)
        guard line == nil else {
            throw Malformed(description: "\"\(text)\" has a path after im://chat; callers send im://chat?rootCateID=<n>&…, and the converter picks the page")
        }
        return jump
    }

    /// Parses a chat URL: a jump (`im://chat?…`) or a line's page (`im://chat/<line>?…`, as the
    /// converter rewrites a jump). The scheme and host match in any case (RFC 3986); one
    /// trailing `/` is allowed; any other path is refused.
    public static func parseChat(_ text: String) throws(Malformed) -> (jump: JumpURL, line: String?) {
        var contiguous = text
        let result = contiguous.withUTF8 { bytes in parse(bytes, text: text) }
        return try result.get()
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, text: String) -> Result<(jump: JumpURL, line: String?), Malformed> {
        func malformed(_ description: String) -> Result<(jump: JumpURL, line: String?), Malformed> { .failure(Malformed(description: description)) }
        func slice(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        func equals(_ range: Range<Int>, _ name: StaticString) -> Bool {
            range.count == name.utf8CodeUnitCount
                && memcmp(bytes.baseAddress! + range.lowerBound, name.utf8Start, range.count) == 0
        }
        let prefix: StaticString = "im://chat"
        let prefixLength = prefix.utf8CodeUnitCount
        // Scheme and host are case-insensitive: compare ASCII letters folded to lower case.
        let matchesPrefix = bytes.count >= prefixLength && (0..<prefixLength).allSatisfy { offset in
            let byte = bytes[offset]
            let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
            return folded == prefix.utf8Start[offset]
        }
        guard matchesPrefix else {
            return malformed("\"\(text)\" is not a chat jump URL; expected im://chat?rootCateID=<n>&cateID=<n>&peer=<id>")
        }
        var index = prefixLength
        var line: String?
        if index < bytes.count, bytes[index] == UInt8(ascii: "/") {
            index += 1
            var end = index
            while end < bytes.count, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
            if end > index {
                let segment = slice(index..<end)
                guard LineID.isValid(segment) else {
                    return malformed("\"\(text)\" has a path after im://chat that is not a line's page; callers send im://chat?rootCateID=<n>&…, and the converter picks the page")
                }
                line = segment
                index = end
            }
        }
        guard index == bytes.count || bytes[index] == UInt8(ascii: "?") else {
            return malformed("\"\(text)\" has a path after im://chat; callers send im://chat?rootCateID=<n>&…, and the converter picks the page")
        }
        let queryOffset = min(index + 1, bytes.count)
        if let hash = bytes[queryOffset...].firstIndex(of: UInt8(ascii: "#")) {
            return malformed("jump URLs have no fragment; remove \"\(slice(hash..<bytes.count))\"")
        }
        var rootCateID: Int?
        var cateID: Int?
        var peer: String?
        var start = queryOffset
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "&") { end += 1 }
            defer { start = end + 1 }
            guard end > start else { continue }
            var equalsSign = start
            while equalsSign < end, bytes[equalsSign] != UInt8(ascii: "=") { equalsSign += 1 }
            let name = start..<equalsSign
            let value = min(equalsSign + 1, end)..<end
            if equals(name, "rootCateID") {
                guard rootCateID == nil else { return malformed("rootCateID is given twice; give it once") }
                switch id(bytes, value, name: "rootCateID") {
                case .success(let number): rootCateID = number
                case .failure(let error): return .failure(error)
                }
            } else if equals(name, "cateID") {
                guard cateID == nil else { return malformed("cateID is given twice; give it once") }
                switch id(bytes, value, name: "cateID") {
                case .success(let number): cateID = number
                case .failure(let error): return .failure(error)
                }
            } else if equals(name, "peer") {
                guard peer == nil else { return malformed("peer is given twice; give it once") }
                let raw = slice(value)
                guard let decoded = percentDecoded(Substring(raw)), !decoded.isEmpty else {
                    return malformed("peer \"\(raw)\" is empty or badly percent-encoded")
                }
                if let problem = StorePath.problem(withID: decoded) {
                    return malformed("peer id \(problem)")
                }
                peer = decoded
            }
        }
        guard let rootCateID else {
            return malformed("\"\(text)\" has no rootCateID; add rootCateID=<n>")
        }
        return .success((JumpURL(rootCateID: rootCateID, cateID: cateID, peer: peer, text: text, queryOffset: queryOffset), line))
    }

    private static func id(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, name: String) -> Result<Int, Malformed> {
        func invalid() -> Result<Int, Malformed> {
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
            return .failure(Malformed(description: "\(name) \"\(text)\" is not a whole number from 0 to \(Int32.max)"))
        }
        guard !range.isEmpty, range.count <= 10 else { return invalid() }
        var result = 0
        for index in range {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return invalid() }
            result = result * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard result <= Int(Int32.max) else {
            return .failure(Malformed(description: "\(name) \(result) is larger than \(Int32.max)"))
        }
        return .success(result)
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

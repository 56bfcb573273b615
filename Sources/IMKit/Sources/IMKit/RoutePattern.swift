/// A route pattern such as `house://listing/:id`: a scheme, a host, and path segments, each a
/// literal or a `:parameter`.
@_spi(Host)
public struct RoutePattern: Sendable, Hashable, CustomStringConvertible {
    /// Frozen: a segment is a literal or a parameter and nothing else, and the host's matcher
    /// switches over both without a default (host-only API; no benchmark depends on it).
    @frozen public enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    public let scheme: String
    public let host: String
    public let segments: [Segment]

    public init(scheme: String, host: String, segments: [Segment]) {
        self.scheme = scheme
        self.host = host
        self.segments = segments
    }

    /// The pattern with parameter names erased: two patterns with the same shape claim the
    /// same URLs, so they conflict.
    public var shape: String {
        "\(scheme)://\(host)" + segments.map { segment in
            switch segment {
            case .literal(let text): "/" + text
            case .parameter: "/:"
            }
        }.joined()
    }

    public var description: String {
        "\(scheme)://\(host)" + segments.map { segment in
            switch segment {
            case .literal(let text): "/" + text
            case .parameter(let name): "/:" + name
            }
        }.joined()
    }

    /// Where `://` is in a URL or pattern, found by bytes (it is read for every route at start-up).
    public static func schemeSeparator(in text: some StringProtocol) -> Range<String.Index>? {
        let utf8 = text.utf8
        var index = utf8.startIndex
        while index < utf8.endIndex {
            if utf8[index] == UInt8(ascii: ":") {
                let slash = utf8.index(after: index)
                if slash < utf8.endIndex, utf8[slash] == UInt8(ascii: "/") {
                    let second = utf8.index(after: slash)
                    if second < utf8.endIndex, utf8[second] == UInt8(ascii: "/") {
                        return index..<utf8.index(after: second)
                    }
                }
                return nil
            }
            index = utf8.index(after: index)
        }
        return nil
    }

    /// Parses a pattern; `nil` with a reason when it is not `scheme://host[/segment...]`.
    public static func parse(_ text: String) -> Result<RoutePattern, RegistrationError> {
        func invalid(_ why: String) -> Result<RoutePattern, RegistrationError> {
            .failure(RegistrationError(.invalid, "route pattern '\(text)' \(why); write it like 'house://listing/:id'"))
        }
        guard let separator = schemeSeparator(in: text) else { return invalid("has no scheme") }
        let scheme = String(text[..<separator.lowerBound])
        guard let first = scheme.first, first.isLetter, first.isASCII,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else {
            return invalid("has an invalid scheme")
        }
        var parts = text[separator.upperBound...].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let host = parts.removeFirst()
        guard !host.isEmpty, !host.contains("?"), !host.contains(":") else { return invalid("has no host") }
        if parts.last == "" { parts.removeLast() }
        var segments: [Segment] = []
        var names: Set<String> = []
        for part in parts {
            guard !part.isEmpty, !part.contains("?"), !part.contains("#") else { return invalid("has an empty segment or a query") }
            if part.hasPrefix(":") {
                let name = String(part.dropFirst())
                guard !name.isEmpty, names.insert(name).inserted else { return invalid("repeats or omits a parameter name") }
                segments.append(.parameter(name))
            } else {
                segments.append(.literal(part))
            }
        }
        return .success(RoutePattern(scheme: scheme.lowercased(), host: host.lowercased(), segments: segments))
    }
}

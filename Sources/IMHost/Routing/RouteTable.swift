@_spi(Host) import IMKit

/// URL → handler, for the host's own routes (chat pages) and the lines'. A URL is matched by
/// its scheme, host and number of path segments (one hash lookup), then against the few
/// patterns of that shape, literals before parameters.
public struct RouteTable {
    /// What a route leads to.
    enum Target {
        /// A line's handler.
        case handler(RouteHandler)
        /// `im://chat?…`: the converter picks the page.
        case converter
        /// `im://chat/<line>?…`: that line's page.
        case chatPage(String)
        /// A line's route known from the plugin cache: load the line, then match again.
        case lazy(String)
    }

    struct Route {
        let pattern: RoutePattern
        let allowExternal: Bool
        /// The line that registered it, or `nil` for the host.
        let line: String?
        let target: Target
    }

    /// A matched route with its parameters.
    struct Match {
        let route: Route
        let parameters: [String: String]
    }

    private var buckets: [String: [Route]] = [:]
    private var shapes: [String: Route] = [:]

    /// Every route, as `pattern (owner, external or internal)`, sorted, for reports.
    public var descriptions: [(pattern: String, line: String?, allowExternal: Bool)] {
        shapes.values.map { ("\($0.pattern)", $0.line, $0.allowExternal) }.sorted { $0.pattern < $1.pattern }
    }

    /// Who registered a pattern of this shape, as errors name owners.
    func owner(ofShape shape: String) -> String? {
        shapes[shape].map { $0.line.map { "line '\($0)'" } ?? "the host" }
    }

    private static func bucket(_ scheme: String, _ host: String, _ count: Int) -> String {
        "\(scheme)://\(host)/\(count)"
    }

    /// Adds a route, replacing one of the same shape (a cached route its line now registers).
    mutating func add(_ route: Route) {
        shapes[route.pattern.shape] = route
        let key = Self.bucket(route.pattern.scheme, route.pattern.host, route.pattern.segments.count)
        buckets[key, default: []].removeAll { $0.pattern.shape == route.pattern.shape }
        buckets[key, default: []].append(route)
        // Literal segments beat parameters: sort the more literal patterns first.
        buckets[key]?.sort { lhs, rhs in
            lhs.pattern.segments.count { if case .literal = $0 { true } else { false } }
                > rhs.pattern.segments.count { if case .literal = $0 { true } else { false } }
        }
    }

    /// Forgets a line's cached routes, before it registers for real or after it failed.
    mutating func removeLazy(line: String) {
        for (shape, route) in shapes where route.line == line {
            if case .lazy = route.target { shapes[shape] = nil }
        }
        for key in buckets.keys {
            buckets[key]?.removeAll { route in
                if case .lazy = route.target { return route.line == line }
                return false
            }
        }
    }

    /// The route a URL matches, with its path and query parameters, or `nil`.
    func match(_ url: String) -> Match? {
        guard let separator = url.firstRange(of: "://") else { return nil }
        let scheme = url[..<separator.lowerBound].lowercased()
        var rest = url[separator.upperBound...]
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        let host = String(parts.removeFirst())
        if parts.last == "" { parts.removeLast() }
        guard let candidates = buckets[Self.bucket(scheme, host, parts.count)] else { return nil }
        for route in candidates {
            var parameters: [String: String] = [:]
            var matched = true
            for (segment, part) in zip(route.pattern.segments, parts) {
                switch segment {
                case .literal(let text): matched = matched && text == part
                case .parameter(let name): parameters[name] = JumpURL.percentDecoded(part) ?? String(part)
                }
                if !matched { break }
            }
            guard matched else { continue }
            for pair in query.split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = JumpURL.percentDecoded(kv[0]) ?? String(kv[0])
                if parameters[name] == nil {
                    parameters[name] = kv.count > 1 ? JumpURL.percentDecoded(kv[1]) ?? String(kv[1]) : ""
                }
            }
            return Match(route: route, parameters: parameters)
        }
        return nil
    }
}

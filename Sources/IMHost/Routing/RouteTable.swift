@_spi(Host) import IMKit

/// URL → handler, for the registered lines' routes (chat URLs, `im://chat…`, are the
/// converter's: ``ChatHost/open(route:external:window:)`` sends them there first). A URL is
/// looked up whole among the patterns without parameters (one hash lookup), then by its scheme,
/// host and number of path segments among the few patterns with parameters, more literal ones
/// first. A line's routes use its own scheme (`house://`), so a URL names the line to load
/// before it can be matched.
public struct RouteTable {
    struct Route {
        let pattern: RoutePattern
        let allowExternal: Bool
        /// The line that registered it.
        let line: String
        let handler: RouteHandler
        /// The pattern with parameter names erased, computed once.
        let shape: String
        /// How many segments are literal: more literal patterns are tried first.
        let literals: Int

        init(pattern: RoutePattern, allowExternal: Bool, line: String, handler: @escaping RouteHandler) {
            self.pattern = pattern
            self.allowExternal = allowExternal
            self.line = line
            self.handler = handler
            shape = pattern.shape
            literals = pattern.segments.count { if case .literal = $0 { true } else { false } }
        }
    }

    /// A matched route with its parameters.
    struct Match {
        let route: Route
        let parameters: [String: String]
    }

    /// Patterns without parameters, by their shape (which is then the URL's path itself).
    private var exact: [String: Route] = [:]
    /// Patterns with parameters, by scheme, host and segment count.
    private var buckets: [String: [Route]] = [:]

    private static func bucket(_ scheme: String, _ host: String, _ count: Int) -> String {
        "\(scheme)://\(host)/\(count)"
    }

    /// Adds a route. No two have the same shape: a line's routes use its own scheme, and the
    /// registrar refuses a line's second route of one shape.
    mutating func add(_ route: Route) {
        if route.literals == route.pattern.segments.count {
            exact[route.shape] = route
            return
        }
        let key = Self.bucket(route.pattern.scheme, route.pattern.host, route.pattern.segments.count)
        var list = buckets[key] ?? []
        let position = list.firstIndex { $0.literals < route.literals } ?? list.endIndex
        list.insert(route, at: position)
        buckets[key] = list
    }

    /// The route a URL matches, with its path and query parameters, or `nil`.
    func match(_ url: String) -> Match? {
        guard let separator = RoutePattern.schemeSeparator(in: url) else { return nil }
        let scheme = url[..<separator.lowerBound].lowercased()
        var rest = url[separator.upperBound...]
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        // The host matches in any case (RFC 3986), as the scheme does; path segments as written.
        let host = parts.removeFirst().lowercased()
        if parts.last == "" { parts.removeLast() }
        // An empty segment (`a//b`) names no route.
        guard !parts.contains(where: \.isEmpty) else { return nil }
        let whole = "\(scheme)://\(host)" + parts.map { "/" + $0 }.joined()
        if let route = exact[whole] {
            return Match(route: route, parameters: Self.queryParameters(query, into: [:]))
        }
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
            return Match(route: route, parameters: Self.queryParameters(query, into: parameters))
        }
        return nil
    }

    /// Adds the query's parameters, percent-decoded; path parameters of the same name win.
    private static func queryParameters(_ query: Substring, into parameters: [String: String]) -> [String: String] {
        var parameters = parameters
        for (name, value) in JumpURL.decodeQuery(query) where parameters[name] == nil {
            parameters[name] = value
        }
        return parameters
    }
}

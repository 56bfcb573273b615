@_spi(Host) import IMKit

/// URL → handler, for the host's own routes (chat pages) and the registered lines'. A URL is
/// looked up whole among the patterns without parameters (one hash lookup), then by its scheme,
/// host and number of path segments among the few patterns with parameters, more literal ones
/// first. A line's routes use its own scheme (`house://`), so a URL names the line to load
/// before it can be matched.
public struct RouteTable {
    /// What a route leads to.
    enum Target {
        /// A line's handler.
        case handler(RouteHandler)
        /// `im://chat?…`: the converter picks the page.
        case converter
        /// `im://chat/<line>?…`: that line's page (the `line` parameter).
        case chatPage
    }

    struct Route {
        let pattern: RoutePattern
        let allowExternal: Bool
        /// The line that registered it, or `nil` for the host.
        let line: String?
        let target: Target
        /// The pattern with parameter names erased, computed once.
        let shape: String
        /// How many segments are literal: more literal patterns are tried first.
        let literals: Int

        init(pattern: RoutePattern, allowExternal: Bool, line: String?, target: Target) {
            self.pattern = pattern
            self.allowExternal = allowExternal
            self.line = line
            self.target = target
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
    private var shapes: [String: Route] = [:]

    private static func bucket(_ scheme: String, _ host: String, _ count: Int) -> String {
        "\(scheme)://\(host)/\(count)"
    }

    /// Adds a route, replacing one of the same shape (a cached route its line now registers).
    mutating func add(_ route: Route) {
        let replaced = shapes.updateValue(route, forKey: route.shape) != nil
        if route.literals == route.pattern.segments.count {
            exact[route.shape] = route
            return
        }
        let key = Self.bucket(route.pattern.scheme, route.pattern.host, route.pattern.segments.count)
        var list = buckets[key] ?? []
        if replaced { list.removeAll { $0.shape == route.shape } }
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

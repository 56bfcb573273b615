@_spi(Host) import IMKit

/// URL → handler, for the host's own routes (chat pages) and the lines'. A URL is looked up
/// whole among the patterns without parameters (one hash lookup), then by its scheme, host and
/// number of path segments among the few patterns with parameters, more literal ones first.
public struct RouteTable {
    /// What a route leads to.
    enum Target {
        /// A line's handler.
        case handler(RouteHandler)
        /// `im://chat?…`: the converter picks the page.
        case converter
        /// `im://chat/<line>?…`: that line's page (the `line` parameter).
        case chatPage
        /// A line's route known from the plugin cache: load the line, then match again.
        case lazy(String)
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

    /// Routes known from the plugin cache, not parsed until their line loads: by the pattern's
    /// `scheme://host`, each with its pattern text and line.
    private var lazy: [String: [(pattern: String, line: String, allowExternal: Bool)]] = [:]
    /// Patterns without parameters, by their shape (which is then the URL's path itself).
    private var exact: [String: Route] = [:]
    /// Patterns with parameters, by scheme, host and segment count.
    private var buckets: [String: [Route]] = [:]
    private var shapes: [String: Route] = [:]

    /// Who registered a pattern of this shape, as errors name owners.
    func owner(ofShape shape: String) -> String? {
        if let route = shapes[shape] { return route.line.map { "line '\($0)'" } ?? "the host" }
        guard let separator = RoutePattern.schemeSeparator(in: shape) else { return nil }
        let prefix = Self.prefix(of: shape, after: separator)
        for candidate in lazy[prefix] ?? [] {
            if case .success(let pattern) = RoutePattern.parse(candidate.pattern), pattern.shape == shape {
                return "line '\(candidate.line)'"
            }
        }
        return nil
    }

    /// `scheme://host` of a URL or pattern, the scheme lowercased.
    private static func prefix(of text: String, after separator: Range<String.Index>) -> String {
        let rest = text[separator.upperBound...]
        let host = rest.prefix { $0 != "/" && $0 != "?" }
        return text[..<separator.lowerBound].lowercased() + "://" + host
    }

    /// Records a route a line registered last time, from the plugin cache, without parsing it.
    mutating func addLazy(_ pattern: String, line: String, allowExternal: Bool) {
        guard let separator = RoutePattern.schemeSeparator(in: pattern) else { return }
        lazy[Self.prefix(of: pattern, after: separator), default: []].append((pattern, line, allowExternal))
    }

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

    /// Forgets a line's cached routes, before it registers for real or after it failed.
    mutating func removeLazy(line: String) {
        for key in lazy.keys {
            lazy[key]?.removeAll { $0.line == line }
        }
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
        let host = String(parts.removeFirst())
        if parts.last == "" { parts.removeLast() }
        let whole = "\(scheme)://\(host)" + parts.map { "/" + $0 }.joined()
        if let route = exact[whole] {
            return Match(route: route, parameters: Self.queryParameters(query, into: [:]))
        }
        guard let candidates = buckets[Self.bucket(scheme, host, parts.count)] else { return lazyMatch(scheme, host, parts) }
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
        return lazyMatch(scheme, host, parts)
    }

    /// A route known from the cache that would match: its line must load before it can answer.
    private func lazyMatch(_ scheme: String, _ host: String, _ parts: [Substring]) -> Match? {
        for candidate in lazy["\(scheme)://\(host)"] ?? [] {
            guard case .success(let pattern) = RoutePattern.parse(candidate.pattern), pattern.segments.count == parts.count else { continue }
            let fits = zip(pattern.segments, parts).allSatisfy { segment, part in
                if case .literal(let text) = segment { return text == part }
                return true
            }
            if fits {
                return Match(route: Route(pattern: pattern, allowExternal: candidate.allowExternal, line: candidate.line,
                                          target: .lazy(candidate.line)),
                             parameters: [:])
            }
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

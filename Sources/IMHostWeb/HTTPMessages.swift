import CMicroHTTPD
import IMKit

/// A request, read whole: libmicrohttpd has parsed it and percent-decoded its query.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path, without the query.
    public var path: String
    /// Header fields, in order (names as sent; look them up with ``header(_:)``).
    public var headers: [(name: String, value: String)]
    /// The query's arguments, in order, decoded.
    public var query: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, path: String, headers: [(name: String, value: String)] = [], query: [(name: String, value: String)] = [],
                body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.headers = headers
        self.query = query
        self.body = body
    }

    /// Reads the headers and query of the request libmicrohttpd is handling on `connection`.
    init(method: String, path: String, connection: OpaquePointer, body: [UInt8]) {
        var collected = Collected()
        withUnsafeMutablePointer(to: &collected) { pointer in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, collect, pointer)
            pointer.pointee.intoQuery = true
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, collect, pointer)
        }
        self.init(method: method, path: path, headers: collected.headers, query: collected.query, body: body)
    }

    /// The first header field named `name` (case-insensitively), if any.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The first query argument named `name`, if any.
    public func argument(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// The value of cookie `name`, if the request carries it.
    public func cookie(_ name: String) -> String? {
        for field in headers where field.name.lowercased() == "cookie" {
            for part in field.value.split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].drop(while: { $0 == " " }) == name { return String(pair[1]) }
            }
        }
        return nil
    }

    fileprivate struct Collected {
        var headers: [(name: String, value: String)] = []
        var query: [(name: String, value: String)] = []
        var intoQuery = false
    }
}

private let collect: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    let collected = cls.assumingMemoryBound(to: HTTPRequest.Collected.self)
    let pair = (String(cString: key), value.map { String(cString: $0) } ?? "")
    if collected.pointee.intoQuery { collected.pointee.query.append(pair) } else { collected.pointee.headers.append(pair) }
    return .YES
}

/// What a request is answered with.
public struct HTTPReply {
    public enum Body {
        case bytes([UInt8])
        /// Server-Sent Events, written as they come (``EventStream``).
        case stream(EventStream)
    }

    public var status: Int
    public var headers: [(String, String)]
    public var body: Body

    public init(status: Int, headers: [(String, String)] = [], body: Body) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Plain text, for refusals a person or a script reads. What they quote (a path asked for, a
    /// file's bytes, what a decoder said) comes as it came: its controls are shown escaped here,
    /// where the text is made, as the page's script shows it as it is.
    public static func text(_ status: Int, _ text: String, headers: [(String, String)] = []) -> HTTPReply {
        HTTPReply(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + headers,
                  body: .bytes(Array(TerminalText.safe(text, newlines: true).utf8)))
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Who may use an `imhost web` server: whoever holds the token it printed, as Jupyter does it.
///
/// - The first request carries the token in its query (`/?token=T`); it is traded for a session
///   cookie (HttpOnly, SameSite=Strict), and the address bar loses it (a redirect to the same
///   page without it). Every later request needs that cookie. Tokens and sessions are compared in
///   constant time.
/// - The cookie's name carries the port: browsers keep cookies apart by host, not by port, so
///   alice's and bob's servers on one machine, used from one browser, each keep their own.
/// - The Host header must be the loopback address and this port, so a page from elsewhere whose
///   name was made to point at 127.0.0.1 (DNS rebinding) is refused; a request that changes
///   something must also come from this server's own pages (its Origin).
/// - Cookies do not keep ports apart (a page on another 127.0.0.1 port is the same site, and its
///   requests carry this server's cookie), so where the browser says what made a request (Fetch
///   Metadata), it must be this server's own pages or the person (`Sec-Fetch-Site` `same-origin`
///   or `none`), and it must be what the route serves (`Sec-Fetch-Dest`: a document for a page,
///   `empty` for the event stream and every change, `image` for a photo). A request without
///   these headers (a program, not a browser) is judged on the rest.
public struct WebGate: Sendable {
    public let port: UInt16
    /// The token the server printed.
    public let token: String
    /// The sessions given out, the newest last (a restarted server takes them up again).
    public private(set) var sessions: [String] = []
    /// Whether a chat may be asked for as a frame (the workbench's, `imhost preview`).
    public var framing = false

    public init(port: UInt16, token: String = WebGate.randomSecret(), sessions: [String] = []) {
        self.port = port
        self.token = token
        self.sessions = sessions
    }

    /// The name of this server's session cookie.
    public var cookieName: String { "imhost-\(port)" }

    /// The one origin this server's pages have.
    public var origin: String { "http://127.0.0.1:\(port)" }

    /// The URL to print: the start page, with the token.
    public var url: String { origin + "/?token=" + token }

    /// What a request may do.
    public enum Verdict: Equatable {
        /// It may go on.
        case allowed
        /// It brought the token: answer with a cookie for this new session, and send it on
        /// without the token.
        case newSession(String)
        /// Refused, with the status and one line saying why and what to do.
        case refused(Int, String)
    }

    /// Judges a request: its Host, its Origin when it changes something, and its token or cookie.
    /// Why `request` would be refused, judged on its headers alone (before its body is read);
    /// `nil` when ``judge(_:)`` may let it in. Makes no session.
    public func refusal(_ request: HTTPRequest) -> (status: Int, why: String)? {
        var copy = self
        if case .refused(let status, let why) = copy.judge(request) { return (status, why) }
        return nil
    }

    public mutating func judge(_ request: HTTPRequest) -> Verdict {
        guard request.header("Host") == "127.0.0.1:\(port)" else {
            return .refused(421, "refused: this server answers only http://127.0.0.1:\(port) (the Host header said otherwise); open the URL imhost web printed")
        }
        if let refusal = Self.fetchRefusal(request, framing: framing) { return refusal }
        if request.method != "GET" && request.method != "HEAD" {
            guard request.header("Origin") == origin else {
                return .refused(403, "refused: a change must come from this server's own pages (Origin \(origin)); open the URL imhost web printed")
            }
        }
        if let given = request.argument("token") {
            guard Self.equal(given, token) else { return .refused(403, "refused: that token is not this server's; use the URL imhost web printed") }
            let session = Self.randomSecret()
            sessions.append(session)
            return .newSession(session)
        }
        if let cookie = request.cookie(cookieName), sessions.contains(where: { Self.equal($0, cookie) }) { return .allowed }
        return .refused(403, "refused: no session; open the URL imhost web printed (it carries the token)")
    }

    /// Whether `request` carries one of this server's sessions (its cookie), judged on nothing else.
    public func hasSession(_ request: HTTPRequest) -> Bool {
        guard let cookie = request.cookie(cookieName) else { return false }
        return sessions.contains { Self.equal($0, cookie) }
    }

    /// What a browser may fetch each route as (`Sec-Fetch-Dest`).
    static func destinations(_ method: String, _ path: String, framing: Bool = false) -> Set<String> {
        if method != "GET" && method != "HEAD" { return ["empty"] }
        switch path {
        case "/": return ["document"]
        // A chat is a frame of the workbench's page (`imhost preview`) only where there is one.
        case "/chat": return framing ? ["document", "iframe"] : ["document"]
        case "/events": return ["empty"]
        case "/photo": return ["image"]
        // A voice message's recording, for the page's <audio> player only.
        case "/voice": return ["audio"]
        // A file, downloaded from its link (a navigation that becomes a download).
        case "/file": return ["document", "empty"]
        default:
            if path.hasPrefix("/picture/") { return ["image"] }
            if path.hasSuffix(".js") { return ["script"] }
            if path.hasSuffix(".css") { return ["style"] }
            // The page's icon: fetched as an image, or by the browser itself.
            if path.hasSuffix(".svg") { return ["image", "empty"] }
            return ["document"]
        }
    }

    /// Why the browser's own account of a request (Fetch Metadata) refuses it: made by another
    /// site's page (another port of this machine included), or as something its route does not
    /// serve (a chat loaded as an image). `nil` when it says nothing against it.
    static func fetchRefusal(_ request: HTTPRequest, framing: Bool = false) -> Verdict? {
        if let site = request.header("Sec-Fetch-Site"), site != "same-origin", site != "none" {
            return .refused(403, "refused: the browser says another site's page made this request (Sec-Fetch-Site); this server answers only its own pages: open the URL imhost web printed")
        }
        if let destination = request.header("Sec-Fetch-Dest"), !destinations(request.method, request.path, framing: framing).contains(destination) {
            return .refused(403, "refused: the browser asked for this address as something it does not serve (Sec-Fetch-Dest); open the URL imhost web printed")
        }
        return nil
    }

    /// The Set-Cookie value for a new session.
    public func cookie(_ session: String) -> String {
        "\(cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict"
    }

    /// Whether two secrets are equal, in time that does not depend on where they differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }

    /// 32 random bytes as hex, from the system's generator.
    public static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<64).map { _ in digits[Int(generator.next() % 16)] })
    }

    /// Headers every page carries: a Content-Security-Policy that allows this server's own script
    /// and style and nothing else (no inline script, no other host), and no caching or sniffing.
    ///
    /// `framing`: pages may be framed by this server's own pages, and frame them (the
    /// workbench's, `imhost preview`); otherwise no page is framed anywhere.
    public static func pageHeaders(csp: Bool = true, framing: Bool = false) -> [(String, String)] {
        var headers = [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
                       ("X-Frame-Options", framing ? "SAMEORIGIN" : "DENY")]
        if csp {
            let frames = framing ? "frame-src 'self'; frame-ancestors 'self'" : "frame-ancestors 'none'"
            headers.append(("Content-Security-Policy",
                            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; " + frames))
        }
        return headers
    }
}

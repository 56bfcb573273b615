#if canImport(Glibc)
import Glibc
#endif
import CIMHostSupport
import IMHost

/// Keeps an ``HTTPServer``'s connections for its user: any program on the machine can connect to
/// 127.0.0.1, and libmicrohttpd alone lets a few hundred idle or slow ones lock everyone out (at
/// its connection limit it stops accepting; its timeout counts idle time only, so a header line
/// every few seconds holds a connection forever; its per-address limit cannot tell local users
/// apart). So the server:
///
/// - refuses at once a connection whose other end belongs to another user of the machine (the
///   kernel says whose socket it is);
/// - closes a connection that has not shown this server's session cookie and has not sent a whole
///   request's headers within ``Policy/headerSeconds``;
/// - past ``Policy/budget`` open connections, closes the oldest that have not shown the cookie;
/// - keeps libmicrohttpd's own limit well above the budget, and raises the process's open-file
///   limit to fit, so it never stops accepting.
///
/// A connection is closed with shutdown(2) on its socket: libmicrohttpd then sees it end and
/// lets go of it as it does of any connection the other side closed.
public final class ConnectionKeeper {
    /// What a server lets its connections do.
    struct Policy: Sendable {
        /// Seconds a connection without the session cookie has to send a whole request's headers.
        var headerSeconds: Double = 5
        /// Connections kept open before the oldest without the session cookie are closed.
        var budget = 512
        /// The only user whose programs may connect (this process's, by default); `nil` takes any.
        var owner: uid_t? = geteuid()

        /// libmicrohttpd's own limit: far enough above the budget that it never stops accepting
        /// between two of the server's turns.
        var hardLimit: Int { budget * 4 }
    }

    /// What was closed or refused, and why, since it was last taken.
    public struct Dropped: Sendable, Equatable {
        /// Closed: no whole request within ``Policy/headerSeconds``.
        public var slow = 0
        /// Closed: the oldest without the session cookie, past the budget.
        public var overBudget = 0
        /// Refused as they came: another user's, by uid.
        public var otherUsers: [uid_t: Int] = [:]

        public init() {}

        public var isEmpty: Bool { slow == 0 && overBudget == 0 && otherUsers.isEmpty }
    }

    /// One open connection.
    private struct Open {
        let socket: Int32
        let opened: UInt64
        /// Since when it has been waiting for a request's headers; `nil` while a request is in.
        var waitingSince: UInt64?
        /// It showed the session cookie: its user's browser.
        var session = false
        /// Shut down already; gone once libmicrohttpd lets go of it.
        var closing = false
    }

    let policy: Policy
    private var open: [Int: Open] = [:]
    private(set) var dropped = Dropped()

    init(policy: Policy) {
        self.policy = policy
    }

    /// How many connections are open.
    var count: Int { open.count }

    // MARK: What libmicrohttpd says

    /// Whether a connection from `client` (a `sockaddr_in`) to `port` is let in: not when the
    /// kernel says another user's program made it. One it cannot tell about is let in (the
    /// header deadline and the budget still hold).
    func admits(_ client: UnsafePointer<sockaddr>, length: socklen_t, port: UInt16) -> Bool {
        guard let owner = policy.owner else { return true }
        var uid: uid_t = 0
        guard imhost_loopback_peer_uid(client, length, port, &uid) == 0, uid != owner else { return true }
        dropped.otherUsers[uid, default: 0] += 1
        return false
    }

    func opened(_ connection: OpaquePointer, socket: Int32) {
        let now = Clock.monotonic()
        open[Int(bitPattern: connection)] = Open(socket: socket, opened: now, waitingSince: now)
    }

    func closed(_ connection: OpaquePointer) {
        open[Int(bitPattern: connection)] = nil
    }

    /// A request's headers are in; `session` says whether it carries the session cookie.
    func requestBegan(_ connection: OpaquePointer, session: Bool) {
        let key = Int(bitPattern: connection)
        open[key]?.waitingSince = nil
        if session { open[key]?.session = true }
    }

    /// A request was answered: the connection waits for the next one.
    func requestEnded(_ connection: OpaquePointer) {
        open[Int(bitPattern: connection)]?.waitingSince = Clock.monotonic()
    }

    // MARK: The server's turn

    /// Closes the connections past their deadline, then, past the budget, the oldest without
    /// the session cookie.
    func enforce() {
        let now = Clock.monotonic()
        let deadline = UInt64(policy.headerSeconds * 1e9)
        for (key, connection) in open where !connection.session && !connection.closing {
            guard let since = connection.waitingSince, now - since >= deadline else { continue }
            close(key)
            dropped.slow += 1
        }
        var over = open.values.filter { !$0.closing }.count - policy.budget
        guard over > 0 else { return }
        for (key, _) in open.filter({ !$0.value.session && !$0.value.closing }).sorted(by: { $0.value.opened < $1.value.opened }) {
            guard over > 0 else { break }
            close(key)
            dropped.overBudget += 1
            over -= 1
        }
    }

    /// Milliseconds until the next connection's header deadline; `nil` when none waits.
    func nextDeadline() -> Int32? {
        let now = Clock.monotonic()
        let deadline = UInt64(policy.headerSeconds * 1e9)
        guard let earliest = open.values.filter({ !$0.session && !$0.closing }).compactMap(\.waitingSince).min() else { return nil }
        let due = earliest + deadline
        return due <= now ? 0 : Int32(clamping: (due - now) / 1_000_000 + 1)
    }

    /// What was dropped since the last time, and starts counting again.
    func takeDropped() -> Dropped {
        defer { dropped = Dropped() }
        return dropped
    }

    private func close(_ key: Int) {
        guard let connection = open[key] else { return }
        shutdown(connection.socket, Int32(SHUT_RDWR))
        open[key]?.closing = true
    }
}

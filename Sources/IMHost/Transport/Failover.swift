/// Where a connection's next attempt goes, when, and in which MQTT: the one policy of every
/// connection to a broker (``BrokerLink``), whoever holds it.
///
/// A list of addresses (a cluster's nodes) is moved along: when one fails, the next is tried
/// ``nextAddressDelay`` later, until every address failed in a row since the connection last
/// worked end to end; then the next round waits a backoff that doubles, up to ``listCap`` (a
/// cluster whose nodes all refuse is electing new leaders for seconds, not minutes), or up to
/// ``cap`` for one broker. A failure that is no list's to move past (a refused password) waits
/// what its caller says. MQTT 5 is spoken until a broker says it speaks only 3.1.1.
struct Failover {
    /// Milliseconds before the next address is tried when one fails.
    static let nextAddressDelay: Int64 = 200
    /// The longest backoff between rounds of a list's addresses.
    static let listCap: Int64 = 4000
    /// The longest backoff for one broker.
    static let cap: Int64 = 30 * 1000
    /// The first backoff, and the one after the connection worked.
    static let firstDelay: Int64 = 1000

    /// How many addresses there are.
    let count: Int
    /// The one tried now, or next.
    private(set) var index = 0
    /// Where the present run of failures began: once the list comes back to it, the backoff.
    private var runBegan: Int?
    /// The next backoff.
    private(set) var delay = Self.firstDelay
    /// The MQTT the next attempt speaks.
    var version: MQTTVersion

    init(count: Int, version: MQTTVersion) {
        self.count = count
        self.version = version
    }

    /// The attempt at the present address failed: moves to the next, and returns when to try it,
    /// unless every address failed in a row (then `nil`: the backoff applies).
    mutating func nextAddress(now: Int64) -> Int64? {
        guard count > 1 else { return nil }
        let began = runBegan ?? index
        runBegan = began
        index = (index + 1) % count
        guard index != began else { return nil }
        return now + Self.nextAddressDelay + Int64.random(in: 0...(Self.nextAddressDelay / 2))
    }

    /// When to try again after a round failed: after `wait` (the backoff when `nil`), with a
    /// quarter of it at random, so hosts that lost one broker do not all come back at once. The
    /// backoff doubles.
    mutating func backoff(now: Int64, wait given: Int64? = nil) -> Int64 {
        let wait = given ?? delay
        delay = min(count > 1 ? Self.listCap : Self.cap, delay * 2)
        return now + wait + Int64.random(in: 0...(wait / 4))
    }

    /// The connection works end to end (or the user asked for it again): the backoff and the
    /// run of failed addresses start again.
    mutating func restart() {
        delay = Self.firstDelay
        runBegan = nil
    }
}

@testable import IMHost

/// A broker in the test process, for the in-process tests of delivery and the inbox (beside the
/// tests against a real mosquitto, never instead of them). It behaves as mosquitto 2.0.11 was
/// shown to (BrokerTests, TransportTests, SessionClaimTests):
/// - a PUBACK says the broker took a message, not that anyone got it: past a session's queue
///   limit (`max_queued_messages`) a message is dropped after its PUBACK, and ``loseNext``
///   drops taken messages outright (a broker that died before saving them);
/// - a kept session queues what comes while its user is away, and what it sent a connection
///   that left before acknowledging it (``keepUnacknowledged(_:_:for:)``);
/// - a second connection of a user takes the session over, and the first only sees its
///   connection lost: no DISCONNECT 0x8E;
/// - the ACL of `imhost broker init`: a user writes `imhost/u/+/from/<user>` and reads
///   `imhost/u/<user>/#`; a refused publish is answered "Not authorized"; a subscription to what
///   a user may not read is granted and carries nothing;
/// - retained messages come at subscribe only when asked for, and a client that goes without a
///   goodbye leaves its will;
/// - `~admin` writes `$CONTROL/dynamic-security/v1` and reads its answers on `…/response`, which
///   ``control`` makes, as the dynamic-security plugin does.
///
/// Several of them at addresses of their own (``FakeNodes``) stand for a cluster's nodes, each
/// down, frozen or refusing subscriptions as a test says.
final class FakeBroker {
    /// What a publish the broker took goes to, for a test to count.
    private(set) var taken: [(from: String, topic: String, payload: [UInt8])] = []
    /// Drops the next this many messages it takes (their PUBACKs still say taken).
    var loseNext = 0
    /// How many messages a session keeps queued while its user is away, or its client is slow.
    var queueLimit = 1000
    /// The largest packet it takes (`max_packet_size`): a client refuses a larger publish, as
    /// libmosquitto does (`MOSQ_ERR_OVERSIZE_PACKET`), and, when ``saysPacketLimit``, knows it
    /// from the connect's answer as mosquitto says it in CONNACK.
    var packetLimit: Int?
    var saysPacketLimit = true
    /// Answers nothing and passes nothing on while true, its connections left open: a node
    /// frozen (SIGSTOP) under its clients.
    var frozen = false
    /// Refuses connections while true, as an address where nothing listens does.
    var down = false
    /// Refuses the next this many subscriptions (SUBACK 0x80), as a cluster's node does while its
    /// JetStream waits for the others.
    var refusesSubscriptions = 0
    /// The dynamic-security plugin's answer (`{"responses": …}`) to a control message.
    var control: (([UInt8]) -> [UInt8])?
    /// How many connections it took.
    private(set) var connections = 0

    static let controlTopic = "$CONTROL/dynamic-security/v1"

    /// Every connection is lost, as when the broker restarts.
    func dropConnections() {
        for session in sessions.values { session.client?.lose("broker restarted") }
    }

    /// Keeps `payload` on `topic` in `user`'s session, as a broker keeps a QoS 1 message it sent
    /// a connection that left before acknowledging it: it comes again at the next connect.
    func keepUnacknowledged(_ topic: String, _ payload: [UInt8], for user: String) {
        sessions[user]?.queued.append((topic, payload))
    }

    private var sessions: [String: Session] = [:]
    private var retained: [String: [UInt8]] = [:]

    private struct Session {
        /// Each filter, and whether what comes on it while the user is away is queued (QoS 1).
        var subscriptions: [(filter: String, queued: Bool)] = []
        var queued: [(topic: String, payload: [UInt8])] = []
        weak var client: FakeBrokerClient?
    }

    /// A courier's way to make its client: connected to this broker.
    var makeClient: MakeBrokerClient {
        { [unowned self] settings throws(BrokerClientFailure) in FakeBrokerClient(broker: self, settings: settings) }
    }

    /// Messages the broker took from `user` to `topic`.
    func taken(from user: String, to topic: String) -> Int { taken.count { $0.from == user && $0.topic == topic } }

    // MARK: For the clients

    fileprivate func connect(_ client: FakeBrokerClient) -> Bool {
        connections += 1
        let user = client.settings.user
        let present = sessions[user] != nil
        // Taken over: the first connection is simply lost (mosquitto 2.0.11 sends no 0x8E).
        sessions[user]?.client?.lose("session taken over")
        var session = client.settings.keepsSession ? sessions[user] ?? Session() : Session()
        session.client = client
        let queued = session.queued
        session.queued = []
        sessions[user] = session
        for message in queued { client.deliver(message.topic, message.payload, retained: false) }
        return present
    }

    fileprivate func left(_ client: FakeBrokerClient, goodbye: Bool) {
        let user = client.settings.user
        guard sessions[user]?.client === client else { return }
        sessions[user]?.client = nil
        if !client.settings.keepsSession { sessions[user] = nil }
        if !goodbye, let will = client.settings.will { publish(from: user, topic: will.topic, payload: will.payload, retain: true) }
    }

    fileprivate func subscribe(_ client: FakeBrokerClient, _ filter: String, qos: Int32, retained wanted: Bool) {
        let user = client.settings.user
        sessions[user]?.subscriptions.append((filter, qos > 0))
        guard wanted else { return }
        for (topic, payload) in retained.sorted(by: { $0.key < $1.key }) where Self.matches(filter, topic) && Self.mayRead(user, topic) {
            client.deliver(topic, payload, retained: true)
        }
    }

    /// Takes a publish: false when the ACL refuses it.
    @discardableResult
    fileprivate func publish(from user: String, topic: String, payload: [UInt8], retain: Bool) -> Bool {
        guard Self.mayWrite(user, topic) else { return false }
        taken.append((user, topic, payload))
        guard loseNext == 0 else {
            loseNext -= 1
            return true
        }
        if retain { retained[topic] = payload.isEmpty ? nil : payload }
        if topic == Self.controlTopic, let answer = control?(payload) { publish(from: user, topic: topic + "/response", payload: answer, retain: false) }
        for (name, session) in sessions where Self.mayRead(name, topic) && session.subscriptions.contains(where: { Self.matches($0.filter, topic) }) {
            if let client = session.client {
                client.deliver(topic, payload, retained: false)
            } else if session.queued.count < queueLimit, session.subscriptions.contains(where: { $0.queued && Self.matches($0.filter, topic) }) {
                sessions[name]?.queued.append((topic, payload))
            }
        }
        return true
    }

    // MARK: The ACL and topic filters

    private static func mayWrite(_ user: String, _ topic: String) -> Bool {
        if user == "~admin" { return topic == controlTopic || topic == controlTopic + "/response" }
        return switch Topic(topic) {
        case .inbox(_, let from)?: from == user
        case .fleetStatus(let owner)?, .report(let owner, _)?: owner == user
        case .fleetConfig?: user == TransportID.operatorID
        case .device?, nil: false
        }
    }

    private static func mayRead(_ user: String, _ topic: String) -> Bool {
        if topic.hasPrefix(controlTopic) { return user == "~admin" && topic == controlTopic + "/response" }
        return switch Topic(topic) {
        case .inbox(let to, _)?: to == user
        case .device(let owner, _)?: owner == user
        case .fleetConfig?, .fleetStatus?: true
        case .report?: user == TransportID.operatorID
        case nil: false
        }
    }

    static func matches(_ filter: String, _ topic: String) -> Bool {
        let wanted = filter.split(separator: "/", omittingEmptySubsequences: false)
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in wanted.enumerated() {
            if level == "#" { return true }
            guard index < parts.count, level == "+" || level == parts[index] else { return false }
        }
        return wanted.count == parts.count
    }
}

/// One connection to a ``FakeBroker``: what it did waits for the next ``service()``, as a real
/// client's events wait on its socket.
final class FakeBrokerClient: BrokerClient {
    let settings: BrokerClientSettings
    private unowned let broker: FakeBroker
    private var events: [BrokerEvent] = []
    private var nextID: Int32 = 1
    private var connected = false

    init(broker: FakeBroker, settings: BrokerClientSettings) {
        self.broker = broker
        self.settings = settings
    }

    /// Connected to a frozen broker, which has not answered (and will not).
    private(set) var awaitingAnswer = false

    /// What the broker said at connect: its packet limit, when it says it.
    private(set) var brokerMaximumPacket: Int?

    func connect() {
        guard !broker.down else {
            events.append(.unreachable(.network("Connection refused")))
            return
        }
        connected = true
        // A frozen broker took the TCP connection and never answers the CONNECT.
        guard !broker.frozen else {
            awaitingAnswer = true
            return
        }
        brokerMaximumPacket = broker.saysPacketLimit ? broker.packetLimit : nil
        events.append(.connected(sessionPresent: broker.connect(self)))
    }

    func service() -> [BrokerEvent] {
        defer { events = [] }
        return events
    }

    func publish(topic: String, payload: [UInt8], retain: Bool) -> Result<Int32, BrokerClientFailure> {
        guard connected else { return .failure(BrokerClientFailure(description: "not connected")) }
        if let limit = broker.packetLimit, publishPacketSize(topic: topic.utf8.count, payload: payload.count) > limit {
            return .failure(BrokerClientFailure(description: "Packet larger than supported by the server", tooLarge: true))
        }
        let id = takeID()
        guard !broker.frozen else { return .success(id) }
        let taken = broker.publish(from: settings.user, topic: topic, payload: payload, retain: retain)
        events.append(.published(id: id, taken ? .taken : .refused("Not authorized")))
        return .success(id)
    }

    func subscribe(_ topic: String, qos: Int32, retained: Bool) -> Result<Int32, BrokerClientFailure> {
        guard connected else { return .failure(BrokerClientFailure(description: "not connected")) }
        let id = takeID()
        guard !broker.frozen else { return .success(id) }
        guard broker.refusesSubscriptions == 0 else {
            broker.refusesSubscriptions -= 1
            events.append(.subscribed(id: id, .refused("Not authorized")))
            return .success(id)
        }
        events.append(.subscribed(id: id, .taken))
        broker.subscribe(self, topic, qos: qos, retained: retained)
        return .success(id)
    }

    func disconnect() {
        guard connected else { return }
        connected = false
        broker.left(self, goodbye: true)
    }

    var readable: [Int32] { [] }
    var writable: [Int32] { [] }

    fileprivate func deliver(_ topic: String, _ payload: [UInt8], retained: Bool) {
        events.append(.message(topic: topic, payload: payload, retained: retained))
    }

    /// The connection is lost without a goodbye: the broker publishes the will.
    func lose(_ why: String) {
        guard connected else { return }
        connected = false
        events.append(.disconnected(.lost(why)))
        broker.left(self, goodbye: false)
    }

    private func takeID() -> Int32 {
        defer { nextID += 1 }
        return nextID
    }
}

/// Brokers at addresses of their own, as a cluster's nodes are to a host that lists them: each
/// connection goes to the one its address names, and the order they were tried in is kept.
final class FakeNodes {
    let brokers: [FakeBroker]
    let addresses: [HostConfig.Transport.Address]
    /// The addresses connections were made to, in order, with the time (the clock's) of each.
    private(set) var tried: [(address: HostConfig.Transport.Address, at: Int64)] = []
    private let clock: TestClock

    init(_ count: Int, clock: TestClock) {
        brokers = (0..<count).map { _ in FakeBroker() }
        addresses = (1...count).map { .tcp(host: "n\($0)", port: 1883) }
        self.clock = clock
    }

    var makeClient: MakeBrokerClient {
        { [unowned self] settings throws(BrokerClientFailure) in
            tried.append((settings.address, clock.now))
            guard let index = addresses.firstIndex(of: settings.address) else { throw BrokerClientFailure(description: "no node at \(settings.address)") }
            return FakeBrokerClient(broker: brokers[index], settings: settings)
        }
    }

    /// A command's way to meet them: its waits move the test's clock on by what they would wait.
    var runtime: ConnectionRuntime {
        ConnectionRuntime(clock: { [clock] in clock.now }, makeClient: makeClient, wait: { [clock] _, milliseconds in clock.now += Int64(max(1, milliseconds)) })
    }
}

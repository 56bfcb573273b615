#if canImport(Glibc)
import Glibc
#endif

/// What the courier needs of a connection to a broker: connect, run, publish, subscribe, leave,
/// and the descriptors to wait on. ``MQTTClient`` (MQTT 5, libmosquitto) is the one the host
/// uses; the tests put a fake in its place to run delivery and the inbox in process, and a client
/// of MQTT 3.1.1 (a clustered broker that speaks only that) can sit behind it later.
///
/// What a client must do:
/// - Never block its owner: ``connect()`` starts an attempt that ``service()`` reports on; the
///   owner waits on ``readable`` and ``writable`` beside its other descriptors, then calls
///   ``service()``, which reads, writes, keeps the connection alive and returns what happened.
/// - Keep the user's session on the broker across connections when ``BrokerClientSettings/keepsSession``
///   says so (MQTT 5: clean start off and a session expiry; 3.1.1: clean session off), so what is
///   sent to a user who is away waits for them.
/// - Publish and subscribe at QoS 1, and answer each with the id it returned (``BrokerEvent/published(id:_:)``,
///   ``BrokerEvent/subscribed(id:_:)``). A taken publish says only that the broker took it, never
///   that anyone got it: the courier counts a message delivered only on the receiver's receipt.
///   A client whose protocol carries no reason (a 3.1.1 PUBACK) answers ``BrokerAnswer/taken``.
/// - Hand over a message marked retained when the broker sent it as retained. A subscription made
///   with `retained: false` should not bring what the topic retains (MQTT 5's retain handling); a
///   client that cannot ask for that hands it over marked retained, and the inbox refuses it.
/// - Say ``Disconnection/takenOver`` only when the broker says so (MQTT 5's DISCONNECT 0x8E);
///   mosquitto 2.0.11 does not, and 3.1.1 cannot: ``SessionClaim`` finds a take-over without it.
/// - Keep its protocol's details to itself: reason codes become ``BrokerAnswer``, ``BrokerRefusal``,
///   ``Unreachable`` and ``Disconnection`` with the broker's words.
package protocol BrokerClient: AnyObject {
    /// Starts connecting; ``service()`` reports how it went (``BrokerEvent/connected(sessionPresent:)``,
    /// ``BrokerEvent/refused(_:)``, ``BrokerEvent/unreachable(_:)``).
    func connect()
    /// Reads and writes what is ready, keeps the connection alive, and returns what happened.
    /// Never blocks.
    func service() -> [BrokerEvent]
    /// Publishes at QoS 1. Returns the id its answer names, or why it could not be queued.
    func publish(topic: String, payload: [UInt8], retain: Bool) -> Result<Int32, BrokerClientFailure>
    /// Publishes at QoS 0, never retained: nothing answers it, no broker stores it, and a client
    /// away does not get it later. Returns whether it was handed over.
    func publishOnce(topic: String, payload: [UInt8]) -> Bool
    /// Subscribes at QoS `qos` (1: what comes while the session's client is away waits for it;
    /// 0: only what comes while it is connected, which on a NATS cluster makes no JetStream
    /// consumer). Returns the id its answer names. `retained`: whether what the topic retains
    /// comes when the subscription is made.
    func subscribe(_ topic: String, qos: Int32, retained: Bool) -> Result<Int32, BrokerClientFailure>
    /// Says goodbye and closes the connection; the session stays on the broker.
    func disconnect()
    /// Descriptors to wait on for reading.
    var readable: [Int32] { get }
    /// Descriptors to wait on for writing.
    var writable: [Int32] { get }
    /// Holds back what is written from now until ``releaseWrites()``: what one service publishes
    /// and answers leaves together, in as few packets as the transport allows (a burst's
    /// messages and acknowledgements, each written on its own, cost the stack a packet each).
    func holdWrites()
    /// Sends at once what ``holdWrites()`` held.
    func releaseWrites()
    /// The largest packet the broker said it takes when it took this connection (MQTT 5's
    /// Maximum Packet Size in CONNACK), or `nil` when it said none. A publish larger than it is
    /// refused by the client (``BrokerClientFailure/tooLarge``), never sent: the broker would end
    /// the connection over it.
    var brokerMaximumPacket: Int? { get }
    /// Whether the connection is made and its CONNECT sent, and the broker's answer not yet come:
    /// an attempt that may be dropped without waiting for a connecting thread.
    var awaitingAnswer: Bool { get }
}

extension BrokerClient {
    /// Subscribes at QoS 1.
    package func subscribe(_ topic: String, retained: Bool = false) -> Result<Int32, BrokerClientFailure> {
        subscribe(topic, qos: 1, retained: retained)
    }
    /// A client without QoS 0 (the fake) publishes at QoS 1, and forgets the answer.
    package func publishOnce(topic: String, payload: [UInt8]) -> Bool {
        if case .success = publish(topic: topic, payload: payload, retain: false) { true } else { false }
    }
    /// A client with nothing to gain by holding writes back (the fake) does nothing.
    package func holdWrites() {}
    package func releaseWrites() {}
    /// A client whose protocol cannot say it (the fake, 3.1.1) knows of no limit.
    package var brokerMaximumPacket: Int? { nil }
    /// A client that connects at once (the fake) is never waiting.
    package var awaitingAnswer: Bool { false }

    /// ``readable`` and ``writable`` as poll(2) entries.
    package var descriptors: [pollfd] {
        readable.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) } + writable.map { pollfd(fd: $0, events: Int16(POLLOUT), revents: 0) }
    }
}

/// The bytes of a QoS 1 PUBLISH of `payload` bytes to a topic of `topic` bytes, as MQTT 5 counts
/// them against a Maximum Packet Size: the fixed header (a byte and the remaining length), the
/// topic, the packet id, an empty property list, and the payload.
package func publishPacketSize(topic: Int, payload: Int) -> Int {
    let remaining = 2 + topic + 2 + 1 + payload
    var lengthBytes = 1
    while lengthBytes < 4, remaining >= 1 << (7 * lengthBytes) { lengthBytes += 1 }
    return 1 + lengthBytes + remaining
}

/// Makes a client, not yet connected.
package typealias MakeBrokerClient = (BrokerClientSettings) throws(BrokerClientFailure) -> any BrokerClient

/// Which MQTT a connection speaks.
package enum MQTTVersion: Sendable, Equatable {
    /// MQTT 5: session expiry, retain handling, reason codes, Maximum Packet Size.
    case v5
    /// MQTT 3.1.1 (a NATS cluster speaks only this): a clean-session flag instead of an expiry,
    /// retained messages on every subscription, no reasons.
    case v311
}

/// How to connect, whatever the protocol.
package struct BrokerClientSettings: Sendable {
    package var address: HostConfig.Transport.Address
    /// The login: the user, or a device's `user~device`.
    package var user: String
    package var password: String
    /// Which MQTT to speak.
    package var version = MQTTVersion.v5
    /// The client id: by default one nobody can guess without the password (``clientID(login:password:)``).
    package var clientID: String
    /// Seconds between pings when nothing else is sent.
    package var keepAlive: Int32 = 30
    /// Whether the broker keeps the session (the subscriptions and what is queued for them) while
    /// this user is away. The operator's short connections keep none.
    package var keepsSession = true
    /// The largest packet this host takes: a client that can say so (MQTT 5) asks the broker to
    /// drop larger ones rather than send them; one that cannot hands them over, and the envelope
    /// reader refuses them.
    package var maximumPacket: UInt32
    /// TLS (`mqtts://`): the CA the broker's certificate must chain to, and this host's
    /// certificate and key when the broker asks for one. The broker's name is checked.
    package var tls: TLSFiles?
    /// What the broker publishes (retained, QoS 1) when this connection ends without a goodbye:
    /// a topic and a payload.
    package var will: (topic: String, payload: [UInt8])?

    package struct TLSFiles: Sendable {
        package var ca: String
        package var cert: String?
        package var key: String?
        package init(ca: String, cert: String?, key: String?) {
            self.ca = ca
            self.cert = cert
            self.key = key
        }
    }

    package init(address: HostConfig.Transport.Address, user: String, password: String, maximumPacket: UInt32) {
        self.address = address
        self.user = user
        self.password = password
        self.maximumPacket = maximumPacket
        clientID = Self.clientID(login: user, password: password)
    }

    /// The client id of `login`: derived from its password, so no other user can guess it. A
    /// broker that ties client ids to logins (mosquitto with `use_username_as_clientid`) puts the
    /// login in its place; one that does not (NATS) would let anyone who knows a client id take
    /// that session over, or wipe it with a clean session. The same login and password make the
    /// same id at every connect, so the session (and what is queued for it) is found again; a new
    /// password makes a new session.
    package static func clientID(login: String, password: String) -> String {
        var hash = SHA256()
        hash.update(Array("imhost client id".utf8) + [0] + Array(login.utf8) + [0] + Array(password.utf8))
        let digits = Array("0123456789abcdef".utf8)
        return "imhost-" + String(decoding: hash.finish().prefix(16).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }
}

/// Why a client could not be made, or could not queue a publish or a subscription.
package struct BrokerClientFailure: Error, CustomStringConvertible {
    package var description: String
    /// A publish larger than the broker takes (``BrokerClient/brokerMaximumPacket``): it fails
    /// the same way again, until the broker's limit is raised.
    package var tooLarge = false
    package init(description: String, tooLarge: Bool = false) {
        self.description = description
        self.tooLarge = tooLarge
    }
}

/// What a connection did.
package enum BrokerEvent: Sendable, Equatable {
    /// The broker took the connection (`sessionPresent`: it kept the session from before).
    case connected(sessionPresent: Bool)
    /// The broker refused the connection.
    case refused(BrokerRefusal)
    /// The attempt failed before the broker answered.
    case unreachable(Unreachable)
    /// The connection ended.
    case disconnected(Disconnection)
    /// A message arrived.
    case message(topic: String, payload: [UInt8], retained: Bool)
    /// The broker answered a publish.
    case published(id: Int32, BrokerAnswer)
    /// The broker answered a subscription.
    case subscribed(id: Int32, BrokerAnswer)
}

/// The broker's answer to a publish or a subscription.
package enum BrokerAnswer: Sendable, Equatable {
    /// Taken (a publish: by the broker, which is not delivery).
    case taken
    /// Refused, in the broker's words ("Not authorized").
    case refused(String)
}

/// Why a broker refused a connection.
public struct BrokerRefusal: Sendable, Equatable {
    /// The broker's words.
    public var reason: String
    /// Whether it refused the user name or password (or the user may not connect): the password
    /// file is what to check, not the broker's log.
    public var credentials: Bool
    /// Whether it does not speak the MQTT the host spoke (a NATS cluster takes only 3.1.1).
    public var wrongVersion = false
    /// Whether it is not serving now (MQTT's Server Unavailable, Server Busy): a cluster's node
    /// waiting for its quorum. It may work again soon, or on another node.
    public var unavailable = false

    package init(reason: String, credentials: Bool) {
        self.reason = reason
        self.credentials = credentials
    }
}

/// Why an attempt to connect failed before the broker answered.
public enum Unreachable: Sendable, Equatable {
    /// No broker there, a name that does not resolve, a refused connection: it may work later as
    /// it is. The system's words.
    case network(String)
    /// The TLS handshake failed: it fails again until someone fixes a certificate or a setting.
    case handshake(TLSProblem)
}

/// Why a TLS handshake with the broker failed, as OpenSSL's verify result tells it.
public struct TLSProblem: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The broker's certificate has expired.
        case expired
        /// Not valid yet (this machine's clock, or the certificate's dates).
        case notYetValid
        /// It does not name the host connected to.
        case wrongName
        /// Not signed by the CA in `transport.caFile`.
        case untrusted
        /// The certificate was trusted and the handshake failed anyway: the broker may want a
        /// client certificate.
        case afterTrust
        /// OpenSSL does not say which check failed.
        case unknown
    }

    public var kind: Kind
    /// OpenSSL's own words for it ("certificate has expired").
    public var openSSL: String
    /// The host connected to.
    public var host: String

    package init(kind: Kind, openSSL: String, host: String) {
        self.kind = kind
        self.openSSL = openSSL
        self.host = host
    }
}

/// How a connection ended.
package enum Disconnection: Sendable, Equatable {
    /// Lost, or closed by the broker: why, in the broker's or the system's words.
    case lost(String)
    /// The broker said another connection of the same user took the session over.
    case takenOver
    /// The broker ended the connection by an administrator's action (MQTT 5 reason 0x98): the
    /// dynamic-security plugin does this to a client it deletes or disables.
    case administrative
}

extension TLSProblem: CustomStringConvertible {
    /// What failed and what to do, in one line. Here, not in a front end's words, because the
    /// operator's commands (``FleetOperator``, whose failures are lines) say it too; a front end
    /// that words it otherwise has ``kind``.
    public var description: String {
        switch kind {
        case .expired:
            "the broker's certificate has expired (OpenSSL: \(openSSL)): renew it on the broker"
        case .notYetValid:
            "the broker's certificate is not valid yet (OpenSSL: \(openSSL)): check this machine's clock and the certificate's dates"
        case .wrongName:
            "the broker's certificate does not name \(host) (OpenSSL: \(openSSL)): connect by a name the certificate holds, or issue it for \(host)"
        case .untrusted:
            "the broker's certificate is not signed by the CA in transport.caFile (OpenSSL: \(openSSL)): set caFile to the CA that signed it"
        case .afterTrust:
            "the TLS handshake failed though the broker's certificate was trusted: if the broker asks for a client certificate, set transport.certFile and keyFile"
        case .unknown:
            // OpenSSL's state went with the connection, or it does not say: every cause, and where to look.
            "the TLS handshake with the broker failed: check that transport.caFile holds the CA that signed the broker's certificate, that the certificate names \(host) and has not expired, and that this port is the broker's TLS listener"
        }
    }
}

extension Unreachable: CustomStringConvertible {
    /// The system's words, or the handshake's problem.
    public var description: String {
        switch self {
        case .network(let why): why
        case .handshake(let problem): problem.description
        }
    }
}

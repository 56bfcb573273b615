import IMHost
import CMosquitto
#if canImport(Glibc)
import Glibc
#endif

/// One MQTT 3.1.1 connection attempt through libmosquitto, to learn whether a broker serves
/// MQTT now: connects with a clean session and a random client id, waits for the CONNACK, and
/// disconnects. `imhost broker run` asks it of every node of a cluster before saying it accepts
/// connections: a NATS node listens (and says it is ready) before JetStream, which keeps MQTT
/// sessions, has a leader, and until then refuses or drops an MQTT connect.
enum MQTTProbe {
    /// How the attempt went.
    enum Answer: Equatable, CustomStringConvertible {
        /// CONNACK 0.
        case accepted
        /// Another CONNACK code (5: not authorised; 3: server unavailable).
        case refused(Int32)
        /// No CONNACK: the connection failed or closed, or the time ran out.
        case unanswered(String)

        var description: String {
            switch self {
            case .accepted: "accepted"
            case .refused(let code): "refused (CONNACK \(code))"
            case .unanswered(let why): why
            }
        }
    }

    private static let library: Void = { mosquitto_lib_init() }()

    /// Connects to `host`:`port` as `login` (the password passed in memory, never on a command
    /// line) and waits up to `seconds` for the broker's answer.
    static func connect(host: String, port: Int, login: String, password: String, seconds: Double) -> Answer {
        _ = library
        let id = "imhost-probe-" + BrokerFolder.newPassword().prefix(16)
        // Where the connect callback leaves the CONNACK code (-1 until it comes). Safe: the
        // callback runs only inside mosquitto_loop on this thread, and the memory outlives it.
        let answer = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        answer.initialize(to: -1)
        defer { answer.deallocate() }
        guard let mosq = mosquitto_new(id, true, answer) else { return .unanswered("mosquitto_new: \(String(cString: strerror(errno)))") }
        defer { mosquitto_destroy(mosq) }
        mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
        mosquitto_username_pw_set(mosq, login, password)
        mosquitto_connect_callback_set(mosq) { _, user, code in
            user?.assumingMemoryBound(to: Int32.self).pointee = code
        }
        let connected = mosquitto_connect(mosq, host, Int32(port), 10)
        guard connected == MOSQ_ERR_SUCCESS.rawValue else {
            let why = connected == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(connected))
            return .unanswered("cannot connect: \(why)")
        }
        let deadline = Clock.monotonic() + UInt64(seconds * 1e9)
        while answer.pointee < 0 {
            let looped = mosquitto_loop(mosq, 50, 1)
            guard looped == MOSQ_ERR_SUCCESS.rawValue else {
                return .unanswered("the connection ended before a CONNACK (\(String(cString: mosquitto_strerror(looped))))")
            }
            guard Clock.monotonic() < deadline else { return .unanswered("no CONNACK within \(seconds) s") }
        }
        guard answer.pointee == 0 else { return .refused(answer.pointee) }
        mosquitto_disconnect(mosq)
        _ = mosquitto_loop(mosq, 50, 1)
        return .accepted
    }
}

import CIMHostSupport
import CMosquitto
import Synchronization
#if canImport(Foundation)
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// One MQTT 5 connection through libmosquitto, driven by its owner's own poll loop (never
/// libmosquitto's thread): the owner waits on ``readable`` and ``writable`` beside its other
/// descriptors, then calls ``service()``, which reads, writes and keeps the connection alive and
/// returns what happened as ``Event``s. Callbacks run inside ``service()``, on the owner's thread.
///
/// Connecting is the one step that blocks (libmosquitto resolves names with a blocking
/// `getaddrinfo` and connects before it returns), so it runs on a thread of its own; the owner's
/// loop goes on meanwhile, and is woken when it is done. Until then nothing else touches the
/// connection.
package final class MQTTClient: BrokerClient {
    package typealias Settings = BrokerClientSettings
    package typealias Failure = BrokerClientFailure
    package typealias Event = BrokerEvent

    /// How long the broker keeps a kept session after a disconnect (MQTT 5 session expiry).
    static let sessionExpiry: UInt32 = 7 * 24 * 3600
    /// How many QoS 1 messages the broker may have in flight to this client at once (MQTT 5
    /// Receive Maximum).
    static let receiveMaximum: UInt16 = 256

    enum State: Equatable {
        case idle, connecting, awaitingAnswer, connected
    }

    private(set) var state = State.idle
    package var awaitingAnswer: Bool { state == .awaitingAnswer }
    /// The largest packet the broker takes, as its CONNACK said (MQTT 5 Maximum Packet Size;
    /// mosquitto says it when `max_packet_size` is set). libmosquitto refuses a larger publish
    /// itself (`MOSQ_ERR_OVERSIZE_PACKET`), never sending it.
    package private(set) var brokerMaximumPacket: Int?
    private let settings: Settings
    /// The connection. Used by one thread at a time: the connecting thread between
    /// ``connect()`` and its wake-up, the owner's thread otherwise.
    private let handle: Handle
    /// A pipe the connecting thread writes one byte to when it is done.
    private let wake: (read: Int32, write: Int32)
    /// The connecting thread's result: a libmosquitto error code, or nil while it runs.
    private let attempt = ConnectAttempt()
    private var events: [Event] = []

    /// The connection's pointer, handed to the connecting thread. Safe to send: exactly one
    /// thread uses it at a time (the owner does not touch it while `state == .connecting`, and
    /// takes it back only after the thread has written its result and its wake byte, which
    /// orders the thread's writes before the owner's reads).
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private static let library: Void = { mosquitto_lib_init() }()

    package init(_ settings: Settings) throws(Failure) {
        _ = Self.library
        self.settings = settings
        var fds: [Int32] = [-1, -1]
        guard imhost_pipe_cloexec(&fds) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
        wake = (fds[0], fds[1])
        _ = fcntl(wake.read, F_SETFL, fcntl(wake.read, F_GETFL) | O_NONBLOCK)
        // The client id no other user can guess (a mosquitto made by imhost broker makes it the
        // login anyway). MQTT 3.1.1 has no session expiry: a session not kept is a clean one.
        guard let made = mosquitto_new(settings.clientID, settings.version == .v311 && !settings.keepsSession, nil) else {
            close(wake.read)
            close(wake.write)
            throw Failure(description: "mosquitto_new: \(String(cString: strerror(errno)))")
        }
        handle = Handle(pointer: made)
        mosquitto_user_data_set(made, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_int_option(made, MOSQ_OPT_PROTOCOL_VERSION, settings.version == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311)
        mosquitto_int_option(made, MOSQ_OPT_TCP_NODELAY, 1)
        mosquitto_username_pw_set(made, settings.user, settings.password)
        if let will = settings.will {
            _ = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set_v5(made, will.topic, Int32(bytes.count), bytes.baseAddress, 1, true, nil)
            }
        }
        if let tls = settings.tls {
            let code = mosquitto_tls_set(made, tls.ca, nil, tls.cert, tls.key, nil)
            guard code == MOSQ_ERR_SUCCESS.rawValue else {
                mosquitto_destroy(made)
                close(wake.read)
                close(wake.write)
                throw Failure(description: "cannot use the TLS files (caFile \(tls.ca)\(tls.cert.map { ", certFile \($0)" } ?? "")): \(Self.describe(code))")
            }
            // Verify the broker's certificate (SSL_VERIFY_PEER) and, with insecure off, its name.
            mosquitto_tls_opts_set(made, 1, nil, nil)
            mosquitto_tls_insecure_set(made, false)
            // Why a handshake failed is known while libmosquitto logs it: OpenSSL's verify result
            // (read then, before the SSL object goes), and libmosquitto's own name check, which
            // runs after OpenSSL trusted the chain and leaves it saying only "unspecified". Only
            // TLS clients listen: a log callback makes libmosquitto format a line every packet.
            mosquitto_log_callback_set(made) { mosq, user, _, text in
                guard let text else { return }
                let attempt = MQTTClient.owner(user).attempt
                if strstr(text, "host name verification failed") != nil {
                    attempt.wrongName = true
                } else if strstr(text, "OpenSSL Error") != nil, let mosq, attempt.verify == nil {
                    var reason: UnsafePointer<CChar>?
                    let verify = imhost_tls_verify_result(mosq, &reason)
                    if verify > 0 { attempt.verify = (verify, reason.map { String(cString: $0) } ?? "") }
                }
            }
        }
        mosquitto_connect_v5_callback_set(made) { _, user, code, flags, properties in
            var maximum: UInt32 = 0
            let said = mosquitto_property_read_int32(properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), &maximum, false) != nil
            MQTTClient.owner(user).connectAnswered(code: code, flags: flags, maximumPacket: said ? Int(maximum) : nil)
        }
        mosquitto_disconnect_v5_callback_set(made) { _, user, code, _ in
            MQTTClient.owner(user).disconnected(code: code)
        }
        mosquitto_message_v5_callback_set(made) { _, user, message, _ in
            guard let message else { return }
            MQTTClient.owner(user).received(message.pointee)
        }
        mosquitto_publish_v5_callback_set(made) { _, user, id, code, _ in
            MQTTClient.owner(user).events.append(.published(id: id, MQTTClient.answer(code)))
        }
        mosquitto_subscribe_v5_callback_set(made) { _, user, id, count, granted, _ in
            // One topic a subscription: its granted QoS, or a failure code (0x80 and up).
            let code = granted.flatMap { count > 0 ? $0.pointee : nil }
            MQTTClient.owner(user).events.append(.subscribed(id: id, code.map(MQTTClient.answer) ?? .refused("no answer")))
        }
    }

    deinit {
        // A connecting thread still holds the connection: wait for it to let go.
        while state == .connecting, attempt.result == nil { _ = poll(nil, 0, 5) }
        mosquitto_destroy(handle.pointer)
        close(wake.read)
        close(wake.write)
    }

    /// The owner, from the user data libmosquitto hands a callback.
    private static func owner(_ user: UnsafeMutableRawPointer?) -> MQTTClient {
        // Safe: the user data is this object (set in init), which outlives the connection's
        // callbacks (they run only inside service(), called by the owner holding it).
        Unmanaged<MQTTClient>.fromOpaque(user!).takeUnretainedValue()
    }

    // MARK: Connecting

    /// Starts connecting, on a thread of its own; ``service()`` reports how it went.
    package func connect() {
        guard state == .idle else { return }
        state = .connecting
        attempt.result = nil
        attempt.detail = nil
        attempt.handshake = nil
        attempt.wrongName = false
        attempt.verify = nil
        let handle = handle, settings = settings, wakeWrite = wake.write, result = attempt
        Thread.detachNewThread {
            // MQTT 3.1.1 has no properties (libmosquitto refuses a connect that has some): the
            // session is kept by the clean-session flag (set in init), and no limit is said.
            var properties: OpaquePointer? = nil
            if settings.version == .v5 {
                mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), settings.keepsSession ? Self.sessionExpiry : 0)
                mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), settings.maximumPacket)
                mosquitto_property_add_int16(&properties, Int32(MQTT_PROP_RECEIVE_MAXIMUM.rawValue), Self.receiveMaximum)
            }
            let code: Int32
            switch settings.address {
            case .tcp(let host, let port), .tls(let host, let port):
                code = mosquitto_connect_bind_v5(handle.pointer, host, Int32(port), settings.keepAlive, nil, properties)
            case .unix(let path):
                // Port 0 with a path: libmosquitto connects to a unix socket.
                code = mosquitto_connect_bind_v5(handle.pointer, path, 0, settings.keepAlive, nil, properties)
            }
            // errno is this thread's: read now, not on the thread that reports it.
            let error = errno
            mosquitto_property_free_all(&properties)
            if code == MOSQ_ERR_ERRNO.rawValue { result.detail = String(cString: strerror(error)) }
            // Why a TLS handshake failed is OpenSSL's to say, and only while its state is there.
            // libmosquitto reports some failed handshakes (a name the certificate does not hold)
            // as a would-block error of the blocking connect.
            let wouldBlock = code == MOSQ_ERR_ERRNO.rawValue && (error == EAGAIN || error == EINPROGRESS)
            if code == MOSQ_ERR_TLS.rawValue || wouldBlock, case .tls(let host, _) = settings.address {
                result.handshake = Self.tlsFailure(handle.pointer, host: host, attempt: result)
            }
            result.result = code
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    /// Where the connecting thread leaves its result (a libmosquitto error code), under a lock.
    private final class ConnectAttempt: Sendable {
        private let cell = Mutex<(code: Int32?, detail: String?, handshake: TLSProblem?, wrongName: Bool, verify: (Int, String)?)>((nil, nil, nil, false, nil))
        var result: Int32? {
            get { cell.withLock { $0.code } }
            set { cell.withLock { $0.code = newValue } }
        }
        /// What went wrong beyond the error code: the system's error, for a person.
        var detail: String? {
            get { cell.withLock { $0.detail } }
            set { cell.withLock { $0.detail = newValue } }
        }
        /// The TLS handshake failed: why.
        var handshake: TLSProblem? {
            get { cell.withLock { $0.handshake } }
            set { cell.withLock { $0.handshake = newValue } }
        }
        /// libmosquitto logged that the broker's certificate does not hold the name connected to.
        var wrongName: Bool {
            get { cell.withLock { $0.wrongName } }
            set { cell.withLock { $0.wrongName = newValue } }
        }
        /// OpenSSL's verify result and its text, read when libmosquitto logged the failure.
        var verify: (Int, String)? {
            get { cell.withLock { $0.verify } }
            set { cell.withLock { $0.verify = newValue } }
        }
    }

    /// Why the TLS connection of `handle` to `host` failed: what libmosquitto logged while it
    /// failed (its name check, OpenSSL's verify result), else OpenSSL's result now.
    private static func tlsFailure(_ handle: OpaquePointer, host: String, attempt: ConnectAttempt) -> TLSProblem {
        // A name libmosquitto refused: OpenSSL knows only that the check failed.
        if attempt.wrongName { return tlsProblem(62, text: "hostname mismatch", host: host) }
        if let (verify, text) = attempt.verify { return tlsProblem(verify, text: text, host: host) }
        var text: UnsafePointer<CChar>?
        let verify = imhost_tls_verify_result(handle, &text)
        return tlsProblem(verify, text: text.map { String(cString: $0) } ?? "", host: host)
    }

    /// What OpenSSL's verify result says failed (-1: OpenSSL's state went with the connection).
    static func tlsProblem(_ verify: Int, text: String, host: String) -> TLSProblem {
        let kind: TLSProblem.Kind = switch verify {
        case 10: .expired
        case 9: .notYetValid
        case 62: .wrongName
        case 2, 18, 19, 20, 21: .untrusted
        case 0: .afterTrust
        // Other results (1, "unspecified") do not tell which check failed.
        default: .unknown
        }
        return TLSProblem(kind: kind, openSSL: text, host: host)
    }

    // MARK: The loop

    /// What to wait on for reading: the wake pipe while connecting, the socket after.
    package var readable: [Int32] {
        switch state {
        case .idle: []
        case .connecting: [wake.read]
        case .awaitingAnswer, .connected: [mosquitto_socket(handle.pointer)].filter { $0 >= 0 }
        }
    }

    /// What to wait on for writing: the socket, when libmosquitto has something to send.
    package var writable: [Int32] {
        guard state == .awaitingAnswer || state == .connected, mosquitto_want_write(handle.pointer) else { return [] }
        return [mosquitto_socket(handle.pointer)].filter { $0 >= 0 }
    }

    /// Waits until one of `descriptors` (of one connection or several) is ready, or
    /// `milliseconds` pass (0: not at all).
    package static func wait(on descriptors: [pollfd], milliseconds: Int32) {
        var polls = descriptors
        _ = poll(&polls, nfds_t(polls.count), max(0, milliseconds))
    }

    /// Reads and writes what is ready, keeps the connection alive, and returns what happened.
    /// Never blocks.
    package func service() -> [Event] {
        defer { events = [] }
        switch state {
        case .idle:
            break
        case .connecting:
            var byte: UInt8 = 0
            while read(wake.read, &byte, 1) > 0 {}
            guard let code = attempt.result else { break }
            if code == MOSQ_ERR_SUCCESS.rawValue {
                state = .awaitingAnswer
                // libmosquitto opens its socket without close-on-exec: no child may inherit it.
                let socket = mosquitto_socket(handle.pointer)
                if socket >= 0 { _ = fcntl(socket, F_SETFD, fcntl(socket, F_GETFD) | FD_CLOEXEC) }
            } else {
                state = .idle
                events.append(.unreachable(attempt.handshake.map(Unreachable.handshake) ?? .network(attempt.detail ?? Self.describe(code))))
            }
        case .awaitingAnswer, .connected:
            let pointer = handle.pointer
            // libmosquitto reads one packet a call when nothing of its own waits: read on while
            // a packet came of the last read (up to a bound), so a burst is stored and answered in
            // batches. A read that brought nothing this side hears of (no data, a ping's answer)
            // ends it: what is left is read at the next call, as the socket stays readable.
            var code = mosquitto_loop_read(pointer, 1)
            var reads = 1, heard = 0
            while code == MOSQ_ERR_SUCCESS.rawValue, reads < Self.readsPerService, events.count > heard {
                heard = events.count
                code = mosquitto_loop_read(pointer, 1)
                reads += 1
            }
            if code == MOSQ_ERR_SUCCESS.rawValue, mosquitto_want_write(pointer) { code = mosquitto_loop_write(pointer, 1) }
            if code == MOSQ_ERR_SUCCESS.rawValue { code = mosquitto_loop_misc(pointer) }
            if code != MOSQ_ERR_SUCCESS.rawValue, state != .idle {
                // The connection was lost without a DISCONNECT from the broker (or the
                // callback said so already, which set the state). A TLS error before the broker
                // answered is the handshake's: the broker's certificate was not trusted.
                if state == .awaitingAnswer, code == MOSQ_ERR_TLS.rawValue, case .tls(let host, _) = settings.address {
                    state = .idle
                    events.append(.unreachable(.handshake(Self.tlsFailure(pointer, host: host, attempt: attempt))))
                    return events
                }
                state = .idle
                events.append(.disconnected(.lost(Self.describe(code))))
            }
        }
        return events
    }

    /// The socket ``holdWrites()`` corked, until ``releaseWrites()``; -1 when none is.
    private var corked: Int32 = -1

    /// Corks the TCP socket (TCP_CORK): libmosquitto writes each packet as it is made, and with
    /// TCP_NODELAY each went as a segment of its own, through the whole loopback or network
    /// stack (a fifth of a burst's time). A unix socket has no segments to save.
    package func holdWrites() {
        guard corked < 0, state == .connected || state == .awaitingAnswer else { return }
        if case .unix = settings.address { return }
        let socket = mosquitto_socket(handle.pointer)
        var on: Int32 = 1
        if socket >= 0, setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 { corked = socket }
    }

    /// Uncorks the socket: what was held is sent now.
    package func releaseWrites() {
        guard corked >= 0 else { return }
        defer { corked = -1 }
        // A connection lost meanwhile took its socket with it.
        guard mosquitto_socket(handle.pointer) == corked else { return }
        var off: Int32 = 0
        _ = setsockopt(corked, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size))
    }

    /// At most this many packets are read in one ``service()``.
    static let readsPerService = 256

    /// Publishes at QoS 1. Returns the message id the broker's answer (``BrokerEvent/published(id:_:)``)
    /// names, or why it could not be queued.
    package func publish(topic: String, payload: [UInt8], retain: Bool = false) -> Result<Int32, Failure> {
        guard state == .connected else { return .failure(Failure(description: "not connected")) }
        var id: Int32 = 0
        let code = payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(handle.pointer, &id, topic, Int32(bytes.count), bytes.baseAddress, 1, retain, nil)
        }
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            return .failure(Failure(description: Self.describe(code), tooLarge: code == MOSQ_ERR_OVERSIZE_PACKET.rawValue))
        }
        _ = mosquitto_loop_write(handle.pointer, 1)
        return .success(id)
    }

    /// Publishes at QoS 0 (a signal that may be lost: typing, being online).
    package func publishOnce(topic: String, payload: [UInt8]) -> Bool {
        guard state == .connected else { return false }
        let code = payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(handle.pointer, nil, topic, Int32(bytes.count), bytes.baseAddress, 0, false, nil)
        }
        guard code == MOSQ_ERR_SUCCESS.rawValue else { return false }
        _ = mosquitto_loop_write(handle.pointer, 1)
        return true
    }

    /// Subscribes at QoS `qos` (0 or 1). Returns the message id ``BrokerEvent/subscribed(id:_:)``
    /// names. `retained`: whether the broker sends what is retained on the topic when the
    /// subscription is made (MQTT 5 retain handling; an inbox takes none: a retained message
    /// planted there would come again at every connect).
    package func subscribe(_ topic: String, qos: Int32, retained: Bool) -> Result<Int32, Failure> {
        guard state == .connected else { return .failure(Failure(description: "not connected")) }
        var id: Int32 = 0
        // Not "no local": a host's own publishes to a topic it reads (its probe) come back, as
        // the topic is its inbox.
        let options = retained ? 0 : Int32(MQTT_SUB_OPT_SEND_RETAIN_NEVER.rawValue)
        let code = mosquitto_subscribe_v5(handle.pointer, &id, topic, qos, options, nil)
        guard code == MOSQ_ERR_SUCCESS.rawValue else { return .failure(Failure(description: Self.describe(code))) }
        return .success(id)
    }

    /// Says goodbye to the broker and closes the connection; the session stays on the broker.
    package func disconnect() {
        guard state == .connected || state == .awaitingAnswer else { return }
        mosquitto_disconnect_v5(handle.pointer, 0, nil)
        _ = mosquitto_loop_write(handle.pointer, 1)
        state = .idle
    }

    // MARK: Callbacks

    private func connectAnswered(code: Int32, flags: Int32, maximumPacket: Int?) {
        if code == 0 {
            state = .connected
            brokerMaximumPacket = maximumPacket
            events.append(.connected(sessionPresent: flags & 1 != 0))
        } else {
            state = .idle
            // Bad user name or password, not authorised (MQTT 5), and their 3.1.1 codes.
            let credentials = [0x86, 0x87, 0x04, 0x05].contains(code)
            var refusal = BrokerRefusal(reason: String(cString: mosquitto_reason_string(code)), credentials: credentials)
            // Unsupported Protocol Version (MQTT 5), Unacceptable Protocol Version (3.1.1).
            refusal.wrongVersion = code == 0x84 || code == 0x01
            // Server Unavailable, Server Busy (5), and 3.1.1's Server Unavailable: a node of a
            // cluster that is not serving yet, or has lost its quorum. Another node may take it.
            refusal.unavailable = [0x88, 0x89, 0x03].contains(code)
            events.append(.refused(refusal))
        }
    }

    private func disconnected(code: Int32) {
        guard state != .idle else { return }
        state = .idle
        // 0x8E: Session taken over (mosquitto 2.0.11 never sends it: see SessionClaim).
        guard code != 0x8E else {
            events.append(.disconnected(.takenOver))
            return
        }
        // 0x98: Administrative action (a device removed from its user's devices).
        guard code != 0x98 else {
            events.append(.disconnected(.administrative))
            return
        }
        // An MQTT 5 reason code from the broker's DISCONNECT (0x80 and up), or libmosquitto's own.
        let reason = code >= 0x80 ? String(cString: mosquitto_reason_string(code)) : Self.describe(code)
        events.append(.disconnected(.lost(reason)))
    }

    /// A PUBACK's or SUBACK's reason code as an answer: below 0x80 taken, else refused in the
    /// broker's words ("Not authorized").
    private static func answer(_ code: Int32) -> BrokerAnswer {
        code < 0x80 ? .taken : .refused(String(cString: mosquitto_reason_string(code)))
    }

    private func received(_ message: mosquitto_message) {
        let topic = message.topic.map { String(cString: $0) } ?? ""
        let bytes = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
        events.append(.message(topic: topic, payload: bytes, retained: message.retain))
    }

    /// A libmosquitto error code for a person (with the system's error for an I/O error).
    static func describe(_ code: Int32) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(code))
    }
}

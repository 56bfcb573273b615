#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why one of the user's messages failed (or stands where this imhost cannot say), as the store
/// keeps it: a code and its data, never a sentence. Each front end words it where it draws it
/// (the terminal's `FailureWords`, the browser's `PageHTML`), with what a person does there (the
/// terminal's `/retry 4`, the page's retry button); `imhost open --json` gives it as it is.
///
/// Text in it from outside (a peer's words, a peer id, a sentence an older imhost kept) is
/// carried as it came: whoever draws it escapes it.
public enum MessageFailure: Sendable, Equatable {
    /// The peer's host answered `refused`.
    case refusedByPeer(PeerRefusal)
    /// Larger than the broker takes: never handed over.
    case tooLargeForBroker(BrokerTooLarge)
    /// Not delivered within `transport.giveUpHours` (the message is `given-up`).
    case notDelivered(hours: Double)
    /// The store holds a state this imhost does not know (a newer one wrote it): never stored as
    /// a failure, read so.
    case unknownState(String)
    /// A failure code this imhost does not know (a newer one wrote it), kept as it came.
    case unknownCode(String)
    /// A sentence an imhost kept before reasons were codes (schema 9 and older), as it was kept.
    case other(String)

    /// The code as the store and `open --json` hold it.
    public var code: String {
        switch self {
        case .refusedByPeer: "refused-by-peer"
        case .tooLargeForBroker: "too-large-for-broker"
        case .notDelivered: "not-delivered"
        case .unknownState: "unknown-state"
        case .unknownCode(let code): code
        case .other: "other"
        }
    }
}

/// A peer's `refused` receipt for the user's messages: who, its code (one this host does not
/// know, from a newer peer, is kept as it came), and its words.
public struct PeerRefusal: Sendable, Equatable {
    public var peer: String
    public var code: Envelope.RefusalCode?
    /// The peer's words, at most ``Envelope/reasonBytes``.
    public var reason: String?

    public init(peer: String, code: Envelope.RefusalCode?, reason: String?) {
        self.peer = peer
        self.code = code
        self.reason = reason
    }
}

/// One of the user's messages larger than the broker takes (its `max_packet_size`, which it says
/// at connect): never handed over (the broker would drop it, and the connection with it), so it
/// fails at the sender, and a retry sends it again once the broker's operator has raised the
/// limit (`imhost broker upgrade DIR`, and a restart of the broker).
public struct BrokerTooLarge: Sendable, Equatable {
    public var peer: String
    /// The packet it takes, in bytes: the envelope and its topic.
    public var bytes: Int
    /// The largest packet the broker takes, when it said.
    public var limit: Int?

    public init(peer: String, bytes: Int, limit: Int?) {
        self.peer = peer
        self.bytes = bytes
        self.limit = limit
    }
}

/// One JSON object, flat: `{"code":"refused-by-peer","peer":"bob","refusal":"budget","said":"…"}`,
/// `{"code":"too-large-for-broker","peer":"bob","bytes":100000,"limit":70000}`,
/// `{"code":"not-delivered","hours":72}`, `{"code":"other","text":"…"}`: what the messages
/// table's `reason` column holds and `imhost open --json` prints.
extension MessageFailure: Codable {
    private enum Key: String, CodingKey {
        case code, peer, refusal, said, bytes, limit, hours, state, text
    }

    public init(from decoder: any Decoder) throws {
        let members = try decoder.container(keyedBy: Key.self)
        let code = try members.decode(String.self, forKey: .code)
        switch code {
        case "refused-by-peer":
            self = .refusedByPeer(PeerRefusal(peer: try members.decode(String.self, forKey: .peer),
                                              code: try members.decodeIfPresent(String.self, forKey: .refusal).map(Envelope.RefusalCode.init),
                                              reason: try members.decodeIfPresent(String.self, forKey: .said)))
        case "too-large-for-broker":
            self = .tooLargeForBroker(BrokerTooLarge(peer: try members.decode(String.self, forKey: .peer), bytes: try members.decode(Int.self, forKey: .bytes),
                                                     limit: try members.decodeIfPresent(Int.self, forKey: .limit)))
        case "not-delivered": self = .notDelivered(hours: try members.decode(Double.self, forKey: .hours))
        case "unknown-state": self = .unknownState(try members.decode(String.self, forKey: .state))
        case "other": self = .other(try members.decode(String.self, forKey: .text))
        default: self = .unknownCode(code)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var members = encoder.container(keyedBy: Key.self)
        try members.encode(code, forKey: .code)
        switch self {
        case .refusedByPeer(let refusal):
            try members.encode(refusal.peer, forKey: .peer)
            try members.encodeIfPresent(refusal.code?.rawValue, forKey: .refusal)
            try members.encodeIfPresent(refusal.reason, forKey: .said)
        case .tooLargeForBroker(let refusal):
            try members.encode(refusal.peer, forKey: .peer)
            try members.encode(refusal.bytes, forKey: .bytes)
            try members.encodeIfPresent(refusal.limit, forKey: .limit)
        case .notDelivered(let hours): try members.encode(hours, forKey: .hours)
        case .unknownState(let state): try members.encode(state, forKey: .state)
        case .unknownCode: break
        case .other(let text): try members.encode(text, forKey: .text)
        }
    }
}

extension MessageFailure {
    /// As the messages table's `reason` column holds it.
    var stored: String {
        // A value of plain strings and numbers always encodes.
        (try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? #"{"code":"other","text":""}"#
    }

    /// Reads the `reason` column. A value that is not one the store writes (a sentence read out
    /// of a damaged store of schema 9 or older, which migration 10 did not see) is that sentence.
    init(stored text: String) {
        self = (try? JSONDecoder().decode(MessageFailure.self, from: Data(text.utf8))) ?? .other(text)
    }
}

#if canImport(FoundationEssentials)
internal import FoundationEssentials
#else
internal import Foundation
#endif

/// A message's payload: the JSON text that is stored and sent, exactly as it was received.
///
/// The host never rewrites a payload; a builder decodes it into its own content type.
public struct MessagePayload: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The JSON text.
    public let json: String

    /// Wraps JSON text. It is not validated here: a builder that cannot decode it makes the
    /// message degrade to a placeholder, and the text stays stored as it was.
    public init(json: String) { self.json = json }

    /// Encodes a value as the payload.
    public init<Value: Encodable>(encoding value: Value) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        json = String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Decodes the payload as `Value`.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self) throws -> Value {
        try Self.decoder.decode(Value.self, from: Data(json.utf8))
    }

    /// One decoder for every payload: making one per message costs more than decoding.
    private static let decoder = JSONDecoder()

    /// The JSON text.
    public var description: String { json }

    /// Decodes the payload from a JSON string (how an envelope stores it).
    public init(from decoder: any Decoder) throws {
        json = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the payload as a JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(json)
    }
}

/// One stored message: who sent what to whom, and when.
///
/// `key` selects the message builder, for example `"text"` (a host built-in) or
/// `"house.listing"` (owned by the `house` line).
public struct MessageEnvelope: Sendable, Hashable, Codable {
    /// Its place in the conversation, `m1` for the first: unique within its conversation, and
    /// what the chat numbers it by (`/tap 1`).
    public var id: String
    /// The conversation the message belongs to.
    public var conversation: String
    /// The sender's user id.
    public var from: String
    /// The receiver's user id.
    public var to: String
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var timestamp: Int64
    /// The message key that selects the builder.
    public var key: String
    /// The message's content as JSON.
    public var payload: MessagePayload
    /// The id its sender gave it: unique among that sender's messages, and the same in the
    /// sender's store and every receiver's (a ULID, for messages the host makes: 26 letters and
    /// digits that sort by time). ``id`` is the message's place in this conversation (`m3`);
    /// this is the message itself. `nil` for an envelope made without one. Since IMKit 1.2.
    public var globalID: String?

    /// Creates an envelope.
    public init(id: String, conversation: String, from: String, to: String,
                timestamp: Int64, key: String, payload: MessagePayload) {
        self.id = id
        self.conversation = conversation
        self.from = from
        self.to = to
        self.timestamp = timestamp
        self.key = key
        self.payload = payload
    }
}

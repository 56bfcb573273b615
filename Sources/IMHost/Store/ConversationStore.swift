import IMKit

/// Where conversations are kept. The history belongs to the signed-in user, not to a page: the
/// same conversation opened on any line's page, or the legacy page, shows the same messages.
public protocol ConversationStore: AnyObject {
    /// Appends a message to `conversation` at the next position, which the store picks under its
    /// lock so that two writers never share one: `make` builds the message for that position
    /// (from 0) and may throw to store nothing. When this returns, the message is kept.
    @discardableResult
    func append(to conversation: String, _ make: (_ position: Int) throws -> MessageEnvelope) throws -> MessageEnvelope
    /// Appends a message as it is (its id included): for imports and tests.
    func append(_ message: MessageEnvelope) throws
    /// Whether messages can only be read (a read-only data folder).
    var isReadOnly: Bool { get }
    /// How many messages a conversation holds.
    func count(of conversation: String) throws -> Int
    /// Up to `limit` messages of a conversation, oldest first, ending before position `end`
    /// (a count; `nil` for the newest). Each message comes with its position, from 0.
    func messages(of conversation: String, endingBefore end: Int?, limit: Int) throws -> [(position: Int, message: MessageEnvelope)]
}

/// A store kept in memory, for tests and for chats nobody needs to keep.
public final class MemoryConversationStore: ConversationStore {
    private var conversations: [String: [MessageEnvelope]] = [:]

    public init() {}

    public var isReadOnly: Bool { false }

    @discardableResult
    public func append(to conversation: String, _ make: (Int) throws -> MessageEnvelope) throws -> MessageEnvelope {
        let message = try make(conversations[conversation]?.count ?? 0)
        conversations[conversation, default: []].append(message)
        return message
    }

    public func append(_ message: MessageEnvelope) throws {
        conversations[message.conversation, default: []].append(message)
    }

    public func count(of conversation: String) throws -> Int {
        conversations[conversation]?.count ?? 0
    }

    public func messages(of conversation: String, endingBefore end: Int?, limit: Int) throws -> [(position: Int, message: MessageEnvelope)] {
        let all = conversations[conversation] ?? []
        let upper = min(end ?? all.count, all.count)
        let lower = max(0, upper - limit)
        return (lower..<upper).map { ($0, all[$0]) }
    }
}

import IMKit

/// Where conversations are kept. The history belongs to the signed-in user, not to a page: the
/// same conversation opened on any line's page, or the legacy page, shows the same messages.
public protocol ConversationStore: AnyObject {
    /// Appends a message to its conversation; when this returns, the message is kept.
    func append(_ message: MessageEnvelope) throws
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

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import IMKit

/// Conversations kept on disk, per user: `<data>/users/<user>/<conversation>.jsonl`, one JSON
/// object a line, appended and flushed to disk before a send is reported done. Ids are encoded
/// so that no user or peer id can name a path outside the folder.
public final class FileConversationStore: ConversationStore {
    /// This user's folder.
    public let folder: String
    private var logs: [String: ConversationLog] = [:]
    /// Repairs made while opening conversations (a torn line recovered), for a person to read.
    public private(set) var repairs: [String] = []

    /// Why the store refused or failed.
    public struct Failure: Error, CustomStringConvertible, Equatable {
        public var description: String
    }

    /// Opens (creating it, mode 0700) the folder of `user` under `dataFolder`.
    public init(dataFolder: String, user: String) throws(Failure) {
        let userName: String
        do {
            userName = try StorePath.fileName(for: user, kind: "user")
        } catch {
            throw Failure(description: "\(error)")
        }
        folder = dataFolder + "/users/" + userName
        for path in [dataFolder, dataFolder + "/users", folder] {
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw Failure(description: "cannot create data folder \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    private func log(_ conversation: String) throws -> ConversationLog {
        if let log = logs[conversation] { return log }
        let name: String
        do {
            name = try StorePath.fileName(for: conversation, kind: "conversation")
        } catch {
            throw Failure(description: "\(error)")
        }
        let log = try ConversationLog(path: folder + "/" + name + ".jsonl")
        repairs += log.repairs
        logs[conversation] = log
        return log
    }

    public func append(_ message: MessageEnvelope) throws {
        try append(contentsOf: [message])
    }

    /// Appends many messages with one flush to disk.
    public func append(contentsOf messages: [MessageEnvelope]) throws {
        guard let conversation = messages.first?.conversation else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let lines = try messages.map { message in
            precondition(message.conversation == conversation, "one conversation per batch")
            return Array(try encoder.encode(message))
        }
        try log(conversation).append(lines)
    }

    public func count(of conversation: String) throws -> Int {
        try log(conversation).count
    }

    public func messages(of conversation: String, endingBefore end: Int?, limit: Int) throws -> [(position: Int, message: MessageEnvelope)] {
        let log = try log(conversation)
        let upper = min(end ?? log.count, log.count)
        let lower = max(0, upper - limit)
        let decoder = JSONDecoder()
        return try log.lines(lower..<upper).enumerated().map { offset, line in
            let position = lower + offset
            // A line that does not decode is still shown (as a placeholder) and kept as it is.
            let message = (try? decoder.decode(MessageEnvelope.self, from: Data(line)))
                ?? MessageEnvelope(id: "m\(position + 1)", conversation: conversation, from: "?", to: "?", timestamp: 0,
                                   key: "(unreadable line)", payload: MessagePayload(json: String(decoding: line, as: UTF8.self)))
            return (position, message)
        }
    }
}

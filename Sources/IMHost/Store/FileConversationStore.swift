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
    /// Conversations in the order they were first opened.
    private var opened: [String] = []

    /// Repairs made to conversations (a torn line recovered, an index rebuilt), for a person to
    /// read, in the order the conversations were opened.
    public var repairs: [String] { opened.flatMap { logs[$0]?.repairs ?? [] } }

    /// Why the store refused or failed.
    public struct Failure: Error, CustomStringConvertible, Equatable {
        public var description: String
    }

    /// Whether the data folder can only be read: conversations show, sends are refused.
    public private(set) var isReadOnly = false

    /// Opens (creating it, mode 0700) the folder of `user` under `dataFolder`. A folder that
    /// exists but cannot be written opens read-only.
    public init(dataFolder: String, user: String) throws(Failure) {
        let userName: String
        do {
            userName = try StorePath.fileName(for: user, kind: "user")
        } catch {
            throw Failure(description: "\(error)")
        }
        folder = dataFolder + "/users/" + userName
        // The data folder's own parents are made as `mkdir -p` would; a parent that cannot be
        // made is named below, with the first folder that exists above it.
        let parent = FileSystem.directory(of: dataFolder)
        if access(parent, F_OK) != 0 { try? FileSystem.makeFolders(parent) }
        for path in [dataFolder, dataFolder + "/users", folder] {
            if mkdir(path, 0o700) == 0 {
                // The new folder's name must survive a power cut.
                FileSystem.syncFolder(FileSystem.directory(of: path))
            } else if errno == EROFS || errno == EACCES || errno == EPERM {
                // A folder that exists but cannot be written is read; one that cannot be made
                // is an error, said of the folder that is missing.
                let code = errno
                guard access(path, F_OK) == 0 else {
                    throw Failure(description: "cannot create data folder \(path): \(String(cString: strerror(code))); "
                                  + "make \(Self.existingAncestor(of: path)) writable, or set \"data\" in host.json")
                }
                isReadOnly = true
            } else if errno != EEXIST {
                let code = errno
                // ENOENT: a parent could not be made; say why of the folder that stops it.
                let stop = Self.existingAncestor(of: path)
                let why = code == ENOENT && access(stop, W_OK) != 0 ? "\(stop) is not writable" : String(cString: strerror(code))
                throw Failure(description: "cannot create data folder \(path): \(why); "
                              + "make \(stop) writable, or set \"data\" in host.json")
            }
        }
        if access(folder, W_OK) != 0 { isReadOnly = true }
    }

    /// The nearest folder above `path` (or `path` itself) that exists.
    static func existingAncestor(of path: String) -> String {
        var folder = FileSystem.directory(of: path)
        while access(folder, F_OK) != 0, folder != "/", folder != "." {
            folder = FileSystem.directory(of: folder)
        }
        return folder
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
        if log.isReadOnly { isReadOnly = true }
        logs[conversation] = log
        opened.append(conversation)
        return log
    }

    private static func encode(_ message: MessageEnvelope) throws -> [UInt8] { try JSONLines.encode(message) }

    @discardableResult
    public func append(to conversation: String, _ make: (Int) throws -> MessageEnvelope) throws -> MessageEnvelope {
        let log = try log(conversation)
        var made: MessageEnvelope?
        _ = try log.append { position in
            let message = try make(position)
            made = message
            return try Self.encode(message)
        }
        return made!
    }

    public func append(_ message: MessageEnvelope) throws {
        try append(contentsOf: [message])
    }

    /// Appends many messages as they are, with one flush to disk.
    public func append(contentsOf messages: [MessageEnvelope]) throws {
        guard let conversation = messages.first?.conversation else { return }
        let lines = try messages.map { message in
            precondition(message.conversation == conversation, "one conversation per batch")
            return try Self.encode(message)
        }
        try log(conversation).append(lines: lines)
    }

    public func count(of conversation: String) throws -> Int {
        try log(conversation).refreshCount()
    }

    public func messages(of conversation: String, endingBefore end: Int?, limit: Int) throws -> [(position: Int, message: MessageEnvelope)] {
        let log = try log(conversation)
        let total = try log.refreshCount()
        let upper = min(end ?? total, total)
        let lower = max(0, upper - limit)
        let decoder = JSONDecoder()
        return try log.lines(lower..<upper).enumerated().map { offset, line in
            let position = lower + offset
            // A line that does not decode is still shown (as a placeholder) and kept as it is.
            let message = (try? decoder.decode(MessageEnvelope.self, from: Data(line)))
                ?? MessageEnvelope(id: "m\(position + 1)", conversation: conversation, from: "?", to: "?", timestamp: 0,
                                   key: MessageEnvelope.unreadableKey, payload: MessagePayload(json: String(decoding: line, as: UTF8.self)))
            return (position, message)
        }
    }
}

extension MessageEnvelope {
    /// The key a stored line that does not read as a message is shown under: no line's key can
    /// be this (keys have no spaces or parentheses), so it is never handed to a builder.
    package static let unreadableKey = "(unreadable line)"
}

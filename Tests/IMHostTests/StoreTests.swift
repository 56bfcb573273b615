import Foundation
import Testing
@testable import IMHost
import IMKit

@Suite("The conversation store")
struct StoreTests {
    func message(_ n: Int, in conversation: String = "u42") -> MessageEnvelope {
        MessageEnvelope(id: "m\(n)", conversation: conversation, from: "u42", to: "me", timestamp: Int64(n),
                        key: "text", payload: MessagePayload(json: #"{"text":"message \#(n)"}"#))
    }

    @Test("messages persist across opens, page from the newest, and keep their exact payload text")
    func persistAndPage() throws {
        let workspace = try Workspace()
        let data = workspace.root + "/data"
        do {
            let store = try FileConversationStore(dataFolder: data, user: "me")
            try store.append(contentsOf: (1...100).map { message($0) })
            try store.append(MessageEnvelope(id: "odd", conversation: "u42", from: "u42", to: "me", timestamp: 0,
                                             key: "text", payload: MessagePayload(json: "{ \"text\" :  \"spaced\\nout\" }")))
        }
        let store = try FileConversationStore(dataFolder: data, user: "me")
        #expect(try store.count(of: "u42") == 101)
        let last = try store.messages(of: "u42", endingBefore: nil, limit: 20)
        #expect(last.map(\.position) == Array(81...100))
        #expect(last.last?.message.payload.json == "{ \"text\" :  \"spaced\\nout\" }")
        let older = try store.messages(of: "u42", endingBefore: 81, limit: 20)
        #expect(older.map(\.message.id) == (61...80).map { "m\($0 + 1)" })
        #expect(try store.messages(of: "u42", endingBefore: 3, limit: 20).map(\.message.id) == ["m1", "m2", "m3"])
        #expect(try store.count(of: "nobody") == 0)
    }

    @Test("a torn last line is moved aside on open and every earlier message is intact")
    func tornLine() throws {
        let workspace = try Workspace()
        let data = workspace.root + "/data"
        do {
            let store = try FileConversationStore(dataFolder: data, user: "me")
            try store.append(contentsOf: (1...3).map { message($0) })
        }
        let log = data + "/users/me/u42.jsonl"
        let handle = try #require(FileHandle(forWritingAtPath: log))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"conversation":"u42","from":"u4"#.utf8))
        try handle.close()

        let store = try FileConversationStore(dataFolder: data, user: "me")
        #expect(try store.count(of: "u42") == 3)
        #expect(try store.messages(of: "u42", endingBefore: nil, limit: 10).map(\.message) == (1...3).map { message($0) })
        #expect(store.repairs == ["recovered u42.jsonl: a torn last line of 32 bytes (a write cut short) was moved to u42.jsonl.torn; every earlier message is intact"])
        #expect(try String(contentsOfFile: log + ".torn", encoding: .utf8) == #"{"conversation":"u42","from":"u4"# + "\n")
        try store.append(message(4))
        #expect(try FileConversationStore(dataFolder: data, user: "me").messages(of: "u42", endingBefore: nil, limit: 10).map(\.message.id) == ["m1", "m2", "m3", "m4"])
    }

    @Test("a lost or stale index is rebuilt from the log")
    func indexRebuilt() throws {
        let workspace = try Workspace()
        let data = workspace.root + "/data"
        do {
            let store = try FileConversationStore(dataFolder: data, user: "me")
            try store.append(contentsOf: (1...5).map { message($0) })
        }
        try FileManager.default.removeItem(atPath: data + "/users/me/u42.jsonl.index")
        let store = try FileConversationStore(dataFolder: data, user: "me")
        #expect(try store.count(of: "u42") == 5)
        #expect(try store.messages(of: "u42", endingBefore: nil, limit: 2).map(\.message.id) == ["m4", "m5"])
        #expect(store.repairs == ["re-indexed u42.jsonl from its log: 5 messages"])
    }

    @Test("hostile ids stay inside the data folder, or are refused", arguments: ["../../etc/x", "/etc/passwd", "..", ".", "a/b", "张三"])
    func hostileIDs(id: String) throws {
        let workspace = try Workspace()
        let data = workspace.root + "/data"
        let store = try FileConversationStore(dataFolder: data, user: id)
        try store.append(message(1, in: id))
        #expect(try store.count(of: id) == 1)
        let users = try FileManager.default.contentsOfDirectory(atPath: data + "/users")
        #expect(users.count == 1)
        let files = try FileManager.default.contentsOfDirectory(atPath: data + "/users/" + users[0])
        #expect(files.sorted() == [users[0] + ".jsonl", users[0] + ".jsonl.index"])
        #expect(!users[0].contains("/") && !users[0].contains("."))
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.root).sorted() == ["Plugins", "data"])
    }

    @Test("ids too long or with control characters are refused with the reason")
    func refusedIDs() throws {
        let workspace = try Workspace()
        let store = try FileConversationStore(dataFolder: workspace.root + "/data", user: "me")
        #expect(throws: FileConversationStore.Failure(description: "conversation id is 81 bytes long; the limit is 80")) {
            try store.append(message(1, in: String(repeating: "x", count: 81)))
        }
        #expect(throws: FileConversationStore.Failure(description: "conversation id contains a control character")) {
            try store.append(message(1, in: "a\nb"))
        }
    }
}

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
        #expect(store.repairs == ["rebuilt the index of u42.jsonl from its log (its index did not match the log): 5 messages"])
    }

    @Test("an index that is not increasing, points between lines, or ends in a partial entry is rebuilt on open",
          arguments: ["swapped", "shifted", "partial", "short"])
    func corruptIndex(damage: String) throws {
        let workspace = try Workspace()
        let data = workspace.root + "/data"
        do {
            let store = try FileConversationStore(dataFolder: data, user: "me")
            try store.append(contentsOf: (1...6).map { message($0) })
        }
        let path = data + "/users/me/u42.jsonl.index"
        var index = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        switch damage {
        case "swapped": index.replaceSubrange(8..<24, with: Array(index[16..<24] + index[8..<16]))
        case "shifted": index[16] &+= 3
        case "partial": index += [1, 2, 3]
        default: index.removeLast(16)
        }
        try Data(index).write(to: URL(fileURLWithPath: path))
        let store = try FileConversationStore(dataFolder: data, user: "me")
        #expect(try store.count(of: "u42") == 6)
        #expect(try store.messages(of: "u42", endingBefore: nil, limit: 10).map(\.message) == (1...6).map { message($0) })
        #expect(store.repairs.count == 1 && store.repairs[0].hasPrefix("rebuilt the index of u42.jsonl from its log"), "\(store.repairs)")
    }

    @Test("a large log is checked by samples on open, and an entry found wrong when read rebuilds the index")
    func largeLogIndex() throws {
        let workspace = try Workspace()
        let data = workspace.root + "/data"
        let padding = String(repeating: "x", count: 200)
        let count = Int(ConversationLog.fullCheckLimit) / 300 + 1000
        do {
            let store = try FileConversationStore(dataFolder: data, user: "me")
            try store.append(contentsOf: (1...count).map { n in
                MessageEnvelope(id: "m\(n)", conversation: "u42", from: "u42", to: "me", timestamp: 0, key: "text",
                                payload: MessagePayload(json: #"{"text":"\#(padding) \#(n)"}"#))
            })
        }
        // One entry in the middle of the last page points a byte into its line.
        let path = data + "/users/me/u42.jsonl.index"
        var index = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        index[(count - 5) * 8] &+= 1
        try Data(index).write(to: URL(fileURLWithPath: path))
        let store = try FileConversationStore(dataFolder: data, user: "me")
        #expect(store.repairs.isEmpty, "a sample-checked open does not read every entry")
        let last = try store.messages(of: "u42", endingBefore: nil, limit: 10)
        #expect(last.map(\.message.id) == (count - 9...count).map { "m\($0)" })
        #expect(store.repairs.count == 1 && store.repairs[0].hasPrefix("rebuilt the index of u42.jsonl from its log"), "\(store.repairs)")
    }

    @Test("lines a writer stored but did not index (killed between its two writes) are indexed by the next writer")
    func unindexedLines() throws {
        let workspace = try Workspace()
        let data = workspace.root + "/data"
        let store = try FileConversationStore(dataFolder: data, user: "me")
        try store.append(contentsOf: (1...2).map { message($0) })
        // Another process appended m3 to the log and died before its index entry.
        let handle = try #require(FileHandle(forWritingAtPath: data + "/users/me/u42.jsonl"))
        handle.seekToEndOfFile()
        handle.write(Data((String(decoding: try JSONEncoder().encode(message(3)), as: UTF8.self) + "\n").utf8))
        try handle.close()
        let sent = try store.append(to: "u42") { position in
            MessageEnvelope(id: "m\(position + 1)", conversation: "u42", from: "me", to: "u42", timestamp: 9, key: "text",
                            payload: MessagePayload(json: #"{"text":"next"}"#))
        }
        #expect(sent.id == "m4", "the position comes from the log, under its lock, not from this writer's count")
        let reopened = try FileConversationStore(dataFolder: data, user: "me")
        #expect(try reopened.messages(of: "u42", endingBefore: nil, limit: 10).map(\.message.id) == ["m1", "m2", "m3", "m4"])
        #expect(reopened.repairs.isEmpty)
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

/// The store as `imhost chat` uses it: several writers, a writer killed, a full disk, a
/// read-only data folder, the outbox after a crash.
@Suite("The store under imhost chat", .serialized, .timeLimit(.minutes(5)))
struct StoreProcessTests {
    static let url = "im://chat?rootCateID=1&cateID=12&peer=u42"

    /// Every line of the conversation's log, decoded; and what the store says of it.
    func stored(_ workspace: Workspace) throws -> (lines: [MessageEnvelope], count: Int, endsWithNewline: Bool) {
        let log = try Data(contentsOf: URL(fileURLWithPath: workspace.data + "/users/me/u42.jsonl"))
        let lines = try log.split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode(MessageEnvelope.self, from: Data($0)) }
        let count = try FileConversationStore(dataFolder: workspace.data, user: "me").count(of: "u42")
        return (lines, count, log.last == UInt8(ascii: "\n"))
    }

    @Test("two writers of one conversation: 300 messages, 300 distinct ids, every line indexed")
    func twoWriters() throws {
        let workspace = try Workspace.standard()
        let first = try RunningProcess(BuildProducts.imhost, ["chat", Self.url], in: workspace.root)
        let second = try RunningProcess(BuildProducts.imhost, ["chat", Self.url], in: workspace.root)
        for n in 1...150 {
            first.send("first \(n)")
            second.send("second \(n)")
        }
        #expect(first.finish().status == 0)
        #expect(second.finish().status == 0)
        let (lines, count, whole) = try stored(workspace)
        #expect(lines.count == 300)
        #expect(count == 300)
        #expect(whole)
        #expect(Set(lines.map(\.id)) == Set((1...300).map { "m\($0)" }), "ids are allocated under the log's lock")
        #expect(lines.map(\.id) == (1...300).map { "m\($0)" }, "in log order")
    }

    @Test("a writer killed while sending leaves every stored line whole, indexed and numbered once")
    func killedWriter() throws {
        let workspace = try Workspace.standard()
        let doomed = try RunningProcess(BuildProducts.imhost, ["chat", Self.url], in: workspace.root)
        let survivor = try RunningProcess(BuildProducts.imhost, ["chat", Self.url], in: workspace.root)
        for n in 1...400 { doomed.send("doomed \(n)") }
        try #require(doomed.waitFor("│ doomed 30 │"), "the first writer got going")
        for n in 1...50 { survivor.send("survivor \(n)") }
        // The worker and its supervisor, killed with no chance to tidy up.
        for worker in children(of: doomed.pid) { kill(worker, SIGKILL) }
        doomed.signal(SIGKILL)
        _ = doomed.finish()
        for n in 51...100 { survivor.send("survivor \(n)") }
        #expect(survivor.finish().status == 0)
        let (lines, count, whole) = try stored(workspace)
        #expect(whole)
        #expect(count == lines.count, "the index knows every line")
        #expect(lines.map(\.id) == (1...lines.count).map { "m\($0)" })
        #expect(lines.filter { $0.payload.json.contains("survivor") }.count == 100)
    }

    @Test("a write that fails (file size limit, as a full disk) stores nothing, says which file, and the chat goes on")
    func failedWrite() throws {
        let workspace = try Workspace.standard()
        let text = String(repeating: "长", count: 300)
        let input = (1...30).map { "\($0) \(text)" }.joined(separator: "\n") + "\n/recv text {\"text\":\"after\"}\n"
        // prlimit sets RLIMIT_FSIZE: writes past 16 KiB fail with EFBIG, as they would with ENOSPC.
        let result = try run("/usr/bin/prlimit", ["--fsize=16384", BuildProducts.imhost, "chat", Self.url],
                             input: input, currentDirectory: workspace.root)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("the message could not be stored: cannot write \(workspace.data)/users/me/u42.jsonl: write: File too large; nothing was stored"), "\(result.stdout.suffix(2000))")
        let (lines, count, whole) = try stored(workspace)
        #expect(whole, "no half line is left behind")
        #expect(count == lines.count)
        #expect(lines.count >= 5 && lines.count < 30)
        #expect(lines.map(\.id) == (1...lines.count).map { "m\($0)" })
        let reopened = try imhost(["chat", Self.url], input: "/recv text {\"text\":\"later\"}\n", in: workspace)
        #expect(reopened.stdout.contains("│ later │"), "earlier messages stay readable and the log takes more")
    }

    @Test("a read-only data folder shows the conversation and refuses to send with one clear line")
    func readOnly() throws {
        let workspace = try Workspace.standard()
        let first = try imhost(["chat", Self.url], input: "hello\n/recv text {\"text\":\"hi back\"}\n", in: workspace)
        #expect(first.status == 0)
        let folder = workspace.data + "/users/me"
        // Immutable files and folder: even root cannot write them (chattr needs CAP_LINUX_IMMUTABLE).
        let locked = try run("/usr/bin/chattr", ["-R", "+i", folder])
        try #require(locked.status == 0, "chattr +i failed: \(locked.stderr)")
        defer { _ = try? run("/usr/bin/chattr", ["-R", "-i", folder]) }
        let result = try imhost(["chat", Self.url], input: "one more\n/recv text {\"text\":\"x\"}\n", in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("│ hello │") && result.stdout.contains("│ hi back │"))
        #expect(result.stdout.contains("cannot send: the data folder (\(folder)) is read-only, so messages can be read but not stored; make it writable"))
        #expect(result.stdout.contains("/recv: not sent: the message could not be stored: cannot write \(folder)/u42.jsonl: the data folder is read-only"))
    }

    @Test("a message queued but never stored (a crash between the two writes) is dropped at sign-in, never delivered")
    func outboxReconciled() throws {
        let workspace = try Workspace.standard()
        let offline = try imhost(["chat", Self.url], input: "/offline\nstored while offline\n", in: workspace)
        #expect(offline.status == 0)
        let outbox = workspace.data + "/users/me/outbox.jsonl"
        let handle = try #require(FileHandle(forWritingAtPath: outbox))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"conversation":"u42","id":"m2","state":"pending"}"#.utf8 + [0x0A]))
        try handle.close()
        let online = try imhost(["chat", Self.url], input: "", in: workspace)
        #expect(online.stderr.contains("imhost: delivered 1 message sent while offline: u42 m1\n"), "\(online.stderr)")
        let records = try String(contentsOfFile: outbox, encoding: .utf8)
        #expect(records.contains(#"{"conversation":"u42","id":"m2","state":"dropped"}"#))
        #expect(!records.contains(#""id":"m2","state":"delivered""#))
    }

    @Test("/more with nothing older says so and keeps every message in view")
    func moreKeepsWindow() throws {
        let workspace = try Workspace.standard()
        let result = try imhost(["chat", Self.url], input: "one\ntwo\n/more\n/recv text {\"text\":\"three\"}\n", in: workspace)
        #expect(result.stdout.contains("/more: no older messages; the whole conversation is shown"))
        let last = try #require(result.stdout.components(separatedBy: "════").last)
        #expect(last.contains("│ one │") && last.contains("│ three │"), "\(last)")
    }

    @Test("a log line that is not a message shows as a placeholder whose /why says so, and is kept")
    func unreadableLine() throws {
        let workspace = try Workspace.standard()
        _ = try imhost(["chat", Self.url], input: "before\n", in: workspace)
        let log = workspace.data + "/users/me/u42.jsonl"
        try FileSystem.appendLine(Array(#"{"not":"a message"}"#.utf8), to: log)
        let result = try imhost(["chat", Self.url], input: "/why 2\n", in: workspace)
        #expect(result.stdout.contains("why #2 ((unreadable line)): the stored line does not read: the log line is not a message record"),
                "\(result.stdout.suffix(1500))")
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains(#"{"not":"a message"}"#))
    }
}

import Foundation
import Testing
@testable import IMHost
import IMKit

/// A damaged database under the `imhost` commands: each says in one line what it found, where
/// the damaged file went and what was read out of it into the new one, and the history and the
/// queued sends read out of it are there afterwards.
@Suite("A damaged store", .heavy(.broker), .serialized)
struct StoreDamageTests {
    static let url = "im://chat?rootCateID=1&cateID=12&peer=u42"

    /// A history made through `imhost chat` with no transport: 150 messages each way with u42
    /// (the user's own stay queued), one from bob on the jobs page, mallory blocked. 301 in all.
    func history(_ workspace: Workspace, config: [String] = []) throws {
        let lines = (1...150).flatMap { ["to u42 number \($0)", #"/recv text {"text":"from u42 number \#($0)"}"#] } + ["/block mallory"]
        let u42 = try imhost(["chat", Self.url] + config, input: lines.joined(separator: "\n") + "\n", in: workspace)
        try #require(u42.status == 0, "\(u42.stderr)")
        let bob = try imhost(["chat", "im://chat?rootCateID=9&cateID=12&peer=bob"] + config, input: #"/recv text {"text":"interview at nine"}"# + "\n", in: workspace)
        try #require(bob.status == 0, "\(bob.stderr)")
    }

    func databasePath(_ workspace: Workspace, user: String = "me") -> String { workspace.data + "/users/\(user)/messages.sqlite3" }

    /// Which leaf page of the messages table to damage.
    enum Leaf { case first, middle, last }

    /// Overwrites one leaf page of the messages table with bytes no page holds, as a failing disk
    /// would; the header, the schema and the table's root page stay as they are, so it opens.
    /// Returns how many messages that page held.
    func damage(_ leaf: Leaf, of path: String) throws -> Int {
        var log = stat()
        try #require(lstat(path + "-wal", &log) != 0 || log.st_size == 0, "every page is in the file itself")
        let database = try Database(path: path, mode: .readOnly(immutable: true))
        let schema = try database.statement("SELECT rootpage FROM sqlite_schema WHERE name = 'messages'")
        try #require(try schema.step())
        let root = Int(schema.int(0))
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func number(_ at: Int, _ count: Int) -> Int { bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) } }
        let pageSize = number(16, 2)
        let rootAt = (root - 1) * pageSize
        try #require(bytes[rootAt] == 0x05, "the table's root is an interior page: the table spans several leaves")
        // An interior page: its cells' child pages, then the right-most child in its header.
        let cells = number(rootAt + 3, 2)
        let cell = ["first": 0, "middle": cells / 2][String(describing: leaf)]
        let child = cell.map { number(rootAt + number(rootAt + 12 + 2 * $0, 2), 4) } ?? number(rootAt + 8, 4)
        let leafAt = (child - 1) * pageSize
        try #require(bytes[leafAt] == 0x0D, "a leaf of the table")
        let held = number(leafAt + 3, 2)
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try file.seek(toOffset: UInt64(leafAt))
        try file.write(contentsOf: Data(repeating: 0xFF, count: pageSize))
        try file.close()
        return held
    }

    /// Overwrites the root page of the messages table (an interior page: every leaf hangs from
    /// it), or the file's first page (its header and the schema), as a failing disk would.
    func damageRoot(of path: String, firstPage: Bool = false) throws {
        let database = try Database(path: path, mode: .readOnly(immutable: true))
        let schema = try database.statement("SELECT rootpage FROM sqlite_schema WHERE name = 'messages'")
        try #require(try schema.step())
        let root = firstPage ? 1 : Int(schema.int(0))
        schema.reset()
        database.closeLeavingLog()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        try #require(firstPage || bytes[(root - 1) * pageSize] == 0x05, "the table's root is an interior page")
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try file.seek(toOffset: UInt64((root - 1) * pageSize))
        try file.write(contentsOf: Data(repeating: 0xFF, count: pageSize))
        try file.close()
    }

    /// Adds to the file a page the header counts and nothing uses: every page reads, and
    /// quick_check reports it. Returns its number.
    func addUnusedPage(_ path: String) throws -> Int {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let pages = bytes[28..<32].reduce(0) { $0 << 8 | Int($1) } + 1
        bytes.replaceSubrange(28..<32, with: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: pages >> $0) })
        bytes += [UInt8](repeating: 0, count: bytes[16..<18].reduce(0) { $0 << 8 | Int($1) })
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return pages
    }

    /// The one file the damaged database was moved aside as.
    func aside(_ workspace: Workspace, user: String = "me") throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: workspace.data + "/users/\(user)")
            .filter { $0.hasPrefix("messages.sqlite3.damaged-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        try #require(names.count == 1, "\(names)")
        return names[0]
    }

    /// The line every command says, on a history of 301 messages of which `lost` could not be read.
    func said(_ workspace: Workspace, why: String, lost: Int, queued: Int) throws -> String {
        "\(databasePath(workspace)) is damaged (\(why)): it was moved aside to \(try aside(workspace)), untouched, and a new store started with what could be read out of it: \(301 - lost) messages\(lost > 0 ? " (\(lost) could not be read)" : ""), 2 conversations, \(queued) queued sends, 0 read receipts to send, 1 blocked peer"
    }

    /// How many of the user's own messages the store holds now, every one of them waiting in the
    /// outbox (queued, or with a transport, sent and not yet delivered).
    func queued(_ workspace: Workspace) throws -> Int {
        let store = try MessageStore(dataFolder: workspace.data, user: "me")
        let own = try store.stored(of: "u42", endingBefore: nil, limit: 1000).filter(\.isOutgoing)
        let outbox = try store.outboxCounts()
        #expect(outbox.queued + outbox.sent == own.count, "every send read out waits in the outbox")
        return own.count
    }

    @Test("a photo is read out of a damaged database with its message, its bytes as they were")
    func photos() throws {
        let workspace = try Workspace.standard()
        let sent = try imhost(["chat", "im://chat?rootCateID=1&cateID=12&peer=carol"], input: "/photo \(PhotoFixtures.path("flat.png"))\n", in: workspace)
        try #require(sent.status == 0, "\(sent.stderr)")
        try history(workspace)
        _ = try damage(.middle, of: databasePath(workspace))
        #expect(try imhost(["store", "check"], in: workspace).status == 1)
        let store = try MessageStore(dataFolder: workspace.data, user: "me")
        #expect(try store.photo(peer: "carol", number: 1, index: 0)?.bytes == (try PhotoFixtures.bytes("flat.png")))
        #expect(try pageMessages(workspace, url: "im://chat?rootCateID=1&cateID=12&peer=carol").first?["key"] as? String == "photo")
    }

    @Test("store check on a damaged page: exit 1, one line naming where it went and what was read; the history and the queued sends are there after")
    func check() throws {
        let workspace = try Workspace.standard()
        try history(workspace)
        let lost = try damage(.middle, of: databasePath(workspace))
        let check = try imhost(["store", "check"], in: workspace)
        #expect(check.status == 1)
        let queued = try queued(workspace)
        #expect(queued > 0 && queued < 150, "some sends were on the damaged page, the rest are read out: \(queued)")
        #expect(try MessageStore(dataFolder: workspace.data, user: "me").outboxCounts().queued == queued, "still queued")
        #expect(check.stdout == (try said(workspace, why: "database disk image is malformed", lost: lost, queued: queued)) + "\n", "\(check.stdout)")
        #expect(check.stderr.isEmpty, "\(check.stderr)")
        let again = try imhost(["store", "check"], in: workspace)
        #expect(again.status == 0 && again.stdout == "\(databasePath(workspace)): ok\n", "\(again.stdout)\(again.stderr)")

        // Numbers run on without a gap, in the old order: the last message is #(300 - lost).
        let found = try imhost(["search", "number", "150"], in: workspace)
        #expect(found.stdout.hasPrefix("u42 #\(300 - lost) u42 · ") && found.stdout.contains("from u42 number 150"), "\(found.stdout)")
        let chats = try JSONSerialization.jsonObject(with: Data(try imhost(["chats", "--json"], in: workspace).stdout.utf8)) as? [[String: Any]] ?? []
        #expect(chats.map { $0["peer"] as? String } == ["bob", "u42"] && chats.map { $0["messages"] as? Int } == [1, 300 - lost], "\(chats)")
        let shown = try imhost(["chat", "--peer", "u42"], input: "/more 400\n", in: workspace).stdout
        let page = try #require(shown.components(separatedBy: "═\n").last)
        #expect(page.contains(" #1 me · ") && page.contains("│ to u42 number 1 │") && page.contains(" #\(300 - lost) u42 · "), "\(page)")
        #expect(page.components(separatedBy: " · queued\n").count - 1 == queued, "the sends read out are still queued")
    }

    @Test("what was read out keeps its order, numbered again without a gap; a late message's mark names its message's new number")
    func renumbered() throws {
        let workspace = try Workspace.standard()
        do {
            // u42's messages by seq, 250 arriving last: it shows at the end, sent before 251.
            let store = try MessageStore(dataFolder: workspace.data, user: "me")
            _ = try store.storeIncoming((Array(1...300).filter { $0 != 250 } + [250]).map { (seq: Int) in
                IncomingMessage(from: "u42", globalID: "g\(seq)", seq: seq, key: "text", payload: MessagePayload(json: #"{"text":"seq \#(seq)"}"#),
                                sentAt: 1_767_603_600_000, arrived: true)
            })
        }
        // The oldest messages' page: every later one's number changes.
        let lost = try damage(.first, of: databasePath(workspace))
        #expect(try imhost(["store", "check"], in: workspace).status == 1)
        let page = try #require(try imhost(["chat", Self.url], input: "/more 400\n", in: workspace).stdout.components(separatedBy: "═\n").last)
        // Each bubble's meta line, by its text.
        var meta: [String: String] = [:], last = ""
        for line in page.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("#") { last = line } else if line.hasPrefix("│ seq ") { meta[String(line.dropFirst(2).dropLast(2))] = last }
        }
        #expect(meta.count == 300 - lost)
        let later = try #require(meta["seq 251"]), late = try #require(meta["seq 250"])
        let number = try #require(later.split(separator: " ").first)
        #expect(late.hasPrefix("#\(300 - lost) u42 · ") && late.hasSuffix("sent before \(number)"), "\(late); \(later)")
        #expect(meta["seq \(lost + 1)"]?.hasPrefix("#1 u42 · ") == true && meta["seq 300"]?.hasPrefix("#\(299 - lost) u42 · ") == true)
    }

    @Test("each command that finds the damage says it in one line and goes on with what was read", arguments: ["chats", "search", "open", "chat"])
    func everyCommand(_ command: String) throws {
        let workspace = try Workspace.standard()
        try history(workspace)
        // The newest messages' page: the list of conversations and every page read it.
        let lost = try damage(.last, of: databasePath(workspace))
        let arguments = ["chats": ["chats"], "search": ["search", "number"], "open": ["open", Self.url], "chat": ["chat", "--peer", "u42"]][command]!
        let result = try imhost(arguments, input: "", in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        let line = try said(workspace, why: "database disk image is malformed", lost: lost, queued: try queued(workspace))
        #expect(result.stderr.components(separatedBy: "\n").filter { $0.contains("is damaged") } == ["imhost: " + line], "\(result.stderr)")
        #expect(result.stdout.contains("u42"), "it goes on with what was read: \(result.stdout)")
        #expect(try imhost(["store", "check"], in: workspace).status == 0)
    }

    @Test("quick_check's problems on a database that otherwise opens and reads are damage too: every message read out")
    func quickCheckProblems() throws {
        let workspace = try Workspace.standard()
        try history(workspace)
        let pages = try addUnusedPage(databasePath(workspace))
        #expect(try imhost(["chats"], in: workspace).stderr.isEmpty, "it opens and reads as it is")
        let check = try imhost(["store", "check"], in: workspace)
        #expect(check.status == 1)
        #expect(check.stdout == (try said(workspace, why: "quick_check: Page \(pages) is never used", lost: 0, queued: 150)) + "\n", "\(check.stdout)\(check.stderr)")
    }

    @Test("a chat open while store check replaces the damaged database goes on with the new one, and what it sends is kept")
    func replacedUnderAChat() throws {
        let workspace = try Workspace.standard()
        try history(workspace)
        _ = try addUnusedPage(databasePath(workspace))
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", Self.url], in: workspace.root)
        try #require(chat.waitFor("│ from u42 number 150 │"))
        #expect(try imhost(["store", "check"], in: workspace).status == 1)
        chat.send("after the check")
        #expect(chat.waitFor("imhost: another imhost process found \(databasePath(workspace)) damaged and replaced it: this one goes on with the new one"))
        #expect(chat.waitFor("│ after the check │"))
        chat.send("/quit")
        #expect(chat.finish().status == 0)
        // The chat's connection to the old file closed without deleting the new one's log.
        let shown = try imhost(["chat", Self.url], input: "", in: workspace)
        #expect(shown.stdout.contains("│ after the check │") && shown.stdout.contains(" #301 me · "), "\(shown.stdout)")
        #expect(try imhost(["store", "check"], in: workspace).stdout == "\(databasePath(workspace)): ok\n")
    }

    @Test("sync that finds the damage says it in one line, and stores what arrives in the new database")
    func sync() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["me", "carol"])
        let workspace = try broker.workspace(for: "me")
        // Connected once: the broker keeps what carol sends.
        #expect(try broker.sync(workspace, timeout: 2).status == 0)
        // The same history, made by a host without the transport (its sends stay queued).
        try Workspace.standardConfig.replacingOccurrences(of: "{\n", with: "{\n  \"user\": \"me\",\n", range: Workspace.standardConfig.range(of: "{\n"))
            .write(toFile: workspace.root + "/offline.json", atomically: true, encoding: .utf8)
        try history(workspace, config: ["--config", "offline.json"])
        let lost = try damage(.last, of: databasePath(workspace))
        try broker.publish(as: "carol", topic: "imhost/u/me/from/carol", [envelope("01JCAROL00000000000000DMG1", seq: 1, payload: #"{"text":"after the damage"}"#)])
        let result = try broker.sync(workspace, timeout: 3)
        #expect(result.stdout.hasPrefix("received 1,"), "\(result.stdout)\(result.stderr)")
        let line = try said(workspace, why: "database disk image is malformed", lost: lost, queued: try queued(workspace))
        #expect(result.stderr.components(separatedBy: "\n").filter { $0.contains("is damaged") } == ["imhost: " + line], "\(result.stderr)")
        #expect(try imhost(["search", "damage"], in: workspace).stdout.hasPrefix("carol #1 carol · "))
    }

    @Test("the messages table's root page damaged: every message is still read out, from the leaves nothing leads to any more")
    func damagedRootPage() throws {
        let workspace = try Workspace.standard()
        try history(workspace)
        try damageRoot(of: databasePath(workspace))
        let check = try imhost(["store", "check"], in: workspace)
        #expect(check.status == 1)
        #expect(check.stdout.contains("a new store started with what could be read out of it: 301 messages, 2 conversations, 150 queued sends, 0 read receipts to send, 1 blocked peer"), "\(check.stdout)\(check.stderr)")
        let shown = try imhost(["chat", "--peer", "u42"], input: "/more 400\n", in: workspace).stdout
        #expect(shown.contains("│ to u42 number 1 │") && shown.contains("│ from u42 number 150 │") && shown.contains(" #300 u42 · "), "\(shown)")
        #expect(try imhost(["search", "interview"], in: workspace).stdout.hasPrefix("bob #1 bob · "))
    }

    @Test("the file's first page damaged (its header and the schema): nothing opens, and the messages, conversations, blocked peers and drafts are read out of its pages")
    func damagedFirstPage() throws {
        let workspace = try Workspace.standard()
        try history(workspace)
        do {
            let store = try MessageStore(dataFolder: workspace.data, user: "me")
            _ = try store.addDraft(peer: "u42", typed: "typed before the damage", at: 1_767_603_600_000)
        }
        try damageRoot(of: databasePath(workspace), firstPage: true)
        let check = try imhost(["store", "check"], in: workspace)
        #expect(check.status == 1)
        #expect(check.stdout.contains("301 messages, 2 conversations, 150 queued sends, 0 read receipts to send, 1 blocked peer, 1 unsent draft; not all of the file could be read"), "\(check.stdout)\(check.stderr)")
        let store = try MessageStore(dataFolder: workspace.data, user: "me")
        #expect(try store.drafts(of: "u42").map(\.typed) == ["typed before the damage"])
        let shown = try imhost(["chat", "--peer", "u42"], input: "/more 400\n", in: workspace).stdout
        #expect(shown.contains("│ to u42 number 1 │") && shown.contains(" #300 u42 · "), "\(shown)")
    }

    @Test("what the user typed and had not sent, and each peer's count for the day, are read out of a damaged database too")
    func draftsAndBudgets() throws {
        let workspace = try Workspace.standard()
        try history(workspace)
        do {
            let store = try MessageStore(dataFolder: workspace.data, user: "me")
            _ = try store.addDraft(peer: "u42", typed: "half a thought", at: 1_767_603_600_000)
            // Carol has spent three of her five messages today.
            _ = try store.storeIncoming((1...3).map { (number: Int) in
                IncomingMessage(from: "carol", globalID: "carol\(number)", seq: number, key: "text", payload: MessagePayload(json: #"{"text":"hi"}"#),
                                sentAt: 1_767_603_600_000, arrived: true)
            }, budget: MessageStore.PeerBudget(messages: 5, bytes: 1 << 30))
        }
        _ = try damage(.middle, of: databasePath(workspace))
        let check = try imhost(["store", "check"], in: workspace)
        #expect(check.status == 1 && check.stdout.contains(", 1 unsent draft"), "\(check.stdout)\(check.stderr)")
        let store = try MessageStore(dataFolder: workspace.data, user: "me")
        #expect(try store.drafts(of: "u42").map(\.typed) == ["half a thought"])
        // Two more from carol fit today; the third does not: her count came through.
        let more = try store.storeIncoming((4...6).map { (number: Int) in
            IncomingMessage(from: "carol", globalID: "carol\(number)", seq: number, key: "text", payload: MessagePayload(json: #"{"text":"hi"}"#),
                            sentAt: 1_767_603_600_000, arrived: true)
        }, budget: MessageStore.PeerBudget(messages: 5, bytes: 1 << 30))
        #expect(more.map { if case .overBudget = $0 { "over" } else { "in" } } == ["in", "in", "over"], "\(more)")
    }
}

import Foundation
import Testing
@testable import IMHost
import IMKit

/// The store in process, on a real database file.
@Suite("The message store")
struct StoreTests {
    func text(_ n: Int) -> MessagePayload { MessagePayload(json: #"{"text":"message \#(n)"}"#) }

    func incoming(_ n: Int, from peer: String = "u42", seq: Int? = nil) -> IncomingMessage {
        IncomingMessage(from: peer, globalID: "g\(n)", seq: seq, key: "text", payload: text(n), sentAt: Int64(n))
    }

    @Test("messages persist across opens, page from the newest, keep their exact payload text, and each has a global id")
    func persistAndPage() throws {
        let workspace = try Workspace()
        let data = workspace.root + "/data"
        do {
            let store = try MessageStore(dataFolder: data, user: "me")
            _ = try store.storeIncoming((1...100).map { incoming($0) })
            try store.storeOutgoing(to: "u42", key: "text", payload: MessagePayload(json: "{ \"text\" :  \"spaced\\nout\" }"), at: 500)
        }
        #expect(FileManager.default.fileExists(atPath: data + "/users/me/messages.sqlite3"))
        let store = try MessageStore(dataFolder: data, user: "me")
        #expect(try store.count(of: "u42") == 101)
        let last = try store.messages(of: "u42", endingBefore: nil, limit: 20)
        #expect(last.map(\.position) == Array(81...100))
        #expect(last.last?.message.payload.json == "{ \"text\" :  \"spaced\\nout\" }")
        #expect(last.last.flatMap { $0.message.globalID }.map { $0.count == 26 } == true, "a ULID the sender made")
        let older = try store.messages(of: "u42", endingBefore: 81, limit: 20)
        #expect(older.map(\.message.id) == (61...80).map { "m\($0 + 1)" })
        #expect(try store.messages(of: "u42", endingBefore: 3, limit: 20).map(\.message.id) == ["m1", "m2", "m3"])
        #expect(try store.count(of: "nobody") == 0)
        let mode = try store.database.statement("PRAGMA journal_mode")
        _ = try mode.step()
        #expect(mode.text(0) == "wal")
    }

    @Test("a message is stored once by (sender, global id): again changes nothing, and another sender's same id is its own")
    func storedOnce() throws {
        let store = try MessageStore(memoryFor: "me")
        #expect(try store.storeIncoming([incoming(1)]).first.map { if case .stored = $0 { true } else { false } } == true)
        #expect(try store.storeIncoming([incoming(1)]) == [.duplicate])
        #expect(try store.count(of: "u42") == 1)
        // Mallory sending Bob's id stores Mallory's own message, and suppresses nothing.
        _ = try store.storeIncoming([incoming(1, from: "mallory")])
        #expect(try store.count(of: "mallory") == 1 && store.count(of: "u42") == 1)
    }

    @Test("a sender's message that arrives late takes the next place, and records the shown message it was sent before; none moves")
    func lateArrival() throws {
        let store = try MessageStore(memoryFor: "me")
        _ = try store.storeIncoming([incoming(1, seq: 1), incoming(3, seq: 3), incoming(4, seq: 4)])
        try store.storeOutgoing(to: "u42", key: "text", payload: text(9), at: 9)
        _ = try store.storeIncoming([incoming(2, seq: 2), incoming(100, from: "bob", seq: 1)])
        // Another sender's seq says nothing of u42's, and one past every stored seq is in order.
        _ = try store.storeIncoming([incoming(5, seq: 5)])
        let shown = try store.stored(of: "u42", endingBefore: nil, limit: 10)
        #expect(shown.map(\.envelope.payload.json) == [text(1), text(3), text(4), text(9), text(2), text(5)].map(\.json))
        #expect(shown.map(\.position) == [0, 1, 2, 3, 4, 5])
        #expect(shown.map(\.sentBefore) == [nil, nil, nil, nil, 1, nil], "2 was sent before 3, the smallest seq above its own")
        #expect(try store.stored(of: "bob", endingBefore: nil, limit: 10).map(\.sentBefore) == [nil])
    }

    @Test("state: queued, then sent, delivered, read; a receipt for another sender's id changes nothing; failed and retried")
    func states() throws {
        let store = try MessageStore(memoryFor: "me")
        let sent = try store.storeOutgoing(to: "bob", key: "text", payload: text(1), at: 1)
        #expect(sent.state == .queued && sent.seq == 1)
        #expect(try store.queuedCount() == 1)
        let claimed = try store.claim(limit: 10, now: 10, leaseMilliseconds: 1000)
        #expect(claimed.map(\.globalID) == [sent.envelope.globalID])
        #expect(try store.claim(limit: 10, now: 20, leaseMilliseconds: 1000).isEmpty, "claimed once, while the lease runs")
        #expect(try store.claim(limit: 10, now: 2000, leaseMilliseconds: 1000).count == 1, "a lease that ran out can be claimed again")
        try store.markSent(claimed)
        #expect(try store.stored(of: "bob", endingBefore: nil, limit: 1).first?.state == .sent)
        #expect(try store.receipt(from: "mallory", ids: [sent.envelope.globalID!], state: .delivered, at: 3) == 0, "only bob can say bob has it")
        #expect(try store.receipt(from: "bob", ids: [sent.envelope.globalID!], state: .delivered, at: 3) == 1)
        #expect(try store.queuedCount() == 0, "delivered messages leave the outbox")
        _ = try store.receipt(from: "bob", ids: [sent.envelope.globalID!], state: .read, at: 4)
        _ = try store.receipt(from: "bob", ids: [sent.envelope.globalID!], state: .delivered, at: 5)
        #expect(try store.stored(of: "bob", endingBefore: nil, limit: 1).first?.state == .read, "a late delivered does not undo read")

        let second = try store.storeOutgoing(to: "bob", key: "text", payload: text(2), at: 6)
        #expect(second.seq == 2)
        let refusal = MessageFailure.refusedByPeer(PeerRefusal(peer: "bob", code: .key, reason: "not a message key"))
        #expect(try store.fail(to: "bob", ids: [second.envelope.globalID!], because: refusal) == 1)
        let failed = try #require(try store.stored(of: "bob", endingBefore: nil, limit: 1).first)
        #expect(failed.state == .failed && failed.failure == refusal)
        #expect(try store.retry("bob", number: 2, at: 7))
        #expect(try store.stored(of: "bob", endingBefore: nil, limit: 1).first?.state == .queued)
        #expect(try store.queuedCount() == 1)
    }

    @Test("the list of conversations: newest first, unread counts, the last message, the page each opens on")
    func conversations() throws {
        let store = try MessageStore(memoryFor: "me")
        _ = try store.storeIncoming([incoming(1, from: "alice"), incoming(2, from: "alice")])
        try store.remember(JumpPage(rootCateID: 1, cateID: 12, infoID: "L1"), for: "alice")
        try store.storeOutgoing(to: "bob", key: "text", payload: text(3), at: Clock.now() + 1000)
        let list = try store.conversations()
        #expect(list.map(\.peer) == ["bob", "alice"])
        #expect(list[1].unread == 2 && list[1].lastText == "message 2" && list[1].lastFromPeer)
        #expect(list[1].page == JumpPage(rootCateID: 1, cateID: 12, infoID: "L1"))
        #expect(try store.markRead("alice", before: 2) == ["g1", "g2"])
        #expect(try store.conversations().first { $0.peer == "alice" }?.unread == 0)
    }

    @Test("search: every word required, newest first, Chinese words too, short words scanned, and nothing typed is syntax")
    func search() throws {
        let store = try MessageStore(memoryFor: "me")
        let words = ["sunny flat near the park", "阳光两居室 Sunny 2-room flat", "the park is closed", #"quote " and NEAR(park) * OR"#, "a 好 b"]
        _ = try store.storeIncoming(words.enumerated().map { IncomingMessage(from: "u42", globalID: "w\($0.offset)", seq: nil, key: "text",
                                                                            payload: MessagePayload(json: #"{"text":"\#($0.element.replacing("\"", with: "\\\""))"}"#),
                                                                            sentAt: Int64($0.offset)) })
        _ = try store.storeIncoming([IncomingMessage(from: "bob", globalID: "card", seq: nil, key: "house.listing",
                                                     payload: MessagePayload(json: #"{"id":"L9","title":"Park view flat","price":1}"#), sentAt: 9)])
        #expect(try store.search(["flat", "sunny"], peer: nil, limit: 20).map(\.number) == [2, 1])
        #expect(try store.search(["park"], peer: nil, limit: 20).map(\.peer) == ["bob", "u42", "u42", "u42"], "a card's strings are searched")
        #expect(try store.search(["park"], peer: "u42", limit: 2).map(\.number) == [4, 3])
        #expect(try store.search(["两居室"], peer: nil, limit: 20).map(\.number) == [2])
        #expect(try store.search(["NEAR(park)"], peer: nil, limit: 20).map(\.number) == [4], "FTS syntax is only text")
        #expect(try store.search(["\""], peer: nil, limit: 20).map(\.number) == [4])
        #expect(try store.search(["好"], peer: nil, limit: 20).map(\.number) == [5], "a word under three characters is scanned for")
        #expect(try store.search(["%"], peer: nil, limit: 20).isEmpty, "LIKE syntax is only text")
        #expect(try store.search(["nothing-like-it"], peer: nil, limit: 20).isEmpty)
        // A send leaves its words to a later commit; a search catches the index up first.
        try store.storeOutgoing(to: "u42", key: "text", payload: MessagePayload(json: #"{"text":"sent words zebracorn"}"#), at: 10)
        #expect(try store.search(["zebracorn"], peer: nil, limit: 20).map(\.number) == [6])
        let progress = try store.database.statement("SELECT indexed_through = (SELECT max(id) FROM messages) FROM search_progress")
        _ = try progress.step()
        #expect(progress.int(0) == 1, "the index caught up")
    }

    @Test("a plain text message's words are read without the parser, and are the parser's words; anything else goes to the parser")
    func plainText() {
        let plain = [#"{"text":"hello"}"#, #"{"text":""}"#, #"{"text":"你好 🙂 flat"}"#]
        let other = [#"{"text":"a \"quote\""}"#, #"{"text": "spaced"}"#, #"{"text":"x","y":1}"#, #"{"text":"tab\tx"}"#, #"{"text":"}"#, "{}", "not json"]
        for payload in plain {
            #expect(MessageText.plainText(payload) != nil)
        }
        for payload in other {
            #expect(MessageText.plainText(payload) == nil, "\(payload)")
        }
        // The fast path and the parser agree on what they both read.
        for payload in plain {
            let parsed = try? JSONParser.parse(payload)
            guard case .object(let members)? = parsed?.value, case .string(let text)? = members.member("text")?.value else {
                Issue.record("\(payload) does not parse")
                continue
            }
            #expect(MessageText.plainText(payload) == text)
        }
        let long = String(repeating: "ü", count: MessageText.limit + 5)
        #expect(MessageText.of(key: "text", payload: #"{"text":"\#(long)"}"#).count == MessageText.limit)
    }

    @Test("arrivals and sends leave their words to the index's own commits: caught up a bounded number at a time, in order, each message once")
    func searchIndexCatchUp() throws {
        let store = try MessageStore(memoryFor: "me")
        func indexed() throws -> Int64 {
            let through = try store.database.statement("SELECT indexed_through FROM search_progress")
            defer { through.reset() }
            _ = try through.step()
            return through.int(0)
        }
        let before = try indexed()
        _ = try store.storeIncoming((0..<3).map { IncomingMessage(from: "u42", globalID: "c\($0)", seq: $0 + 1, key: "text",
                                                                   payload: MessagePayload(json: #"{"text":"otterbadger \#($0)"}"#), sentAt: Int64($0)) })
        try store.storeOutgoing(to: "u42", key: "text", payload: MessagePayload(json: #"{"text":"otterbadger mine"}"#), at: 10)
        #expect(try indexed() == before, "storing indexed nothing")
        #expect(try store.catchUpSearchIndex(limit: 2) == false)
        #expect(try indexed() == before + 2)
        #expect(try store.catchUpSearchIndex(limit: 2) == true)
        #expect(try store.catchUpSearchIndex(limit: 2) == true, "nothing left: nothing done")
        let hits = try store.database.statement("SELECT count(*) FROM message_text WHERE message_text MATCH 'otterbadger'")
        _ = try hits.step()
        #expect(hits.int(0) == 4, "each message indexed once")
        #expect(try store.search(["otterbadger"], peer: "u42", limit: 20).map(\.number) == [4, 3, 2, 1])
    }

    @Test("hostile ids stay out of paths, or are refused", arguments: ["../../etc/x", "/etc/passwd", "..", ".", "a/b", "张三"])
    func hostileIDs(id: String) throws {
        let workspace = try Workspace()
        let data = workspace.root + "/data"
        let store = try MessageStore(dataFolder: data, user: id)
        try store.storeOutgoing(to: id, key: "text", payload: text(1), at: 1)
        #expect(try store.count(of: id) == 1)
        let users = try FileManager.default.contentsOfDirectory(atPath: data + "/users")
        #expect(users.count == 1 && !users[0].contains("/") && !users[0].contains("."))
        #expect(try FileManager.default.contentsOfDirectory(atPath: data + "/users/" + users[0]).contains("messages.sqlite3"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.root).sorted() == ["Plugins", "data"])
    }

    @Test("peer ids too long or with control characters are refused with the reason")
    func refusedIDs() throws {
        let store = try MessageStore(memoryFor: "me")
        #expect(throws: StoreError(.refused, "the peer id is 81 bytes long; the limit is 80")) {
            try store.storeOutgoing(to: String(repeating: "x", count: 81), key: "text", payload: text(1), at: 1)
        }
        #expect(throws: StoreError.self) { try store.storeOutgoing(to: "a\nb", key: "text", payload: text(1), at: 1) }
    }

    @Test("what the core refuses as not plain (ids, plugin file names) is exactly what the terminal escapes")
    func plainIsWhatTheTerminalEscapes() {
        let differing = (0...0x10FFFF).compactMap(Unicode.Scalar.init).filter { PlainText.isControl($0) != TerminalText.needsEscape($0, newlines: false) }
        #expect(differing.isEmpty, "\(differing.prefix(5).map { String($0.value, radix: 16) })")
    }

    @Test("a database newer than this code is refused in one line, and left as it is")
    func newerSchema() throws {
        let workspace = try Workspace()
        let data = workspace.root + "/data"
        _ = try MessageStore(dataFolder: data, user: "me")
        let path = data + "/users/me/messages.sqlite3"
        #expect(try run("/usr/bin/sqlite3", [path, "PRAGMA user_version = 99"]).status == 0)
        #expect(throws: StoreError(.failed, "\(path): it was written by a newer imhost (schema 99; this one knows up to \(Migrations.latest)); run that imhost, or move the file aside (SQLite 0)")) {
            _ = try MessageStore(dataFolder: data, user: "me")
        }
    }

    @Test("a damaged database is found at open, said, moved aside untouched, and a new one holding what could be read out of it takes its place",
          arguments: ["not a database", "truncated", "bad header", "bad schema"])
    func damaged(_ how: String) throws {
        let workspace = try Workspace()
        let data = workspace.root + "/data"
        do {
            let store = try MessageStore(dataFolder: data, user: "me")
            _ = try store.storeIncoming((1...200).map { incoming($0) })
        }
        let path = data + "/users/me/messages.sqlite3"
        switch how {
        case "not a database": try String(repeating: "hello ", count: 2000).write(toFile: path, atomically: false, encoding: .utf8)
        case "truncated": #expect(truncate(path, 4096 + 100) == 0)
        case "bad header":
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.seek(toOffset: 0)
            handle.write(Data("SQLite format 9\u{0}".utf8))
            try handle.close()
        default:
            #expect(try run("/usr/bin/sqlite3", [path, "DROP TABLE blocked"]).status == 0)
        }
        let damagedBytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try MessageStore(dataFolder: data, user: "me")
        let notes = store.takeNotes()
        #expect(notes.count == 1 && notes[0].hasPrefix("\(path) is damaged"), "\(notes)")
        let aside = try #require(try FileManager.default.contentsOfDirectory(atPath: data + "/users/me").first { $0.hasPrefix("messages.sqlite3.damaged-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: data + "/users/me/" + aside)) == damagedBytes, "kept as it was")
        // A schema with a table missing still reads; a bad header opens nothing, and its pages
        // are read one by one (StoreRecovery's page scan): every message is there.
        let readable = ["bad schema": 200, "bad header": 200][how] ?? 0
        let said = ["bad schema": "read out of it: 200 messages, 1 conversation, 0 queued sends, 0 read receipts to send, 0 blocked peers; not all of blocked peers could be read",
                    "bad header": "read out of it: 200 messages, 1 conversation, 0 queued sends, 0 read receipts to send, 0 blocked peers; not all of the file could be read"][how]
            ?? "nothing could be read out of it"
        #expect(notes.first?.hasSuffix(said) == true, "\(notes)")
        try store.storeOutgoing(to: "u42", key: "text", payload: text(1), at: 1)
        #expect(try store.count(of: "u42") == readable + 1, "the new store works")
    }
}

@Suite("A message's life")
struct MessageLifeTests {
    @Test("the database's triggers list exactly the states the code knows, each direction its own")
    func triggersMatchStates() throws {
        let migration = try #require(Migrations.all.last { $0.contains("messages_known_state_insert") })
        let outgoing = "NEW.outgoing = 1 AND NEW.state NOT IN (" + OutgoingState.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ")"
        let incoming = "NEW.outgoing = 0 AND NEW.state NOT IN (" + IncomingState.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ")"
        #expect(migration.components(separatedBy: outgoing).count - 1 == 2, "a new state needs a new migration with its triggers")
        #expect(migration.components(separatedBy: incoming).count - 1 == 2)
    }

    @Test("the store refuses a state it does not know, and reads one written behind its back as unknown, saying so")
    func unknownStates() throws {
        let workspace = try Workspace.standard()
        _ = try imhost(["chat", "im://chat?rootCateID=1&cateID=12&peer=u42"], input: "hello\n/quit\n", in: workspace)
        let path = workspace.data + "/users/me/messages.sqlite3"
        let refused = try run("/usr/bin/sqlite3", [path, "UPDATE messages SET state = 'lost'"])
        #expect(refused.stderr.contains("a message state imhost does not know"), "\(refused.stderr)")
        // Written with the triggers out of the way, as another tool might: shown as unknown.
        let forced = try run("/usr/bin/sqlite3", [path, "DROP TRIGGER messages_known_state_update; UPDATE messages SET state = 'lost'"])
        #expect(forced.status == 0, "\(forced.stderr)")
        let shown = try imhost(["chat", "im://chat?rootCateID=1&cateID=12&peer=u42"], input: "/why 1\n/quit\n", in: workspace)
        #expect(shown.stdout.contains("state unknown (/why)") && shown.stdout.contains(#"the store holds the state "lost", which this imhost does not know"#), "\(shown.stdout)")
    }

    @Test("a failed message's reason is stored as a code and its data; the sentences an older imhost kept stay readable as the code other, without /retry")
    func failureCodes() throws {
        let workspace = try Workspace.standard()
        let url = "im://chat?rootCateID=1&cateID=12&peer=u42"
        _ = try imhost(["chat", url], input: "hello\nagain\n/quit\n", in: workspace)
        let path = workspace.data + "/users/me/messages.sqlite3"
        // As imhost kept them before reasons were codes (schema 9, before cleared chats, reports,
        // replies and recalls too).
        let old = try run("/usr/bin/sqlite3", [path, """
            UPDATE messages SET state = 'failed', reason = 'u42''s host takes no more from you today (past the budget); /retry N sends it again tomorrow' WHERE position = 0;
            UPDATE messages SET state = 'given-up', reason = 'not delivered within 72 hours' WHERE position = 1;
            DROP TABLE cleared;
            DROP TABLE reports;
            ALTER TABLE messages DROP COLUMN reply_sender;
            ALTER TABLE messages DROP COLUMN reply_id;
            DROP INDEX messages_recalled;
            ALTER TABLE messages DROP COLUMN recalled_at;
            DROP TABLE reactions;
            DROP TABLE peer_notes_out;
            ALTER TABLE sibling_notes DROP COLUMN value;
            ALTER TABLE sibling_notes DROP COLUMN sender;
            DROP TABLE peer_features;
            DROP TABLE voices;
            DROP TABLE files;
            DROP TABLE peer_lines;
            ALTER TABLE messages DROP COLUMN revision;
            ALTER TABLE messages DROP COLUMN revised_by;
            ALTER TABLE messages DROP COLUMN revised_at;
            ALTER TABLE messages DROP COLUMN revised_payload;
            PRAGMA user_version = 9
            """])
        #expect(old.status == 0, "\(old.stderr)")
        let shown = try pageMessages(workspace, url: url)
        #expect(shown.map { $0["failure"] as? [String: String] } == [
            ["code": "other", "text": "u42's host takes no more from you today (past the budget); retry sends it again tomorrow"],
            ["code": "other", "text": "not delivered within 72 hours"],
        ], "\(shown)")
        let stored = try run("/usr/bin/sqlite3", [path, "SELECT json_extract(reason, '$.code') FROM messages ORDER BY position; PRAGMA user_version"]).stdout
        #expect(stored == "other\nother\n\(Migrations.latest)\n", "\(stored)")
        #expect(try !run("/usr/bin/sqlite3", [path, "SELECT reason FROM messages"]).stdout.contains("/retry"), "nothing stored says what to type")

        // A code a newer imhost stored, and a sentence read out of a damaged older store.
        #expect(try run("/usr/bin/sqlite3", [path, """
            UPDATE messages SET reason = '{"code":"recalled","by":"u42"}' WHERE position = 0;
            UPDATE messages SET reason = 'refused by u42 ' || char(27) || '[2J' WHERE position = 1
            """]).status == 0)
        #expect(try pageMessages(workspace, url: url).map { $0["failure"] as? [String: String] } == [["code": "recalled"], ["code": "other", "text": "refused by u42 \u{1B}[2J"]])
        let why = try imhost(["chat", url], input: "/why 1\n/why 2\n/quit\n", in: workspace).stdout
        #expect(why.contains(#"state: failed: failed for a reason this imhost does not know ("recalled", stored by a newer one)"#), "\(why)")
        #expect(why.contains(#"state: given-up: refused by u42 \x1b[2J"#) && !why.contains("\u{1B}"), "what the store holds is escaped where the terminal draws it: \(why)")
    }

    @Test("each move the table allows, and none it does not")
    func moves() {
        #expect(MessageLife.allows(OutgoingState.queued, .sent) && MessageLife.allows(OutgoingState.sent, .delivered))
        #expect(!MessageLife.allows(OutgoingState.read, .delivered), "read is the last word")
        #expect(!MessageLife.allows(OutgoingState.failed, .read), "a refusal is not taken back by a read receipt")
        #expect(MessageLife.allows(OutgoingState.givenUp, .delivered) && MessageLife.allows(OutgoingState.failed, .queued))
        #expect(MessageLife.allows(IncomingState.received, .read) && !MessageLife.allows(IncomingState.read, .received))
        #expect(MessageLife.from(OutgoingState.sent) == "state IN ('queued')")
    }
}

import Foundation
import Testing
@testable import IMHost
import IMKit

/// Every file of a user's store in `workspace` (the database, its write-ahead log and shared
/// memory, and whatever else the user's folder holds), as bytes.
func storeFiles(_ workspace: Workspace, user: String) throws -> [(name: String, bytes: Data)] {
    let folder = workspace.data + "/users/" + user
    return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().compactMap { name in
        // Regular files only (the folder holds the wake socket too).
        let kind = try FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.type] as? FileAttributeType
        guard kind == .typeRegular else { return nil }
        return (name, try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
    }
}

/// The files of `user`'s store in `workspace` that hold any of `needles`, with which.
func filesHolding(_ needles: [String], _ workspace: Workspace, user: String) throws -> [String] {
    try storeFiles(workspace, user: user).flatMap { file in
        needles.filter { file.bytes.range(of: Data($0.utf8)) != nil }.map { "\(file.name): \($0)" }
    }
}

/// Every trigram of `word`, as the search index keeps them.
func trigrams(_ word: String) -> [String] {
    let characters = Array(word)
    return (0...(characters.count - 3)).map { String(characters[$0..<$0 + 3]) }
}

extension DeviceSyncTests.People {
    /// Bob's chat with alice, running and connected.
    func bobsChat() throws -> RunningProcess {
        let chat = try broker.chat(bob, with: "alice")
        try #require(chat.waitFor(broker.connected("bob")), "\(chat.stdout)\(chat.stderr)")
        return chat
    }
}

/// Issue 41, points 1 and 2: a reply quotes the message it answers; a recalled message leaves
/// every device of both people, and every file of their stores.
@Suite("Replying and recalling between two people", .heavy(.broker))
struct ReplyRecallTests {
    @Test("bob replies to alice's message and alice to her own: both show the quote; alice recalls a message within the limit: it is replaced on bob's page and her phone (away meanwhile), its words leave every file of the three stores, and what it said comes back to her input; a recall of bob's message, or of one sent too long ago, is refused in one line",
          arguments: BrokerKind.allCases)
    func replyAndRecall(_ kind: BrokerKind) throws {
        let people = try DeviceSyncTests.People(kind: kind)
        let broker = people.broker
        // The phone and the laptop know each other; then the phone is away.
        let (laptop, phone) = try people.aliceOnBoth()
        phone.send("/quit")
        #expect(phone.finish().status == 0)
        let bob = try people.bobsChat()
        defer { for chat in [laptop, bob] { chat.signal(SIGKILL); _ = chat.finish() } }

        laptop.send("Is the flat on Main Street still free?")
        #expect(bob.waitFor("│ Is the flat on Main Street still free? │"), "\(bob.stdout)")
        bob.send("/reply 1 Yes, viewing on Saturday")
        #expect(bob.waitFor(#"↪ #1 alice: "Is the flat on Main Street"#), "bob's own page quotes alice's message: \(bob.stdout)")
        #expect(laptop.waitFor(#"↪ #1 you: "Is the flat on Main Street"#), "alice's page quotes her own message: \(laptop.stdout)")
        #expect(laptop.waitFor("│ Yes, viewing on Saturday"), "\(laptop.stdout)")
        laptop.send("/reply 2 Great, 10:00?")
        #expect(bob.waitFor(#"↪ #2 you: "Yes, viewing on Saturday""#), "alice quoted bob's own: \(bob.stdout)")

        // A message whose words are its own: a word no other message holds.
        let secret = "0176 5555 1234 zqxwvjk"
        laptop.send("my number: " + secret)
        #expect(bob.waitFor("│ my number: \(secret) │"), "\(bob.stdout)")
        // Bob's host read it: its receipts said it takes recalls.
        #expect(laptop.waitFor("read ✓✓", occurrences: 3), "\(laptop.stdout)")
        _ = try imhost(["search", "zqxwvjk"], in: people.bob)
        #expect(try !filesHolding([secret], people.bob, user: "bob").isEmpty, "before the recall, bob's store holds the words (the check finds them)")

        laptop.send("/recall 2")
        #expect(laptop.waitFor("/recall: #2 is bob's message: only its sender recalls a message"), "\(laptop.stdout)")
        laptop.send("/recall 4")
        #expect(laptop.waitFor("recalled #4: gone from this chat, your devices and bob's; it said: my number: \(secret)"), "\(laptop.stdout)")
        #expect(laptop.waitFor("(you recalled this message)"), "\(laptop.stdout)")
        #expect(bob.waitFor("(alice recalled this message)"), "\(bob.stdout)")
        #expect(try pageMessages(people.bob, url: houseChat(with: "alice"))[3]["recalled"] as? Bool == true)
        // A reply to it now quotes no words.
        bob.send("/reply 4 ok")
        #expect(bob.waitFor("/reply: #4 was recalled: there is nothing of it to reply to"), "\(bob.stdout)")

        // Nothing of it in any file of bob's and the laptop's stores: neither its words nor any
        // trigram of the word only it held (the index rewritten, the log cut).
        let needles = [secret, "my number"] + trigrams("zqxwvjk")
        func scrubbed(_ workspace: Workspace, _ user: String) {
            var found: [String] = []
            #expect(waitUntil(timeout: 30) {
                found = (try? filesHolding(needles, workspace, user: user)) ?? ["unreadable"]
                return found.isEmpty
            }, "\(user)'s store still holds: \(found)")
        }
        scrubbed(people.bob, "bob")
        scrubbed(people.laptop, "alice")

        // Alice's phone, back, has it recalled too (its copy came, then the note), in every file.
        // Its messages are where they arrived there (her own copies first, then bob's). Each
        // sync takes what the broker kept for the phone by then.
        func phoneFollows() throws {
            var phonePage: [[String: Any]] = []
            #expect(waitUntil(timeout: 90) {
                _ = try? broker.sync(people.phone)
                phonePage = (try? pageMessages(people.phone, url: houseChat(with: "bob"))) ?? []
                return phonePage.count == 4 && phonePage.contains { $0["recalled"] as? Bool == true }
            }, "\(phonePage)")
            #expect(!phonePage.contains { ($0["text"] as? String)?.contains(secret) == true })
            let question = try #require(phonePage.first { ($0["text"] as? String)?.hasPrefix("Is the flat") == true })
            let reply = try #require(phonePage.first { $0["from"] as? String == "bob" }?["reply"] as? [String: Any])
            #expect(reply["number"] as? Int == question["number"] as? Int && reply["from"] as? String == "alice"
                        && (reply["text"] as? String)?.hasPrefix("Is the flat") == true, "the phone quotes too: \(reply)")
            scrubbed(people.phone, "alice")
        }
        // A `recalled` note the cluster loses after it was handed over is backed by the next
        // catch-up, whose answer names the latest recalls (each sync here is one).
        try phoneFollows()
        #expect(try imhost(["search", "zqxwvjk"], in: people.bob).stdout.contains("No message matches"), "search finds nothing of it")

        // Sent longer ago than limits.recallSeconds: refused, and nothing changes.
        #expect(try run("/usr/bin/sqlite3", [people.laptop.data + "/users/alice/messages.sqlite3",
                                             "UPDATE messages SET sent_at = sent_at - 300000 WHERE position = 2"]).status == 0)
        laptop.send("/recall 3")
        #expect(laptop.waitFor("/recall: #3 was sent 5 minutes ago: a message can be recalled within 2 minutes of sending it (limits.recallSeconds in host.json)"),
                "\(laptop.stdout)")
    }
}

extension ReplyRecallTests {
    @Test("a recall the phone's note never brought (the broker lost everything it kept for the phone) reaches it with its next catch-up")
    func lostNoteBackedByCatchUp() throws {
        let people = try DeviceSyncTests.People()
        let (laptop, phone) = try people.aliceOnBoth()
        defer { laptop.signal(SIGKILL); _ = laptop.finish() }
        laptop.send("meet at 5 qzxvwk")
        #expect(phone.waitFor("│ meet at 5 qzxvwk │"), "\(phone.stdout)")
        phone.send("/quit")
        #expect(phone.finish().status == 0)
        laptop.send("/recall 1")
        #expect(laptop.waitFor("(you recalled this message)"), "\(laptop.stdout)")
        // The note to the phone waits in the broker's session for it: the broker loses it.
        try people.broker.loseStateAndRestart()
        // The laptop reconnects by itself; the phone's next catch-up asks it.
        var page: [[String: Any]] = []
        #expect(waitUntil(timeout: 60) {
            _ = try? people.broker.sync(people.phone)
            page = (try? pageMessages(people.phone, url: houseChat(with: "bob"))) ?? []
            return page.first?["recalled"] as? Bool == true
        }, "\(page)")
        #expect(try filesHolding(["qzxvwk"], people.phone, user: "alice").isEmpty || waitUntil(timeout: 30) {
            (try? filesHolding(["qzxvwk"], people.phone, user: "alice"))?.isEmpty == true
        })
    }
}

extension ReplyRecallTests {
    @Test("a message sent and recalled while the phone was away, both its copy and the note lost with the broker's state: the next catch-up brings it to the phone as recalled, not as nothing")
    func lostCopyAndNoteBackedByCatchUp() throws {
        let people = try DeviceSyncTests.People()
        let (laptop, phone) = try people.aliceOnBoth()
        defer { laptop.signal(SIGKILL); _ = laptop.finish() }
        phone.send("/quit")
        #expect(phone.finish().status == 0)
        laptop.send("meet at 5 qzxvwk")
        #expect(laptop.waitFor("│ meet at 5 qzxvwk │"), "\(laptop.stdout)")
        laptop.send("/recall 1")
        #expect(laptop.waitFor("(you recalled this message)"), "\(laptop.stdout)")
        try people.broker.loseStateAndRestart()
        // The laptop reconnects on its own backoff (seconds, more on a busy machine); each sync of
        // the phone asks it again.
        var page: [[String: Any]] = []
        #expect(waitUntil(timeout: 120) {
            _ = try? people.broker.sync(people.phone)
            page = (try? pageMessages(people.phone, url: houseChat(with: "bob"))) ?? []
            return page.first?["recalled"] as? Bool == true
        }, "phone: \(page); laptop: \(laptop.stdout.suffix(1500))")
        #expect(try filesHolding(["qzxvwk"], people.phone, user: "alice").isEmpty)
    }

    @Test("a reaction the phone's note never brought (the broker lost everything it kept for the phone) reaches it with its next catch-up, and so does taking it back")
    func lostReactionBackedByCatchUp() throws {
        let people = try DeviceSyncTests.People()
        let (laptop, phone) = try people.aliceOnBoth()
        defer { laptop.signal(SIGKILL); _ = laptop.finish() }
        laptop.send("see you at 5")
        #expect(phone.waitFor("│ see you at 5 │"), "\(phone.stdout)")
        phone.send("/quit")
        #expect(phone.finish().status == 0)
        laptop.send("/react 1 👍")
        #expect(laptop.waitFor("👍 you"), "\(laptop.stdout)")
        try people.broker.loseStateAndRestart()
        #expect(waitUntil(timeout: 60) {
            _ = try? people.broker.sync(people.phone)
            return (try? shownReactions(people.phone, with: "bob", number: 1)) == ["👍": ["alice"]]
        })
    }
}

/// The store's side of a recall, on the real database file while another process reads it.
@Suite("A recalled message leaves the store's files")
struct RecallStoreTests {
    @Test("its words leave the database, the search index and the write-ahead log, even while another connection holds a read open (the log is cut once it lets go); a message the recall came before is never stored")
    func scrubbed() throws {
        let workspace = try Workspace()
        let folder = workspace.root + "/data"
        let store = try MessageStore(dataFolder: folder, user: "bob")
        let words = "the code to the door is wqpzmxk 4711"
        _ = try store.storeIncoming([IncomingMessage(from: "alice", globalID: "a1", seq: 1, key: "text", payload: MessagePayload(json: #"{"text":"\#(words)"}"#), sentAt: 1),
                                     IncomingMessage(from: "alice", globalID: "a2", seq: 2, key: "text", payload: MessagePayload(json: #"{"text":"see you"}"#), sentAt: 2)])
        _ = try store.catchUpSearchIndex(limit: 100)
        #expect(try store.search(["wqpzmxk"], peer: nil, limit: 10).count == 1)
        let path = folder + "/users/bob/messages.sqlite3"
        func holding() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: folder + "/users/bob").sorted().flatMap { name -> [String] in
                let bytes = (try? Data(contentsOf: URL(fileURLWithPath: folder + "/users/bob/" + name))) ?? Data()
                return ([words] + trigrams("wqpzmxk")).filter { bytes.range(of: Data($0.utf8)) != nil }.map { "\(name): \($0)" }
            }
        }
        #expect(try !holding().isEmpty, "the check finds the words before")

        // Another process reads the store, and keeps its read open (a snapshot the log must keep).
        let reader = try RunningProcess("/usr/bin/sqlite3", [path], in: workspace.root)
        defer { reader.signal(SIGKILL); _ = reader.finish() }
        reader.send("BEGIN; SELECT 'reading', count(*) FROM messages;")
        #expect(reader.waitFor("reading|2"))

        #expect(try store.applyRecall(from: "alice", peer: "alice", ids: ["a1", "a9"], at: 3))
        #expect(try store.search(["wqpzmxk"], peer: nil, limit: 10).isEmpty)
        #expect(try store.stored(of: "alice", endingBefore: nil, limit: 10).map(\.recalledAt) == [3, nil])
        // The log cannot be cut while the reader holds its snapshot: the scrub waits, and is due.
        #expect(!store.scrubFiles())
        reader.send("COMMIT; SELECT 'done';")
        #expect(reader.waitFor("done"))
        // The process holding the connection tries again when it is idle: now it can.
        store.scrubFilesIfDue(now: Clock.now() + 10 * MessageStore.scrubEvery)
        let found = try holding()
        #expect(found.isEmpty, "still in the files: \(found)")
        // a9 came after its recall: known, never stored.
        #expect(try store.storeIncoming([IncomingMessage(from: "alice", globalID: "a9", seq: 3, key: "text",
                                                         payload: MessagePayload(json: #"{"text":"too late"}"#), sentAt: 4)]) == [.duplicate])
    }
}

extension BrowserSuites {
    @Suite("Reply and recall in a browser")
    struct WebReplyRecallTests {
        @Test("bob replies from his page (Reply, then the input, which says what he answers); alice's page shows the quote, and a click on it goes to her message; alice recalls hers: both pages say it was recalled, and what it said is back in her input")
        func replyAndRecall() throws {
            let people = try TwoPeopleInABrowser(dev: false)
            let (alice, bob) = (people.alice, people.bob)
            try alice.send("Is the flat on Main Street still free?")
            #expect(try bob.waitFor(".message.received .bubble.text", containing: "Is the flat on Main Street"))
            try bob.click("#m1 button.reply")
            #expect(try bob.waitFor("form[data-send] .replying", containing: "Replying to alice: Is the flat on Main Street still free?"))
            try bob.send("Yes, viewing on Saturday")
            #expect(try alice.waitFor("#m2 a.quote", containing: "Is the flat on Main Street still free?"))
            #expect(try alice.textContent("#m2 a.quote .quote-who") == "You")
            #expect(try bob.waitUntil("document.querySelector('form[data-send] .replying') === null"), "sent: the reply bar is gone")
            try alice.click("#m2 a.quote")
            #expect(try alice.waitUntil("document.activeElement !== null && document.activeElement.id === 'm1'"), "the quote goes to the message it quotes")

            try alice.send("call me on 0176 5555 1234")
            #expect(try bob.waitFor("#m3 .bubble.text", containing: "0176 5555 1234"))
            try alice.click("#m3 button.recall")
            #expect(try bob.waitFor("#m3 .bubble.recalled", containing: "alice recalled a message"))
            #expect(try alice.waitFor("#m3 .bubble.recalled", containing: "You recalled a message"))
            #expect(try alice.waitUntil("document.querySelector('form[data-send] input').value === 'call me on 0176 5555 1234'"),
                    "what it said is back in the input, to edit and send again")
            #expect(try bob.findAll("#m3 button.reply").isEmpty && alice.findAll("#m3 button.recall").isEmpty, "a recalled message offers nothing")
            #expect(try alice.findAll("#m2 button.recall").isEmpty, "only one's own messages can be recalled")
            let console = try alice.consoleLog() + bob.consoleLog()
            #expect(console.filter { $0.level == "SEVERE" }.isEmpty, "\(console)")
        }
    }
}

/// The reactions `workspace`'s page of the chat with `peer` shows under message `number`, as
/// `open --json` gives them: emoji → who.
func shownReactions(_ workspace: Workspace, with peer: String, number: Int) throws -> [String: [String]] {
    let message = try pageMessages(workspace, url: houseChat(with: peer)).first { $0["number"] as? Int == number }
    var found: [String: [String]] = [:]
    for reaction in message?["reactions"] as? [[String: Any]] ?? [] {
        found[reaction["emoji"] as? String ?? "?"] = reaction["people"] as? [String] ?? []
    }
    return found
}

/// Issue 41, point 3: one reaction a person a message, on every device of both.
@Suite("Reactions between two people", .heavy(.broker))
struct ReactionTests {
    @Test("bob reacts to alice's message and changes his mind; alice reacts to her own; each shows on both of alice's devices and on bob's, one a person, and taking one back takes it away; what is not one of the set is refused in one line",
          arguments: BrokerKind.allCases)
    func reactions(_ kind: BrokerKind) throws {
        let people = try DeviceSyncTests.People(kind: kind)
        let (laptop, phone) = try people.aliceOnBoth()
        let bob = try people.bobsChat()
        defer { for chat in [laptop, phone, bob] { chat.signal(SIGKILL); _ = chat.finish() } }

        laptop.send("Viewing on Saturday at 10?")
        #expect(bob.waitFor("│ Viewing on Saturday at 10? │"), "\(bob.stdout)")
        // Bob's host has answered: its receipts say it takes reactions.
        #expect(laptop.waitFor("read ✓✓"), "\(laptop.stdout)")
        bob.send("/react 1 👍")
        #expect(bob.waitFor("│ 👍 you"), "\(bob.stdout)")
        #expect(laptop.waitFor("│ 👍 bob"), "\(laptop.stdout)")
        #expect(phone.waitFor("│ 👍 bob"), "bob's reaction reaches alice's phone too: \(phone.stdout)")
        bob.send("/react 1 😂")
        laptop.send("/react 1 ❤️")
        let expected = ["😂": ["bob"], "❤️": ["alice"]]
        for (workspace, peer) in [(people.laptop, "bob"), (people.phone, "bob"), (people.bob, "alice")] {
            var seen: [String: [String]] = [:]
            #expect(waitUntil(timeout: 30) {
                seen = (try? shownReactions(workspace, with: peer, number: 1)) ?? [:]
                return seen == expected
            }, "one a person, the latest: \(seen)")
        }
        bob.send("/react 1")
        #expect(bob.waitFor("react #1: your reaction is taken back"), "\(bob.stdout)")
        #expect(waitUntil(timeout: 30) { (try? shownReactions(people.laptop, with: "bob", number: 1)) == ["❤️": ["alice"]] })
        bob.send("/react 1 🍕")
        #expect(bob.waitFor("/react: 🍕 is not a reaction; react with one of 👍 ❤️ 😂 😮 😢 🙏, or /react 1 alone to take yours back"), "\(bob.stdout)")
    }
}

/// Issue 41: the wire rule for the new kinds. An older host, here carol by hand, announces no
/// features: it is sent neither a recall nor a reaction (it would refuse each as a kind it does
/// not know, with a notice), and keeps what bob recalled.
@Suite("Recalls and reactions under the wire rule", .heavy(.broker))
struct NewKindsWireRuleTests {
    @Test("bob reacts to and recalls in a chat with a host whose messages announce no features: nothing of a later kind goes to it, and bob's chat says carol keeps the message")
    func olderHost() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let database = bob.data + "/users/bob/messages.sqlite3"
        // Carol's message, as a host before features writes it (none on it).
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [envelope("01JCAROL0000000000000001", seq: 1, payload: #"{"text":"is it free?"}"#)])
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let chat = try transcript(bob, with: "carol", ["/react 1 👍", "still free", "/recall 2"])
        #expect(chat.stdout.contains("recalled #2: gone from this chat and your devices; carol's imhost is older and keeps it"), "\(chat.stdout)")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        // Her message said what her host takes (nothing: it has no features), so neither the
        // reaction nor the recall was ever sent: both were dropped before a send was tried.
        let waiting = try run("/usr/bin/sqlite3", [database, "SELECT count(*) FROM peer_notes_out; SELECT '[' || features || ']' FROM peer_features"])
        #expect(waiting.stdout == "0\n[]\n", "\(waiting.stdout)")
    }
}

extension BrowserSuites {
    @Suite("Reactions in a browser")
    struct WebReactionTests {
        @Test("React opens the short set; a choice shows under the message on both pages with who gave it; pressing it again takes it back")
        func react() throws {
            let people = try TwoPeopleInABrowser(dev: false)
            let (alice, bob) = (people.alice, people.bob)
            try alice.send("Viewing on Saturday at 10?")
            #expect(try bob.waitFor("#m1 .bubble.text", containing: "Viewing on Saturday"))
            #expect(try alice.waitFor("#m1 .state", containing: "read"))
            try bob.click("#m1 button.react")
            try bob.click("#m1 .react-choices button[aria-pressed=false]")
            #expect(try bob.waitFor("#m1 ul.reactions li", containing: "👍 You"))
            #expect(try alice.waitFor("#m1 ul.reactions li", containing: "👍 bob"))
            #expect(try bob.findAll(".react-choices").isEmpty, "a choice closes the set")
            try bob.click("#m1 button.react")
            try bob.click("#m1 .react-choices button[aria-pressed=true]")
            #expect(try alice.waitUntil("document.querySelector('#m1 ul.reactions') === null"), "taken back")
        }
    }
}

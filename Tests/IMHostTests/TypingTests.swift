import Foundation
import Testing
@testable import IMHost

extension BrowserSuites {
    /// Issue 41, point 4: typing and being online, signalled QoS 0 on the peer's inbox, never
    /// stored; on both brokers, between a browser and a terminal.
    @Suite("Typing and online status")
    struct TypingTests {
        @Test("alice, in a browser, sees bob online while his chat runs and when he was last seen once it ends; what she types (unsent) shows in bob's terminal as her typing; nothing of either is stored",
              arguments: BrokerKind.allCases)
        func typingAndOnline(_ kind: BrokerKind) throws {
            let root = try Workspace()
            let broker = try TestBroker(in: root.root, users: ["alice", "bob"], kind: kind)
            let aliceHome = try broker.workspace(for: "alice")
            let bobHome = try broker.workspace(for: "bob")
            let web = try WebServing(aliceHome)
            #expect(web.process.waitFor("connected to"), "\(web.process.stdout)\(web.process.stderr)")
            let bob = try broker.chat(bobHome, with: "alice")
            defer { bob.signal(SIGKILL); _ = bob.finish() }
            try #require(bob.waitFor(broker.connected("bob")), "\(bob.stdout)\(bob.stderr)")
            let alice = try Browser()
            try alice.open(chat: houseChat(with: "bob"), on: web)

            try alice.send("hello")
            #expect(bob.waitFor("│ hello │"), "\(bob.stdout)")
            // Bob's host learned from her message that hers takes online signals: it says so.
            #expect(try alice.waitFor("header.title .peer-status", containing: "online", timeout: 30))
            // Typed, not sent: bob's terminal says she is typing (once for the burst).
            try #require(try alice.waitFor("form[data-send] input")).type("Is the flat")
            #expect(bob.waitFor("alice is typing…", timeout: 30), "\(bob.stdout)")
            bob.send("/quit")
            #expect(bob.finish().status == 0)
            #expect(try alice.waitFor("header.title .peer-status", containing: "last seen", timeout: 30))
            // Nothing of it in either store: no table holds a signal, and the messages are the one sent.
            for (home, user) in [(aliceHome, "alice"), (bobHome, "bob")] {
                let count = try run("/usr/bin/sqlite3", [home.data + "/users/\(user)/messages.sqlite3", "SELECT count(*) FROM messages"])
                #expect(count.stdout == "1\n", "\(count.stdout)")
            }
        }

        @Test("with privacy.onlineStatus nobody, bob's host says nothing of him being online, and shows nothing of alice's")
        func nobody() throws {
            let root = try Workspace()
            let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
            let aliceHome = try broker.workspace(for: "alice")
            let bobHome = try broker.workspace(for: "bob", config: #", "privacy": { "onlineStatus": "nobody" }"#)
            let web = try WebServing(aliceHome)
            let bobWeb = try WebServing(bobHome)
            for server in [web, bobWeb] { #expect(server.process.waitFor("connected to"), "\(server.process.stdout)\(server.process.stderr)") }
            let alice = try Browser()
            let bob = try alice.secondSession()
            try alice.open(chat: houseChat(with: "bob"), on: web)
            try bob.open(chat: houseChat(with: "alice"), on: bobWeb)
            try alice.send("hello")
            #expect(try bob.waitFor(".message.received .bubble.text", containing: "hello"))
            try bob.send("hi")
            #expect(try alice.waitFor(".message.received .bubble.text", containing: "hi"))
            // Alice's host says she is online (to bob's, which takes it and shows nothing); bob's
            // says nothing. Opened again, her page says when bob was last heard from.
            try alice.open(chat: houseChat(with: "bob"), on: web)
            #expect(try alice.waitFor("header.title .peer-status", containing: "last seen"), "bob's messages came: she knows when he was last heard from")
            #expect(try !(alice.textContent("header.title .peer-status") ?? "").contains("online"))
            #expect(try bob.findAll("header.title .peer-status").allSatisfy { (try? $0.text())?.isEmpty ?? true }, "bob's page shows nothing of alice")
        }
    }
}

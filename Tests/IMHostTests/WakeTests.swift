import Foundation
import Testing
@testable import IMHost

/// How many times a chat drew its page: each drawing opens with a rule of "═".
func pageDrawings(_ stdout: String) -> Int {
    stdout.split(separator: "\n").count { $0.hasPrefix("════") } / 2
}

@Suite("A send wakes the connection", .heavy(.broker))
struct WakeTests {
    @Test("a message piped into a second chat of the user, which works through the database, reaches the peer; the peer's page is drawn once for it")
    func secondProcess() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob")
        let bobChat = try broker.chat(bob, with: "alice")
        defer { bobChat.signal(SIGKILL); _ = bobChat.finish() }
        try #require(bobChat.waitFor("connected to \(broker.url) as bob") && bobChat.waitFor("> type a message"), "\(bobChat.stdout)\(bobChat.stderr)")
        let aliceChat = try broker.chat(alice, with: "bob")
        defer { aliceChat.signal(SIGKILL); _ = aliceChat.finish() }
        try #require(aliceChat.waitFor("connected to \(broker.url) as alice"), "\(aliceChat.stdout)\(aliceChat.stderr)")
        // The chat holding alice's connection made her wake socket: a socket only she can use.
        var info = stat()
        #expect(lstat(alice.data + "/users/alice/wake.sock", &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK && info.st_mode & 0o077 == 0)
        let drawn = pageDrawings(bobChat.stdout)

        let second = try transcript(alice, with: "bob", ["from the second process"])
        #expect(second.status == 0 && second.stderr.contains("holds alice's connection"), "\(second.stdout)\(second.stderr)")
        #expect(bobChat.waitFor("│ from the second process │"), "\(bobChat.stdout)")
        // Whatever the arrival made the chat do is done by the time it answers the next line.
        bobChat.send("/route")
        try #require(bobChat.waitFor("route: im://chat"))
        #expect(pageDrawings(bobChat.stdout) - drawn == 1, "\(bobChat.stdout)")
        #expect(aliceChat.waitFor("read ✓✓"), "the holder shows what the second process sent, read: \(aliceChat.stdout)")
        for chat in [bobChat, aliceChat] { chat.send("/quit") }
        #expect(bobChat.finish().status == 0 && aliceChat.finish().status == 0)
    }
}

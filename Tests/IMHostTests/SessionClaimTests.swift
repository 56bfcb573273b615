import Foundation
import Testing
@testable import IMHost

@Suite("Two hosts of one user")
struct SessionClaimTests {
    @Test("the host that signed in last keeps the session; the other is thrown off once, says why, stays offline, and nothing is lost")
    func twoHostsOfOneUser() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let laptop = try broker.workspace(for: "alice")
        let phone = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let first = try broker.chat(laptop, with: "bob")
        defer { first.signal(SIGKILL); _ = first.finish() }
        try #require(first.waitFor("connected to \(broker.url) as alice"), "\(first.stdout)\(first.stderr)")
        let second = try broker.chat(phone, with: "bob")
        defer { second.signal(SIGKILL); _ = second.finish() }
        try #require(second.waitFor("connected to \(broker.url) as alice"), "\(second.stdout)\(second.stderr)")
        #expect(first.waitFor("alice is connected elsewhere: another host signed in as alice after this one"), "\(first.stdout)")
        // Bob writes; everything reaches the host that holds the session, and comes back read.
        let bobChat = try broker.chat(bob, with: "alice")
        defer { bobChat.signal(SIGKILL); _ = bobChat.finish() }
        try #require(bobChat.waitFor("connected to \(broker.url) as bob"))
        for text in ["one", "two", "three", "four", "five"] { bobChat.send(text) }
        #expect(second.waitFor("│ five │"), "\(second.stdout)")
        #expect(bobChat.waitFor("read ✓✓", occurrences: 5), "\(bobChat.stdout)")
        // Thrown off once, each: no fight for the session (before, each was thrown off every few seconds).
        let lost = "the connection to the broker was lost"
        #expect(first.stdout.components(separatedBy: lost).count - 1 <= 1, "\(first.stdout)")
        #expect(first.stdout.components(separatedBy: "connected elsewhere").count - 1 == 1, "\(first.stdout)")
        #expect(!first.stdout.contains("│ one │"), "the host that left stored nothing of what came meanwhile")
        #expect(second.stdout.components(separatedBy: lost).count - 1 <= 1, "\(second.stdout)")
        // The laptop takes it back when asked; the phone is the one that stays offline then.
        first.send("/online")
        #expect(second.waitFor("alice is connected elsewhere"), "\(second.stdout)")
        bobChat.send("six")
        #expect(first.waitFor("│ six │"), "\(first.stdout)")
        for chat in [first, second, bobChat] { chat.send("/quit") }
        #expect(first.finish().status == 0 && second.finish().status == 0)
    }
}

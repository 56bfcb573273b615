import Foundation
import Testing
@testable import IMHost

@Suite("Two hosts of one user", .heavy(.broker))
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

    @Test("a host thrown off by another of the same user stays offline when its worker starts again (a crash, a line's new build): it does not take the session back by itself")
    func thrownOffSurvivesRestart() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let laptop = try broker.workspace(for: "alice"), phone = try broker.workspace(for: "alice"), bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let first = try broker.chat(laptop, with: "bob")
        defer { first.signal(SIGKILL); _ = first.finish() }
        try #require(first.waitFor("connected to \(broker.url) as alice"), "\(first.stdout)\(first.stderr)")
        let second = try broker.chat(phone, with: "bob")
        defer { second.signal(SIGKILL); _ = second.finish() }
        try #require(second.waitFor("connected to \(broker.url) as alice"), "\(second.stdout)\(second.stderr)")
        try #require(first.waitFor("alice is connected elsewhere: another host signed in as alice after this one"), "\(first.stdout)")

        // The laptop's worker crashes (outside line code) and is started again.
        let worker = try #require(children(of: first.pid).first)
        kill(worker, SIGSEGV)
        #expect(first.waitFor("alice is still connected elsewhere: another host took the session before this chat restarted"), "\(first.stdout)\(first.stderr)")
        // The phone keeps the session: what bob sends reaches it, and the laptop stays offline.
        let bobChat = try broker.chat(bob, with: "alice")
        defer { bobChat.signal(SIGKILL); _ = bobChat.finish() }
        try #require(bobChat.waitFor("connected to \(broker.url) as bob"))
        bobChat.send("after the restart")
        #expect(second.waitFor("│ after the restart │"), "\(second.stdout)")
        #expect(bobChat.waitFor("read ✓✓"), "\(bobChat.stdout)")
        #expect(!second.stdout.contains("connected elsewhere"), "the restarted laptop took nothing: \(second.stdout)")
        #expect(!first.stdout.contains("│ after the restart │"))

        // /online still takes it back, as the person asks.
        first.send("/online")
        #expect(second.waitFor("alice is connected elsewhere"), "\(second.stdout)")
        for chat in [first, second, bobChat] { chat.send("/quit") }
        #expect(first.finish().status == 0 && second.finish().status == 0)
    }

    @Test("a one-shot sync from another data folder does not throw a running chat off: it takes nothing and says so; --take takes the session")
    func syncLeavesRunningChat() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let desktop = try broker.workspace(for: "alice"), laptop = try broker.workspace(for: "alice"), bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let chat = try broker.chat(desktop, with: "bob")
        defer { chat.signal(SIGKILL); _ = chat.finish() }
        try #require(chat.waitFor("connected to \(broker.url) as alice"), "\(chat.stdout)\(chat.stderr)")

        let synced = try broker.sync(laptop, timeout: 5)
        #expect(synced.status == 1 && synced.stderr.components(separatedBy: "connected elsewhere").count == 2
                && synced.stderr.contains("imhost sync: alice is connected elsewhere: another host of alice holds the session, and sync does not throw it off: nothing was taken")
                && synced.stderr.contains("add --take"), "\(synced.stdout)\(synced.stderr)")
        // The chat was bumped for a moment and is back; what bob sends reaches it.
        let bobChat = try broker.chat(bob, with: "alice")
        defer { bobChat.signal(SIGKILL); _ = bobChat.finish() }
        try #require(bobChat.waitFor("connected to \(broker.url) as bob"))
        bobChat.send("after the sync")
        #expect(chat.waitFor("│ after the sync │"), "\(chat.stdout)\(chat.stderr)")
        #expect(!chat.stdout.contains("connected elsewhere"), "\(chat.stdout)")

        // Asked to, sync takes the session; the chat then stays offline until /online.
        let taken = try imhost(["sync", "--timeout", "2", "--take"], in: laptop)
        #expect(taken.status == 0, "\(taken.stdout)\(taken.stderr)")
        #expect(chat.waitFor("alice is connected elsewhere"), "\(chat.stdout)")
        chat.send("/quit")
        #expect(chat.finish().status == 0)
        bobChat.send("/quit")
        _ = bobChat.finish()
    }

    @Test("a host that left clears its presence, and one killed in this data folder is this folder's: a later sync here or elsewhere takes the session")
    func leftRecords() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice"])
        let desktop = try broker.workspace(for: "alice"), laptop = try broker.workspace(for: "alice")
        // A chat that quits takes its record with it: a sync in another folder then connects.
        let quit = try imhost(["chat", houseChat(with: "bob")], input: "/quit\n", in: desktop)
        #expect(quit.status == 0 && quit.stdout.contains("connected to"), "\(quit.stdout)\(quit.stderr)")
        #expect(try broker.sync(laptop, timeout: 2).status == 0)
        // A chat killed outright leaves its record: a sync in its own folder knows it as its own.
        let killed = try broker.chat(laptop, with: "bob")
        try #require(killed.waitFor("connected to \(broker.url) as alice"))
        killed.signal(SIGKILL)
        _ = killed.finish()
        try #require(waitUntil { children(of: killed.pid).isEmpty && (try? imhost(["plugins"], in: laptop))?.stdout.contains("open chats run") != true })
        let here = try broker.sync(laptop, timeout: 2)
        #expect(here.status == 0, "\(here.stdout)\(here.stderr)")
    }
}

import Foundation
import Testing
@testable import IMHost
import IMKit

/// Issue 40, point 5: Clear takes a chat off this device, and nothing brings it back here.
@Suite("Clearing a chat on this device")
struct ClearTests {
    func bob(_ id: String, _ text: String, seq: Int) -> IncomingMessage {
        IncomingMessage(from: "bob", globalID: id, seq: seq, key: "text", payload: MessagePayload(json: #"{"text":"\#(text)"}"#), sentAt: Int64(seq))
    }

    @Test("its messages, their words in the search index and what waited to be sent leave the real database; the same messages coming again (a resend, another device's catch-up) are known and not stored; the next message is number 1; other chats keep theirs")
    func clearing() throws {
        let workspace = try Workspace()
        let store = try MessageStore(dataFolder: workspace.root + "/data", user: "alice")
        _ = try store.storeIncoming([bob("b1", "a flat with a balcony", seq: 1), bob("b2", "viewing on Saturday", seq: 2)])
        _ = try store.storeOutgoing(to: "bob", key: "text", payload: MessagePayload(json: #"{"text":"balcony facing south?"}"#), at: 3)
        _ = try store.storeIncoming([IncomingMessage(from: "carol", globalID: "c1", seq: 1, key: "text",
                                                     payload: MessagePayload(json: #"{"text":"another balcony"}"#), sentAt: 4)])
        _ = try store.catchUpSearchIndex(limit: 100)
        #expect(try store.search(["balcony"], peer: nil, limit: 10).count == 3)
        #expect(try store.outboxCounts().queued == 1)

        #expect(try store.clear("bob") == 3)
        #expect(try store.count(of: "bob") == 0)
        #expect(try store.search(["balcony"], peer: nil, limit: 10).count == 1, "carol's chat keeps hers")
        #expect(try store.outboxCounts().queued == 0, "what waited to be sent is not sent")
        #expect(try store.count(of: "carol") == 1)

        // Bob's host sends b1 again (its receipt was lost): known, answered as stored, not stored.
        #expect(try store.storeIncoming([bob("b1", "a flat with a balcony", seq: 1)]) == [.duplicate])
        // Another device's catch-up lacks nothing of what was cleared here, and its copies are not stored.
        let items = [MessageStore.SiblingItem(peer: "bob", id: "b2", outgoing: false)]
        #expect(try store.lacking(items).isEmpty)
        // A new message is the chat's first.
        let arrived = try store.storeIncoming([bob("b3", "still interested?", seq: 3)])
        guard case .stored(let stored)? = arrived.first else {
            Issue.record("not stored: \(arrived)")
            return
        }
        #expect(stored.position == 0)
        #expect(try store.count(of: "bob") == 1)
        // Kept in the file: a store opened anew still knows.
        let again = try MessageStore(dataFolder: workspace.root + "/data", user: "alice")
        #expect(try again.storeIncoming([bob("b2", "viewing on Saturday", seq: 2)]) == [.duplicate])
        #expect(try again.clear("nobody") == 0)
    }
}

@Suite("Clearing a chat in a terminal")
struct TerminalClearTests {
    @Test("the menu's Clear says what clears (a terminal cannot ask first), and /clear clears and says so")
    func terminal() throws {
        let workspace = try Workspace.standard()
        try workspace.receive("text", #"{"text":"first"}"#)
        let result = try imhost(["chat", houseChatURL], input: "/menu 3\n/clear\n/quit\n", in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("type /clear to do it"), "\(result.stdout)")
        #expect(result.stdout.contains("cleared the chat with u42 on this device: 1 message left it"), "\(result.stdout)")
        let after = try imhost(["open", houseChatURL, "--json"], in: workspace)
        #expect(!after.stdout.contains("first"), "\(after.stdout)")
    }
}

extension BrowserSuites {
    @Suite("Clear in a browser")
    struct WebClearTests {
        @Test("the menu's Clear asks first: Cancel keeps every message; Clear chat takes them off this device and says so")
        func clearAsks() throws {
            let workspace = try Workspace.standard()
            try workspace.receive("text", #"{"text":"first"}"#)
            try workspace.receive("text", #"{"text":"second"}"#)
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor(".message.received .bubble.text", containing: "second"))
            try browser.answerMenuQuestion("clear", "cancel")
            #expect(try browser.findAll(".message").count == 2, "Cancel clears nothing")
            try browser.answerMenuQuestion("clear", "clear")
            #expect(try browser.waitFor("#notice-log", containing: "Chat cleared on this device: 2 messages removed"))
            #expect(try browser.waitUntil("document.querySelectorAll('.message').length === 0"))
            // The terminal's page of the same chat says so too: nothing is left in the store.
            let opened = try imhost(["open", houseChatURL, "--json"], in: workspace)
            #expect(opened.stdout.contains(#""total":0"#) || opened.stdout.contains(#""total" : 0"#), "\(opened.stdout)")
        }
    }
}

import Foundation
import Testing
@testable import IMHost
@testable import IMHostRuntime
@testable import IMHostWeb
import IMKit

extension BrowserSuites {
    /// Issue 40, point 4: what changes goes to the page by message, and every window of a chat
    /// gets it from the one worker that draws the chat.
    @Suite("Changes out: by message, to every window of a chat")
    struct WebChangesTests {
        @Test("two windows of one chat are one page with one worker: what one sends shows in the other, and a message sent or arriving is added without drawing the others again")
        func twoWindows() throws {
            let workspace = try Workspace.standard()
            try workspace.receive("text", #"{"text":"first"}"#)
            let web = try WebServing(workspace)
            let one = try Browser()
            try one.open(chat: houseChatURL, on: web)
            let two = try one.secondSession()
            try two.open(chat: houseChatURL, on: web)
            for window in [one, two] { #expect(try window.waitFor(".message.received .bubble.text", containing: "first")) }
            #expect(pageWorkers(of: web.process.pid).count == 1, "one worker for both windows")
            try two.send("from the second window")
            for window in [one, two] {
                #expect(try window.waitFor(".message.sent .bubble.text", containing: "from the second window"))
                #expect(try window.waitFor(".message.sent .state", containing: "queued"))
                // A mark only this window's script put on the message: drawn again, it is gone.
                _ = try window.execute("document.getElementById('m2').dataset.kept = 'yes'")
            }
            try workspace.receive("text", #"{"text":"an arrival"}"#)
            for window in [one, two] {
                #expect(try window.waitFor(".message.received .bubble.text", containing: "an arrival"))
                #expect(try window.execute("return document.getElementById('m2').dataset.kept ?? null") as? String == "yes", "the sent message was drawn again")
                #expect(try window.execute("return Array.from(document.querySelectorAll('.message'), m => m.id)") as? [String] == ["m1", "m2", "m3"])
            }
            #expect(pageWorkers(of: web.process.pid).count == 1)
        }
    }
}

/// ``PageChanges`` beside the browser: which drawings are changes by message, and which a new page.
@Suite("What changed in a page")
struct PageChangesTests {
    func message(_ number: Int, _ text: String, state: MessageState = .received) -> PageView.Message {
        PageView.Message(number: number, envelope: MessageEnvelope(id: "m\(number)", conversation: "u42", from: "u42", to: "me", timestamp: 0, key: "text",
                                                                   payload: MessagePayload(json: "{}")),
                         isOutgoing: false, state: state, body: .text(text))
    }

    func page(_ messages: [PageView.Message], total: Int? = nil, title: String = "Chat") -> PageView {
        PageView(url: "im://chat?peer=u42", conversation: "u42", title: title, lineID: nil, isLegacy: false,
                 route: .init(reason: "no-rule", source: nil, explanation: ""), components: [.inputBar], messages: messages,
                 total: total ?? messages.count, width: 72)
    }

    @Test("a message added at the end, one changed, the oldest leaving the window, and how many are earlier")
    func byMessage() {
        let old = page([message(4, "a"), message(5, "b")], total: 5)
        let new = page([message(5, "b", state: .read), message(6, "c")], total: 6)
        #expect(PageChanges.between(old, new) == .messages([.removed(4), .changed(message(5, "b", state: .read)), .added(message(6, "c")), .earlier(4)]))
        #expect(PageChanges.between(old, old) == .messages([]))
    }

    @Test("the page as a whole: another title, earlier messages loaded, the first message of an empty chat")
    func replaced() {
        let old = page([message(2, "b")], total: 2)
        #expect(PageChanges.between(old, page([message(2, "b")], total: 2, title: "Other")) == .replaced)
        #expect(PageChanges.between(old, page([message(1, "a"), message(2, "b")])) == .replaced)
        #expect(PageChanges.between(page([]), page([message(1, "a")])) == .replaced)
    }

    @Test("the HTML of a change is that message's, as the whole page draws it, and small")
    func html() {
        let added = message(51, "hello")
        let json = PageHTML.changes([.removed(1), .added(added), .earlier(1)], peer: "u42")
        #expect(json.contains(#"{"op":"remove","id":"m1"}"#) && json.contains(#""op":"append""#) && json.contains("Show 1 earlier message<"))
        #expect(json.utf8.count < 1024, "\(json.utf8.count) bytes")
    }
}

extension BrowserSuites {
    @Suite("Every tab of a browser stays live")
    struct WebSharedStreamTests {
        /// A house chat with `peer`.
        func chat(_ peer: String) -> String { "im://chat?rootCateID=1&cateID=12&peer=\(peer)" }

        @Test("six chats in six windows of one browser all stay live, on one stream they share (a browser gives a server six connections: a stream each refused the fifth); when the windows holding it close, the one left takes it and stays live")
        func sixWindows() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace)
            let first = try Browser()
            var windows = [first]
            for _ in 1..<6 { windows.append(try first.secondSession()) }
            let peers = (1...6).map { "p\($0)" }
            for (window, peer) in zip(windows, peers) {
                try window.open(chat: chat(peer), on: web)
                #expect(try window.waitFor("#page .title h1", containing: peer))
            }
            for peer in peers { try workspace.receive("text", #"{"text":"hello from \#(peer)"}"#, in: chat(peer)) }
            for (window, peer) in zip(windows, peers) {
                #expect(try window.waitFor(".message.received .bubble.text", containing: "hello from \(peer)"), "\(peer)'s window is not live")
                #expect(try window.execute("return document.querySelector('.reconnecting').hidden") as? Bool == true)
            }
            // Every window but the last goes (the stream's among them): the last takes the
            // stream, and what comes after still shows there.
            let last = windows[5]
            windows.removeSubrange(1...4)
            try first.navigate("about:blank")
            try workspace.receive("text", #"{"text":"still here, p6?"}"#, in: chat("p6"))
            #expect(try last.waitFor(".message.received .bubble.text", containing: "still here, p6?"))
            try last.send("yes")
            #expect(try last.waitFor(".message.sent .state", containing: "queued"))
            let console = try last.consoleLog()
            #expect(console.filter { $0.level == "SEVERE" }.isEmpty, "\(console)")
        }
    }
}

import Foundation
import Testing
@testable import IMHost

/// What one message, or one slow line, may cost a page: a real broker, a real database, and the
/// page drawn by `imhost open` and `imhost chat`.
@Suite("A page is not buried or frozen by one message", .heavy(.broker))
struct PageDrawingTests {
    @Test("a message of thousands of lines takes at most the page's limit of lines, the rest folded with a marker that says how many")
    func longMessageFolded() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice")
        #expect(try broker.sync(alice, timeout: 2).status == 0)
        // From bob, as any client could send it: 5,000 lines (JSON's \n, one message).
        let text = (1...5_000).map { "line \($0)" }.joined(separator: "\\n")
        try broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [envelope("01JBOBFLOOD000000000000001", seq: 1, payload: #"{"text":"\#(text)"}"#)])
        #expect(try broker.sync(alice, timeout: 2).stdout.hasPrefix("received 1,"))

        let page = try imhost(["open", houseChat(with: "bob")], in: alice)
        #expect(page.status == 0, "\(page.stderr)")
        let bubble = page.stdout.split(separator: "\n").filter { $0.hasPrefix(" │ ") }
        #expect(bubble.count == PageView.messageLineLimit, "\(bubble.count) lines")
        #expect(bubble.first?.contains("line 1 ") == true && bubble.contains { $0.contains("line 39 ") } && !bubble.contains { $0.contains("line 40 ") })
        #expect(bubble.last?.contains("… 4961 more lines") == true, "\(bubble.last ?? "")")

        let json = try pageMessages(alice, url: houseChat(with: "bob"))
        #expect(json.first?["folded"] as? Int == 4_961 && (json.first?["lines"] as? [String])?.count == 39, "\(json.first ?? [:])")

        // The chat draws the same: what comes after the flood is on the page.
        let chat = try imhost(["chat", houseChat(with: "bob")], input: "after the flood\n/quit\n", in: alice)
        let drawn = try #require(chat.stdout.components(separatedBy: "═\n").last)
        #expect(drawn.contains("… 4961 more lines") && drawn.contains("│ after the flood │") && drawn.split(separator: "\n").count < 60, "\(drawn)")
    }

    @Test("builders slower together than the page's budget: the newest messages are drawn, the rest are placeholders that say why, and the next draw tries them again")
    func slowBuildersBudgeted() throws {
        // A real line whose builder takes 2 s a message, under the 5 s a call may take.
        let workspace = try crashyWorkspace()
        let config = { (draw: String) in
            crashyConfig(callSeconds: 5).replacingOccurrences(of: #""scanSeconds": 0.5,"#, with: #""scanSeconds": 0.5, "drawSeconds": \#(draw),"#)
        }
        try workspace.writeConfig(config("0.5"))
        // Two messages this chat has not drawn yet (one it drew, it keeps: a page builds a
        // message once until its bytes change).
        let stored = try imhost(["chat", crashyURL], input: "/recv crashy.bomb {\"text\":\"one\"}\n/recv crashy.bomb {\"text\":\"two\"}\n/quit\n",
                                in: workspace, environment: ["IMHOST_CRASHY": "builder:overrun"])
        #expect(stored.status == 0, "\(stored.stderr)")
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", crashyURL], in: workspace.root, environment: ["IMHOST_CRASHY": "builder:overrun"])
        defer { chat.signal(SIGKILL); _ = chat.finish() }
        try #require(chat.waitFor("│ 💣 two │"), "\(chat.stdout)\(chat.stderr)")
        // The newest took the whole budget: the older one waits, as a placeholder saying why.
        let page = try #require(chat.stdout.components(separatedBy: "═\n").last)
        #expect(page.contains("│ (drawing took too long)") && !page.contains("💣 one"), "\(page)")
        chat.send("/why 1")
        #expect(chat.waitFor("why #1 (crashy.bomb): it shows normally, through its builder"), "alone, it draws: \(chat.stdout)")
        #expect(!chat.stdout.contains("hung") && !chat.stderr.contains("hung"), "no call overran callSeconds: \(chat.stderr)")

        // A larger budget, read again: the next draw tries every message again, and draws both.
        try workspace.writeConfig(config("10"))
        chat.send("/reload")
        #expect(chat.waitFor("│ 💣 one │"), "\(chat.stdout)\(chat.stderr)")
        let again = try #require(chat.stdout.components(separatedBy: "═\n").last)
        #expect(again.contains("│ 💣 one │") && again.contains("│ 💣 two │") && !again.contains("drawing took too long"), "\(again)")
        chat.send("/quit")
        #expect(chat.finish().status == 0)

        // open --json says why, from the page value, without running the slow builder again.
        try workspace.writeConfig(config("0.5"))
        let opened = try imhost(["open", crashyURL, "--json"], in: workspace, environment: ["IMHOST_CRASHY": "builder:overrun"])
        let json = try JSONSerialization.jsonObject(with: Data(opened.stdout.utf8)) as? [String: Any]
        let first = try #require((json?["messages"] as? [[String: Any]])?.first, "\(opened.stdout)\(opened.stderr)")
        #expect(first["short"] as? String == "drawing took too long" && (first["why"] as? String)?.contains("limits.drawSeconds") == true, "\(first)")
    }
}

@Suite("A flood from another conversation", .heavy(.broker))
struct ArrivalNoticeTests {
    @Test("a flood of messages from a peer in another conversation is said in one line until the page is drawn again, not a line a batch")
    func floodCoalesced() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob", "carol"])
        let alice = try broker.workspace(for: "alice")
        let chat = try broker.chat(alice, with: "bob")
        defer { chat.signal(SIGKILL); _ = chat.finish() }
        try #require(chat.waitFor("connected to \(broker.url) as alice"), "\(chat.stdout)\(chat.stderr)")
        // Five batches, each stored before the next is sent: five arrivals apart.
        var chats = ""
        for batch in 0..<5 {
            try broker.publish(as: "carol", topic: "imhost/u/alice/from/carol", (1...60).map {
                let number = batch * 60 + $0
                return envelope(String(format: "01JCAROLFLOOD0000000000%03d", number), seq: number, payload: #"{"text":"flood \#(number)"}"#)
            })
            try #require(waitUntil {
                chats = (try? imhost(["chats"], in: alice).stdout) ?? ""
                return chats.contains("\((batch + 1) * 60) unread")
            }, "\(chats)")
        }
        chat.send("hello bob")
        try #require(chat.waitFor("│ hello bob │"))
        chat.send("/quit")
        let result = chat.finish()
        let notices = result.stdout.split(separator: "\n").filter { $0.contains("from carol") }
        #expect(notices.count <= 2, "\(notices.count) lines: \(notices.joined(separator: "\n"))")
        // What they say adds up to every message.
        let counted = notices.compactMap { line in Int(line.prefix { $0.isNumber }) }.reduce(0, +)
        #expect(counted == 300, "\(notices.joined(separator: "\n"))")
    }
}

import Foundation
import Testing
@testable import IMHost

/// What one message, or one slow line, may cost a page: a real broker, a real database, and the
/// page drawn by `imhost open` and `imhost chat`.
@Suite("A page is not buried or frozen by one message")
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
}

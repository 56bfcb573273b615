import Foundation
import Testing
@testable import IMHost
import IMKit

/// A page keeps what its builders made and reads the rest of a draw anew, in as few looks at the
/// database as it can: each draw still shows the store as it is, whatever changed it, and
/// however it changed (through another connection to the same file here, as the process holding
/// the user's connection changes it).
@Suite("A page draws the store as it is now")
struct PageWindowTests {
    static let listing = #"{"id":"L9","title":"Loft by the river","price":5100,"area":70,"rooms":2,"status":"available"}"#

    @Test("what another connection writes to the store's file shows at the page's next draw: a message with a photo, a voice message, a file, a reaction, a card's revision, what the peer's host draws, a block and a recall")
    func drawsWhatAnotherConnectionWrote() throws {
        let workspace = try Workspace.standard()
        let host = try workspace.host(user: "alice", durable: true)
        let page = try host.open("im://chat?rootCateID=1&cateID=12&peer=bob")
        // The process holding the user's connection has the same file open: what it stores
        // reaches this page's connection through the file alone.
        let other = try MessageStore(dataFolder: workspace.data, user: "alice")
        let now = Clock.now()
        let sent = try other.storeOutgoing(to: "bob", key: "house.listing", payload: MessagePayload(json: Self.listing), at: now)
        var view = try page.view(width: 72)
        #expect(view.total == 1 && view.messages.first?.body.card?.title == "🏠 Loft by the river")
        #expect(view.peerPlaceholder == nil, "nothing is known yet of what bob's host draws")
        let unchanged = try page.view(width: 72)
        #expect(unchanged == view, "drawn again unchanged, it is the same page")

        let photo = Photo(kind: .png, width: 2, height: 3, size: 4)
        try other.storeLocal(from: "bob", key: "text", payload: MessagePayload(json: #"{"text":"the kitchen"}"#), at: now + 1,
                             photos: [.photo(photo, bytes: [1, 2, 3, 4])])
        let voice = Voice(kind: .ogg, milliseconds: 1500, size: 3)
        try other.storeLocal(from: "bob", key: "voice", payload: MessagePayload(json: #"{"url":"","seconds":2,"milliseconds":1500}"#), at: now + 2,
                             voice: .voice(voice, bytes: [1, 2, 3]))
        let file = SharedFile(name: "lease.pdf", type: "application/pdf", size: 5)
        _ = try other.storeOutgoing(to: "bob", key: "file", payload: MessagePayload(json: #"{"name":"lease.pdf","size":5}"#), at: now + 3,
                                    file: .file(file, bytes: [1, 2, 3, 4, 5]))
        view = try page.view(width: 72)
        #expect(view.total == 4 && view.messages.map(\.number) == [1, 2, 3, 4])
        #expect(view.messages[1].body == .text("the kitchen") && view.messages[1].photos == [.photo(photo)])
        #expect(view.messages[2].voice == .voice(voice) && view.messages[3].file == .file(file))
        #expect(view.messages[0].photos.isEmpty && view.messages[0].voice == nil && view.messages[0].file == nil)

        let id = try #require(sent.envelope.globalID)
        #expect(try other.applyReaction(Envelope.Reaction(id: id, from: "alice", emoji: "👍", at: now + 4), by: "bob", peer: "bob"))
        let booked = #"{"id":"L9","title":"Loft by the river","price":5100,"area":70,"rooms":2,"status":"available","viewing":"2026-12-05 10:00"}"#
        #expect(try other.applyRevision(Envelope.Revision(id: id, from: "alice", number: 1, key: "house.listing", payload: MessagePayload(json: booked),
                                                          at: now + 5), by: "bob", peer: "bob"))
        #expect(try other.rememberLines(of: "bob", Envelope.Draws(at: now + 6, lines: [:])))
        view = try page.view(width: 72)
        let card = try #require(view.messages[0].body.card)
        #expect(card.badge?.text == "Viewing booked" && card.fields.contains { $0.label == "Viewing" && $0.value == "2026-12-05 10:00" })
        #expect(view.messages[0].revised?.number == 1 && view.messages[0].revised?.by == "bob")
        #expect(view.messages[0].reactions == [PageView.Reaction(emoji: "👍", people: ["bob"])])
        #expect(view.peerPlaceholder?.line == "house", "bob's host said it draws no line: the page says house cards reach him as placeholders")

        #expect(!menu(of: view).contains(PageView.unblockItem))
        try other.setBlocked("bob", true)
        #expect(menu(of: try page.view(width: 72)).contains(PageView.unblockItem), "the Block item says what choosing it does now")

        guard case .recalled = try other.recall("bob", number: 4, at: Clock.now(), limit: 120_000) else {
            Issue.record("the file message could not be recalled")
            return
        }
        view = try page.view(width: 72)
        #expect(view.messages[3].body == .recalled && view.messages[3].file == nil)
        #expect(view.messages[3].causes.isEmpty, "a recalled message is no placeholder: it has no causes to say")
    }

    @Test("a message no line draws is a placeholder with its causes, read from the message the draw read; the page shows only its window, and the messages before it once it grows")
    func placeholderCausesAndWindow() throws {
        let workspace = try Workspace.standard()
        let host = try workspace.host(user: "alice", durable: true)
        let page = try host.open("im://chat?rootCateID=1&cateID=12&peer=bob", window: 2)
        let other = try MessageStore(dataFolder: workspace.data, user: "alice")
        for (offset, key) in ["text", "nosuch.card", "text"].enumerated() {
            try other.storeLocal(from: "bob", key: key, payload: MessagePayload(json: #"{"text":"\#(offset)"}"#), at: Clock.now() + Int64(offset))
        }
        var view = try page.view(width: 72)
        #expect(view.total == 3 && view.messages.map(\.number) == [2, 3])
        let causes = try page.causes(2)
        #expect(view.messages[0].body.degrade != nil && view.messages[0].causes == causes && !view.messages[0].causes.isEmpty)
        #expect(view.messages[1].body == .text("2") && view.messages[1].causes.isEmpty)
        #expect(try page.showOlder(5) == 1)
        view = try page.view(width: 72)
        #expect(view.messages.map(\.number) == [1, 2, 3] && view.messages[0].body == .text("0"))
    }

    private func menu(of view: PageView) -> [String] {
        view.components.flatMap { component -> [String] in
            if case .menu(let items) = component { return items.map(\.name) }
            return []
        }
    }
}

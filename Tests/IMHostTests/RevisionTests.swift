import Foundation
import Testing
import IMKit

/// Issue 43, point 2: a card that changes in place. Bob books a viewing on alice's listing with
/// the card's own inputs; the card becomes its next revision where it stands, on his page and
/// on both of alice's devices, and says it was updated. A revision's number only grows: a late
/// older one never overwrites a newer one, and one sent twice is kept once.
@Suite("Cards that change in place", .heavy(.broker))
struct RevisionTests {
    /// A listing alice sends (no photo: none was attached).
    static let listing = #"{"id":"L9","title":"Loft by the river","price":5100,"area":70,"rooms":2,"status":"available"}"#

    @Test("bob books a viewing on alice's listing: his values are checked first, then the card shows the booking on his page and on alice's laptop and phone, saying who updated it; an older revision sent late, or the same one twice, changes nothing",
          arguments: BrokerKind.allCases)
    func bookAViewing(_ kind: BrokerKind) throws {
        let people = try DeviceSyncTests.People(kind: kind)
        let (laptop, phone) = try people.aliceOnBoth()
        let bob = try people.bobsChat()
        defer { for chat in [laptop, phone, bob] { chat.signal(SIGKILL); _ = chat.finish() } }

        laptop.send("/send house.listing \(Self.listing)")
        #expect(bob.waitFor("│ 🏠 Loft by the river"), "\(bob.stdout)")
        // Bob's host has answered: its receipts say it takes revisions.
        #expect(laptop.waitFor("read ✓✓"), "\(laptop.stdout)")
        bob.send("/tap 1 viewing time=08:00")
        #expect(bob.waitFor("/tap: nothing sent: day is required; time is before 09:00;"), "checked before the line sees it: \(bob.stdout)")
        bob.send("/tap 1 viewing day=2026-12-05 time=10:00")
        #expect(bob.waitFor("tap #1 viewing: booked a viewing of listing L9 (Loft by the river) on 2026-12-05 at 10:00"), "\(bob.stdout)")
        #expect(bob.waitFor("│ ● Viewing booked"), "\(bob.stdout)")
        for (chat, device) in [(laptop, "laptop"), (phone, "phone")] {
            #expect(chat.waitFor("│ Viewing: 2026-12-05 10:00"), "the card changed on alice's \(device): \(chat.stdout)")
            #expect(chat.waitFor("│ (updated by bob at "), "and says who changed it: \(chat.stdout)")
        }
        // Still one message on every device: a revision is not a new message.
        for (workspace, peer) in [(people.laptop, "bob"), (people.phone, "bob"), (people.bob, "alice")] {
            #expect(try shownCard(workspace, with: peer).count == 1)
        }

        // A revision from bob's topic (the broker vouches for it) that is newer wins; one older
        // than what alice has, sent late, and the same one again, change nothing.
        let id = try #require(try shownCard(people.laptop, with: "bob").first?["globalID"] as? String)
        func revise(_ number: Int, viewing: String) -> String {
            #"{"v":1,"kind":"revise","id":"\#(id)","of":"alice","rev":\#(number),"key":"house.listing","payload":{"id":"L9","title":"Loft by the river","price":5100,"area":70,"rooms":2,"status":"available","viewing":"\#(viewing)"},"at":\#(Int64(Date().timeIntervalSince1970 * 1000))}"#
        }
        #expect(try people.broker.publish(as: "bob", topic: "imhost/u/alice/from/bob", [revise(5, viewing: "2026-12-06 11:00")]).status == 0)
        #expect(laptop.waitFor("│ Viewing: 2026-12-06 11:00"), "\(laptop.stdout)")
        #expect(try people.broker.publish(as: "bob", topic: "imhost/u/alice/from/bob",
                                          [revise(3, viewing: "2026-12-07 12:00"), revise(5, viewing: "2026-12-08 13:00")]).status == 0)
        // What alice's host answers, it answers in order: once the phone's next message arrives,
        // both revisions were taken (and dropped).
        bob.send("after the revisions")
        #expect(laptop.waitFor("│ after the revisions │"), "\(laptop.stdout)")
        #expect(waitUntil(timeout: 30) { (try? shownCard(people.laptop, with: "bob").first?["viewing"] as? String) == "2026-12-06 11:00" })
        #expect(try shownCard(people.laptop, with: "bob").first?["revision"] as? Int == 5)
    }
}

/// The cards `workspace`'s page of the chat with `peer` shows (`imhost open --json`), each with
/// its message id (`globalID`), the card's Viewing field and the revision it shows.
func shownCard(_ workspace: Workspace, with peer: String) throws -> [[String: Any]] {
    let result = try imhost(["open", "im://chat?rootCateID=1&cateID=12&peer=\(peer)", "--json"], in: workspace)
    let page = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
    return (page["messages"] as? [[String: Any]] ?? []).compactMap { message -> [String: Any]? in
        guard let card = message["card"] as? [String: Any] else { return nil }
        let fields = card["fields"] as? [[String: String]] ?? []
        var found: [String: Any] = ["globalID": message["globalID"] ?? ""]
        found["viewing"] = fields.first { $0["label"] == "Viewing" }?["value"]
        found["revision"] = (message["revised"] as? [String: Any])?["number"] as? Int
        return found
    }
}

/// The scenario `imhost demo two-people` plays: alice and bob, each with a host of their own,
/// chat through a private Mosquitto broker; a card alice sends is drawn by bob's plugins; the
/// operator kills the house line fleet-wide and lifts it. On the way: a reply, a recall, a voice
/// message, and a card that asks (bob books a viewing) and changes in place on both pages.
enum TwoPeopleDemo {
    static let name = "demo two-people"
    static let text = #"""
    { "users": ["alice", "bob"],
      "steps": [
      { "say": "Two people, each with their own host and database, chat through a private Mosquitto broker that this run started. Bob's operator has switched the house line off on bob's host only." },
      { "as": "bob", "killSwitch": { "lines": ["house"] } },
      { "as": "bob", "open": "im://chat?rootCateID=1&cateID=12&peer=alice" },
      { "as": "alice", "open": "im://chat?rootCateID=1&cateID=12&peer=bob&infoID=L1001" },

      { "say": "Alice, on the house page, sends a listing card with a photo of the flat, and a line of text. The photo travels with the message, through the broker. Bob's host draws them with its own plugins: its house line is off, so the card is a placeholder that says why." },
      { "as": "alice", "send": "house.listing", "payload": { "id": "L1001", "title": "阳光两居室 Sunny 2-room flat", "price": 4200, "area": 56, "rooms": 2, "status": "available" }, "photos": ["flat.jpg"] },
      { "as": "alice", "text": "Still available, viewings on Saturday." },
      { "as": "bob", "await": { "contains": ["Still available, viewings on Saturday.", "(line house turned off)"] } },
      { "as": "bob", "why": 1 },

      { "say": "Bob's operator lifts the switch: the same message renders as a card on bob's house page." },
      { "as": "bob", "killSwitch": {} },
      { "as": "bob", "show": true },
      { "as": "bob", "expect": { "page": "house", "contains": ["🏠 阳光两居室", "Photo 640×400"] } },

      { "say": "Bob reads them: a read receipt goes back, and alice's page shows both read, and how bob's host drew her card." },
      { "as": "bob", "read": true },
      { "as": "alice", "await": { "contains": ["#1 me · 09:00 · read ✓✓", "#2 me · 09:01 · read ✓✓", "drawn by house 1.0.0 at bob"] } },

      { "say": "Bob goes offline. Alice sends; the broker keeps it in bob's session, and alice sees it sent, not delivered." },
      { "as": "bob", "offline": true },
      { "as": "alice", "text": "Or Sunday, if that suits you better." },
      { "as": "alice", "await": "#3 me · 09:02 · sent" },
      { "as": "bob", "online": true },
      { "as": "bob", "await": { "contains": ["Or Sunday, if that suits you better."] } },
      { "as": "alice", "await": "#3 me · 09:02 · delivered ✓" },

      { "say": "Bob answers that message with a reply, which shows what it answers on both pages. Alice sends a line she regrets and recalls it: it is replaced on both pages, its words leave both stores, and what it said comes back to her." },
      { "as": "bob", "reply": "3 Sunday at 10 suits me." },
      { "as": "alice", "await": { "contains": ["↪ #3 you:", "Sunday at 10 suits me."] } },
      { "as": "alice", "text": "The door code is 4711." },
      { "as": "bob", "await": { "contains": ["The door code is 4711."] } },
      { "as": "alice", "recall": 5 },
      { "as": "bob", "await": { "contains": ["(alice recalled this message)"] } },

      { "say": "Bob sends a voice message he recorded in his browser (WebM with Opus). Each host decodes every packet before it stores it: the length shown is what the sound decodes to, not what the file or the sender says." },
      { "as": "bob", "voice": "hello.webm" },
      { "as": "alice", "await": { "contains": ["[Voice 0:03]"] } },

      { "say": "Bob books a viewing on alice's card: it asks a day and a time, which bob's host checks before the house line sees them. The line answers with a new revision of the same card: it changes where it stands, on both pages, and says who updated it." },
      { "as": "bob", "tap": "1 viewing day=2026-12-05 time=10:00" },
      { "as": "bob", "expect": { "contains": ["● Viewing booked", "Viewing: 2026-12-05 10:00"] } },
      { "as": "alice", "await": { "contains": ["● Viewing booked", "Viewing: 2026-12-05 10:00", "(updated by bob at"] } },

      { "say": "The housing page misbehaves in production. The platform's operator kills house fleet-wide: one retained message on the broker, and both open chats switch to the legacy page at once, with their history (a host that starts later gets it before its first page)." },
      { "fleet": "kill house" },
      { "as": "alice", "show": true },
      { "as": "alice", "expect": { "page": "legacy", "contains": ["Or Sunday, if that suits you better."] } },
      { "as": "bob", "expect": { "page": "legacy", "contains": ["(line house turned off)"] } },

      { "say": "The operator lifts it: both come back to the house page, and the card renders again." },
      { "fleet": "lift house" },
      { "as": "bob", "show": true },
      { "as": "bob", "expect": { "page": "house", "contains": ["🏠 阳光两居室"] } },
      { "as": "alice", "expect": { "page": "house" } }
      ] }
    """#
}

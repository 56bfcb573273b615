/// The scenario `imhost demo two-people` plays: alice and bob, each with a host of their own,
/// chat through a private Mosquitto broker; a card alice sends is drawn by bob's plugins.
enum TwoPeopleDemo {
    static let name = "demo two-people"
    static let text = #"""
    { "users": ["alice", "bob"],
      "steps": [
      { "say": "Two people, each with their own host and database, chat through a private Mosquitto broker that this run started. Bob's operator has switched the house line off on bob's host only." },
      { "as": "bob", "killSwitch": { "lines": ["house"] } },
      { "as": "bob", "open": "im://chat?rootCateID=1&cateID=12&peer=alice" },
      { "as": "alice", "open": "im://chat?rootCateID=1&cateID=12&peer=bob&infoID=L1001" },

      { "say": "Alice, on the house page, sends a listing card and a line of text. Bob's host draws them with its own plugins: its house line is off, so the card is a placeholder that says why." },
      { "as": "alice", "send": "house.listing", "payload": { "id": "L1001", "title": "阳光两居室 Sunny 2-room flat", "price": 4200, "area": 56, "rooms": 2 } },
      { "as": "alice", "text": "Still available, viewings on Saturday." },
      { "as": "bob", "await": { "contains": ["Still available, viewings on Saturday.", "(line house turned off)"] } },
      { "as": "bob", "why": 1 },

      { "say": "Bob's operator lifts the switch: the same message renders as a card on bob's house page." },
      { "as": "bob", "killSwitch": {} },
      { "as": "bob", "show": true },
      { "as": "bob", "expect": { "page": "house", "contains": ["🏠 阳光两居室"] } },

      { "say": "Bob reads them: a read receipt goes back, and alice's page shows both read." },
      { "as": "bob", "read": true },
      { "as": "alice", "await": { "contains": ["#1 me · 09:00 · read ✓✓", "#2 me · 09:01 · read ✓✓"] } },

      { "say": "Bob goes offline. Alice sends; the broker keeps it in bob's session, and alice sees it sent, not delivered." },
      { "as": "bob", "offline": true },
      { "as": "alice", "text": "Or Sunday, if that suits you better." },
      { "as": "alice", "await": "#3 me · 09:02 · sent" },
      { "as": "bob", "online": true },
      { "as": "bob", "await": { "contains": ["Or Sunday, if that suits you better."] } },
      { "as": "alice", "await": "#3 me · 09:02 · delivered ✓" }
      ] }
    """#
}

/// The scenario `imhost demo` plays: the whole idea, one screenful a step.
enum DemoScenario {
    static let name = "demo"
    static let text = #"""
    [
      { "say": "A housing chat, opened from the jump URL callers already send. The converter routes rootCateID 1 to the house line's page." },
      { "open": "im://chat?rootCateID=1&cateID=12&peer=landlord_wang&infoID=L1001&title=%E9%98%B3%E5%85%89%E4%B8%A4%E5%B1%85%E5%AE%A4" },
      { "receive": "house.listing", "payload": { "id": "L1001", "title": "阳光两居室 Sunny 2-room flat", "price": 4200, "area": 56, "rooms": 2 } },
      { "quick": 4 },
      { "show": true },
      { "expect": { "page": "house", "components": ["topPost", "quickReplies", "bottomBar", "dropdownMenu", "inputBar"], "contains": ["🏠 阳光两居室", "📌 阳光两居室 Sunny 2-room flat"] } },
      { "tap": 1 },
      { "expect": { "tap": "opened listing L1001 detail: 阳光两居室 Sunny 2-room flat, ¥4200, 2 rooms" } },

      { "say": "A jobs chat: the jobs line masks out the dropdown menu and quick replies, and adds a Résumé item. Tapping the invitation accepts it." },
      { "open": "im://chat?rootCateID=9&cateID=13&peer=hr_li" },
      { "receive": "jobs.interview", "payload": { "company": "58 Tech", "position": "iOS engineer", "time": "2026-01-08 10:00", "place": "Building A, 3F" } },
      { "tap": 1 },
      { "show": true },
      { "expect": { "page": "jobs", "components": ["topPost", "bottomBar", "inputBar"], "contains": ["💼 Interview: iOS engineer", "[Résumé]"], "stored": 2 } },

      { "say": "The housing page misbehaves: the operator puts house in killSwitch.lines. The same URL now opens the legacy page; the cards show as placeholders and nothing is lost." },
      { "killSwitch": { "lines": ["house"] } },
      { "open": "im://chat?rootCateID=1&cateID=12&peer=landlord_wang&infoID=L1001&title=%E9%98%B3%E5%85%89%E4%B8%A4%E5%B1%85%E5%AE%A4" },
      { "show": true },
      { "expect": { "page": "legacy", "contains": ["Unsupported message type", "Is it still available?"], "absent": ["🏠"], "stored": 2 } },

      { "say": "The fix is out: the switch is lifted, and the same conversation shows its cards again." },
      { "killSwitch": {} },
      { "open": "im://chat?rootCateID=1&cateID=12&peer=landlord_wang&infoID=L1001&title=%E9%98%B3%E5%85%89%E4%B8%A4%E5%B1%85%E5%AE%A4" },
      { "show": true },
      { "expect": { "page": "house", "contains": ["🏠 阳光两居室"], "absent": ["Unsupported message type"], "stored": 2 } }
    ]
    """#
}

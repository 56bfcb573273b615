/// The scenario `imhost demo` plays: the whole idea, one screenful a step, ending with a line
/// that crashes in a chat and is rolled back by the host on its own.
enum DemoScenario {
    static let name = "demo"

    /// A bundled demo by the name `imhost demo` takes: its name for the transcript, and its text.
    static func named(_ name: String) -> (name: String, text: String)? {
        switch name {
        case "lines", DemoScenario.name: (DemoScenario.name, DemoScenario.text)
        case "two-people", TwoPeopleDemo.name: (TwoPeopleDemo.name, TwoPeopleDemo.text)
        default: nil
        }
    }

    static let text = #"""
    [
      { "say": "A housing chat, opened from the jump URL callers already send. The converter routes rootCateID 1 to the house line's page." },
      { "open": "im://chat?rootCateID=1&cateID=12&peer=landlord_wang&infoID=L1001&title=%E9%98%B3%E5%85%89%E4%B8%A4%E5%B1%85%E5%AE%A4" },
      { "receive": "house.listing", "payload": { "id": "L1001", "title": "阳光两居室 Sunny 2-room flat", "price": 4200, "area": 56, "rooms": 2, "status": "available" }, "photos": ["flat.jpg"] },
      { "quick": 4 },
      { "show": true },
      { "expect": { "page": "house", "components": ["topPost", "quickReplies", "bottomBar", "dropdownMenu", "inputBar"], "contains": ["🏠 阳光两居室", "📌 阳光两居室 Sunny 2-room flat"] } },
      { "tap": 1 },
      { "expect": { "tap": "opened listing L1001 detail: 阳光两居室 Sunny 2-room flat, ¥4200, 2 rooms" } },

      { "say": "A jobs chat: the jobs line masks out the dropdown menu and quick replies, and adds a Résumé item. The invitation's Accept button answers the recruiter in the chat." },
      { "open": "im://chat?rootCateID=9&cateID=13&peer=hr_li" },
      { "receive": "jobs.interview", "payload": { "company": "58 Tech", "position": "iOS engineer", "time": "2026-01-08 10:00", "place": "Building A, 3F" } },
      { "tap": "1 accept" },
      { "show": true },
      { "expect": { "page": "jobs", "components": ["topPost", "bottomBar", "inputBar"], "contains": ["💼 Interview: iOS engineer", "[5] Résumé"], "stored": 2 } },

      { "say": "The housing page misbehaves: the operator puts house in killSwitch.lines. The same URL now opens the legacy page; the cards show as placeholders and nothing is lost." },
      { "killSwitch": { "lines": ["house"] } },
      { "open": "im://chat?rootCateID=1&cateID=12&peer=landlord_wang&infoID=L1001&title=%E9%98%B3%E5%85%89%E4%B8%A4%E5%B1%85%E5%AE%A4" },
      { "show": true },
      { "expect": { "page": "legacy", "contains": ["Unsupported message type", "Is it still available?"], "absent": ["🏠"], "stored": 2 } },

      { "say": "The fix is out: the switch is lifted, and the same conversation shows its cards again." },
      { "killSwitch": {} },
      { "open": "im://chat?rootCateID=1&cateID=12&peer=landlord_wang&infoID=L1001&title=%E9%98%B3%E5%85%89%E4%B8%A4%E5%B1%85%E5%AE%A4" },
      { "show": true },
      { "expect": { "page": "house", "contains": ["🏠 阳光两居室"], "absent": ["Unsupported message type"], "stored": 2 } },

      { "say": "A used-cars chat. The cars line shipped a bug: tapping a card calls its dealer, and a private seller's card has no dealer." },
      { "open": "im://chat?rootCateID=4&cateID=41&peer=seller_zhao" },
      { "receive": "cars.offer", "payload": { "id": "C77", "model": "Volkswagen Golf", "year": 2019, "price": 86000, "mileage": 42000 } },
      { "text": "Can I see it on Saturday?" },
      { "show": true },

      { "say": "Tapping the card crashes the line's page. The chat does not go down with it: the host names the line, records the crash, quarantines the line by itself, and reopens the same chat on the legacy page with its history." },
      { "tap": 1, "expectCrash": true },
      { "show": true },
      { "expect": { "page": "legacy", "quarantined": ["cars"], "contains": ["Unsupported message type", "Can I see it on Saturday?"], "stored": 2 } },
      { "open": "im://chat?rootCateID=1&cateID=12&peer=landlord_wang&infoID=L1001&title=%E9%98%B3%E5%85%89%E4%B8%A4%E5%B1%85%E5%AE%A4" },
      { "expect": { "page": "house", "contains": ["🏠 阳光两居室"] } },

      { "say": "The cars team ships a fix; the operator lifts the quarantine (imhost quarantine lift cars). The same conversation shows its card again: nothing was lost." },
      { "liftQuarantine": "cars" },
      { "open": "im://chat?rootCateID=4&cateID=41&peer=seller_zhao" },
      { "show": true },
      { "expect": { "page": "cars", "contains": ["🚗 Volkswagen Golf (2019)", "Can I see it on Saturday?"], "stored": 2 } }
    ]
    """#
}

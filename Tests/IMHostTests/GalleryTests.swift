import Foundation
import Testing

/// A card of the gallery: its record's name, and the message that draws it.
struct GalleryCard {
    let name: String
    let arrival: Workspace.Arrival

    init(_ name: String, _ key: String, _ payload: String, photos: [String] = []) {
        self.name = name
        arrival = Workspace.Arrival(key: key, payload: payload, photos: photos)
    }
}

/// The cards of one chat, received in order from its peer: card N is message #N. A conversation
/// is one a peer, whatever line: each chat of the gallery has a peer of its own.
struct GalleryChat {
    let url: String
    let cards: [GalleryCard]
}

extension BrowserSuites {
    /// Same card, same look: every card the example lines draw (and the fixture line of the docs'
    /// smallest cards, and the lines built against IMKit 1.0 and 1.2), drawn in Chromium and
    /// compared with its committed record (``CardRecords``): a change of CSS or HTML that moves
    /// a card, recolours it or changes its words fails here, naming the card.
    @Suite("Gallery")
    struct GalleryTests {
        /// The house, jobs and cars lines' cards, each state their builders draw (the payloads of
        /// their samples, a revised card drawn from what its revision carries), and the fixture
        /// line's; a listing with the photo sent with it, cards with inputs, a placeholder.
        static let chats = [
            GalleryChat(url: houseChatURL, cards: [
                GalleryCard("house.listing.available", "house.listing",
                            #"{"id":"L1001","title":"Sunny 2-room flat","price":4200,"area":68,"rooms":2,"status":"available"}"#,
                            photos: [PhotoFixtures.path("flat.jpg")]),
                GalleryCard("house.listing.reserved-no-id", "house.listing",
                            #"{"title":"Studio by the park","price":2600,"area":30,"rooms":1,"status":"reserved"}"#),
                GalleryCard("house.listing.viewing-booked", "house.listing",
                            #"{"id":"L1001","title":"Sunny 2-room flat","price":4200,"area":68,"rooms":2,"status":"available","viewing":"2026-12-05 10:00"}"#),
                GalleryCard("house.listing.let-chinese", "house.listing",
                            #"{"id":"L2002","title":"阳光两居室 近地铁","price":5100,"area":72.5,"rooms":3,"status":"let"}"#),
            ]),
            GalleryChat(url: jobsURL, cards: [
                GalleryCard("jobs.interview.invitation", "jobs.interview",
                            #"{"company":"58 Tech","position":"iOS engineer","time":"2026-11-25 10:00","place":"Building A, 3F","otherTimes":["2026-11-26 14:00"]}"#),
                GalleryCard("jobs.interview.accepted", "jobs.interview",
                            #"{"company":"58 Tech","position":"iOS engineer","time":"2026-11-25 10:00","place":"Building A, 3F","otherTimes":["2026-11-26 14:00"],"accepted":"2026-11-26 14:00"}"#),
                GalleryCard("jobs.interview.declined", "jobs.interview",
                            #"{"company":"58 Tech","position":"iOS engineer","time":"2026-11-25 10:00","place":"Building A, 3F","otherTimes":["2026-11-26 14:00"],"declined":true}"#),
            ]),
            GalleryChat(url: carsChat + "u7", cards: [
                GalleryCard("cars.offer.dealer", "cars.offer",
                            #"{"id":"C7","model":"Honda Civic","year":2019,"price":89000,"mileage":42000,"dealer":{"name":"Sunrise Motors","phone":"010-5550-0101"}}"#),
                GalleryCard("cars.offer.private-seller", "cars.offer",
                            #"{"id":"C8","model":"Toyota Corolla","year":2016,"price":52000,"mileage":98000}"#),
                GalleryCard("cars.offer.offer-made", "cars.offer",
                            #"{"id":"C7","model":"Honda Civic","year":2019,"price":89000,"mileage":42000,"dealer":{"name":"Sunrise Motors","phone":"010-5550-0101"},"bid":85000}"#),
            ]),
            GalleryChat(url: "im://chat?rootCateID=77&peer=u1", cards: [
                GalleryCard("tasks.note", "tasks.note", #"{"text":"Bring the keys"}"#),
                GalleryCard("tasks.task", "tasks.task", #"{"title":"Sign the lease","due":"Friday"}"#),
                GalleryCard("tasks.question.asking", "tasks.question", #"{"text":"Which day suits you?"}"#),
                GalleryCard("tasks.question.answered", "tasks.question", #"{"text":"Which day suits you?","answer":"Saturday"}"#),
                // A button id no one could type: the host draws the placeholder.
                GalleryCard("tasks.broken.placeholder", "tasks.broken", #"{"text":"oops"}"#),
            ]),
        ]

        /// house, jobs, cars and the fixture cards line (tasks), each routed to a chat of its own.
        static let config = """
            {
              "plugins": "Plugins",
              "lines": { "house": { "enabled": true }, "jobs": { "enabled": true }, "cars": { "enabled": true }, "tasks": { "enabled": true } },
              "routes": [
                { "rootCateID": 1, "cateID": "*", "line": "house" },
                { "rootCateID": 9, "cateID": [12, 13], "line": "jobs" },
                { "rootCateID": 4, "cateID": "*", "line": "cars" },
                { "rootCateID": 77, "cateID": "*", "line": "tasks" }
              ]
            }
            """

        @Test("every card the house, jobs, cars and fixture cards lines draw looks as its record in Golden/gallery/ says: its boxes, colours and words")
        func exampleLines() throws {
            let workspace = try Workspace()
            for (product, name) in [("House", "house.so"), ("Jobs", "jobs.so"), ("Cars", "cars.so"), ("FixtureCards", "tasks.so")] {
                try workspace.install(product, as: name)
            }
            try workspace.writeConfig(Self.config)
            for chat in Self.chats { try workspace.receive(chat.cards.map(\.arrival), in: chat.url) }
            let web = try WebServing(workspace)
            let browser = try Browser()
            for chat in Self.chats { try record(chat, on: web, in: browser) }
        }

        @Test("the note of a line built against IMKit 1.0, and of one built against 1.2, drawn as its preformatted lines, looks as its record says",
              .heavy(.compiler), arguments: ["1.0", "1.2"])
        func compatibilityLine(release: String) throws {
            let workspace = try Workspace()
            try workspace.installBaselineLine(builtAgainst: release)
            let chat = GalleryChat(url: "im://chat?rootCateID=88&peer=u1", cards: [
                GalleryCard("baseline.note.\(release)", "baseline.note", #"{"id":"n7","text":"hello from \#(release)"}"#),
            ])
            try workspace.receive(chat.cards.map(\.arrival), in: chat.url)
            let web = try WebServing(workspace)
            let browser = try Browser()
            try record(chat, on: web, in: browser)
        }

        /// Opens `chat` at the gallery's size, waits for its cards and compares each with its record.
        func record(_ chat: GalleryChat, on web: WebServing, in browser: Browser) throws {
            try browser.open(chat: chat.url, on: web)
            try browser.drawAsGallery()
            try #require(try browser.waitForGallery(messages: chat.cards.count), "\(chat.url) did not show its \(chat.cards.count) messages, pictures decoded: \(browser.galleryState())")
            let records = try browser.cardRecords(Array(1...chat.cards.count))
            for (index, (card, elements)) in zip(chat.cards, records).enumerated() {
                let drawn = try #require(elements, "card \(card.name) (message #\(index + 1)) has no bubble")
                try expectCardRecord(drawn, named: card.name)
            }
        }
    }
}

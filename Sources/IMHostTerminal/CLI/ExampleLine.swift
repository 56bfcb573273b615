import IMHost
import IMHostRuntime
import IMKit

/// One of the lines that ship with the host (house, jobs, cars), written out as a package of its
/// own by `imhost new-line --example NAME`: a line author holding only the SDK gets a full line
/// to read, build and change, with a scenario that shows what it does.
struct ExampleLine {
    var id: String
    var type: String
    /// What the README says the line shows.
    var about: String
    var routes: [(Int, String)]
    var chat: String
    var scenario: String

    static let all: [ExampleLine] = [
        ExampleLine(
            id: "house", type: "House",
            about: "a carrier page titled by sub-category with the listing as its top post, a listing card (`house.listing`: a structured card with a status badge, two buttons and the day and time a viewing is booked for, which changes in place once one is) that stays readable in its first, older shape, a per-user service (`house.listings`) and a route (`house://listing/:id`) that a tap on a card opens, and a menu item of the line's own",
            routes: [(1, "\"*\"")], chat: "im://chat?rootCateID=1&cateID=12&peer=landlord&infoID=L1001",
            scenario: """
                [
                  { "open": "im://chat?rootCateID=1&cateID=12&peer=landlord&infoID=L1001" },
                  { "receive": "house.listing", "payload": { "id": "L1001", "title": "Sunny flat", "price": 4200, "area": 56, "rooms": 2, "status": "available" } },
                  { "tap": 1 },
                  { "expect": { "page": "house", "contains": ["🏠 Sunny flat", "● Available"], "tap": "opened listing L1001 detail: Sunny flat, ¥4200, 2 rooms" } },
                  { "tap": "1 viewing day=2026-12-05 time=10:00" },
                  { "menu": 4 },
                  { "expect": { "contains": ["● Viewing booked", "Viewing: 2026-12-05 10:00"], "tap": "booked a viewing of listing L1001 (Sunny flat) on 2026-12-05 at 10:00" } }
                ]

                """),
        ExampleLine(
            id: "jobs", type: "Jobs",
            about: "a page without a menu or quick replies, an interview card (`jobs.interview`) with the times offered to choose from and Accept and Decline buttons, which answer in the chat and change the card in place (the page also accepts when the card is tapped), a bottom-bar item of its own (`Résumé`, answered by `didSelectBottomBarItem`), and a route",
            routes: [(9, "[12, 13]")], chat: "im://chat?rootCateID=9&cateID=12&peer=hr",
            scenario: """
                [
                  { "open": "im://chat?rootCateID=9&cateID=12&peer=hr" },
                  { "receive": "jobs.interview", "payload": { "company": "58 Tech", "position": "iOS engineer", "time": "2026-01-08 10:00", "place": "Building A" } },
                  { "tap": 1 },
                  { "bar": 5 },
                  { "expect": { "page": "jobs", "stored": 2, "contains": ["I accept the interview at 58 Tech"] } },
                  { "tap": "1 decline" },
                  { "expect": { "stored": 3, "contains": ["Sorry, I have to decline the interview"] } }
                ]

                """),
        ExampleLine(
            id: "cars", type: "Cars",
            about: "an offer card (`cars.offer`) whose Call button, and whose page when it is tapped, calls the dealer, with a bug on purpose: a private seller's offer has no dealer, and tapping it crashes the page. Tap one to see the host record the crash, quarantine the line and reopen the chat on the legacy page (`imhost quarantine lift cars` to try again)",
            routes: [(4, "\"*\"")], chat: "im://chat?rootCateID=4&peer=seller",
            scenario: """
                [
                  { "open": "im://chat?rootCateID=4&peer=seller" },
                  { "receive": "cars.offer", "payload": { "id": "C7", "model": "Golf", "year": 2019, "price": 86000, "mileage": 42000, "dealer": { "name": "Zhao Motors", "phone": "400-000" } } },
                  { "tap": "1 call" },
                  { "expect": { "page": "cars", "contains": ["● Dealer"], "tap": "calling Zhao Motors at 400-000 about the Golf" } },
                  { "tap": 1 },
                  { "expect": { "page": "cars", "tap": "calling Zhao Motors at 400-000 about the Golf" } }
                ]

                """),
    ]

    /// The example called `name`.
    static func named(_ name: String) -> ExampleLine? { all.first { $0.id == name } }

    /// The package's files: the line's sources as the host's checkout has them at `sources`
    /// (`Sources/Lines/<Type>`), and the rest made here.
    func files(sources: String, imkit: String) throws(FileSystem.Failure) -> [(path: String, text: String)] {
        var files: [(path: String, text: String)] = []
        for name in try FileSystem.entries(of: sources) where name.hasSuffix(".swift") {
            files.append(("Sources/\(type)/\(name)", try FileSystem.readText(sources + "/" + name)))
        }
        files.append(("scenario.json", scenario))
        files.append(("README.md", """
            # \(type): the '\(id)' example line

            One of the lines that ship with the imhost host, written out by
            `imhost new-line --example \(id)`: \(about).

            Read `Sources/\(type)/`, change it, and build it as any line is built.

            \(LineTemplate.tryIt(id: id, type: type, routes: routes, chat: chat))

            """))
        return files + LineTemplate.common(id: id, type: type, imkit: imkit, routes: routes)
    }
}

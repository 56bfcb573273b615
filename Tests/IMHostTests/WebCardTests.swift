import Foundation
import Testing

extension BrowserSuites {
    @Suite("Cards in a browser")
    struct WebCardTests {
        @Test("the house card drawn as a card: its photo (the bytes the message carried, decoded by Chromium at the size the host read), title and badge, subtitle, fields as a table, its buttons; a button clicked answers in a notice as /tap N BUTTON does, a click on the card taps it, an id it lacks is refused")
        func houseCard() throws {
            let workspace = try Workspace.standard()
            try workspace.receiveListingWithPhoto(title: "Sunny flat")
            let web = try WebServing(workspace, arguments: ["--dev"])
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)

            #expect(try browser.waitFor(".message.received section.card .card-title", containing: "🏠 Sunny flat"))
            func strings(_ script: String) throws -> [String] { try browser.execute(script) as? [String] ?? [] }
            #expect(try browser.textContent(".card .card-subtitle") == "Listing L1001")
            #expect(try browser.textContent(".card .card-head .badge") == "Available")
            #expect(try browser.execute("return document.querySelector('.card .badge').className") as? String == "badge positive")
            #expect(try strings("return Array.from(document.querySelectorAll('.card-fields dt'), e => e.textContent)") == ["Price", "Area", "Rooms"])
            #expect(try strings("return Array.from(document.querySelectorAll('.card-fields dd'), e => e.textContent)") == ["¥4200", "56 m²", "2"])
            #expect(try browser.findAll(".card-buttons button").map { try $0.text() } == ["Details", "Book a viewing"])
            #expect(try strings("return Array.from(document.querySelectorAll('.card-buttons button'), e => [e.dataset.do, e.dataset.message, e.dataset.button].join(' '))")
                    == ["tap 1 details", "tap 1 viewing"])
            // The photo, from this host's own server, decoded by the browser at the size the host read.
            #expect(try browser.execute("return document.querySelector('.card img.card-image').getAttribute('src')") as? String == "/photo?peer=u42&n=1&i=0")
            #expect(try browser.waitUntil("(i => i !== null && i.complete && i.naturalWidth > 0)(document.querySelector('.card img.card-image'))"))
            #expect(try browser.execute("const i = document.querySelector('.card img.card-image'); return [i.naturalWidth, i.naturalHeight]") as? [Int] == [640, 400])
            // Drawn as a card, not as preformatted text, with the page's own style.
            #expect(try browser.execute("return document.querySelectorAll('.message.received pre').length") as? Int == 0)
            #expect(try browser.execute("return getComputedStyle(document.querySelector('.card-fields')).display") as? String == "grid")
            #expect(try browser.execute("return getComputedStyle(document.querySelector('.card')).whiteSpace") as? String == "normal")
            #expect(try browser.execute("return getComputedStyle(document.querySelector('.card-fields dd')).whiteSpace") as? String == "normal",
                    "a peer's newlines in a field run together: a flood of them cannot bury the page")

            // Book a viewing sends the card's inputs: empty, the host says so beside each, and the
            // line sees nothing; the first one takes the focus.
            #expect(try strings("return Array.from(document.querySelectorAll('form.card-form label, form.card-form legend'), e => e.textContent)")
                    == ["Day (required)", "Time (required)"])
            try browser.click(".card-buttons button[data-button='viewing']")
            #expect(try browser.waitFor("#in-1-day-error", containing: "Fill this in."))
            #expect(try browser.waitFor("#in-1-time-error", containing: "Fill this in."))
            #expect(try browser.waitUntil("document.activeElement === document.getElementById('in-1-day')"))
            #expect(try browser.execute("return document.getElementById('in-1-day').getAttribute('aria-invalid')") as? String == "true")
            #expect(try browser.execute("return document.getElementById('in-1-day').getAttribute('aria-describedby')") as? String == "in-1-day-error")
            // A time after the card's latest: said beside the time only.
            _ = try browser.execute("document.getElementById('in-1-day').value = '2026-12-05'; document.getElementById('in-1-time').value = '21:30'")
            try browser.click(".card-buttons button[data-button='viewing']")
            #expect(try browser.waitFor("#in-1-time-error", containing: "Choose 20:00 or earlier."))
            #expect(try browser.execute("return document.getElementById('in-1-day-error').hidden") as? Bool == true)
            // What was typed outlives a redraw of the card (a message arriving, a reaction).
            try workspace.receive("text", #"{"text":"are you coming?"}"#)
            #expect(try browser.waitFor("#m2 .bubble.text", containing: "are you coming?"))
            #expect(try browser.execute("return document.getElementById('in-1-day').value") as? String == "2026-12-05")
            // And a new drawing of the card itself (a reaction to it), the host's words beside the time too.
            try browser.click("#m1 button.react")
            try browser.click("#m1 .react-choices button[aria-pressed=false]")
            #expect(try browser.waitFor("#m1 ul.reactions li", containing: "👍"))
            #expect(try browser.execute("return [document.getElementById('in-1-day').value, document.getElementById('in-1-time-error').textContent]") as? [String]
                    == ["2026-12-05", "Choose 20:00 or earlier."])
            _ = try browser.execute("document.getElementById('in-1-time').value = '10:00'")
            try browser.click(".card-buttons button[data-button='viewing']")
            #expect(try browser.waitFor("#notice-log", containing: "tap #1 viewing: booked a viewing of listing L1001 (Sunny flat) on 2026-12-05 at 10:00"))
            // The card changed where it stands: the booking, a green badge, nothing more to ask.
            #expect(try browser.waitFor("#m1 .card .badge.positive", containing: "Viewing booked"))
            #expect(try browser.waitFor("#m1 .meta .revised", containing: "updated by you at"))
            #expect(try browser.findAll("#m1 form.card-form").isEmpty)
            #expect(try strings("return Array.from(document.querySelectorAll('#m1 .card-fields dd'), e => e.textContent)") == ["¥4200", "56 m²", "2", "2026-12-05 10:00"])
            try browser.click(".card-buttons button[data-button='details']")
            #expect(try browser.waitFor("#notice-log", containing: "tap #1 details: opened listing L1001 detail: Sunny flat, ¥4200, 2 rooms"))
            try browser.click(".card .card-fields")
            #expect(try browser.waitFor("#notice-log", containing: "tap #1: opened listing L1001 detail"), "a click on the card, not a button, taps it")
            // A tap on a button the card no longer has (a stale page) is refused in a line; a typed
            // "/tap" is only text: the page has no verbs.
            _ = try browser.execute("post(document.querySelector('[data-page]').dataset.page, { do: 'tap', message: 1, button: 'nope' })")
            #expect(try browser.waitFor("#notice-log", containing: "/tap: message #1 has no button 'nope'; its buttons: details"))
            try browser.send("/tap 1 details")
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "/tap 1 details"), "a line starting with / is sent as text")
            let console = try browser.consoleLog()
            #expect(console.filter { $0.level == "SEVERE" }.isEmpty, "\(console)")
        }

        @Test("a photo alice picks with the Photo item goes to bob through the broker and shows inline on his open page, decoded by Chromium at the size the host read; a file that is not a picture, or a PNG header with an SVG after it, is refused in one line, and nothing is sent")
        func photoBetweenTwo() throws {
            let people = try TwoPeopleInABrowser()
            let (alice, bob) = (people.alice, people.bob)

            try #require(try alice.waitFor("input.photo-file")).type(PhotoFixtures.path("flat.png"))
            #expect(try bob.waitFor(".message.received figure.photo img.photo-image") != nil, "bob's page did not show the photo")
            #expect(try bob.waitUntil("(i => i !== null && i.complete && i.naturalWidth > 0)(document.querySelector('figure.photo img'))"))
            #expect(try bob.execute("const i = document.querySelector('figure.photo img'); return [i.naturalWidth, i.naturalHeight]") as? [Int] == [640, 400])
            #expect(try bob.execute("return document.querySelectorAll('.message.received .bubble').length") as? Int == 0,
                    "a photo without a caption is the photo alone, with no empty bubble above it")
            #expect(try alice.waitUntil("(i => i !== null && i.complete && i.naturalWidth == 640)(document.querySelector('.message.sent figure.photo img'))"))
            #expect(try alice.waitFor(".message.sent .state", containing: "read ✓✓"), "alice's page did not show it read")
            // Its bytes went to the worker in the act itself: no file was written for it.
            #expect(!FileManager.default.fileExists(atPath: people.aliceHome.data + "/uploads"))

            let notes = people.root.root + "/notes.png"
            try "not a picture at all\n".write(toFile: notes, atomically: true, encoding: .utf8)
            try #require(try alice.waitFor("input.photo-file")).type(notes)
            #expect(try alice.waitFor("#notice-log", containing: "Not sent: this file is not a photo that can be sent (it is not a PNG, JPEG or WebP picture"))
            // A PNG by its header, an SVG after it: decoded whole on the server, and refused there.
            let svg = people.root.root + "/svg.png"
            try Data(try BrokenPhotos.pngHeader(then: BrokenPhotos.svg)).write(to: URL(fileURLWithPath: svg))
            try #require(try alice.waitFor("input.photo-file")).type(svg)
            #expect(try alice.waitFor("#notice-log", containing: "Not sent: this file is not a photo that can be sent (its PNG data is damaged"))
            #expect(try alice.findAll(".message").count == 1 && bob.findAll(".message").count == 1)
            // The one error the browser logs is the refusal it was answered (415), which the page said.
            let console = try bob.consoleLog() + alice.consoleLog()
            #expect(console.filter { $0.level == "SEVERE" && !$0.message.contains("/photo - Failed to load resource: the server responded with a status of 415") }.isEmpty,
                    "\(console)")
        }

        @Test("what a picked file says of itself reaches the page escaped: a WebP whose first chunk is named with a terminal's escape sequence is refused in one line")
        func hostilePhotoRefused() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            let hostile = workspace.root + "/hostile.webp"
            try Data(PhotoTests.hostileWebP).write(to: URL(fileURLWithPath: hostile))
            try #require(try browser.waitFor("input.photo-file")).type(hostile)
            #expect(try browser.waitFor("#notice-log", containing: #"Not sent: this file is not a photo that can be sent (it is a WebP with a first chunk of "\x1b[2J", not VP8"#))
            let said = try #require(try browser.textContent("#notice-log"))
            #expect(!said.unicodeScalars.contains { $0.value == 0x1B }, "\(said)")
            #expect(try browser.findAll(".message").isEmpty, "nothing is sent")
        }

        @Test("the jobs card shows the picture its line ships; its Decline button, pressed in the browser on the house page, answers the recruiter in the chat")
        func roamingButton() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace, arguments: ["--dev"])
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            try workspace.receive("jobs.interview", #"{"company":"58 Tech","position":"iOS engineer","time":"2026-11-25 10:00","place":"Building A"}"#)
            #expect(try browser.waitFor(".message.received .card .badge", containing: "Invitation"))
            // The jobs line's own picture, handed to the host when it registered, from the page's server.
            #expect(try browser.execute("return document.querySelector('.card img.card-image').getAttribute('src')") as? String == "/picture/jobs/1.0.0/logo")
            #expect(try browser.waitUntil("(i => i !== null && i.complete && i.naturalWidth == 96 && i.naturalHeight == 96)(document.querySelector('.card img.card-image'))"))
            try browser.click(".card-buttons button[data-button='decline']")
            #expect(try browser.waitFor("#notice-log", containing: "tap #1 decline: declined interview at 58 Tech, 2026-11-25 10:00"))
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "Sorry, I have to decline the interview"))
        }

        @Test("a line built against IMKit 1.2 still draws in the browser: its lines as preformatted text, which a click taps")
        func lineOf12() throws {
            let workspace = try Workspace()
            try workspace.installBaselineLine(builtAgainst: "1.2")
            let web = try WebServing(workspace, arguments: ["--dev"])
            let browser = try Browser()
            try browser.open(chat: "im://chat?rootCateID=88&peer=u1", on: web)
            #expect(try browser.waitFor("#page .title h1", containing: "Baseline · u1"))
            try workspace.receive("baseline.note", #"{"id":"n7","text":"hello from 1.2"}"#, in: "im://chat?rootCateID=88&peer=u1")
            #expect(try browser.waitFor(".message.received pre.bubble.lines", containing: "📝 hello from 1.2\nNote: n7"))
            #expect(try browser.find(".message.received .card") == nil)
            try browser.click(".message.received pre.bubble.lines")
            #expect(try browser.waitFor("#notice-log", containing: "tap #1: opened note n7 (opened 1 time)"))
            // Laid out at the 72 columns such builders were written for, in a fixed-width font.
            let words = (1...40).map { "word\($0)" }.joined(separator: " ")
            try workspace.receive("baseline.note", #"{"id":"n8","text":"\#(words)"}"#, in: "im://chat?rootCateID=88&peer=u1")
            #expect(try browser.waitFor(".message.received pre.bubble.lines", containing: "word40"))
            let lines = try #require(try browser.execute("return document.querySelectorAll('pre.bubble.lines')[1].textContent") as? String)
                .split(separator: "\n")
            let widest = lines.map(\.count).max() ?? 0
            #expect(widest > 48 && widest <= 72, "\(lines)")
            let font = try #require(try browser.execute("return getComputedStyle(document.querySelector('pre.bubble.lines')).fontFamily") as? String)
            #expect(font.contains("monospace"), "\(font)")
        }
    }
}

extension BrowserSuites {
    @Suite("A card's button that does nothing")
    struct WebIgnoredButtonTests {
        @Test("a card's button whose builder answered ignored is drawn disabled from then on, saying it does nothing, in the browser and in the terminal; the card's other buttons still work")
        func ignoredButton() throws {
            let workspace = try Workspace.standard()
            try workspace.install("Cars", as: "cars.so")
            try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""jobs": { "enabled": true } }"#, with: #""jobs": { "enabled": true }, "cars": {} }"#)
                .replacingOccurrences(of: #"{ "rootCateID": 1, "cateID": "*", "line": "house" },"#,
                                      with: #"{ "rootCateID": 1, "cateID": "*", "line": "house" }, { "rootCateID": 4, "cateID": "*", "line": "cars" },"#))
            let chat = carsChat + "u42"
            try workspace.receive("cars.offer", #"{"id":"C7","model":"Model 7","year":2021,"price":90000,"mileage":30000,"dealer":{"name":"Auto Li","phone":"555-0101"}}"#, in: chat)
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: chat, on: web)
            #expect(try browser.waitFor(".message.received section.card .card-title", containing: "Model 7"))
            #expect(try browser.findAll(".card-buttons button:not([disabled])").map { try $0.text() } == ["Call the dealer", "Make an offer", "Save offer"])
            try browser.click(".card-buttons button[data-button='save']")
            #expect(try browser.waitFor(".card-buttons button.ignored[disabled]", containing: "does nothing in this chat"))
            try browser.click(".card-buttons button[data-button='call']")
            #expect(try browser.waitFor("#notice-log", containing: "calling Auto Li at 555-0101"))
            // The terminal's chat, its own page: pressed there, it says so in its drawing too.
            let typed = try imhost(["chat", chat], input: "/tap 1 save\n/quit\n", in: workspace)
            #expect(typed.stdout.contains("[Save offer] (does nothing here)"), "\(typed.stdout)")
            #expect(typed.stdout.contains("[Call the dealer] /tap 1 call"), "\(typed.stdout)")
        }
    }
}

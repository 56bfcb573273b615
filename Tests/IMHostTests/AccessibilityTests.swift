import Foundation
import Testing
@testable import IMHost

extension BrowserSuites {
    /// axe-core over every state of the pages a person reaches, in light and dark, at a phone's
    /// width and a desktop's: zero serious or critical violations; the others listed.
    @Suite("Everyone can use the page")
    struct AccessibilityTests {
        /// The widths and colour schemes every state is checked in.
        /// 640×400 is 1280×800 at 200% zoom: the page a person who enlarges it sees, here one who
        /// also asked for less motion.
        static let views: [(width: Int, height: Int, scheme: String)] = [
            (375, 812, "light"), (375, 812, "dark"), (1280, 800, "light"), (1280, 800, "dark"), (640, 400, "light"),
        ]

        /// Checks the page as it is in every view.
        func checkEveryView(_ browser: Browser, _ state: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            for view in Self.views {
                try browser.view(width: view.width, height: view.height)
                try browser.emulate(scheme: view.scheme, reducedMotion: view.width == 640)
                try browser.checkAccessibility("\(state) at \(view.width) px, \(view.scheme)", sourceLocation: sourceLocation)
                if view.width == 640 {
                    #expect(try browser.execute("return matchMedia('(prefers-reduced-motion: reduce)').matches && getComputedStyle(document.documentElement).scrollBehavior === 'auto'") as? Bool == true)
                }
                // Nothing wider than the window: no sideways scrolling at any width.
                let overflow = try browser.execute("""
                    return Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest('nav.quick-replies, pre.bubble.lines, .visually-hidden'))
                      .map(e => e.tagName + '.' + e.className).slice(0, 5)
                    """) as? [String] ?? []
                let fits = try browser.execute("return document.documentElement.scrollWidth <= innerWidth") as? Bool == true
                #expect(overflow.isEmpty && fits, "\(state) at \(view.width) px is wider than the window: \(overflow)", sourceLocation: sourceLocation)
            }
        }

        @Test("the start page, a chat with cards (their inputs, refused values said), photos, a placeholder, a failed message, its menu, reactions and questions open, and the legacy page pass axe-core in light and dark, on a phone and a desktop")
        func everyState() throws {
            let workspace = try Workspace.standard()
            _ = try imhost(["chat", houseChatURL], input: "Is the flat still free?\n/quit\n", in: workspace)
            try workspace.sendAndFail("and the deposit?", reason: #"{"code":"refused-by-peer","peer":"u42","refusal":"too-large","said":"over 1 KB"}"#)
            try workspace.receiveListingWithPhoto(title: "阳光两居室 Sunny 2-room flat")
            try workspace.receive("jobs.interview", #"{"company":"58 Tech","position":"iOS engineer","time":"2026-01-08 10:00","place":"Building A, 3F"}"#)
            try workspace.receive("cars.offer", #"{"model":"Civic","price":52000}"#)
            try workspace.receive("text", #"{"text":"مرحبا, see https://example.com/flat"}"#)
            try workspace.receive("text", #"{"text":"the kitchen"}"#, photos: [PhotoFixtures.path("flat.png")])
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.navigate(web.url)
            #expect(try browser.waitFor("#conversations li", containing: "u42"))
            try checkEveryView(browser, "the start page")

            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor(".message.received .placeholder") != nil)
            #expect(try browser.waitFor(".message.sent .state.failed") != nil)
            #expect(try browser.waitUntil("Array.from(document.querySelectorAll('img.card-image')).every(i => i.complete && i.naturalWidth > 0)"))
            // Every picture says what it is: a photo its caption, or who sent it and its size.
            #expect(try browser.execute("return document.querySelector('figure.photo img').alt") as? String == "Photo: the kitchen")
            let cardPhoto = try browser.execute("return document.querySelector('.card img.card-image').alt") as? String ?? ""
            #expect(cardPhoto.wholeMatch(of: /Photo from u42, \d+×\d+/) != nil, "\(cardPhoto)")
            // Each bubble is laid out in its own script's direction.
            #expect(try browser.execute("return Array.from(document.querySelectorAll('.bubble.text')).every(b => b.getAttribute('dir') === 'auto')") as? Bool == true)
            #expect(try browser.execute("return getComputedStyle(Array.from(document.querySelectorAll('.bubble.text')).find(b => b.textContent.startsWith('مرحبا'))).direction") as? String == "rtl")
            try checkEveryView(browser, "a chat with cards")

            // A card's inputs with the host's words beside those refused.
            try browser.click(".card-buttons button[data-button='viewing']")
            #expect(try browser.waitFor(".card-form .input-error", containing: "Fill this in."))
            try browser.click("#page .menu summary")
            try browser.click(".message.received .placeholder summary")
            try browser.click(".message.received button.react")
            try browser.click(".message.received button.reply")
            try checkEveryView(browser, "the chat with a card's refused values, its menu, a placeholder, reactions and a reply open")

            try browser.click("#page .menu button[data-ask=clear]")
            #expect(try browser.waitUntil("document.getElementById('clear-dialog').open"))
            try checkEveryView(browser, "the chat asking whether to clear it")
            try browser.click("#clear-dialog button[value=cancel]")

            try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""killSwitch": { "lines": []"#, with: #""killSwitch": { "lines": ["house"]"#))
            #expect(try browser.waitUntil("document.querySelector('header.title.legacy') !== null"), "the page did not follow host.json")
            try checkEveryView(browser, "the legacy page")
        }

        /// Presses Tab until `selector` has the focus, and checks the focus shows there.
        func reach(_ browser: Browser, _ selector: String, backwards: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws {
            try #require(try browser.tab(to: selector, backwards: backwards), "Tab never reached \(selector); the focus is on \(browser.focused())", sourceLocation: sourceLocation)
            #expect(try browser.focusIsVisible(), "the focus on \(selector) is not shown: \(browser.focused())", sourceLocation: sourceLocation)
        }

        @Test("alice chats with bob by keys alone: sends, replies, reacts, recalls, taps a card and its button, a quick reply, the menu, the tools on a phone, the voice recorder, and searches; Escape closes what opened, the focus always shown")
        func keyboardOnly() throws {
            let people = try TwoPeopleInABrowser(dev: false)
            let (alice, bob) = (people.alice, people.bob)
            try alice.execute("document.activeElement.blur()")

            // Send.
            try reach(alice, "form[data-send] input")
            try alice.typeKeys("hello by keys")
            try alice.press(.enter)
            #expect(try bob.waitFor("#m1 .bubble.text", containing: "hello by keys"))
            try bob.send("An answer to reply to")
            #expect(try alice.waitFor("#m2.received .bubble.text", containing: "An answer"))
            // A screen reader hears the new message once, by the polite region, and nothing else:
            // the list itself is not live.
            #expect(try alice.waitUntil("document.getElementById('announce').textContent === 'bob: An answer to reply to'"))
            #expect(try alice.execute("return document.getElementById('announce').getAttribute('aria-live') + ' ' + document.querySelector('main.messages').getAttribute('aria-live')") as? String == "polite null")
            // The arrow keys go between messages; Tab from one goes to its buttons.
            try reach(alice, "article.message", backwards: true)
            try alice.press(.end)
            #expect(try alice.waitUntil("document.activeElement.id === 'm2'"), "End did not go to the newest message: \(alice.focused())")
            try alice.press(.arrowUp)
            #expect(try alice.waitUntil("document.activeElement.id === 'm1'"))
            try alice.press(.arrowDown)
            #expect(try alice.waitUntil("document.activeElement.id === 'm2'"))

            // Reply.
            try reach(alice, "#m2 button.reply")
            try alice.press(.enter)
            #expect(try alice.waitUntil("document.activeElement.matches('form[data-send] input')"), "Reply did not move to the input")
            #expect(try alice.waitFor("form[data-send] .replying", containing: "An answer"))
            try alice.typeKeys("a reply by keys")
            try alice.press(.enter)
            #expect(try bob.waitFor("#m3 a.quote", containing: "An answer"))

            // React: Enter opens the set, the focus on its first; Enter gives it; Escape closes the set.
            try reach(alice, "#m2 button.react", backwards: true)
            try alice.press(.enter)
            #expect(try alice.waitUntil("document.activeElement.matches('.react-choices button')"))
            try alice.press(.enter)
            #expect(try bob.waitFor("#m2 .reactions", containing: "👍"))
            #expect(try alice.waitUntil("document.activeElement.closest('#m2') !== null"), "the focus left the message it reacted to: \(alice.focused())")
            try reach(alice, "#m2 button.react")
            try alice.press(.enter)
            #expect(try alice.waitUntil("document.querySelector('.react-choices') !== null"))
            try alice.press(.escape)
            #expect(try alice.waitUntil("document.querySelector('.react-choices') === null && document.activeElement.matches('#m2 button.react')"))

            // Recall her own message.
            try reach(alice, "#m3 button.recall")
            try alice.press(.enter)
            #expect(try bob.waitFor("#m3 .bubble.recalled", containing: "alice recalled a message"))

            // A card: its title taps it, its buttons answer.
            try people.aliceHome.receive(listingArrival.key, listingArrival.payload, in: houseChat(with: "bob"))
            #expect(try alice.waitFor(".message.received .card .card-title", containing: "Sunny flat"))
            try reach(alice, ".card button.card-open")
            try alice.press(.enter)
            #expect(try alice.waitFor("#notice-log li", containing: "L1001"), "the card's tap did nothing")
            // Book a viewing with nothing given: the host's words beside each input, the focus on
            // the first; the day and time typed by keys (a date and a time field, as the browser
            // draws them), then Enter in the form presses Book a viewing.
            try reach(alice, ".card-buttons button[data-button=viewing]")
            try alice.press(.enter)
            #expect(try alice.waitFor(".card-form .input-error", containing: "Fill this in."))
            #expect(try alice.waitUntil("document.activeElement.matches('.card-form input[name=day]')"), "the focus did not go to the first input refused: \(alice.focused())")
            #expect(try alice.focusIsVisible())
            try alice.typeKeys("12052026")
            try reach(alice, ".card-form input[name=time]")
            try alice.typeKeys("1000AM")
            try alice.press(.enter)
            let typed = try alice.execute("return [document.querySelector('.card-form input[name=day]')?.value, document.querySelector('.card-form input[name=time]')?.value].join(' ')")
            #expect(try alice.waitFor(".card .badge", containing: "Viewing booked"), "typed: \(typed ?? "")")
            #expect(try alice.waitFor(".card .card-fields", containing: "2026-12-05 10:00"))

            // A quick reply, the menu (Escape closes it), the voice recorder (Escape drops it).
            try reach(alice, "nav.quick-replies button[data-item='1']", backwards: true)
            try alice.press(.enter)
            #expect(try bob.waitFor(".message.received .bubble.text", containing: "Hello"))
            try reach(alice, "details.menu summary")
            try alice.press(.enter)
            #expect(try alice.waitUntil("document.querySelector('details.menu').open"))
            try reach(alice, "details.menu button[data-ask=clear]")
            try alice.press(.escape)
            #expect(try alice.waitUntil("!document.querySelector('details.menu').open && document.activeElement.matches('details.menu summary')"))
            try reach(alice, "button[data-voice]", backwards: true)
            try alice.press(.enter)
            #expect(try alice.waitUntil("document.querySelector('button[data-voice]').classList.contains('recording')"))
            try alice.press(.escape)
            #expect(try alice.waitUntil("!document.querySelector('button[data-voice]').classList.contains('recording')"))

            // On a phone the bar's items are behind Tools: Enter shows them, Escape hides them.
            try alice.view(width: 375, height: 812)
            #expect(try alice.execute("return getComputedStyle(document.querySelector('nav.bottom-bar')).display") as? String == "none")
            try reach(alice, "button.tools-toggle", backwards: true)
            try alice.press(.enter)
            #expect(try alice.waitUntil("getComputedStyle(document.querySelector('nav.bottom-bar')).display !== 'none'"))
            // A recording started there: Escape drops it (not sent) before it closes anything.
            try reach(alice, "button[data-voice]")
            try alice.press(.enter)
            #expect(try alice.waitUntil("document.querySelector('button[data-voice]').classList.contains('recording')"))
            try alice.press(.escape)
            #expect(try alice.waitUntil("!document.querySelector('button[data-voice]').classList.contains('recording') && document.querySelector('.tools').classList.contains('open')"))
            try reach(alice, "button[data-location]")
            try alice.press(.escape)
            #expect(try alice.waitUntil("getComputedStyle(document.querySelector('nav.bottom-bar')).display === 'none' && document.activeElement.matches('button.tools-toggle')"))

            #expect(try bob.find(".message.received .bubble.voice") == nil, "a recording dropped with Escape was sent")

            // Search, from the chats: the result opens its chat at the message.
            try reach(alice, "nav.back a", backwards: true)
            try alice.press(.enter)
            #expect(try alice.waitFor("form.search input") != nil)
            try reach(alice, "form.search input")
            try alice.typeKeys("keys")
            try alice.press(.enter)
            #expect(try alice.waitFor("ul.results li", containing: "hello by keys"))
            try reach(alice, "ul.results a")
            try alice.press(.enter)
            #expect(try alice.waitUntil("document.activeElement.id === 'm1'"), "the result did not open at its message: \(alice.focused())")
        }
    }
}

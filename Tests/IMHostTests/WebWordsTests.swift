import Foundation
import Testing

extension BrowserSuites {
    /// Issue 40, point 6: the page speaks to the person (names, times, states); what QA and line
    /// authors need is drawn with `imhost web --dev` only, behind a toggle; notices are brief and
    /// never pile up; a wrong address is a page with a way back.
    @Suite("A person's words, and a developer's view")
    struct WebWordsTests {
        /// What only a developer reads: message numbers, routes, line tags, verbs.
        static let developerWords = #"(#\d|rootCateID|routes\[|house page|legacy page|base page|why this page|/unblock|/retry|/tap|/why|/quick|/more|tap #)"#

        @Test("without --dev the page has no message numbers, routes, line tags or verbs; a card's answer is a notice in the line's words, role=status, three shown at most, every one in the list the Notices button opens; a notice focused stays while the others go")
        func personsPage() throws {
            let workspace = try Workspace.standard()
            try workspace.receive(listingArrival.key, listingArrival.payload)
            try workspace.receive("cars.offer", #"{"model":"Civic"}"#)
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor(".message.received .card .card-title", containing: "Sunny flat"))
            try browser.send("Is it still free?")
            #expect(try browser.waitFor(".message.sent .state", containing: "queued"))
            #expect(try browser.waitFor(".message.sent .meta", containing: "You"))
            #expect(try browser.find("[data-dev-toggle]") == nil && browser.findAll(".dev").isEmpty, "no developer's view without --dev")
            let shown = try #require(try browser.execute("return document.body.innerText") as? String)
            #expect(shown.firstMatch(of: try Regex(Self.developerWords)) == nil, "developer words on a person's page: \(shown)")
            #expect(try browser.textContent(".placeholder p") == "This app cannot show this kind of message yet.")

            // Five taps: five notices in the list, three on the page, each a status.
            for _ in 1...5 { try browser.click(".message.received .card .card-title") }
            let five = try browser.waitUntil("document.querySelectorAll('#notice-log li').length === 5")
            #expect(five, "\((try? browser.textContent("#notice-log")) ?? "")")
            #expect(try browser.execute("return document.querySelectorAll('#notices .notice').length") as? Int ?? 99 <= 3)
            #expect(try browser.execute("return Array.from(document.querySelectorAll('#notices .notice'), n => n.getAttribute('role'))") as? [String]
                    == ["status", "status", "status"])
            let log = try #require(try browser.textContent("#notice-log"))
            #expect(log.contains("opened listing L1001 detail") && !log.contains("tap #"), "\(log)")
            // The newest focused stays; the two others go by themselves.
            _ = try browser.execute("document.querySelector('#notices .notice:last-child').focus()")
            #expect(try browser.waitUntil("document.querySelectorAll('#notices .notice').length === 1", timeout: 30))
            #expect(try browser.execute("return document.activeElement === document.querySelector('#notices .notice')") as? Bool == true)
            try browser.click("button.notices-open")
            #expect(try browser.waitUntil("document.getElementById('notice-dialog').open"))
            let console = try browser.consoleLog()
            #expect(console.filter { $0.level == "SEVERE" }.isEmpty, "\(console)")
        }

        @Test("with --dev the page shows numbers, why this page and a line's tag, and the notices say what the terminal says; the toggle hides them, and the page speaks as to a person")
        func developersView() throws {
            let workspace = try Workspace.standard()
            try workspace.receive(listingArrival.key, listingArrival.payload)
            let web = try WebServing(workspace, arguments: ["--dev"])
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor("#page .tag.dev", containing: "house page"))
            #expect(try browser.textContent("#page .tag.dev.version") == "version 1.0.0", "the line's version, for QA")
            #expect(try browser.textContent(".message.received .meta .number") == "#1")
            try browser.click(".message.received .card .card-title")
            #expect(try browser.waitFor("#notice-log", containing: "tap #1: opened listing L1001 detail"))
            try browser.click("[data-dev-toggle]")
            #expect(try browser.execute("return getComputedStyle(document.querySelector('#page .tag')).display") as? String == "none")
            #expect(try browser.execute("return getComputedStyle(document.querySelector('.message .meta .number')).display") as? String == "none")
            // (The developer's view also lists notes a person is not shown, "no transport" here.)
            let before = try #require(try browser.execute("return document.querySelectorAll('#notice-log li').length") as? Int)
            try browser.click(".message.received .card .card-title")
            #expect(try browser.waitUntil("document.querySelectorAll('#notice-log li').length === \(before + 1)"))
            let last = try #require(try browser.execute("return document.querySelector('#notice-log li:last-child').textContent") as? String)
            #expect(last.contains("opened listing L1001 detail") && !last.contains("tap #"), "\(last)")
            // The choice is kept for the next page.
            try browser.navigate(web.origin + "/")
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor(".message.received .card") != nil)
            #expect(try browser.execute("return document.body.classList.contains('dev-on')") as? Bool == false)
        }

        @Test("a paste longer than the store takes is refused in one line and stays in the input, whole; nothing is sent")
        func longPaste() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor("form[data-send] input") != nil)
            _ = try browser.execute("document.querySelector('form[data-send] input').value = 'x'.repeat(70000)")
            try browser.click("form[data-send] button[type=submit]")
            #expect(try browser.waitFor("#notices .notice.alert[role=alert]", containing: "Not sent: the message is too long"))
            #expect(try browser.execute("return document.querySelector('form[data-send] input').value.length") as? Int == 70000)
            #expect(try browser.findAll(".message.sent").isEmpty)
        }

        @Test("a wrong address, typed or followed, is a page saying so with a way back to the chats, not a line of text; a program asking gets the line")
        func errorPages() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.navigate(web.url)
            #expect(try browser.waitFor("#conversations") != nil)
            for path in ["//chat", "/nowhere", "/chat"] {
                try browser.navigate(web.origin + path)
                #expect(try browser.waitFor("main.refusal h1") != nil, "\(path)")
                #expect(try browser.find("main.refusal a[href='/']") != nil, "\(path): no way back")
            }
            #expect(try browser.textContent("main.refusal h1") == "This address is not right")
            try browser.navigate(web.origin + "/nowhere")
            #expect(try browser.textContent("main.refusal h1") == "Page not found")
            try browser.click("main.refusal p a[href='/']")
            #expect(try browser.waitFor("#conversations") != nil)
            let cookie = try #require(try browser.cookies().first).name + "=" + (try browser.cookies().first?.value ?? "")
            let asProgram = try web.request("GET", "/nowhere", headers: [("Cookie", cookie)])
            #expect(asProgram.status == 404 && asProgram.header("Content-Type")?.hasPrefix("text/plain") == true)
        }
    }
}

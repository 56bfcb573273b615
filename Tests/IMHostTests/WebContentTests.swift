import Foundation
import Testing
@testable import IMHostWeb

extension BrowserSuites {
    /// Issue 40, point 1: the page value carries what a message is, and the browser draws it as a
    /// page would: text in the page's type, wrapped by the browser, its addresses links, a long
    /// one folded with "Show more"; voice and places as what they are.
    @Suite("Content as content: text, links, long messages, voice and places")
    struct WebContentTests {
        @Test("a text is drawn as it was written: proportional type, nothing inserted (an address pasted copies back whole), its http and https addresses links that tell the site nothing; a javascript: address is text")
        func textAsText() throws {
            let workspace = try Workspace.standard()
            let text = "See https://example.com/flats/a-very-long-path-that-a-terminal-would-have-broken?rooms=2&sort=price (the listing),\n"
                + "or javascript:alert(1) and http://example.org/x."
            try workspace.receive("text", Self.json(text))
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor(".message.received .bubble.text", containing: "the listing"))
            #expect(try browser.textContent(".message.received .bubble.text") == text)
            let font = try #require(try browser.execute("return getComputedStyle(document.querySelector('.bubble.text')).fontFamily") as? String)
            #expect(!font.contains("monospace"), "\(font)")
            let links = try #require(try browser.execute("""
                return Array.from(document.querySelectorAll('.bubble.text a'), a => [a.getAttribute('href'), a.textContent, a.rel, a.target])
                """) as? [[String]])
            #expect(links == [["https://example.com/flats/a-very-long-path-that-a-terminal-would-have-broken?rooms=2&sort=price",
                               "https://example.com/flats/a-very-long-path-that-a-terminal-would-have-broken?rooms=2&sort=price", "noopener noreferrer", "_blank"],
                              ["http://example.org/x", "http://example.org/x", "noopener noreferrer", "_blank"]], "\(links)")
            // On a phone the long address wraps inside its bubble: the page does not scroll sideways.
            try browser.resize(width: 375, height: 812)
            #expect(try browser.waitUntil("document.documentElement.scrollWidth <= window.innerWidth"))
            let bubble = try #require(try browser.execute("const r = document.querySelector('.bubble.text').getBoundingClientRect(); return r.right") as? Double)
            #expect(bubble <= 375, "\(bubble)")
        }

        @Test("a long message shows its beginning and Show more, which opens the rest where it stands; a message that arrives meanwhile keeps it open")
        func showMore() throws {
            let workspace = try Workspace.standard()
            let paragraphs = (1...30).map { "Paragraph \($0): the flat has a balcony, a new kitchen and a view of the park." }
            let long = paragraphs.joined(separator: "\n")
            try workspace.receive("text", Self.json(long))
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor(".message.received .bubble.text button.more", containing: "Show more"))
            let visible = try #require(try browser.execute("return document.querySelector('.bubble.text').innerText") as? String)
            #expect(visible.contains("Paragraph 1:") && !visible.contains("Paragraph 30:"), "\(visible)")
            try browser.click(".bubble.text button.more")
            #expect(try browser.waitUntil("document.querySelector('.bubble.text').innerText.includes('Paragraph 30:')"))
            #expect(try browser.execute("return document.querySelector('.bubble.text .rest').innerText.length > 0") as? Bool == true)
            #expect(try browser.execute("return getComputedStyle(document.querySelector('.bubble.text button.more')).display") as? String == "none")
            // Opened in place: the text reads on, whole, with nothing added but the hidden button.
            let whole = try #require(try browser.execute("""
                const b = document.querySelector('.bubble.text').cloneNode(true); b.querySelector('button.more').remove(); return b.textContent
                """) as? String)
            #expect(whole == long)
            try workspace.receive("text", Self.json("and one more thing"))
            #expect(try browser.waitFor(".message.received .bubble.text", containing: "and one more thing"))
            #expect(try browser.execute("return document.querySelector('.bubble.text').classList.contains('open')") as? Bool == true)
        }

        @Test("voice and a place are drawn as what they are; a place's position links to a map, one that is no position does not")
        func voiceAndPlace() throws {
            let workspace = try Workspace.standard()
            try workspace.receive("voice", #"{"url":"https://example.com/v.opus","seconds":72}"#)
            try workspace.receive("location", #"{"name":"Sunny flat","latitude":52.52,"longitude":13.405}"#)
            try workspace.receive("location", #"{"name":"Nowhere","latitude":123,"longitude":13.405}"#)
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor(".message.received .bubble.voice", containing: "Voice message · 1:12"))
            #expect(try browser.find(".bubble.voice a, audio") == nil, "the recording is not fetched")
            #expect(try browser.waitFor(".bubble.location strong", containing: "Sunny flat"))
            let map = try #require(try browser.execute("const a = document.querySelector('.bubble.location a'); return [a.href, a.rel]") as? [String])
            #expect(map == ["https://www.openstreetmap.org/?mlat=52.52&mlon=13.405#map=16/52.52/13.405", "noopener noreferrer"])
            #expect(try browser.execute("return document.querySelectorAll('.bubble.location a').length") as? Int == 1)
        }

        static func json(_ text: String) -> String {
            String(decoding: try! JSONSerialization.data(withJSONObject: ["text": text]), as: UTF8.self)
        }
    }
}

/// The addresses a text's links are made of (``TextHTML``), beside the browser tests above.
@Suite("Links in text")
struct TextLinkTests {
    func links(_ text: String) -> [String] { TextHTML.pieces(text).filter(\.isLink).map { String($0.text) } }

    @Test("an address ends where the sentence's punctuation starts; parentheses it opened are its own")
    func ends() {
        #expect(links("see https://example.com/a.") == ["https://example.com/a"])
        #expect(links("(https://example.com/a)") == ["https://example.com/a"])
        #expect(links("https://en.wikipedia.org/wiki/Flat_(housing), ok") == ["https://en.wikipedia.org/wiki/Flat_(housing)"])
        #expect(links("HTTPS://EXAMPLE.COM/x?y=1&z=2!") == ["HTTPS://EXAMPLE.COM/x?y=1&z=2"])
        #expect(links("a\"https://example.com/b\"c<d>") == ["https://example.com/b"])
    }

    @Test("a peer's flood of brackets after an address costs one pass: 100,000 of them end the address at once")
    func flood() {
        let text = "https://example.com/a(b)" + String(repeating: ")", count: 100_000)
        #expect(links(text) == ["https://example.com/a(b)"])
    }

    @Test("what is no web address is text: another scheme, a scheme alone, one inside a word")
    func notAddresses() {
        #expect(links("javascript:alert(1) data:text/html,x ftp://example.com") == [])
        #expect(links("https:// and http://.") == [])
        #expect(links("xhttps://example.com") == [])
    }

    @Test("the HTML escapes the address in both places, and a fold never cuts one")
    func html() {
        let html = TextHTML.html("go to https://example.com/?a=1&b=<2>")
        #expect(html == #"go to <a href="https://example.com/?a=1&amp;b=" rel="noopener noreferrer" target="_blank">https://example.com/?a=1&amp;b=</a>&lt;2&gt;"#)
        let long = String(repeating: "word ", count: 139) + "https://example.com/" + String(repeating: "x", count: 200) + " tail " + String(repeating: "more ", count: 20)
        let folded = TextHTML.html(long)
        #expect(folded.contains(#"<span class="rest"> <a href="https://example.com/"#), "\(folded)")
        #expect(TextHTML.html("short") == "short")
    }
}

extension BrowserSuites {
    /// Issue 40, point 5: every control on the page does something, or is not shown.
    @Suite("Controls that do something")
    struct WebControlsTests {
        @Test("Block blocks the peer and becomes Unblock (the terminal's page says so too), which unblocks")
        func blockToggles() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            let platform = "return Array.from(document.querySelectorAll('#page .menu button.platform'), b => b.textContent)"
            #expect(try browser.execute(platform) as? [String] == ["Report", "Block", "Clear"])
            try browser.click("#page .menu summary")
            try browser.click("#page .menu button.platform[data-do]")
            #expect(try browser.waitUntil("Array.from(document.querySelectorAll('#page .menu button.platform'), b => b.textContent).join() === 'Report,Unblock,Clear'"))
            // Blocked in the store, as the terminal's /block would have: the page opened there says so.
            let opened = try imhost(["open", houseChatURL], in: workspace)
            #expect(opened.stdout.contains("Unblock"), "\(opened.stdout)\(opened.stderr)")
            try browser.click("#page .menu button.platform[data-do]")
            #expect(try browser.waitUntil("Array.from(document.querySelectorAll('#page .menu button.platform'), b => b.textContent).join() === 'Report,Block,Clear'"))
        }

        @Test("a line's item is drawn where its page acts on it (IMKit 1.4): the house page's Report a fake listing only on a chat about a listing; an item that answered ignored is drawn disabled, saying so")
        func handledItems() throws {
            let workspace = try Workspace.standard()
            try workspace.install("Cars", as: "cars.so")
            try workspace.writeConfig(Workspace.standardConfig
                .replacingOccurrences(of: #""jobs": { "enabled": true } }"#, with: #""jobs": { "enabled": true }, "cars": { "enabled": true } }"#)
                .replacingOccurrences(of: #"{ "rootCateID": 1, "cateID": "*", "line": "house" },"#,
                                      with: #"{ "rootCateID": 1, "cateID": "*", "line": "house" }, { "rootCateID": 4, "cateID": "*", "line": "cars" },"#))
            let web = try WebServing(workspace)
            let browser = try Browser()
            let lineItems = "return Array.from(document.querySelectorAll('#page .menu button.line'), b => b.textContent)"
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.execute(lineItems) as? [String] == ["Report a fake listing"])
            try browser.open(chat: "im://chat?rootCateID=1&cateID=12&peer=u43", on: web)
            #expect(try browser.waitFor("#page .title h1", containing: "u43"))
            #expect(try browser.execute(lineItems) as? [String] == [], "a chat about no listing has nothing to report")

            // The cars line's Test drive answers ignored: from then on it is disabled, and says why.
            try browser.open(chat: carsChat + "u7", on: web)
            try browser.click("#page .bottom-bar button.line")
            #expect(try browser.waitFor("#page .bottom-bar button.line.ignored", containing: "does nothing in this chat"))
            #expect(try browser.execute("return document.querySelector('#page .bottom-bar button.line').disabled") as? Bool == true)
        }

        @Test("Location sends where the browser says the person is, as a place; refused, it says so and sends nothing")
        func location() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            try browser.command("POST", "/goog/cdp/execute", ["cmd": "Browser.grantPermissions", "params": ["origin": web.origin, "permissions": ["geolocation"]]])
            try browser.command("POST", "/goog/cdp/execute", ["cmd": "Emulation.setGeolocationOverride",
                                                               "params": ["latitude": 31.2304, "longitude": 121.4737, "accuracy": 10]])
            try browser.click("#page .bottom-bar button[data-location]")
            #expect(try browser.waitFor(".message.sent .bubble.location .coordinates", containing: "31.2304, 121.4737"))
            #expect(try browser.findAll(".message.sent").count == 1)
            try browser.command("POST", "/goog/cdp/execute", ["cmd": "Browser.resetPermissions", "params": [:]])
            try browser.command("POST", "/goog/cdp/execute", ["cmd": "Browser.setPermission",
                                                               "params": ["origin": web.origin, "permission": ["name": "geolocation"], "setting": "denied"]])
            try browser.click("#page .bottom-bar button[data-location]")
            #expect(try browser.waitFor("#notice-log", containing: "this page may not know your location"))
            #expect(try browser.findAll(".message.sent").count == 1, "nothing more was sent")
        }
    }
}

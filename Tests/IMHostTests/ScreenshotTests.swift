import Foundation
import Testing
@testable import IMHost

extension BrowserSuites {
    /// The pictures in the README and the guides, taken as a person would see the pages:
    /// `make screenshots` writes them into docs/images/ (IMHOST_SCREENSHOTS names the folder);
    /// under `make test` they go to a temporary folder, and the test checks each is a picture of
    /// the page it names.
    @Suite("Screenshots")
    struct Screenshots {
        let folder: String
        /// Holds the temporary folder when IMHOST_SCREENSHOTS is unset.
        let scratch: Workspace?

        init() throws {
            if let named = ProcessInfo.processInfo.environment["IMHOST_SCREENSHOTS"], !named.isEmpty {
                try FileManager.default.createDirectory(atPath: named, withIntermediateDirectories: true)
                folder = named
                scratch = nil
            } else {
                let workspace = try Workspace()
                folder = workspace.root
                scratch = workspace
            }
        }

        /// Takes the window's picture as `name`, and checks it is a PNG of `width` pixels.
        func take(_ browser: Browser, _ name: String, width: Int) throws {
            let path = folder + "/" + name
            try browser.screenshot(to: path)
            let size = try #require(pngSize(try Data(contentsOf: URL(fileURLWithPath: path))), "\(name) is not a PNG")
            #expect(size.width == width, "\(name): \(size)")
        }

        @Test("two-people.png: alice's and bob's pages in the two-people demo, side by side")
        func twoPeople() throws {
            let demo = try TwoPeopleDemo()
            let address = demo.address
            let alice = try Browser()
            let bob = try alice.secondSession()
            let site = try StaticSite(["side-by-side.html": """
                <!doctype html><html><head><meta charset="utf-8"><style>
                body { margin: 0; display: flex; gap: 2px; overflow: hidden; background: #d0d4da; } img { width: 599px; }
                </style></head><body><img src="alice.png"><img src="bob.png"></body></html>
                """])
            for (browser, person) in [(alice, "alice"), (bob, "bob")] {
                try browser.resize(width: 600, height: 1150)
                try browser.navigate(try #require(address(person), "no address for \(person): \(demo.process.stdout)"))
                try browser.click("#conversations li a")
                #expect(try browser.waitFor(".message .card .card-title", containing: "阳光两居室"), "\(person)'s page shows no card")
                #expect(try browser.waitUntil("(i => i !== null && i.complete && i.naturalWidth === 640)(document.querySelector('.card img.card-image'))"),
                        "\(person)'s card shows no photo")
            }
            // Bob's open page reads what alice sent while he was away.
            #expect(try alice.waitUntil("Array.from(document.querySelectorAll('.message.sent .state')).every(state => state.textContent.startsWith('read'))"))
            for (browser, person) in [(alice, "alice"), (bob, "bob")] {
                try take(browser, person + ".png", width: 600)
                try FileManager.default.copyItem(atPath: folder + "/" + person + ".png", toPath: site.workspace.root + "/" + person + ".png")
            }
            try alice.resize(width: 1200, height: 1150)
            try alice.navigate(site.url + "side-by-side.html")
            #expect(try alice.waitUntil("Array.from(document.images).every(image => image.complete && image.naturalWidth === 600)"))
            try take(alice, "two-people.png", width: 1200)
            for person in ["alice", "bob"] { try FileManager.default.removeItem(atPath: folder + "/" + person + ".png") }
        }

        @Test("cards.png: the house card with the photo sent with it and the jobs card with its line's picture, as the browser draws them, the listing's inputs with one left out said beside it")
        func cards() throws {
            let workspace = try Workspace.standard()
            try workspace.receiveListingWithPhoto(title: "阳光两居室 Sunny 2-room flat")
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.resize(width: 700, height: 1500)
            try browser.open(chat: houseChatURL, on: web)
            try workspace.receive("jobs.interview", #"{"company":"58 Tech","position":"iOS engineer","time":"2026-01-08 10:00","place":"Building A, 3F"}"#)
            #expect(try browser.waitFor(".message.received .card .badge", containing: "Invitation"))
            // The listing asks a day and a time; one left out is said beside it.
            _ = try browser.execute("document.getElementById('in-1-day').value = '2026-12-05'")
            try browser.click(".card-buttons button[data-button='viewing']")
            #expect(try browser.waitFor("#in-1-time-error", containing: "Fill this in."))
            #expect(try browser.waitUntil("Array.from(document.querySelectorAll('img.card-image')).every(i => i.complete && i.naturalWidth > 0) && document.querySelectorAll('img.card-image').length === 2"))
            _ = try browser.execute("document.querySelector('.messages').scrollTop = 0")
            try take(browser, "cards.png", width: 700)
        }

        @Test("chat-features.png: a reply with its quote, a reaction, a recalled message, a voice message, a file and the peer typing, on alice's page")
        func chatFeatures() throws {
            let people = try TwoPeopleInABrowser(dev: false)
            let (alice, bob) = (people.alice, people.bob)
            try alice.resize(width: 600, height: 1000)
            try alice.send("Is the flat on Main Street still free?")
            #expect(try bob.waitFor("#m1 .bubble.text", containing: "Main Street"))
            try bob.click("#m1 button.reply")
            try bob.send("Yes! Viewings on Saturday, 10:00 to 12:00.")
            #expect(try alice.waitFor("#m2 a.quote", containing: "Main Street"))
            try alice.click("#m2 button.react")
            try alice.click("#m2 .react-choices button[aria-pressed=false]")
            #expect(try bob.waitFor("#m2 .reactions", containing: "👍"))
            try alice.send("My number is 0176 5555 1234")
            #expect(try bob.waitFor("#m3 .bubble.text", containing: "0176"))
            try alice.click("#m3 button.recall")
            #expect(try bob.waitFor("#m3 .bubble.recalled", containing: "alice recalled a message"))
            try #require(try bob.waitFor("button[data-voice]")).click()
            #expect(try bob.waitUntil("document.querySelector('button[data-voice]').textContent.endsWith('0:03')", timeout: 20))
            try #require(try bob.find("button[data-voice]")).click()
            #expect(try alice.waitFor(".message.received .bubble.voice audio", timeout: 60) != nil)
            let contract = people.root.root + "/Tenancy agreement.pdf"
            try FileTests.pdf(182_000).write(to: URL(fileURLWithPath: contract))
            try #require(try bob.waitFor("input.file-pick")).type(contract)
            #expect(try alice.waitFor(".message.received .bubble.file a.download", containing: "Tenancy agreement.pdf"))
            _ = try alice.execute("document.querySelector('form[data-send] input').value = ''")
            try #require(try bob.waitFor("form[data-send] input")).type("See you there")
            #expect(try alice.waitFor("header.title .peer-status", containing: "typing", timeout: 30))
            try take(alice, "chat-features.png", width: 600)
            // What this page shows passes axe-core too, light and dark.
            for scheme in ["dark", "light"] {
                try alice.emulate(scheme: scheme)
                try alice.checkAccessibility("a reply, a reaction, a recall, a voice message and a file, \(scheme)")
            }
        }

        @Test("placeholder.png: a card whose line is not installed, its placeholder open on why")
        func placeholder() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.resize(width: 700, height: 1050)
            try browser.open(chat: houseChatURL, on: web)
            try workspace.receive(listingArrival.key, listingArrival.payload)
            try browser.send("Is the flat still free?")
            try workspace.receive("cars.offer", #"{"model":"Civic","price":52000}"#)
            #expect(try browser.waitFor(".message.received .placeholder summary", containing: "Unsupported message type"))
            try browser.click(".message.received .placeholder summary")
            #expect(try browser.waitUntil("document.querySelector('.placeholder').open"))
            try take(browser, "placeholder.png", width: 700)
        }

        @Test("legacy.png: a jump URL no route claims, on the legacy page, in the developer's view (imhost web --dev), which says why")
        func legacy() throws {
            let workspace = try Workspace.standard()
            let web = try WebServing(workspace, arguments: ["--dev"])
            let browser = try Browser()
            try browser.resize(width: 700, height: 700)
            try browser.open(chat: "im://chat?rootCateID=5&cateID=2&peer=u77", on: web)
            #expect(try browser.waitFor("#page .tag", containing: "legacy page"))
            try browser.send("Hello, is this still on sale?")
            try workspace.receive("text", #"{"text":"Yes, come by on Saturday."}"#, in: "im://chat?rootCateID=5&cateID=2&peer=u77")
            #expect(try browser.waitFor(".message.received .bubble.text", containing: "Saturday"))
            try browser.click("#page .route summary")
            try take(browser, "legacy.png", width: 700)
        }

        @Test("phone-light.png, phone-dark.png (375×812) and desktop-light.png, desktop-dark.png (1280×800): bob's page at the end of the two-people demo, light and dark")
        func phoneAndDesktop() throws {
            let demo = try TwoPeopleDemo()
            let browser = try Browser()
            try browser.navigate(try #require(demo.address("bob"), "no address for bob: \(demo.process.stdout)"))
            try browser.click("#conversations li a")
            #expect(try browser.waitFor(".message .bubble.voice audio") != nil, "bob's page shows no voice message")
            #expect(try browser.waitUntil("(i => i !== null && i.complete && i.naturalWidth === 640)(document.querySelector('.card img.card-image'))"))
            for (name, width, height) in [("phone", 375, 812), ("desktop", 1280, 800)] {
                for scheme in ["light", "dark"] {
                    try browser.view(width: width, height: height)
                    try browser.emulate(scheme: scheme)
                    _ = try browser.execute("const list = document.querySelector('.messages'); list.scrollTop = list.scrollHeight; document.activeElement.blur()")
                    try take(browser, "\(name)-\(scheme).png", width: width)
                }
            }
        }

        @Test("crash-reopened.png: a line that crashed on a click, the page reopened on the legacy page and saying so")
        func crashReopened() throws {
            let workspace = try crashyWorkspace()
            let web = try WebServing(workspace, environment: ["IMHOST_CRASHY": "menu:abort"])
            let browser = try Browser()
            try browser.resize(width: 700, height: 800)
            try browser.open(chat: crashyURL, on: web)
            try browser.send("Menu → Misbehave makes this line crash")
            // The page is drawn again with the message: the menu is opened on that drawing.
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "Misbehave"))
            try browser.click("#page .menu summary")
            try browser.click("#page .menu button.line")
            #expect(try browser.waitFor("#notices .notice.alert[role=alert]", containing: "stopped working"))
            #expect(try browser.waitFor("#page header.title.legacy") != nil)
            try take(browser, "crash-reopened.png", width: 700)
        }

        @Test("workbench.png: the house line's samples in imhost preview, each at a phone's and a desktop's width, light and dark, with the terminal's drawing and what the checks found")
        func workbench() throws {
            let workspace = try Workspace()
            let library = workspace.root + "/libHouse.so"
            try FileManager.default.copyItem(atPath: BuildProducts.library("House"), toPath: library)
            let preview = try Previewing(["--library", library], in: workspace.root)
            let browser = try Browser()
            try browser.view(width: 1600, height: 1300)
            try browser.navigate(preview.url)
            // Every frame drawn, and axe done with each sample, light and dark.
            #expect(try browser.waitUntil("document.querySelectorAll('.findings.axe li').length === 6", timeout: 60))
            #expect(try browser.waitUntil("Array.from(document.querySelectorAll('section.sample:not(.chat) iframe')).every(f => f.contentDocument && f.contentDocument.querySelector('.message:not([hidden]) .card'))"))
            try take(browser, "workbench.png", width: 1600)
        }
    }
}

/// `imhost demo two-people --web` running in a standard workspace until released (Ctrl-C), both
/// people connected: each person's chats are at the address it printed.
final class TwoPeopleDemo {
    let workspace: Workspace
    let process: RunningProcess

    init() throws {
        workspace = try Workspace.standard()
        process = try RunningProcess(BuildProducts.imhost, ["demo", "two-people", "--web"], in: workspace.root)
        try #require(process.waitFor("bob's chats: http://"), "\(process.stdout)\(process.stderr)")
        try #require(process.waitFor("connected to", occurrences: 2))
    }

    deinit {
        process.signal(SIGINT)
        _ = process.finish()
    }

    /// The address of `person`'s chats, as the demo printed it.
    func address(_ person: String) -> String? {
        process.stdout.firstMatch(of: try! Regex("\(person)'s chats: (http://127\\.0\\.0\\.1:\\d+/\\?token=[0-9a-f]+)"))
            .flatMap { $0.output[1].substring.map(String.init) }
    }
}

import Foundation
import Testing
@testable import IMHost

extension BrowserSuites {
    /// Issue 41, point 5: a message arriving in a chat not in view.
    @Suite("Notifications in a browser")
    struct WebNotificationTests {
        @Test("nothing is asked on load; once notifications are granted, a message arriving while alice's chat is not in view is notified with bob's name (his words only when she chose that) and counted in the tab's title, which looking at it clears")
        func notified() throws {
            let people = try TwoPeopleInABrowser(dev: false)
            let (alice, bob) = (people.alice, people.bob)
            // The browser has not been asked: the page offers to ask, and asks nothing by itself.
            #expect(try alice.waitUntil("!document.querySelector('button.notify-ask').hidden && Notification.permission === 'default'"))
            try alice.command("POST", "/permissions", ["descriptor": ["name": "notifications"], "state": "granted"])
            // What the page hands the browser's notifications is kept to read back (they still show).
            _ = try alice.execute("""
                window.shown = [];
                const Real = window.Notification;
                window.Notification = class extends Real { constructor(title, options) { super(title, options); window.shown.push(title + '|' + ((options && options.body) || '')); } };
                """)
            // Alice puts her chat's window away: it is not in view.
            try alice.minimize()
            try bob.send("the flat is still free")
            #expect(try bob.waitFor(".message.sent .state", containing: "delivered") || bob.waitFor(".message.sent .state", containing: "read"))
            #expect(try alice.waitUntil("window.shown.length === 1"))
            #expect(try alice.execute("return window.shown") as? [String] == ["New message from bob|"], "his name, not his words")
            #expect(try alice.waitUntil("document.title === '(1) imhost · chat'"), "counted while not in view")
            try alice.restore()
            #expect(try alice.waitUntil("document.title === 'imhost · chat'"), "cleared once looked at")

            // She chooses to see the words.
            _ = try alice.execute("localStorage.setItem('imhost-notify-text', 'on')")
            try alice.minimize()
            try bob.send("viewing Saturday?")
            #expect(try bob.waitFor(".message.sent .bubble.text", containing: "viewing Saturday?"))
            #expect(try alice.waitUntil("window.shown.length === 2"))
            #expect((try alice.execute("return window.shown") as? [String])?.last == "New message from bob|viewing Saturday?")
        }
    }
}

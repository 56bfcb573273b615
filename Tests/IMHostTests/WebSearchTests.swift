import Foundation
import Testing
@testable import IMHost

extension BrowserSuites {
    /// Issue 41, point 8: a search box over the store's index, in the page.
    @Suite("Search in the page")
    struct WebSearchTests {
        @Test("the start page searches every chat (Chinese words too): each result with its chat, who wrote it, and the words marked; a click opens the chat at that message, loading it when it is older than the page shows; nothing found says so")
        func search() throws {
            let workspace = try Workspace.standard()
            // 25 messages: the one searched for is the second, older than the 20 a chat shows.
            var steps = [#"{ "open": "\#(houseChatURL)" }"#]
            for number in 1...25 {
                let text = number == 2 ? "朝南的阳台, balcony facing south" : "message \(number)"
                steps.append(#"{ "receive": "text", "payload": { "text": "\#(text)" } }"#)
            }
            let scenario = workspace.root + "/many.json"
            try ("[" + steps.joined(separator: ",\n") + "]").write(toFile: scenario, atomically: true, encoding: .utf8)
            #expect(try imhost(["play", scenario, "--data", workspace.data], in: workspace).status == 0)
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.navigate(web.url)
            try #require(try browser.waitFor("form.search input")).type("阳台")
            try browser.click("form.search button")
            let found = try browser.waitFor("#results .count", containing: "1 message")
            let shown = try browser.execute("return document.body.innerText") as? String ?? ""
            #expect(found, "\(shown)")
            #expect(try browser.textContent("#results mark") == "阳台")
            #expect(try browser.waitFor("#results li", containing: "u42"))
            try browser.click("#results li a")
            #expect(try browser.waitUntil("document.activeElement !== null && document.activeElement.id === 'm2'"), "the chat opens at the message")
            #expect(try browser.textContent("#m2 .bubble.text")?.contains("balcony facing south") == true)

            try browser.navigate(web.origin + "/search?q=" + "no%20such%20words")
            #expect(try browser.waitFor("#results p.empty", containing: "No message holds “no” and “such” and “words”"))
            let console = try browser.consoleLog()
            #expect(console.filter { $0.level == "SEVERE" }.isEmpty, "\(console)")
        }
    }
}

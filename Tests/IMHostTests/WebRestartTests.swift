import Foundation
import Testing

extension BrowserSuites {
    /// Issue 40, point 7: `imhost web` keeps its port, token and sessions in the user's data
    /// folder, so a restarted server takes up an open tab, which said "Reconnecting…" meanwhile.
    @Suite("A restart loses no tab")
    struct WebRestartTests {
        @Test("while imhost web is stopped the open tab says Reconnecting… and sends nothing; started again it serves on the same port, takes the tab's cookie, and the tab shows what came meanwhile, what was typed kept")
        func restartKeepsTab() throws {
            let workspace = try Workspace.standard()
            let browser = try Browser()
            var first: WebServing? = try WebServing(workspace)
            let port = try #require(first?.port)
            try browser.open(chat: houseChatURL, on: try #require(first))
            try browser.send("before the restart")
            #expect(try browser.waitFor(".message.sent .bubble.text", containing: "before the restart"))
            let keptFiles = try FileManager.default.contentsOfDirectory(atPath: workspace.data + "/web")
            try #require(keptFiles.count == 1, "\(keptFiles)")
            let kept = workspace.data + "/web/" + keptFiles[0]
            let mode = try FileManager.default.attributesOfItem(atPath: kept)[.posixPermissions] as? Int
            #expect(mode == 0o600, "the session file is the user's alone: \(String(describing: mode))")

            first = nil  // Ctrl-C, and waits for it to end
            #expect(try browser.waitUntil("!document.querySelector('p.reconnecting').hidden", timeout: 30))
            #expect(try browser.execute("return document.querySelector('form[data-send] button').disabled") as? Bool == true)
            _ = try browser.execute("document.querySelector('form[data-send] input').value = 'typed while away'")
            try workspace.receive("text", #"{"text":"sent while the server was away"}"#)

            let second = try WebServing(workspace)
            #expect(second.port == port, "a restarted server serves on the port it served on")
            #expect(try browser.waitFor(".message.received .bubble.text", containing: "sent while the server was away", timeout: 60))
            #expect(try browser.waitUntil("document.querySelector('p.reconnecting') === null || document.querySelector('p.reconnecting').hidden"))
            #expect(try browser.execute("return document.querySelector('form[data-send] input').value") as? String == "typed while away")
            #expect(try browser.execute("return document.querySelector('form[data-send] button').disabled") as? Bool == false)
            #expect(try browser.currentURL().hasPrefix(second.origin + "/chat"), "the tab stayed on its chat, signed in")
        }

        @Test("when the port it served on is taken, a restarted imhost web says so in one line and serves on another")
        func portTaken() throws {
            let workspace = try Workspace.standard()
            var first: WebServing? = try WebServing(workspace)
            let port = try #require(first?.port)
            first = nil
            // Another program takes the port meanwhile.
            let taker = try WebServing(try Workspace.standard(), arguments: ["--port", "\(port)"])
            #expect(taker.port == port)
            let second = try WebServing(workspace)
            #expect(second.port != port)
            // Said before the address, on standard error (read apart from standard output).
            #expect(second.process.waitFor("where the last one served, is taken"))
            let said = second.process.stderr.split(separator: "\n").filter { $0.contains("port \(port), where the last one served, is taken") }
            #expect(said.count == 1, "\(second.process.stderr)")
        }
    }
}

import Foundation
import Testing
@testable import IMHostWeb

/// Issue 42, point 6: the platform speaks the person's language, English or Chinese; a line's
/// words stay the line's.
@Suite("The page's language")
struct WebLanguageTests {
    @Test("Accept-Language picks the first language the page speaks, by weight; anything else is English", arguments: [
        ("zh-CN,zh;q=0.9,en;q=0.8", WebLanguage.chinese), ("en-US,en;q=0.9,zh;q=0.8", .english), ("fr-FR, zh;q=0.5, en;q=0.4", .chinese),
        ("fr", .english), ("", .english), ("zh;q=0, en;q=0.1", .english), ("*", .english), ("ZH-hans", .chinese), ("en;q=0.5, zh;q=0.9", .chinese),
        ("zh;q=abc", .english),
    ])
    func acceptLanguage(header: String, language: WebLanguage) {
        #expect(WebLanguage.preferred(by: header) == language, "\(header)")
        #expect(WebLanguage.preferred(by: nil) == .english)
    }

    @Test("a length of time in the unit a person counts it in, in each language", arguments: [
        (45, "45 seconds", "45 秒"), (120, "2 minutes", "2 分钟"), (7_200, "2 hours", "2 小时"), (172_800, "2 days", "2 天"), (60, "1 minute", "1 分钟"),
    ])
    func duration(seconds: Int, english: String, chinese: String) {
        #expect(WebLanguage.english.duration(seconds: seconds) == english)
        #expect(WebLanguage.chinese.duration(seconds: seconds) == chinese)
    }

    /// The string literals `say(…)` and `t(…)` are given in `source`: each sentence, and both
    /// branches of a `say(a ? "…" : "…")`.
    static func sentences(in source: String, call: String) -> Set<String> {
        let literal = #""((?:[^"\\]|\\.)*)""#
        let pattern = try! Regex(call + #"\(\s*(?:[^()"]*\?\s*)?"# + literal + #"(?:\s*:\s*"# + literal + ")?")
        var found = Set<String>()
        for match in source.matches(of: pattern) {
            for index in 1..<match.output.count {
                if let text = match.output[index].substring { found.insert(String(text).replacingOccurrences(of: #"\""#, with: "\"")) }
            }
        }
        return found
    }

    @Test("every sentence the page and its script say has its Chinese, the platform's item names and states too")
    func everySentenceTranslated() throws {
        let folder = BuildProducts.repository + "/Sources/IMHostWeb"
        var said = Set<String>()
        for file in try FileManager.default.contentsOfDirectory(atPath: folder) where file.hasSuffix(".swift") && file != "WebLanguage.swift" {
            said.formUnion(Self.sentences(in: try String(contentsOfFile: folder + "/" + file, encoding: .utf8), call: "say"))
        }
        #expect(said.count > 100, "the scan found \(said.count) sentences: it no longer reads the sources")
        // Said through a variable: the platform's items, states, file kinds, the placeholder.
        said.formUnion(["Photo", "Voice", "Location", "Video", "Report", "Block", "Unblock", "Clear", "queued", "sent", "delivered", "read",
                        "not sent", "not known yet", "received", "Document", "Spreadsheet", "Slides", "ZIP archive", "Text", "Picture", "File", "PDF",
                        "Unsupported message type", "Page not found", "There is no page at this address."])
        let missing = said.filter { WebLanguage.chineseWords[$0] == nil }.sorted()
        #expect(missing.isEmpty, "no Chinese for: \(missing)")

        let script = try String(contentsOfFile: folder + "/Assets/app.js", encoding: .utf8)
        let table = try #require(script.firstMatch(of: /const chinese = \{([\s\S]*?)\n\};/)).output.1
        let keys = Set(String(table).matches(of: /"((?:[^"\\]|\\.)*)": "/).map { String($0.output.1) })
        let scriptSays = Self.sentences(in: script, call: #"\bt"#)
        #expect(scriptSays.count > 15, "the scan found \(scriptSays.count) sentences in app.js")
        for question in ["Clear this chat?", "Clear chat", "Report this person?", "Report"] { #expect(keys.contains(question)) }
        #expect(scriptSays.subtracting(keys).isEmpty, "no Chinese in app.js for: \(scriptSays.subtracting(keys).sorted())")
    }
}

extension BrowserSuites {
    @Suite("The page in Chinese")
    struct ChinesePageTests {
        @Test("a browser that prefers Chinese gets the platform's words in Chinese (the start page, the chat, states, a placeholder, a refusal, the script's words), the line's own words as the line wrote them; --lang en overrides it; the page passes axe-core in Chinese")
        func chinese() throws {
            let workspace = try Workspace.standard()
            try workspace.sendAndFail("Is the flat still free?", reason: #"{"code":"refused-by-peer","peer":"u42","refusal":"blocked"}"#)
            try workspace.receive("cars.offer", #"{"model":"Civic"}"#)
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.prefer(languages: "zh-CN,zh;q=0.9,en;q=0.8")
            try browser.navigate(web.url)
            #expect(try browser.waitFor("form.open label", containing: "打开跳转链接"))
            #expect(try browser.execute("return document.documentElement.lang") as? String == "zh-CN")
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor("form[data-send] button[type=submit]", containing: "发送"))
            #expect(try browser.find("form[data-send] input")?.attribute("placeholder") == "消息")
            #expect(try browser.waitFor(".message.sent .state.failed", containing: "未发送：u42 屏蔽了你"))
            #expect(try browser.waitFor(".message.sent .state button", containing: "重试"))
            #expect(try browser.waitFor(".message.received .placeholder summary", containing: "暂不支持的消息类型"))
            #expect(try browser.execute("return Array.from(document.querySelectorAll('#page .menu button.platform'), b => b.textContent)") as? [String] == ["举报", "屏蔽", "清空"])
            // The line's words are the line's.
            #expect(try browser.textContent("#page .menu button.line") == "Report a fake listing")
            #expect(try browser.waitFor("#page .quick-replies button", containing: "Is it still available?"))
            // The script speaks it too: the reply bar, the question Clear asks.
            try browser.click(".message.received button.reply")
            #expect(try browser.waitFor("form[data-send] .replying", containing: "回复 u42："))
            try browser.click("#page .menu summary")
            try browser.click("#page .menu button[data-ask=clear]")
            #expect(try browser.waitFor("#clear-dialog h2", containing: "清空这个聊天？"))
            try browser.click("#clear-dialog button[value=cancel]")
            // A refusal the chat answers, in a notice.
            try browser.execute("document.querySelector('form[data-send] input').value = '长'.repeat(30000)")
            try browser.click("form[data-send] button[type=submit]")
            #expect(try browser.waitFor("#notices .notice.alert", containing: "未发送：消息太长"))
            try browser.checkAccessibility("the chat in Chinese")

            // --lang en: English, whatever the browser prefers.
            let english = try WebServing(workspace, arguments: ["--lang", "en"])
            try browser.open(chat: houseChatURL, on: english)
            #expect(try browser.waitFor("form[data-send] button[type=submit]", containing: "Send"))
            #expect(try browser.execute("return document.documentElement.lang") as? String == "en")
        }
    }
}

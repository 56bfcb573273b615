import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// `imhost reports --json` as the operator: each report's maker, id and document.
func filedReports(_ op: Workspace) throws -> [[String: Any]] {
    let result = try imhost(["reports", "--json"], in: op)
    try #require(result.status == 0, "\(result.stderr)")
    return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
}

/// Waits until the operator lists `count` reports; returns them.
func awaitReports(_ op: Workspace, count: Int) throws -> [[String: Any]] {
    var filed: [[String: Any]] = []
    try #require(waitUntil {
        filed = (try? filedReports(op)) ?? []
        return filed.count == count
    }, "\(filed)")
    return filed
}

/// Issue 40, point 5: the menu's Report sends a report (what, whom, when, which line) on a topic
/// the user may write and only the operator reads, which `imhost reports` lists.
@Suite("Reporting a person to the operator", .heavy(.broker))
struct ReportTests {
    @Test("a report made offline goes at the next connect; the operator lists it (whom, when, the chat, the line, the person's last messages) and closes it; nobody else reads reports or writes another's", arguments: BrokerKind.allCases)
    func report(_ kind: BrokerKind) throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"], kind: kind)
        let op = try operatorWorkspace(broker, lines: false)
        let alice = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob")
        // Bob's session exists before alice writes: the broker keeps her messages for him.
        #expect(try broker.sync(bob).status == 0)
        #expect(try transcript(alice, with: "bob", ["Deposit first, by wire", "then you get the keys"]).status == 0)
        #expect(try broker.sync(alice).status == 0)
        #expect(try broker.sync(bob).status == 0)

        // Bob reports alice with his host offline: it is kept, and nothing reaches the broker.
        let offline = try transcript(bob, with: "alice", ["/offline", "/menu 1", "/report"])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stdout.contains("type /report to do it"), "the terminal's menu says what reports: \(offline.stdout)")
        #expect(offline.stdout.contains("reported alice to the app's operator"), "\(offline.stdout)")
        #expect(try filedReports(op).isEmpty)

        // Bob's next connect sends it.
        #expect(try broker.sync(bob).status == 0)
        var filed = try awaitReports(op, count: 1)
        let entry = filed[0]
        #expect(entry["by"] as? String == "bob" && entry["readable"] as? Bool == true)
        let report = try #require(entry["report"] as? [String: Any])
        #expect(report["peer"] as? String == "alice")
        #expect(report["line"] as? String == "house")
        #expect((report["url"] as? String)?.contains("peer=alice") == true)
        let texts = (report["messages"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
        #expect(texts == ["Deposit first, by wire", "then you get the keys"], "\(report)")
        let id = try #require(entry["id"] as? String)
        let listed = try imhost(["reports"], in: op)
        #expect(listed.stdout.contains("bob reported alice on line house") && listed.stdout.contains("\"Deposit first, by wire\""), "\(listed.stdout)")

        // Alice cannot read reports, nor make one in bob's name; one of her own that is no report
        // is listed as such, with its maker as the broker vouches.
        let spy = try broker.subscribe(as: "alice", topic: "imhost/fleet/report/#")
        #expect(spy.waitFor("All subscription requests were denied"), "\(spy.stdout)\(spy.stderr)")
        _ = spy.finish()
        _ = try broker.publish(as: "alice", topic: "imhost/fleet/report/bob/5", [#"{"v":1,"id":"forged","at":1,"peer":"carol","url":"x","messages":[]}"#], retain: true)
        _ = try broker.publish(as: "alice", topic: "imhost/fleet/report/alice/7", ["\u{1b}[2J not a report"], retain: true)
        filed = try awaitReports(op, count: 2)
        #expect(!filed.contains { $0["id"] as? String == "forged" }, "\(filed)")
        let junk = try #require(filed.first { $0["id"] as? String == "alice/7" })
        #expect(junk["by"] as? String == "alice" && junk["readable"] as? Bool == false)

        // Only operator runs it; an unknown id is refused in one line; closing forgets.
        let asBob = try imhost(["reports"], in: bob)
        #expect(asBob.status == 2 && asBob.stderr.split(separator: "\n").count == 1, "\(asBob.stderr)")
        let unknown = try imhost(["reports", "close", "nosuch"], in: op)
        #expect(unknown.status == 2 && unknown.stderr.split(separator: "\n").count == 1, "\(unknown.stderr)")
        let closed = try imhost(["reports", "close", id, "alice/7"], in: op)
        #expect(closed.status == 0, "\(closed.stderr)")
        #expect(waitUntil { (try? filedReports(op))?.isEmpty == true })
    }

    @Test("a report the broker took goes again when the broker loses it within seconds (killed before it saved: here, everything it held) and a running host connects again")
    func brokerLosesIt() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let op = try operatorWorkspace(broker, lines: false)
        let bob = try broker.workspace(for: "bob")
        let chat = try broker.chat(bob, with: "alice")
        try #require(chat.waitFor(broker.connected("bob")), "\(chat.stdout)\(chat.stderr)")
        chat.send("/report")
        _ = try awaitReports(op, count: 1)
        try broker.loseStateAndRestart()
        #expect(chat.waitFor("connected again to"), "\(chat.stdout)\(chat.stderr)")
        let filed = try awaitReports(op, count: 1)
        #expect(filed[0]["by"] as? String == "bob")
        chat.send("/quit")
        #expect(chat.finish().status == 0)
    }

    @Test("a broker running with users' rules from before reports refuses them, and the report waits; imhost broker upgrade gives the running broker's users the rule, and it goes; a broker started again gets it by itself")
    func upgrade() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let op = try operatorWorkspace(broker, lines: false)
        // As a broker an older imhost started runs: bob's role without the rule.
        let folder = BrokerFolder(path: broker.folder)
        try #require(try folder.control()).apply([BrokerControl.Command("removeRoleACL", ["rolename": .text("user:bob"), "acltype": .text("publishClientSend"),
                                                                                          "topic": .text("imhost/fleet/report/bob/+")])])
        let bob = try broker.workspace(for: "bob")
        let made = try transcript(bob, with: "alice", ["/report"])
        #expect(made.status == 0, "\(made.stderr)")
        let refused = try broker.sync(bob)
        #expect(refused.stderr.contains("imhost/fleet/report/bob/"), "the refusal is said: \(refused.stderr)")
        #expect(try filedReports(op).isEmpty)

        let upgraded = try imhost(["broker", "upgrade", broker.folder], in: root)
        #expect(upgraded.status == 0 && upgraded.stdout.contains("gave every user's role the rules it lacked"), "\(upgraded.stdout)\(upgraded.stderr)")
        #expect(try broker.sync(bob).status == 0)
        let filed = try awaitReports(op, count: 1)
        #expect(filed[0]["by"] as? String == "bob")
        let again = try imhost(["broker", "upgrade", broker.folder], in: root)
        #expect(again.stdout.contains("is up to date"), "\(again.stdout)")

        // The rule taken out of the file of a stopped broker: started again, it is back.
        try broker.removeACL("publishClientSend", "imhost/fleet/report/bob/+", from: "user:bob")
        try broker.restart()
        #expect(try transcript(bob, with: "alice", ["/report"]).status == 0)
        #expect(try broker.sync(bob).status == 0)
        _ = try awaitReports(op, count: 2)
    }
}

extension BrowserSuites {
    @Suite("Report in a browser")
    struct WebReportTests {
        @Test("the menu's Report asks first: Cancel reports nothing; Report keeps the report in the store to be sent, with the person's last messages, and says so")
        func reportAsks() throws {
            let workspace = try Workspace.standard()
            try workspace.receive("text", #"{"text":"send the deposit today"}"#)
            let web = try WebServing(workspace)
            let browser = try Browser()
            try browser.open(chat: houseChatURL, on: web)
            #expect(try browser.waitFor(".message.received .bubble.text", containing: "send the deposit today"))
            try browser.answerMenuQuestion("report", "cancel")
            let store = try MessageStore(dataFolder: workspace.data, user: "me")
            #expect(try store.reportCount(of: "u42").made == 0, "Cancel reports nothing")
            try browser.answerMenuQuestion("report", "report")
            // This host names no broker: the report is kept, and the page says it has not gone.
            #expect(try browser.waitFor("#notice-log", containing: "Your report of u42 is kept on this device"))
            #expect(try store.reportCount(of: "u42").made == 1)
            let kept = try #require(try store.untakenReports(limit: 10).first)
            let report = try #require(UserReport.read(kept.body))
            #expect(report.peer == "u42" && report.line == "house" && report.messages.map(\.text) == ["send the deposit today"])
        }
    }
}

@Suite("A report's size")
struct ReportSizeTests {
    @Test("a report always fits in 16 KiB whatever its peer wrote: each message cut at a character's end within 1 KiB (a character can take many bytes), the URL within 2 KiB, the oldest messages left out past that")
    func fits() throws {
        let family = "👨‍👩‍👧‍👦"   // one character, 25 bytes
        let long = String(repeating: family, count: 10_000) + String(repeating: "\u{301}", count: 5_000)
        let messages = (1...8).map { UserReport.Message(id: "m\($0)", at: Int64($0), key: "text", text: long) }
        let report = UserReport(id: "r1", at: 1, peer: "alice", url: "im://chat?peer=alice&x=" + String(repeating: "y", count: 50_000),
                                line: "house", lineVersion: "1.0.0", messages: messages)
        #expect(report.bytes.count <= UserReport.byteLimit)
        #expect(report.messages.count == UserReport.messageLimit)
        #expect(report.messages.map(\.id) == ["m4", "m5", "m6", "m7", "m8"])
        for message in report.messages {
            #expect(message.text.utf8.count <= UserReport.excerptBytes && message.text.hasPrefix(family) && message.text.unicodeScalars.last == "\u{1F466}")
        }
        #expect(report.url.utf8.count <= UserReport.urlBytes)
        #expect(UserReport.read(report.bytes) == report)
    }
}

import Foundation
import Testing

/// The architecture (docs/ARCHITECTURE.md) relies on library evolution: a plugin built against
/// IMKit 1.0 keeps working with an IMKit 1.1 that adds API, built by the same compiler. This proves it with real builds: the
/// house and jobs plugins from this build are loaded by a host built against a copy of IMKit
/// with new public API and new stored properties in `CarrierPage` (which house's page
/// subclasses) and `ChatContext`.
@Suite("IMKit library evolution", .timeLimit(.minutes(10)))
struct ResilienceTests {
    @Test("plugins built against IMKit 1.0 run in a host built against IMKit 1.1 that adds API and stored properties")
    func newerIMKit() throws {
        let workspace = try Workspace()
        let copy = workspace.root + "/imhost-1.1"
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for item in ["Package.swift", "Sources", "Tests", "Benchmarks"] {
            try FileManager.default.copyItem(atPath: BuildProducts.repository + "/" + item, toPath: copy + "/" + item)
        }
        let sdk = copy + "/Sources/IMKit/Sources/IMKit/"
        func edit(_ file: String, _ old: String, _ new: String) throws {
            let text = try String(contentsOfFile: sdk + file, encoding: .utf8)
            #expect(text.contains(old), "IMKit 1.1 edit target missing in \(file)")
            try text.replacingOccurrences(of: old, with: new).write(toFile: sdk + file, atomically: true, encoding: .utf8)
        }
        try edit("CarrierPage.swift", "    public let context: ChatContext\n",
                 "    public let context: ChatContext\n    /// Added in IMKit 1.1.\n    public var badgeCount = 7\n    public var draft: String? = \"added in 1.1\"\n")
        try edit("ChatContext.swift", "    public let bus = SessionBus()\n",
                 "    public let bus = SessionBus()\n    /// Added in IMKit 1.1.\n    public var unreadCount = 3\n")
        try """
            /// API added in IMKit 1.1.
            public struct ReadReceipt: Sendable { public var messageID: String; public init(messageID: String) { self.messageID = messageID } }
            extension CarrierPage {
                /// Added in IMKit 1.1.
                public var receipts: [ReadReceipt] { [] }
            }
            """.write(toFile: sdk + "AddedIn11.swift", atomically: true, encoding: .utf8)

        let build = try run("/usr/bin/env", ["swift", "build", "--product", "imhost", "--package-path", copy],
                            environment: ["PATH": (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/opt/swift/usr/bin"])
        try #require(build.status == 0, "building the IMKit 1.1 host failed: \(build.stderr.suffix(2000))")
        let host = copy + "/.build/debug/imhost"

        try workspace.installLines()
        try workspace.writeConfig()
        let scenario = workspace.root + "/scenario.json"
        try """
            [
              { "open": "im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1001" },
              { "receive": "house.listing", "payload": { "id": "L1001", "title": "Sunny flat", "price": 4200, "area": 56, "rooms": 2 } },
              { "tap": 1 },
              { "expect": { "page": "house", "contains": ["🏠 Sunny flat", "📌 Sunny flat"], "tap": "opened listing L1001 detail: Sunny flat, ¥4200, 2 rooms" } },
              { "open": "im://chat?rootCateID=9&cateID=12&peer=hr" },
              { "receive": "jobs.interview", "payload": { "company": "A", "position": "B", "time": "C", "place": "D" } },
              { "tap": 1 },
              { "expect": { "page": "jobs", "components": ["topPost", "bottomBar", "inputBar"], "stored": 2 } }
            ]
            """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let played = try run(host, ["play", scenario, "--config", workspace.configPath], currentDirectory: workspace.root)
        #expect(played.status == 0, "\(played.stderr)")
        #expect(played.stdout.hasSuffix("8 steps passed.\n"))
        let plugins = try run(host, ["plugins", "--config", workspace.configPath])
        #expect(plugins.stdout.contains("house.so             house        loaded"))
    }
}

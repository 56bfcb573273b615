import Foundation
import Testing

/// The architecture (docs/ARCHITECTURE.md) relies on library evolution: a plugin built against
/// IMKit 1.0 keeps working with an IMKit 1.1 that adds API, built by the same compiler. This proves it with real builds: the
/// house and jobs plugins from this build are loaded by a host built against a copy of IMKit
/// with new public API and new stored properties in `CarrierPage` (which house's page
/// subclasses) and `ChatContext`.
@Suite("IMKit library evolution", .heavy(.compiler))
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

/// The baselines: a line compiled against the committed interface of IMKit 1.0 (and of 1.2, the
/// last release before cards), not against the IMKit being built, loads and works in this host;
/// and the API check fails when a baseline's API is not all there.
@Suite("IMKit 1.0 baseline", .heavy(.compiler))
struct BaselineTests {
    static let baseline = BuildProducts.repository + "/Sources/IMKit/API/IMKit-1.0.swiftinterface"

    /// The toolchain's `swiftc`.
    static var swiftc: String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { String($0) + "/swiftc" }
        return (path + ["/opt/swift/usr/bin/swiftc"]).first { FileManager.default.isExecutableFile(atPath: $0) } ?? "swiftc"
    }

    @Test("a line built against IMKit 1.0's interface, 1.2's or 1.3's (a picture without alt text), loads and works with the current IMKit", arguments: ["1.0", "1.2", "1.3"])
    func lineBuiltAgainstBaseline(release: String) throws {
        let workspace = try Workspace()
        try workspace.installBaselineLine(builtAgainst: release)

        let result = try imhost(["chat", "im://chat?rootCateID=88&peer=u1"], input: """
            /recv baseline.note {"id":"n7","text":"hello from 1.0"}
            /recv baseline.note {"text":"no id"}
            /tap 1
            /tap 1
            /tap 2
            /tap 1 open
            /offline
            /menu 4
            hi
            /quit
            """, in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        #expect(out.contains("Baseline · u1"))
        #expect(out.contains("Built against 1.0"))
        #expect(out.contains("[4] From 1.0"))
        #expect(out.contains("│ 📝 hello from 1.0 │"), "a line of 1.x before cards still draws its lines")
        #expect(out.contains("tap #1: opened note n7 (opened 1 time)"))
        #expect(out.contains("tap #1: opened note n7 (opened 2 times)"))
        #expect(out.contains("tap #2: failed: this note has no id"))
        #expect(out.contains("/tap: message #1 has no buttons; /tap 1 taps it"), "lines have no buttons to press")
        #expect(out.contains("menu: counter says 2 opened, online false"), "the service saw the transport go offline")
        #expect(!out.contains("[Photo]"), "the line's mask is kept")
        #expect(!result.stderr.contains("info: sent"), "informational entries go to lines.log only")
        #expect(try String(contentsOfFile: workspace.data + "/lines.log", encoding: .utf8).contains("[baseline] info: sent 2 characters"))
        let plugins = try imhost(["plugins"], in: workspace)
        #expect(plugins.stdout.contains("baseline.so          baseline     loaded"), "\(plugins.stdout)")
    }

    @Test("a line built against IMKit 1.4's interface that registers a picture without alt text is refused, saying so")
    func pictureWithoutAltRefused() throws {
        let workspace = try Workspace()
        try workspace.installBaselineLine(builtAgainst: "1.4")
        let plugins = try imhost(["plugins"], in: workspace)
        #expect(plugins.stdout.contains("baseline.so          baseline     failed"), "\(plugins.stdout)")
        #expect(plugins.stdout.contains("registered picture 'dot' without alt text"), "\(plugins.stdout)")
    }

    @Test("the API check passes on this build and fails when the baseline has API the build lacks")
    func apiCheck() throws {
        let check = BuildProducts.repository + "/.ci/api-check"
        let passed = try run(check, [])
        #expect(passed.status == 0, "\(passed.stderr)")
        #expect(passed.stdout.contains("IMKit keeps the API and ABI of Sources/IMKit/API/IMKit-1.0.swiftinterface"))
        for release in ["1.1", "1.2", "1.3", "1.4"] {
            #expect(passed.stdout.contains("IMKit keeps the API and ABI of Sources/IMKit/API/IMKit-\(release).swiftinterface"))
        }

        // A baseline with one more public declaration: to the check, the build removed it.
        let workspace = try Workspace()
        let baseline = workspace.root + "/IMKit-1.0.swiftinterface"
        try (try String(contentsOfFile: Self.baseline, encoding: .utf8) + "public struct RemovedSince10 {\n  public init()\n}\n")
            .write(toFile: baseline, atomically: true, encoding: .utf8)
        let failed = try run(check, [], environment: ["IMKIT_API_BASELINE": baseline, "IMKIT_API_WORK": workspace.root + "/check"])
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("IMKit no longer keeps the API and ABI of \(baseline)"))
        #expect(failed.stderr.contains("RemovedSince10"), "\(failed.stderr)")
    }
}

extension Workspace {
    /// Builds `Tests/Compatibility/BaselineLine` against the committed interface of IMKit
    /// `release` (as this compiler would have written it, see .ci/api-check: all the line sees of
    /// IMKit), links it to the current libIMKit.so, installs it as `baseline.so` and writes a
    /// host.json that routes rootCateID 88 to it.
    func installBaselineLine(builtAgainst release: String) throws {
        let sdk = root + "/imkit-\(release)"
        try FileManager.default.createDirectory(atPath: sdk, withIntermediateDirectories: true)
        let version = try #require(try imhost(["--version"]).stdout.split(separator: "\n")
            .first { $0.hasPrefix("Swift ") }.map { String($0.dropFirst("Swift ".count)) })
        let baseline = BuildProducts.repository + "/Sources/IMKit/API/IMKit-\(release).swiftinterface"
        let interface = try String(contentsOfFile: baseline, encoding: .utf8)
            .replacingOccurrences(of: "// swift-compiler-version: @SWIFT_COMPILER_VERSION@", with: "// swift-compiler-version: Swift version \(version)")
            .replacingOccurrences(of: "-interface-compiler-version @SWIFT_COMPILER_VERSION@",
                                  with: "-interface-compiler-version \(version.split(separator: " ")[0])")
            .replacingOccurrences(of: "@SWIFT_COMPILER_VERSION@", with: version)
        try interface.write(toFile: sdk + "/IMKit.swiftinterface", atomically: true, encoding: .utf8)
        let module = try run(BaselineTests.swiftc, ["-frontend", "-compile-module-from-interface", sdk + "/IMKit.swiftinterface",
                                                    "-module-name", "IMKit", "-module-cache-path", sdk + "/cache", "-o", sdk + "/IMKit.swiftmodule"])
        try #require(module.status == 0, "the \(release) interface does not build: \(module.stderr)")
        let library = plugins + "/baseline.so"
        let built = try run(BaselineTests.swiftc, [
            "-emit-library", "-module-name", "BaselineLine", "-swift-version", "6", "-I", sdk, "-module-cache-path", sdk + "/cache",
            // Pictures came with 1.3.
        ] + (release >= "1.3" ? ["-DPICTURES"] : []) + [
            "-L", BuildProducts.folder, "-lIMKit", "-o", library,
            BuildProducts.repository + "/Tests/Compatibility/BaselineLine/BaselineLine.swift",
        ])
        try #require(built.status == 0, "the baseline line does not build against IMKit \(release): \(built.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: library)
        try writeConfig("""
            { "lines": { "baseline": { "enabled": true } }, "routes": [ { "rootCateID": 88, "cateID": "*", "line": "baseline" } ] }
            """)
    }
}

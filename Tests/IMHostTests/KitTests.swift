import Foundation
import IMKit
import Testing

/// The line author's kit: `imhost new-line` writes a package that builds with `swift build` and
/// loads as it is.
@Suite("imhost new-line", .timeLimit(.minutes(5)))
struct KitTests {
    @Test("a new line builds with swift build, loads, and passes its own scenario")
    func newLine() throws {
        let workspace = try Workspace()
        let folder = workspace.root + "/used-cars"
        let made = try imhost(["new-line", "used-cars", "--path", folder, "--root-cate-id", "77"], in: workspace)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("install -m 0644 .build/debug/libUsedCars.so <your Plugins folder>/used-cars.so"))
        let package = try String(contentsOfFile: folder + "/Package.swift", encoding: .utf8)
        #expect(package.contains(#".package(path: "\#(BuildProducts.repository)/Sources/IMKit")"#), "depends on this checkout's IMKit")

        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") + ":/opt/swift/usr/bin"
        let built = try run("/usr/bin/env", ["swift", "build", "--package-path", folder], environment: ["PATH": path])
        try #require(built.status == 0, "the new line does not build: \(built.stdout.suffix(3000)) \(built.stderr.suffix(2000))")

        let library = workspace.plugins + "/used-cars.so"
        try FileManager.default.copyItem(atPath: folder + "/.build/debug/libUsedCars.so", toPath: library)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: library)
        try workspace.writeConfig(#"{ "lines": { "used-cars": { "enabled": true } }, "routes": [ { "rootCateID": 77, "cateID": "*", "line": "used-cars" } ] }"#)
        let plugins = try imhost(["plugins"], in: workspace)
        #expect(plugins.status == 0, "\(plugins.stdout) \(plugins.stderr)")
        #expect(plugins.stdout.contains("used-cars.so         used-cars    loaded"))
        let played = try imhost(["play", folder + "/scenario.json"], in: workspace)
        #expect(played.status == 0, "\(played.stdout) \(played.stderr)")
        #expect(played.stdout.hasSuffix("4 steps passed.\n"))
        #expect(played.stderr.contains("[used-cars] info: opened 1 note"), "the line's log, from its service's finalize")
    }

    @Test("imhost --version names imhost, IMKit, the plugin ABI and the exact Swift compiler")
    func version() throws {
        let result = try imhost(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("""
            imhost 1.0.0
            IMKit \(IMKitVersion.current)
            plugin ABI \(PluginEntry.abiVersion)
            Swift \(SwiftCompiler.version)

            """))
    }

    @Test("new-line refuses a name that is not a line id, and a folder that is not empty")
    func refusals() throws {
        let workspace = try Workspace()
        let bad = try imhost(["new-line", "Used_Cars"], in: workspace)
        #expect(bad.status == 2)
        #expect(bad.stderr.hasPrefix("imhost new-line: 'Used_Cars' is not a line id"))
        try FileManager.default.createDirectory(atPath: workspace.root + "/taken", withIntermediateDirectories: true)
        try "x".write(toFile: workspace.root + "/taken/file", atomically: true, encoding: .utf8)
        let taken = try imhost(["new-line", "taken"], in: workspace)
        #expect(taken.status == 1)
        #expect(taken.stderr == "imhost new-line: \(workspace.root)/taken exists and is not empty; choose another --path, or remove it\n")
        let noSDK = try imhost(["new-line", "x", "--imkit", workspace.root + "/nowhere"], in: workspace)
        #expect(noSDK.status == 2)
        #expect(noSDK.stderr.contains("cannot find IMKit's package at \(workspace.root)/nowhere"))
        let newline = try imhost(["new-line", "x", "--path", workspace.root + "/a\nimhost: FAKE"], in: workspace)
        #expect(newline.status == 2)
        #expect(newline.stderr == "imhost new-line: --path '\(workspace.root)/a\\nimhost: FAKE' has control characters or bytes that are not UTF-8; choose a plain path\n")
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/a\nimhost: FAKE"))
    }

    @Test("libIMKit.so in the plugin folder is refused as the SDK, not a line")
    func sdkInPlugins() throws {
        let workspace = try Workspace()
        try workspace.install("IMKit", as: "libIMKit.so")
        try workspace.installLines()
        try workspace.writeConfig()
        let plugins = try imhost(["plugins"], in: workspace)
        #expect(plugins.stdout.contains("libIMKit.so          -            refused\n    is the IMKit SDK (libIMKit.so), not a line; a line never ships it; remove it from the plugin folder: the host brings its own libIMKit.so"), "\(plugins.stdout)")
        #expect(plugins.stdout.contains("house.so             house        loaded"))
    }
}

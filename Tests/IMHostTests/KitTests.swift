import Foundation
import IMKit
import Testing

/// The line author's kit: `imhost new-line` writes a package that builds with `swift build` and
/// loads as it is.
@Suite("imhost new-line", .heavy(.compiler))
struct KitTests {
    /// Runs what `new-line` printed under "Next, try it there", as printed, from a shell.
    func followHints(_ made: ProcessResult, folder: String) throws -> ProcessResult {
        let lines = made.stdout.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Next, try it there") })
        let commands = lines[(start + 1)...].prefix { $0.hasPrefix("  ") }.map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(commands.count == 3, "\(made.stdout)")
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") + ":/opt/swift/usr/bin"
        return try run("/bin/sh", ["-c", "set -e; " + commands.joined(separator: "; ")], environment: ["PATH": path, "NO_COLOR": "1"])
    }

    @Test("a new line builds, loads and passes its own scenario by the commands new-line prints")
    func newLine() throws {
        let workspace = try Workspace()
        let folder = workspace.root + "/used-cars"
        let made = try run("/bin/sh", ["-c", "umask 022; exec \"$0\" \"$@\"", BuildProducts.imhost,
                                        "new-line", "used-cars", "--path", folder, "--root-cate-id", "77"], currentDirectory: workspace.root)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("install -m 0644 .build/debug/libUsedCars.so Plugins/used-cars.so"))
        let package = try String(contentsOfFile: folder + "/Package.swift", encoding: .utf8)
        #expect(package.contains(#".package(path: "\#(BuildProducts.repository)/Sources/IMKit")"#), "depends on this checkout's IMKit")
        for made in [folder, folder + "/Sources", folder + "/Sources/UsedCars"] {
            #expect(try FileManager.default.attributesOfItem(atPath: made)[.posixPermissions] as? Int == 0o755, "\(made) follows the umask")
        }
        #expect(try FileManager.default.attributesOfItem(atPath: folder + "/README.md")[.posixPermissions] as? Int == 0o644)

        let tried = try followHints(made, folder: folder)
        try #require(tried.status == 0, "the hints do not work as printed: \(tried.stdout.suffix(3000)) \(tried.stderr.suffix(2000))")
        #expect(tried.stdout.hasSuffix("6 steps passed.\n"), "\(tried.stdout)")
        #expect(tried.stdout.contains("tap #1 open: opened note n1"), "its button reaches the builder's didTapButton")
        #expect(!tried.stderr.contains("info: opened"), "informational log entries stay out of standard error")
        let verbose = try run(BuildProducts.imhost, ["play", "scenario.json", "--verbose"], currentDirectory: folder)
        #expect(verbose.status == 0)
        #expect(verbose.stderr.contains("[used-cars] info: opened 2 notes"), "--verbose shows them on standard error too")

        let bar = try run(BuildProducts.imhost, ["chat", "im://chat?rootCateID=77&peer=u1"], input: "/bar 5\n", currentDirectory: folder)
        #expect(bar.stdout.contains("bar: shared this chat with u1"), "the page's own bar item, through didSelectBottomBarItem")
        #expect(!bar.stderr.contains("info:"))
        let log = try String(contentsOfFile: folder + "/.imhost/lines.log", encoding: .utf8)
        #expect(log.contains("[used-cars] info: opened 0 notes"), "the line's log, from its service's finalize, is in lines.log")
    }

    @Test("an example line ships whole: it builds on its own and plays its scenario; others are written alike")
    func exampleLine() throws {
        let workspace = try Workspace()
        let folder = workspace.root + "/my-jobs"
        let made = try imhost(["new-line", "--example", "jobs", "--path", folder], in: workspace)
        #expect(made.status == 0, "\(made.stderr)")
        for file in ["Package.swift", "host.json", "scenario.json", "README.md", "Sources/Jobs/JobsLine.swift", "Sources/Jobs/JobsPage.swift",
                     "Sources/Jobs/InterviewBuilder.swift"] {
            #expect(FileManager.default.fileExists(atPath: folder + "/" + file), "\(file)")
        }
        let tried = try followHints(made, folder: folder)
        try #require(tried.status == 0, "\(tried.stdout.suffix(3000)) \(tried.stderr.suffix(2000))")
        #expect(tried.stdout.contains("bar: shared your résumé with hr"))
        #expect(tried.stdout.contains("tap #1 decline: declined interview at 58 Tech"))
        #expect(tried.stdout.hasSuffix("7 steps passed.\n"))
        for (name, product, said) in [("house", "House", "tap #1 viewing: booked a viewing of listing L1001 (Sunny flat) on 2026-12-05 at 10:00"),
                                      ("cars", "Cars", "tap #1 call: calling Zhao Motors at 400-000 about the Golf")] {
            let other = try imhost(["new-line", "--example", name, "--path", workspace.root + "/" + name], in: workspace)
            #expect(other.status == 0, "\(other.stderr)")
            let readme = try String(contentsOfFile: workspace.root + "/\(name)/README.md", encoding: .utf8)
            #expect(readme.contains("imhost new-line --example \(name)"))
            // Its scenario plays against this build of the line (building the package is what jobs shows).
            let plugins = workspace.root + "/\(name)/Plugins"
            try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
            try FileManager.default.copyItem(atPath: BuildProducts.library(product), toPath: plugins + "/\(name).so")
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: plugins + "/\(name).so")
            let played = try run(BuildProducts.imhost, ["play", "scenario.json"], currentDirectory: workspace.root + "/" + name)
            #expect(played.status == 0, "\(played.stdout.suffix(2000)) \(played.stderr)")
            #expect(played.stdout.contains(said), "\(played.stdout.suffix(2000))")
        }
        let named = try imhost(["new-line", "mine", "--example", "jobs"], in: workspace)
        #expect(named.status == 2)
        #expect(named.stderr == "imhost new-line: an example keeps its own line id ('jobs'); drop NAME, and choose the folder with --path\n")
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

    @Test("a line written outside the checkout by imhost through a link (as on PATH) names IMKit by an absolute path that exists; its README says how to put imhost on PATH")
    func imkitFromAnywhere() throws {
        let workspace = try Workspace()
        try FileManager.default.createDirectory(atPath: workspace.root + "/bin", withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: workspace.root + "/bin/imhost", withDestinationPath: BuildProducts.imhost)
        let folder = workspace.root + "/somewhere/rent"
        let made = try run(workspace.root + "/bin/imhost", ["new-line", "rent", "--path", folder], currentDirectory: workspace.root)
        #expect(made.status == 0, "\(made.stderr)")
        let package = try String(contentsOfFile: folder + "/Package.swift", encoding: .utf8)
        let named = try #require(package.components(separatedBy: #".package(path: ""#).dropFirst().first?.components(separatedBy: "\"").first, "\(package)")
        let imkit = URL(fileURLWithPath: BuildProducts.repository + "/Sources/IMKit").resolvingSymlinksInPath().path
        #expect(named == imkit, "the checkout's IMKit, found from the executable the link leads to")
        #expect(named.hasPrefix("/") && FileManager.default.fileExists(atPath: named + "/Package.swift"))

        let readme = try String(contentsOfFile: folder + "/README.md", encoding: .utf8)
        let executable = URL(fileURLWithPath: BuildProducts.imhost).resolvingSymlinksInPath().path
        let binFolder = URL(fileURLWithPath: executable).deletingLastPathComponent().path
        #expect(readme.contains(#"export PATH="\#(binFolder):$PATH""#) && readme.contains(#"ln -sf "\#(executable)" ~/.local/bin/imhost"#), "\(readme)")
        #expect(FileManager.default.isExecutableFile(atPath: binFolder + "/imhost"), "the folder put on PATH holds imhost")

        // A checkout moved after it was built: the IMKit where the executable lies now, not
        // where it was compiled.
        let moved = workspace.root + "/moved"
        try FileManager.default.createDirectory(atPath: moved + "/.build/debug", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: moved + "/Sources", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: moved + "/Sources/IMKit", withDestinationPath: imkit)
        for file in ["imhost", "libIMKit.so"] {
            try FileManager.default.copyItem(atPath: BuildProducts.folder + "/" + file, toPath: moved + "/.build/debug/" + file)
        }
        let fromMoved = try run(moved + "/.build/debug/imhost", ["new-line", "lease", "--path", workspace.root + "/somewhere/lease"], currentDirectory: workspace.root)
        #expect(fromMoved.status == 0, "\(fromMoved.stderr)")
        let movedPackage = try String(contentsOfFile: workspace.root + "/somewhere/lease/Package.swift", encoding: .utf8)
        #expect(movedPackage.contains(#".package(path: "\#(moved)/Sources/IMKit")"#), "\(movedPackage)")
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
        for reserved in ["swift", "foundation", "imkit", "glibc", "testing"] {
            let refused = try imhost(["new-line", reserved], in: workspace)
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("'\(reserved)' would make a module named"), "\(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/swift"))
        // A line the host in this folder already has: made, with a note on the clash and the pin.
        try workspace.compileC("crash_plugin.c", as: "ccrash.so", defines: ["LINE_ID=\"c-line\""])
        try workspace.writeConfig(#"{ "lines": { "c-line": {} } }"#)
        let fresh = try imhost(["new-line", "d-line"], in: workspace)
        #expect(fresh.status == 0 && !fresh.stderr.contains("note:"))
        let clash = try imhost(["new-line", "c-line"], in: workspace)
        #expect(clash.status == 0)
        #expect(clash.stderr.contains("already has line 'c-line' in ccrash.so"), "\(clash.stderr)")
        #expect(clash.stderr.contains(#""lines": { "c-line": { "file": "ccrash.so" } }"#))
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

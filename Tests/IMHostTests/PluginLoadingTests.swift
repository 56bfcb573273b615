import Foundation
import Testing
@testable import IMHost
@_spi(Host) import IMKit

@Suite("Loading plugins")
struct PluginLoadingTests {
    @Test("house and jobs are vetted from real .so files, and open in the host only when first needed")
    func linesLoad() throws {
        let workspace = try Workspace.standard()
        let host = try workspace.host()

        let house = try #require(host.lines.status(ofLine: "house"))
        #expect(house.state == .loaded)
        #expect(house.descriptor?.displayName == "Housing")
        #expect(house.manifest?.messageKeys == ["house.listing"])
        #expect(house.manifest?.page == "HousePage")
        #expect(host.lines.status(ofLine: "jobs")?.manifest?.page == "JobsPage")
        #expect(host.problems.isEmpty)
        #expect(host.lines.registry.allKeys == ["file", "image", "location", "photo", "text", "voice"], "only the host's builders until a line opens")
        #expect(host.lines.scannedFiles == ["house.so", "jobs.so"], "new files are opened by the scanner")
        #expect(!workspace.isMapped("house.so") && !workspace.isMapped("jobs.so"), "not by the host")

        let page = try host.open("im://chat?rootCateID=1&cateID=12&peer=u42")
        #expect(page.lineID == "house")
        #expect(workspace.isMapped("house.so") && !workspace.isMapped("jobs.so"), "the line the jump needed, and only it")
        #expect(host.lines.status(ofLine: "house")?.state == .active, "registered, and its services run")
        #expect(host.user?.service(id: "house.listings") != nil)
        #expect(host.lines.registry.allKeys == ["file", "house.listing", "image", "location", "photo", "text", "voice"])
    }

    @Test("a plugin's page is a CarrierPage and its builder a MessageBuilder in the host: one libIMKit.so")
    func typeIdentityAcrossTheBoundary() throws {
        let workspace = try Workspace.standard()
        let host = try workspace.host()
        #expect(host.activate("house"))
        let pageType = try #require(host.lines.page(of: "house"))

        let anyType: Any.Type = pageType
        #expect(anyType is CarrierPage.Type)
        try host.signIn()
        let context = ChatContext(userID: "me", peerID: "u42", rootCateID: 1, cateID: 12,
                                  parameters: [:], lineID: "house", user: try #require(host.user),
                                  sender: { _, _ in }, opener: { _ in .notFound("none") })
        let page: Any = pageType.init(context: context)
        let asBase = try #require(page as? CarrierPage)
        #expect(asBase.title == "二手房 Resale · u42")

        let entry = try #require(host.lines.registry.builder(for: "house.listing"))
        let builder: Any = entry.builder
        #expect(builder is any MessageBuilder)
        let payload = MessagePayload(json: #"{"id":"L1","title":"Sunny flat","price":4200,"area":56,"rooms":2}"#)
        let view = try entry.builder.render(payload, layout: MessageLayout(width: 40))
        #expect(view.lines.first == "🏠 Sunny flat")
        #expect(view.card?.title == "🏠 Sunny flat" && view.card?.buttons.map(\.id) == ["details", "viewing"],
                "the plugin's card is the host's MessageCard: one IMKit on both sides of dlopen")

        let maps = try FileSystem.readText("/proc/self/maps")
        let imkitImages = Set(maps.split(separator: "\n").compactMap { line -> Substring? in
            guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last,
                  path.hasSuffix("/libIMKit.so") else { return nil }
            return path
        })
        #expect(imkitImages.count == 1, "libIMKit.so mapped from \(imkitImages)")
    }

    /// A workspace with the two good lines and every kind of bad plugin beside them.
    static func crowdedWorkspace() throws -> Workspace {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.writePlugin("notes.so", contents: "hello world, I am not a library\n")
        try workspace.compileC("no_entry.c", as: "noentry.so")
        try workspace.compileC("descriptor_plugin.c", as: "abi2.so", defines: ["ABI_VERSION=2", "NO_REGISTER"])
        try workspace.compileC("descriptor_plugin.c", as: "oldswift.so", defines: ["LINE_ID=\"oldswift\""], swiftVersion: "5.9")
        try workspace.compileC("descriptor_plugin.c", as: "badid.so", defines: ["LINE_ID=\"Bad Line!\""])
        try workspace.compileC("descriptor_plugin.c", as: "twin-a.so", defines: ["LINE_ID=\"twin\""])
        try workspace.compileC("descriptor_plugin.c", as: "twin-b.so", defines: ["LINE_ID=\"twin\""])
        try workspace.compileC("descriptor_plugin.c", as: "cfail.so",
                               defines: ["LINE_ID=\"cfail\"", "FAIL_REASON=\"database schema is too old\""])
        try workspace.compileC("descriptor_plugin.c", as: "cdisabled.so",
                               defines: ["LINE_ID=\"cdisabled\"", "FAIL_REASON=\"must never be called\""])
        try workspace.compileC("descriptor_plugin.c", as: "stranger.so", defines: ["LINE_ID=\"stranger\""])
        try workspace.compileC("descriptor_plugin.c", as: "open.so", defines: ["LINE_ID=\"open\""])
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: workspace.plugins + "/open.so")
        try workspace.compileC("descriptor_plugin.c", as: "elsewhere.so", defines: ["LINE_ID=\"elsewhere\""], into: workspace.root)
        try FileManager.default.createSymbolicLink(atPath: workspace.plugins + "/linked.so", withDestinationPath: workspace.root + "/elsewhere.so")
        try workspace.compileC("vanished.c", as: "libvanished.so", into: workspace.root)
        try workspace.compileC("needs_missing_library.c", as: "needy.so",
                               extra: ["-L", workspace.root, "-lvanished", "-Wl,-rpath," + workspace.root])
        try FileManager.default.removeItem(atPath: workspace.root + "/libvanished.so")
        try workspace.install("FixtureFailing", as: "failing.so")
        try workspace.install("FixtureForeignKey", as: "copycat.so")
        try workspace.install("FixtureOutsideNamespace", as: "stray.so")
        try workspace.writeConfig("""
            {
              "lines": {
                "house": { "enabled": true }, "jobs": { "enabled": true },
                "failing": { "enabled": true }, "copycat": { "enabled": true }, "stray": { "enabled": true },
                "cfail": { "enabled": true }, "cdisabled": { "enabled": false }, "open": { "enabled": true },
                "cars": { "enabled": true }, "twin": { "enabled": true }
              },
              "routes": [ { "rootCateID": 1, "cateID": "*", "line": "house" } ]
            }
            """)
        return workspace
    }

    func entry(_ host: ChatHost, file: String) throws -> LineStatus {
        try #require(host.lines.rows.first { $0.fileName == file }, "no entry for \(file)")
    }

    @Test("every bad plugin gets its own status and reason while the good lines still load")
    func badPluginsAreRefusedOneByOne() throws {
        let workspace = try Self.crowdedWorkspace()
        let host = try workspace.host()

        #expect(host.lines.status(ofLine: "house")?.file == workspace.plugins + "/house.so")
        #expect(host.lines.availability(of: "house") == .available && host.lines.availability(of: "jobs") == .available)

        func expect(_ file: String, _ status: LineTable.State, _ code: PluginRefusal.Code, _ text: String,
                    sourceLocation: SourceLocation = #_sourceLocation) throws {
            let entry = try entry(host, file: file)
            #expect(entry.state == status, sourceLocation: sourceLocation)
            #expect(entry.problem?.code == code, sourceLocation: sourceLocation)
            #expect(entry.problem?.description == text, sourceLocation: sourceLocation)
            #expect(!entry.isServing, sourceLocation: sourceLocation)
        }
        try expect("notes.so", .refused, .notELF,
                   "not an ELF shared object (the file starts with \"hello wo\"); build the plugin as a dynamic library (.library(type: .dynamic)) or remove the file")
        try expect("noentry.so", .refused, .noEntry,
                   "does not export imkit_plugin_entry; export it: @c(imkit_plugin_entry) returning PluginEntry.descriptor(for:)")
        try expect("abi2.so", .refused, .abiMismatch,
                   "plugin ABI version 2, this host speaks 1; rebuild the plugin against this host's IMKit")
        try expect("oldswift.so", .refused, .swiftMismatch,
                   "built with Swift 5.9, this host with Swift \(SwiftCompiler.version); rebuild the plugin with Swift \(SwiftCompiler.version): Swift has no stable ABI across compilers on Linux")
        try expect("badid.so", .refused, .invalidLineID,
                   "line id 'Bad Line!' is not valid; use [a-z][a-z0-9-]{0,31}, e.g. \"house\"")
        for twin in ["twin-a.so", "twin-b.so"] {
            try expect(twin, .refused, .duplicateLineID,
                       "line 'twin' is claimed by 2 files: twin-a.so, twin-b.so; remove all but one, or pin the line's file in host.json (lines.twin.file)")
        }
        #expect(host.problems.filter { $0.contains("twin") } == [
            "refused line 'twin': line 'twin' is claimed by 2 files: twin-a.so, twin-b.so; remove all but one, or pin the line's file in host.json (lines.twin.file)",
        ], "both files refused, in one line naming both")
        try expect("cfail.so", .failed, .registrationFailed,
                   "registration failed: database schema is too old; fix the line's register(with:); none of its registrations were kept")
        try expect("failing.so", .failed, .registrationFailed,
                   "registration failed: listing backend unreachable; fix the line's register(with:); none of its registrations were kept")
        try expect("copycat.so", .failed, .registrationFailed,
                   "registration failed: line 'copycat' registered message key 'house.listing', which belongs to line 'house'. Name it 'copycat.<name>'; fix the line's register(with:); none of its registrations were kept")
        try expect("stray.so", .failed, .registrationFailed,
                   "registration failed: line 'stray' registered message key 'cars.offer', which belongs to line 'cars'. Name it 'stray.<name>'; fix the line's register(with:); none of its registrations were kept")
        try expect("stranger.so", .notConfigured, .notConfigured,
                   "line 'stranger' is found but not in host.json; add \"stranger\": { \"enabled\": true } to \"lines\" to enable it")
        try expect("open.so", .refused, .writableByOthers,
                   "is writable by group or others (mode 0666); run chmod go-w \(workspace.plugins)/open.so")
        try expect("linked.so", .refused, .leavesFolder,
                   "is a symbolic link to \(workspace.root)/elsewhere.so, outside the plugin folder; copy the plugin into the folder instead of linking to it")

        let needy = try entry(host, file: "needy.so")
        #expect(needy.state == .refused)
        #expect(needy.problem?.code == .dlopenFailed)
        #expect(needy.problem?.reason.contains("libvanished.so: cannot open shared object file") == true)

        let disabled = try entry(host, file: "cdisabled.so")
        #expect(disabled.state == .disabled, "its registration failing in the scanner does not matter while it is disabled")
        #expect(disabled.problem == nil)

        let cars = try #require(host.lines.rows.first { $0.lineID == "cars" })
        #expect(cars.state == .missing && cars.file == nil)

        // All or nothing: nothing of a failed line remains.
        #expect(host.registeredBuilder(for: "failing.note") == nil)
        #expect(host.registeredBuilder(for: "stray.note") == nil)
        #expect(host.registeredBuilder(for: "house.listing")?.line == "house")
        #expect(host.lines.availability(of: "failing") != .available)

        // Nothing but the lines a chat needed was ever opened in this process.
        _ = try host.open("im://chat?rootCateID=1&cateID=12&peer=u1")
        let opened = try FileSystem.entries(of: workspace.plugins).filter { workspace.isMapped($0) }
        #expect(opened == ["house.so"])
    }

    @Test("a plugin folder writable by others refuses every plugin in it")
    func writableFolder() throws {
        let workspace = try Workspace.standard()
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: workspace.plugins)
        let host = try workspace.host()
        let files = host.lines.rows.filter { $0.file != nil }
        #expect(files.count == 2)
        for entry in files {
            #expect(entry.state == .refused)
            #expect(entry.problem?.code == .writableByOthers)
            #expect(entry.problem?.reason == "its folder \(workspace.plugins) is writable by group or others (mode 0777)")
        }
        let missing = host.lines.rows.filter { $0.file == nil }
        #expect(missing.map(\.lineID) == ["house", "jobs"])
        #expect(missing.first?.problem?.reason == "no plugin in \(workspace.plugins) provides line 'house' (2 refused files could not be read for their line id)")
        #expect(try host.converter.decide("im://chat?rootCateID=1&peer=u1").target == .legacy)
    }

    @Test("a missing plugin folder is one clear problem and every chat opens on the legacy page")
    func missingFolder() throws {
        let workspace = try Workspace()
        try workspace.writeConfig(#"{ "plugins": "Nowhere", "lines": { "house": { "enabled": true } }, "routes": [] }"#)
        let host = try workspace.host()
        #expect(host.lines.folderProblem == "cannot use plugin folder \(workspace.root)/Nowhere: opendir: No such file or directory; create it or fix \"plugins\" in \(workspace.configPath)")
        #expect(host.problems.first == host.lines.folderProblem)
    }
}

@Suite("The line guide's smallest line")
struct MinimalLineTests {
    @Test("builds, loads, routes and renders its message as documented")
    func minimalLine() throws {
        let workspace = try Workspace()
        try workspace.install("FixtureMinimal", as: "demo.so")
        try workspace.writeConfig(#"{ "lines": { "demo": { "enabled": true } }, "routes": [ { "rootCateID": 77, "cateID": "*", "line": "demo" } ] }"#)
        let host = try workspace.host()
        let demo = try #require(host.lines.status(ofLine: "demo"))
        #expect(demo.manifest?.messageKeys == ["demo.greeting"])
        #expect(try host.converter.decide("im://chat?rootCateID=77&peer=u1").url == "im://chat/demo?rootCateID=77&peer=u1")
        let builder = try #require(host.registeredBuilder(for: "demo.greeting")).builder
        let view = try builder.render(MessagePayload(json: #"{"text":"hi"}"#), layout: MessageLayout(width: 20))
        #expect(view.lines == ["👋 hi"])
        #expect(TextWidth.columns(view.lines[0]) == 5)
    }

    @Test("docs/writing-a-line.md shows exactly the code this test builds")
    func guideShowsIt() throws {
        let source = try String(contentsOfFile: BuildProducts.repository + "/Tests/Fixtures/FixtureMinimal/DemoLine.swift", encoding: .utf8)
        let code = source.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")
        let guide = try String(contentsOfFile: BuildProducts.repository + "/docs/writing-a-line.md", encoding: .utf8)
        #expect(guide.contains("```swift\n" + code + "```"))
    }
}

/// Plugin folder trust, as sshd's StrictModes: another local user must not be able to change
/// what the host runs. (The tests run as root, which may hand files to any user id.)
@Suite("Plugin folder trust")
struct FolderTrustTests {
    static let stranger: uid_t = 4242

    func refusals(_ workspace: Workspace) throws -> [String: String] {
        let result = try imhost(["plugins", "--json"], in: workspace)
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let plugins = report?["plugins"] as? [[String: Any]] ?? []
        try #require(plugins.count >= 2, "imhost plugins --json lists the files: \(result.stdout)")
        var found: [String: String] = [:]
        for plugin in plugins {
            guard let file = plugin["file"] as? String, let reason = plugin["reason"] as? String else { continue }
            found[FileSystem.baseName(file)] = reason + "; " + (plugin["fix"] as? String ?? "")
        }
        return found
    }

    @Test("a plugin owned by another user is refused, naming the owner and the fix")
    func strangerFile() throws {
        let workspace = try Workspace.standard()
        try #require(chown(workspace.plugins + "/jobs.so", Self.stranger, 0) == 0)
        let found = try refusals(workspace)
        #expect(found["jobs.so"] == "is owned by uid 4242, not root or uid 0 (root) (the host's user); run chown 0 \(workspace.plugins)/jobs.so, or remove it: another user could change what the host runs")
        #expect(found["house.so"] == nil, "the other plugin still loads")
    }

    @Test("the plugin folder and every folder above it must be owned by root or the host's user and not writable by others")
    func folders() throws {
        let workspace = try Workspace()
        // root/shared/Plugins, with the usual plugins.
        let shared = workspace.root + "/shared"
        try FileManager.default.createDirectory(atPath: shared + "/Plugins", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: shared)
        for line in ["House", "Jobs"] {
            try FileManager.default.copyItem(atPath: BuildProducts.library(line), toPath: shared + "/Plugins/\(line.lowercased()).so")
        }
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""plugins": "Plugins""#, with: #""plugins": "shared/Plugins""#))
        #expect(try refusals(workspace).isEmpty)

        try #require(chmod(shared, 0o775) == 0)
        #expect(try refusals(workspace)["house.so"] == "its folder \(shared) is writable by group or others (mode 0775); run chmod go-w \(shared)")

        // Sticky and world-writable is fine for root's folders, like /tmp, not for another user's.
        try #require(chmod(shared, 0o1777) == 0)
        #expect(try refusals(workspace).isEmpty)
        try #require(chown(shared, Self.stranger, 0) == 0)
        #expect(try refusals(workspace)["jobs.so"] == "its folder \(shared) is owned by uid 4242, not root or uid 0 (root) (the host's user); run chown 0 \(shared), or keep plugins in a folder you own")
        try #require(chown(shared, 0, 0) == 0 && chmod(shared, 0o755) == 0)

        // The plugin folder named through a link: the folder holding the link must be trusted
        // too, or anyone who may write there can point the link elsewhere.
        let open = workspace.root + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try FileManager.default.createSymbolicLink(atPath: open + "/plugins", withDestinationPath: shared + "/Plugins")
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""plugins": "Plugins""#, with: #""plugins": "open/plugins""#))
        #expect(try refusals(workspace).isEmpty)
        try #require(chmod(open, 0o777) == 0)
        #expect(try refusals(workspace)["house.so"] == "its folder \(open) is writable by group or others (mode 0777); run chmod go-w \(open)")
    }

    @Test("a link is checked where it points: inside the folder, owned and moded as a plugin must be")
    func links() throws {
        let workspace = try Workspace.standard()
        try FileManager.default.moveItem(atPath: workspace.plugins + "/jobs.so", toPath: workspace.plugins + "/jobs-1.0.so.real")
        try FileManager.default.createSymbolicLink(atPath: workspace.plugins + "/jobs.so", withDestinationPath: "jobs-1.0.so.real")
        #expect(try refusals(workspace).isEmpty, "a link within the folder to a trusted file is fine")
        try #require(chown(workspace.plugins + "/jobs-1.0.so.real", Self.stranger, 0) == 0)
        #expect(try refusals(workspace)["jobs.so"]?.hasPrefix("is owned by uid 4242") == true)
    }

    @Test("a link into a subfolder is refused when that subfolder is not trusted as the plugin folder is")
    func linkIntoSubfolder() throws {
        let workspace = try Workspace.standard()
        let versions = workspace.plugins + "/versions"
        try FileManager.default.createDirectory(atPath: versions, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try FileManager.default.moveItem(atPath: workspace.plugins + "/jobs.so", toPath: versions + "/jobs-1.0.so")
        try FileManager.default.createSymbolicLink(atPath: workspace.plugins + "/jobs.so", withDestinationPath: "versions/jobs-1.0.so")
        #expect(try refusals(workspace).isEmpty, "a link to a trusted subfolder is the usual way to keep versions")
        try #require(chmod(versions, 0o777) == 0)
        #expect(try refusals(workspace)["jobs.so"] == "its folder \(versions) is writable by group or others (mode 0777); run chmod go-w \(versions)")
        try #require(chmod(versions, 0o755) == 0)
        try #require(chown(versions, Self.stranger, 0) == 0)
        #expect(try refusals(workspace)["jobs.so"]?.hasPrefix("its folder \(versions) is owned by uid 4242") == true)
    }

    @Test("a link beside the file it names is another name for one file: the link is refused, the line serves")
    func linkToSibling() throws {
        let workspace = try Workspace.standard()
        try FileManager.default.createSymbolicLink(atPath: workspace.plugins + "/alias.so", withDestinationPath: "house.so")
        #expect(try refusals(workspace) == ["alias.so": "is another name for house.so (the same file), which provides line 'house'; remove this link; house.so serves the line"])
        let route = try imhost(["route", "im://chat?rootCateID=1&cateID=12&peer=u42"], in: workspace)
        #expect(route.stdout.hasPrefix("page:   house (HousePage)"), "\(route.stdout)")

        // host.json pinning the link's name keeps the link, and says so of the file.
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""house": { "enabled": true }"#, with: #""house": { "enabled": true, "file": "alias.so" }"#))
        #expect(try refusals(workspace) == ["house.so": "is the file alias.so links to; host.json pins line 'house' to alias.so, which serves it; keep both, or pin lines.house.file to this name and remove the link"])
    }

    @Test("a link through another link is checked at every folder it passes through")
    func linkThroughLink() throws {
        let workspace = try Workspace.standard()
        let open = workspace.plugins + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try FileManager.default.moveItem(atPath: workspace.plugins + "/jobs.so", toPath: workspace.plugins + "/jobs-real.so.bin")
        try FileManager.default.createSymbolicLink(atPath: open + "/x.so", withDestinationPath: "../jobs-real.so.bin")
        try FileManager.default.createSymbolicLink(atPath: workspace.plugins + "/jobs.so", withDestinationPath: "open/x.so")
        #expect(try refusals(workspace).isEmpty, "every folder on the way is trusted")
        try #require(chmod(open, 0o777) == 0)
        #expect(try refusals(workspace)["jobs.so"] == "its folder \(open) is writable by group or others (mode 0777); run chmod go-w \(open)")
    }

    @Test("a file name with control or bidi characters is refused, shown escaped")
    func unsafeNames() throws {
        let workspace = try Workspace.standard()
        try FileManager.default.copyItem(atPath: BuildProducts.library("FixtureMinimal"), toPath: workspace.plugins + "/evil\u{1B}[2J\u{202E}os.so")
        let result = try imhost(["plugins"], in: workspace)
        #expect(!result.stdout.contains("\u{1B}") && !result.stdout.contains("\u{202E}"))
        #expect(result.stdout.contains(#"evil\x1b[2J\u{202e}os.so"#))
        #expect(result.stdout.contains(#"its name has control or bidirectional characters (evil\x1b[2J\u{202e}os.so); rename it to plain letters, digits, '-' and '.'"#), "\(result.stdout)")

        // A name that is not UTF-8 at all is named by its bytes, not turned into another name.
        let bad: [UInt8] = Array((workspace.plugins + "/bad").utf8) + [0xFF] + Array("utf.so".utf8) + [0]
        let fd = bad.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_CREAT | O_WRONLY, 0o644) }
        try #require(fd >= 0)
        close(fd)
        let again = try imhost(["plugins"], in: workspace)
        #expect(again.stdout.contains(#"its name is not valid UTF-8 (bad\xFFutf.so); rename it to plain letters, digits, '-' and '.'"#), "\(again.stdout)")
        #expect(!again.stdout.contains("\u{FFFD}"))
    }
}

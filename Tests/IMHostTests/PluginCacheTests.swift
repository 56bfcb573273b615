import Foundation
import Testing
@testable import IMHost
import IMKit

@Suite("The plugin cache and lazy loading")
struct PluginCacheTests {
    func workspace() throws -> Workspace {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.writePlugin("junk.so", contents: "not a library")
        try workspace.compileC("descriptor_plugin.c", as: "cfail.so", defines: ["LINE_ID=\"cfail\"", "FAIL_REASON=\"no database\""])
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(
            of: #""jobs": { "enabled": true } }"#, with: #""jobs": { "enabled": true }, "cfail": {} }"#))
        return workspace
    }

    @Test("a warm start spawns no scanner and opens no line until a jump, a message or a route needs it")
    func lazyStart() throws {
        let workspace = try workspace()
        let first = try workspace.host()
        #expect(first.lines.scannedFiles == ["cfail.so", "house.so", "jobs.so"], "a first start scans the new files")
        #expect(FileManager.default.fileExists(atPath: workspace.data + "/plugins.cache"))

        let host = try workspace.host()
        #expect(host.lines.scannedFiles == ["cfail.so"], "only the failure is tried again: the rest are facts")
        let house = try #require(host.lines.status(ofLine: "house"))
        #expect(house.state == .loaded && house.manifest?.page == "HousePage")
        #expect(house.manifest?.messageKeys == ["house.listing"] && house.manifest?.services == ["house.listings"])
        try host.signIn()
        #expect(host.user?.service(id: "house.listings") == nil, "its services start when it opens")
        #expect(host.lines.rows.first { $0.fileName == "junk.so" }?.problem?.code == .notELF, "refusals are facts too")
        #expect(host.lines.status(ofLine: "cfail")?.state == .failed)
        #expect(host.problems.count == 2)
        #expect(try host.converter.decide("im://chat?rootCateID=9&cateID=12&peer=p").target == .line("jobs"))

        let page = try host.open("im://chat?rootCateID=1&cateID=12&peer=u42")
        #expect(page.lineID == "house" && String(describing: type(of: page.carrier)) == "HousePage")
        #expect(host.lines.status(ofLine: "house")?.state == .active)
        #expect(host.lines.status(ofLine: "jobs")?.state == .loaded, "only the line the jump needed")
        #expect(host.user?.service(id: "house.listings") != nil)

        // A jobs message roaming into the house chat opens jobs to render it.
        try page.receive(key: "jobs.interview", payload: MessagePayload(json: #"{"company":"A","place":"B","position":"C","time":"D"}"#))
        #expect(try page.presented(width: 72).last?.message.degrade == nil)
        #expect(host.lines.status(ofLine: "jobs")?.state == .active)
    }

    @Test("a route opens its line; the kill switch and quarantine still apply")
    func lazyRoutesAndKillSwitch() throws {
        let workspace = try workspace()
        _ = try workspace.host()
        let host = try workspace.host()
        guard case .opened(let what) = try host.open(route: "house://listing/L1001", external: true) else {
            Issue.record("expected the listing to open")
            return
        }
        #expect(what == "listing L1001 detail: 阳光两居室 Sunny 2-room flat, ¥4200, 2 rooms")
        #expect(throws: ChatHost.OpenError.self) { try host.open(route: "jobs://interview/1/answer", external: true) }

        var config = host.config
        config.killSwitch.lines = ["jobs", "house"]
        host.apply(config)
        #expect(try host.open("im://chat?rootCateID=9&cateID=12&peer=p").isLegacy)
        #expect(host.user?.service(id: "house.listings") == nil, "a killed line's services stop")
        do {
            _ = try host.open(route: "house://listing/L1001")
            Issue.record("a killed line's route must not open")
        } catch {
            #expect(error.kind == .notFound)
            #expect(error.description == "not found: house://listing/L1001 belongs to line 'house', but line 'house' is in killSwitch.lines")
        }
        config.killSwitch.lines = []
        host.apply(config)
        #expect(host.user?.service(id: "house.listings") != nil, "and start again when the switch is lifted")
    }

    @Test("a changed plugin file is scanned again; the others are answered from the cache")
    func changedFile() throws {
        let workspace = try workspace()
        _ = try workspace.host()
        try FileManager.default.removeItem(atPath: workspace.plugins + "/jobs.so")
        try workspace.install("FixtureMinimal", as: "demo.so")
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(
            of: #""jobs": { "enabled": true } }"#, with: #""jobs": { "enabled": true }, "demo": {} }"#))
        let host = try workspace.host()
        #expect(host.lines.scannedFiles == ["cfail.so", "demo.so"])
        #expect(host.lines.status(ofLine: "demo")?.state == .loaded)
        #expect(host.lines.status(ofLine: "house")?.state == .loaded)
        #expect(host.lines.status(ofLine: "jobs")?.state == .missing)
    }

    @Test("a failure is not cached: a plugin whose library was missing is opened again once it is there")
    func failureRetried() throws {
        let workspace = try Workspace()
        try workspace.compileC("vanished.c", as: "libvanished.so", into: workspace.root)
        try workspace.compileC("needs_missing_library.c", as: "needy.so",
                               extra: ["-L", workspace.root, "-lvanished", "-Wl,-rpath," + workspace.root])
        try FileManager.default.moveItem(atPath: workspace.root + "/libvanished.so", toPath: workspace.root + "/aside.so")
        try workspace.writeConfig(#"{ "lines": { "needy": {} } }"#)
        let first = try workspace.host()
        #expect(first.lines.rows.first { $0.fileName == "needy.so" }?.problem?.code == .dlopenFailed)
        try FileManager.default.moveItem(atPath: workspace.root + "/aside.so", toPath: workspace.root + "/libvanished.so")
        let second = try workspace.host()
        #expect(second.lines.scannedFiles == ["needy.so"])
        // It opens now; what it says next (it returns no descriptor) is a fact about the bytes.
        #expect(second.lines.rows.first { $0.fileName == "needy.so" }?.problem?.code == .noEntry)
        #expect(try workspace.host().lines.scannedFiles.isEmpty)
    }

    @Test("imhost commands use the cache in the data folder; imhost plugins tells the truth")
    func commandsUseTheCache() throws {
        let workspace = try Workspace.standard()
        let first = try imhost(["route", "im://chat?rootCateID=1&peer=a"], in: workspace)
        #expect(first.status == 0)
        #expect(FileManager.default.fileExists(atPath: workspace.data + "/plugins.cache"))
        let second = try imhost(["route", "im://chat?rootCateID=1&peer=a"], in: workspace)
        #expect(second.stdout == first.stdout)
        try workspace.writePlugin("junk.so", contents: "x")
        let plugins = try imhost(["plugins"], in: workspace)
        #expect(plugins.status == 0, "a file nobody configured does not fail the command")
        #expect(plugins.stdout.contains("junk.so              -            refused"))
        let route = try imhost(["route", "im://chat?rootCateID=1&peer=a"], in: workspace)
        #expect(route.stderr.contains("refused junk.so: not an ELF shared object"))
    }
}

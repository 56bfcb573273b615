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

    func host(_ workspace: Workspace, trust: Bool = true) throws -> ChatHost {
        let config = try HostConfig.load(from: workspace.configPath)
        return try ChatHost(config: config, dataFolder: nil, pluginCache: workspace.root + "/plugins.cache", trustCache: trust)
    }

    @Test("a start from the cache registers no line until a jump, a message or a route needs it")
    func lazyStart() throws {
        let workspace = try workspace()
        let first = try host(workspace)
        #expect(first.catalog.loadedLine("house")?.isLazy == false, "no cache yet: every plugin loads")
        #expect(FileManager.default.fileExists(atPath: workspace.root + "/plugins.cache"))

        let host = try host(workspace)
        let house = try #require(host.catalog.loadedLine("house"))
        #expect(house.isLazy && house.page == nil && house.pageTypeName == "HousePage")
        #expect(house.messageKeys == ["house.listing"] && house.services == ["house.listings"])
        #expect(host.user.service(id: "house.listings") == nil, "its services start when it loads")
        #expect(host.catalog.entries.first { $0.file?.hasSuffix("junk.so") == true }?.problem?.code == .notELF, "refusals are still reported")
        #expect(host.catalog.entries.first { $0.lineID == "cfail" }?.status == .failed, "failures too")
        #expect(host.problems.count == 2)
        #expect(try host.converter.decide("im://chat?rootCateID=9&cateID=12&peer=p").target == .line("jobs"))

        let page = try host.open("im://chat?rootCateID=1&cateID=12&peer=u42")
        #expect(page.lineID == "house" && String(describing: type(of: page.carrier)) == "HousePage")
        #expect(host.catalog.loadedLine("house")?.isLazy == false)
        #expect(host.catalog.loadedLine("jobs")?.isLazy == true, "only the line the jump needed")
        #expect(host.user.service(id: "house.listings") != nil)

        // A jobs message roaming into the house chat loads jobs to render it.
        try page.receive(key: "jobs.interview", payload: MessagePayload(json: #"{"company":"A","place":"B","position":"C","time":"D"}"#))
        #expect(try page.presented(width: 72).last?.message.degrade == nil)
        #expect(host.catalog.loadedLine("jobs")?.isLazy == false)
    }

    @Test("a route of a line known from the cache loads it; the kill switch still applies")
    func lazyRoutesAndKillSwitch() throws {
        let workspace = try workspace()
        _ = try host(workspace)
        let host = try host(workspace)
        guard case .opened(let what) = try host.open(route: "house://listing/L1001", external: true) else {
            Issue.record("expected the listing to open")
            return
        }
        #expect(what == "listing L1001 detail: 阳光两居室 Sunny 2-room flat, ¥4200, 2 rooms")
        #expect(throws: ChatHost.OpenError.self) { try host.open(route: "jobs://interview/1/answer", external: true) }

        var config = host.config
        config.killSwitch.lines = ["jobs"]
        host.apply(config)
        #expect(try host.open("im://chat?rootCateID=9&cateID=12&peer=p").isLegacy)
    }

    @Test("a changed plugin file is loaded for real, and imhost plugins reloads everything")
    func changedFile() throws {
        let workspace = try workspace()
        _ = try host(workspace)
        // Jobs removed, a new line added: the cache answers for house only.
        try FileManager.default.removeItem(atPath: workspace.plugins + "/jobs.so")
        try workspace.install("FixtureMinimal", as: "demo.so")
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(
            of: #""jobs": { "enabled": true } }"#, with: #""jobs": { "enabled": true }, "demo": {} }"#))
        let host = try host(workspace)
        #expect(host.catalog.loadedLine("demo")?.isLazy == false)
        #expect(host.catalog.loadedLine("house")?.isLazy == true)
        #expect(host.catalog.entries.first { $0.lineID == "jobs" }?.status == .missing)

        let refreshed = try self.host(workspace, trust: false)
        #expect(refreshed.catalog.entries.filter { $0.status == .loaded }.allSatisfy { !$0.isLazy })
    }

    @Test("imhost commands use the cache in the data folder; imhost plugins tells the truth")
    func commandsUseTheCache() throws {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.writeConfig()
        let first = try imhost(["route", "im://chat?rootCateID=1&peer=a"], in: workspace)
        #expect(first.status == 0)
        #expect(FileManager.default.fileExists(atPath: workspace.root + "/.imhost/plugins.cache"))
        let second = try imhost(["route", "im://chat?rootCateID=1&peer=a"], in: workspace)
        #expect(second.stdout == first.stdout)
        try workspace.writePlugin("junk.so", contents: "x")
        let plugins = try imhost(["plugins"], in: workspace)
        #expect(plugins.stdout.contains("junk.so              -            refused"))
        let route = try imhost(["route", "im://chat?rootCateID=1&peer=a"], in: workspace)
        #expect(route.stderr.contains("refused junk.so: not an ELF shared object"))
    }
}

import Foundation
import Testing
@testable import IMHost

/// The plugin folder's examination, one named step at a time, in process: real plugin files,
/// the real scanner, and host.json as an operator writes it.
@Suite("Examining the plugin folder, step by step")
struct FolderExaminationTests {
    func config(_ workspace: Workspace, _ text: String) throws -> HostConfig {
        try workspace.writeConfig(text)
        return try HostConfig.load(from: workspace.configPath)
    }

    func examination(_ workspace: Workspace, _ config: HostConfig, cache: Bool = false, quarantine: [Quarantine.Hold] = []) -> FolderExamination {
        FolderExamination(config: config, dataFolder: workspace.data, cachePath: cache ? config.pluginCachePath : nil,
                          scanner: BuildProducts.imhost, quarantine: quarantine)
    }

    func states(_ examination: FolderExamination) -> [String: LineTable.State] {
        Dictionary(examination.rows.map { ($0.fileName ?? "(\($0.lineID ?? "?"))", $0.state) }, uniquingKeysWith: { first, _ in first })
    }

    @Test("each step moves the rows it is about, and only those")
    func stepByStep() throws {
        let workspace = try Workspace()
        try workspace.install("House", as: "house.so")
        try workspace.install("House", as: "house2.so")
        try workspace.install("Jobs", as: "jobs.so")
        try workspace.writePlugin("junk.so", contents: "not a library")
        try workspace.writePlugin("notes.txt", contents: "not a plugin")
        let config = try config(workspace, #"{ "lines": { "house": {}, "jobs": { "enabled": false }, "cars": {} } }"#)
        var step = examination(workspace, config)

        step.listFiles()
        #expect(step.folderProblem == nil && step.rows.isEmpty, "names only; no row is made for a file yet")

        step.checkFiles()
        #expect(states(step) == ["house.so": .discovered, "house2.so": .discovered, "jobs.so": .discovered, "junk.so": .discovered])
        guard case .refused(let junk)? = step.facts["junk.so"]?.verdict else {
            Issue.record("a refusal of the bytes is a fact, learnt without opening the file")
            return
        }
        #expect(junk.code == .notELF)
        #expect(step.scannedFiles.isEmpty)

        step.scanNewFiles()
        #expect(step.scannedFiles == ["house.so", "house2.so", "jobs.so"])
        #expect(step.facts["house.so"]?.manifest?.messageKeys == ["house.listing"])

        step.applyFacts()
        #expect(states(step) == ["house.so": .checked, "house2.so": .checked, "jobs.so": .checked, "junk.so": .refused])

        step.resolveClaims()
        #expect(states(step)["house.so"] == .refused && states(step)["house2.so"] == .refused)
        #expect(step.rows.first { $0.fileName == "house.so" }?.problem?.reason == "line 'house' is claimed by 2 files: house.so, house2.so")

        step.applyConfiguration()
        #expect(states(step)["jobs.so"] == .disabled)

        step.addMissingLines()
        #expect(states(step)["(cars)"] == .missing)
        #expect(states(step)["(house)"] == nil, "a line two refused files claim is not missing: it is refused")
    }

    @Test("a pin keeps the pinned file and refuses the other, naming the pin")
    func pins() throws {
        let workspace = try Workspace()
        try workspace.install("House", as: "house.so")
        try workspace.install("House", as: "mine.so")
        let config = try config(workspace, #"{ "lines": { "house": { "file": "mine.so" } } }"#)
        let done = FolderExamination.run(config: config, dataFolder: workspace.data, cachePath: nil, scanner: BuildProducts.imhost,
                                         quarantine: [], registered: [:])
        #expect(states(done) == ["house.so": .refused, "mine.so": .loaded])
        #expect(done.rows.first { $0.fileName == "house.so" }?.problem?.code == .pinnedElsewhere)
    }

    @Test("host.json decides the rest: not configured, killed, a digest that differs")
    func configuration() throws {
        let workspace = try Workspace.standard()
        try workspace.install("Cars", as: "cars.so")
        let config = try config(workspace, """
            { "lines": { "house": {}, "jobs": { "sha256": "\(String(repeating: "0", count: 64))" } },
              "killSwitch": { "lines": ["house"] } }
            """)
        let done = FolderExamination.run(config: config, dataFolder: workspace.data, cachePath: nil, scanner: BuildProducts.imhost,
                                         quarantine: [], registered: [:])
        #expect(states(done) == ["house.so": .killed, "jobs.so": .refused, "cars.so": .notConfigured])
        #expect(done.rows.first { $0.fileName == "jobs.so" }?.problem?.code == .digestMismatch)
    }

    @Test("a quarantine hold takes its line out; one for another file identity does not")
    func quarantine() throws {
        let workspace = try Workspace.standard()
        let config = try HostConfig.load(from: workspace.configPath)
        let identity = try #require(FileIdentity.of(workspace.plugins + "/house.so"))
        let crash = CrashRecord(time: Clock.iso8601(Clock.now()), line: "house", file: "house.so", identity: identity, what: "pageOpen",
                                key: nil, message: nil, signal: "SIGSEGV")
        let hold = Quarantine.Hold(crash, scope: .line)
        let held = FolderExamination.run(config: config, dataFolder: workspace.data, cachePath: nil, scanner: BuildProducts.imhost,
                                         quarantine: [hold], registered: [:])
        #expect(states(held)["house.so"] == .quarantined)
        var stale = hold
        stale.identity?.size += 1
        let lifted = FolderExamination.run(config: config, dataFolder: workspace.data, cachePath: nil, scanner: BuildProducts.imhost,
                                           quarantine: [stale], registered: [:])
        #expect(states(lifted)["house.so"] == .loaded, "a new file lifts a hold by itself")
    }

    @Test("a warm examination takes every fact from the cache and starts no scanner")
    func warm() throws {
        let workspace = try Workspace.standard()
        let config = try HostConfig.load(from: workspace.configPath)
        let cold = FolderExamination.run(config: config, dataFolder: workspace.data, cachePath: config.pluginCachePath,
                                         scanner: BuildProducts.imhost, quarantine: [], registered: [:])
        #expect(cold.scannedFiles == ["house.so", "jobs.so"] && cold.cacheChanged)
        var warm = examination(workspace, config, cache: true)
        warm.listFiles()
        warm.checkFiles()
        warm.scanNewFiles()
        #expect(warm.scannedFiles.isEmpty && !warm.cacheChanged)
        warm.applyFacts()
        #expect(states(warm) == ["house.so": .checked, "jobs.so": .checked])
    }

    @Test("a folder that cannot be listed is said once, and nothing loads")
    func missingFolder() throws {
        let workspace = try Workspace()
        let config = try config(workspace, #"{ "plugins": "nowhere", "lines": { "house": {} } }"#)
        var step = examination(workspace, config)
        step.listFiles()
        #expect(step.folderProblem?.hasPrefix("cannot use plugin folder \(workspace.root)/nowhere: opendir: No such file or directory") == true)
    }
}

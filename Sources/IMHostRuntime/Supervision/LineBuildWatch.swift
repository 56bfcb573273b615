import IMHost
/// Notices a new build of a line an open chat serves, and vets it before the chat moves to it.
///
/// Each ``look(at:)`` stats the files of the builds the worker said it serves: a few `stat`
/// calls, at most every ``lookInterval`` however fast the chat's loop turns (a pasted flood of
/// commands). A file whose identity (device, inode,
/// size, modification and change times) is not the build's has changed; the change is acted on
/// once the same new identity is seen again at least ``settleTime`` later, so a file still being
/// written is not taken half-way. ``vet(_:config:scanner:quarantine:)`` examines the plugin
/// folder as every command does (``LineTable``): a new file is opened by a scanner child, never
/// by the supervisor, and what it learns goes into the plugin cache the new worker reads.
package final class LineBuildWatch {
    /// A file that changed and has stayed as it is.
    package struct Change: Sendable {
        /// The build the chat runs.
        package var build: LineBuild
        /// The file's identity now; `nil` when it is gone.
        package var identity: FileIdentity?
    }

    /// What vetting a change came to.
    package enum Verdict: Sendable, Equatable {
        /// The new file serves the line: a new worker may open it.
        case ready(line: String, from: String, to: String)
        /// It does not, and the chat stays on the build it runs: why, and what to do.
        case refused(line: String, version: String, why: String)
    }

    /// How long a changed file must stay the same before it is taken: 100 ms.
    package static let settleTime: UInt64 = 100_000_000
    /// The shortest time between two looks: 20 ms.
    static let lookInterval: UInt64 = 20_000_000

    /// When the files were last looked at.
    private var lastLook: UInt64 = 0
    /// A new identity seen once, by file, and since when.
    private var seen: [String: (identity: FileIdentity?, since: UInt64)] = [:]
    /// What a vetted file was, by file: not vetted again while it stays so and the worker's
    /// build is the one it was vetted against.
    private var vetted: [String: (build: FileIdentity, file: FileIdentity?)] = [:]

    package init() {}

    /// Whether a change was seen that has not settled yet: look again soon.
    package var isSettling: Bool { !seen.isEmpty }

    /// The files of `builds` that changed and have stayed as they are since the last look.
    package func look(at builds: [LineBuild]) -> [Change] {
        let now = Clock.monotonic()
        guard now - lastLook >= Self.lookInterval else { return [] }
        lastLook = now
        var changes: [Change] = []
        var files: Set<String> = []
        for build in builds where files.insert(build.file).inserted {
            let current = FileIdentity.of(build.file)
            // What the file was when last vetted, gone (`nil`) included: a file vetted as gone is
            // not a change again at every look while it stays gone.
            let known: FileIdentity? = if let entry = vetted[build.file], entry.build == build.identity { entry.file } else { build.identity }
            guard current != known else {
                seen[build.file] = nil
                continue
            }
            guard let first = seen[build.file], first.identity == current else {
                seen[build.file] = (current, now)
                continue
            }
            if now - first.since >= Self.settleTime {
                seen[build.file] = nil
                changes.append(Change(build: build, identity: current))
            }
        }
        seen = seen.filter { files.contains($0.key) }
        return changes
    }

    /// Examines the plugin folder for `config` and says, for each change, whether its new file
    /// serves the line. A file refused is not vetted again until it changes.
    package func vet(_ changes: [Change], config: HostConfig, scanner: String, quarantine: [Quarantine.Hold]) -> [Verdict] {
        guard !changes.isEmpty else { return [] }
        let table = LineTable(config: config, dataFolder: config.dataFolder, cachePath: config.pluginCachePath,
                              scanner: scanner, quarantine: quarantine)
        return changes.map { change in
            let build = change.build
            let name = FileSystem.baseName(build.file)
            let row = table.rows.first { $0.file == build.file }
            vetted[build.file] = (build.identity, row?.identity ?? change.identity)
            guard let row, row.identity != nil else {
                let why = table.folderProblem ?? "\(name) is gone from \(table.folder); install it again to open line \(build.line) anew"
                return .refused(line: build.line, version: build.version, why: why)
            }
            if row.lineID == build.line, row.isServing {
                return .ready(line: build.line, from: build.version, to: row.descriptor?.version ?? "?")
            }
            if let other = row.lineID, other != build.line {
                return .refused(line: build.line, version: build.version,
                                why: "the new \(name) provides line '\(other)', not '\(build.line)'; install a build of \(build.line)")
            }
            let problem = row.problem?.description ?? "it does not serve (\(row.state.rawValue))"
            return .refused(line: build.line, version: build.version, why: "the new \(name) is not loaded: \(problem)")
        }
    }
}

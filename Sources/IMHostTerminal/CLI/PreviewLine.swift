#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMHostRuntime
import IMHostWeb
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// The line `imhost preview` shows, in its scratch folder: the builds it took of the library,
/// the samples of the last one, and the state the workbench's page is told (``Workbench``).
///
/// A build is taken once the library's identity (device, inode, size, times) has changed and
/// stayed the same for ``settleTime``, so a file the linker is still writing is never taken.
/// Taking it draws its samples in a child (``SampleCheck``: line code never runs in this
/// process), copies the library into the scratch plugin folder (a new file each time: a chat's
/// worker opens the copy, and the build folder is never held), and stores the samples afresh
/// as messages from ``PreviewCommand/peer``, in order, so sample N is message N.
final class PreviewLine {
    static let user = "author"
    /// How long a changed library must stay the same before it is taken.
    static let settleTime: UInt64 = 100_000_000

    let library: String
    let folder: String
    var configPath: String { folder + "/host.json" }
    private var plugins: String { folder + "/Plugins" }

    private(set) var line = ""
    private(set) var version = ""
    private(set) var build = 0
    private var builtAt: Int64 = 0
    private var samples: [SampleCheck.Report] = []
    /// Why the last build was not taken, until one is.
    private var problem: String?
    /// The identity of the library as last taken (or refused), and a new one seen, since when.
    private var known: FileIdentity?
    private var seen: (identity: FileIdentity?, since: UInt64)?
    private var store: MessageStore?

    init(library: String, folder: String) {
        self.library = library
        self.folder = folder
    }

    enum Look: Equatable {
        case nothing
        /// A new build was refused: ``problem`` says why.
        case refused
        case taken(Int)
    }

    /// Looks at the library: a new build that has settled is taken, or refused.
    func look() -> Look {
        let current = FileIdentity.of(library)
        guard current != known else {
            seen = nil
            return .nothing
        }
        let now = Clock.monotonic()
        guard let first = seen, first.identity == current else {
            seen = (current, now)
            return .nothing
        }
        guard now - first.since >= Self.settleTime else { return .nothing }
        seen = nil
        guard current != nil else {
            known = nil
            problem = "\(library) is gone (a clean build?); the workbench shows build \(build) until a new one is made"
            return .refused
        }
        if let refused = take() {
            problem = "build at \(PageRenderer.clockTime(Clock.now())) not taken: \(refused); the workbench shows build \(build)"
            return .refused
        }
        storeSamples()
        return .taken(build)
    }

    /// Takes the library as it is now: its samples drawn, copied in. Returns why not.
    func take() -> String? {
        known = FileIdentity.of(library)
        let drawn: (line: String, version: String, samples: [SampleCheck.Report])
        switch SampleCheck.run(file: library, executable: Executable.path) {
        case .refused(let why): return why
        case .drawn(let line, let version, let samples): drawn = (line, version, samples)
        }
        guard line.isEmpty || drawn.line == line else {
            return "it is line '\(drawn.line)', not '\(line)'; start imhost preview again for another line"
        }
        let copy = plugins + "/." + drawn.line + ".so.part"
        do throws(FileSystem.Failure) {
            if build == 0 {
                try FileSystem.makeFolders(plugins, mode: 0o755)
                try writeConfig(line: drawn.line)
            }
            unlink(copy)
            try FileSystem.copyFile(library, to: copy)
            chmod(copy, 0o644)
            guard rename(copy, plugins + "/" + drawn.line + ".so") == 0 else { throw FileSystem.Failure(call: "rename", code: errno) }
        } catch {
            unlink(copy)
            return "it cannot be copied into \(plugins): \(error)"
        }
        (line, version, samples) = drawn
        build += 1
        builtAt = Clock.now()
        problem = nil
        return nil
    }

    /// The scratch host's host.json: this line enabled and routed to, no broker.
    private func writeConfig(line: String) throws(FileSystem.Failure) {
        let text = """
            { "plugins": "Plugins", "data": "data", "user": "\(Self.user)",
              "lines": { "\(line)": { "enabled": true } },
              "routes": [ { "rootCateID": 1, "cateID": "*", "line": "\(line)" } ] }

            """
        try FileSystem.writeAtomically(Array(text.utf8), to: configPath)
    }

    /// Signs the scratch host in and stores the first build's samples.
    func signIn(output: Output) -> (ChatHost, HostConfig)? {
        let config: HostConfig
        do throws(ConfigError) {
            config = try HostConfig.load(from: configPath)
        } catch {
            output.diagnostic("imhost preview: the scratch host.json is refused (\(error)); report this as a bug")
            return nil
        }
        let host = CommandLineTool.makeHost(config, user: Self.user, connection: "preview")
        do {
            try host.signIn(online: false)
        } catch {
            output.diagnostic("imhost preview: cannot open the scratch store in \(folder): \(error)")
            return nil
        }
        store = host.store
        storeSamples()
        return (host, config)
    }

    /// The samples' chat holds this build's samples, in order, and nothing else.
    private func storeSamples() {
        guard let store else { return }
        do throws(StoreError) {
            try store.clear(PreviewCommand.peer)
            for sample in samples {
                try store.storeLocal(from: PreviewCommand.peer, key: sample.key, payload: MessagePayload(json: sample.payload ?? "{}"), at: Clock.now())
            }
        } catch {
            problem = "the samples could not be stored in the scratch store: \(error)"
        }
    }

    /// What the workbench's page is told: the line, the build, each sample with its number in
    /// the samples' chat, what was found in it, and the terminal's drawing of it from `page`.
    func state(page: PageView?, drawnBy: Int) -> String {
        let renderer = PageRenderer(width: PageRenderer.defaultWidth, colors: false)
        let rows = samples.enumerated().map { index, sample in
            let message = page?.messages.first { $0.number == index + 1 }
            return State.Sample(number: index + 1, key: sample.key, name: sample.name, problems: sample.problems, failure: sample.failure,
                                terminal: message.map { renderer.render(message: $0) })
        }
        let state = State(line: line, version: version, build: build, drawnBy: drawnBy, builtAt: builtAt, problem: problem,
                          chat: PreviewCommand.chat, samples: rows)
        return JSONOutput.encode(state)
    }

    struct State: Encodable {
        struct Sample: Encodable {
            var number: Int
            var key: String
            var name: String
            var problems: [SampleCheck.Problem]
            var failure: String?
            var terminal: String?
        }
        var line: String
        var version: String
        var build: Int
        var drawnBy: Int
        /// When the build was taken, in milliseconds since 1970.
        var builtAt: Int64
        var problem: String?
        var chat: String
        var samples: [Sample]
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMHostRuntime
import IMHostWeb
import IMKit
import Synchronization
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
    /// What the workbench says above the samples: why the last build was not taken, until one
    /// is, or what of the build taken could not be drawn.
    private(set) var problem: String?
    /// Why the last build was not taken, alone.
    private(set) var refusal: String?
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

    /// Samples being drawn off the server's loop (a plugin's may take seconds): the copy they
    /// are drawn from, and the identity of the library it was copied from.
    private var drawing: (job: SampleJob, copy: String)?
    /// Whether the last build taken is not drawn yet (its worker starting), and since when: a
    /// new one waits for it (at most ``drawWait``), so a file a starting worker is opening is
    /// never replaced under it.
    var waitsForDrawing: () -> Bool = { false }
    private var takenAt: UInt64 = 0
    static let drawWait: UInt64 = 5_000_000_000

    /// Looks at the library: a new build that has settled is copied and its samples drawn (in a
    /// child, waited for off this loop); once drawn, it is taken, or refused.
    func look() -> Look {
        if let drawing {
            guard let outcome = drawing.job.outcome else { return .nothing }
            self.drawing = nil
            return finish(outcome, copy: drawing.copy)
        }
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
        guard now - first.since >= Self.settleTime, !(waitsForDrawing() && now - takenAt < Self.drawWait) else { return .nothing }
        seen = nil
        guard current != nil else {
            known = nil
            problem = "\(library) is gone (a clean build?); the workbench shows build \(build) until a new one is made"
            return .refused
        }
        switch copy() {
        case .failure(let why):
            return refuse(why.words)
        case .success(let copy):
            drawing = (SampleJob(file: copy), copy)
            return .nothing
        }
    }

    /// Takes the library as it is now, waiting for its samples: the first build. Returns why not.
    func takeFirst() -> String? {
        switch copy() {
        case .failure(let why): return why.words
        case .success(let copy):
            // Nothing is served yet: drawn here, waited for.
            return finish(SampleCheck.run(file: copy, executable: Executable.path), copy: copy) == .taken(1) ? nil : refusal
        }
    }

    /// Copies the library beside where the line's plugin goes, as it is now: the samples are
    /// drawn from this copy, and this copy is what a worker opens, so they are the same build.
    private func copy() -> Result<String, PreviewCommand.Refusal> {
        let identity = FileIdentity.of(library)
        known = identity
        let copy = plugins + "/.build-\(build + 1).part"
        do throws(FileSystem.Failure) {
            try FileSystem.makeFolders(plugins, mode: 0o755)
            unlink(copy)
            try FileSystem.copyFile(library, to: copy)
            chmod(copy, 0o644)
        } catch {
            unlink(copy)
            return .failure(PreviewCommand.Refusal(words: "it cannot be copied into \(plugins): \(error)"))
        }
        // Written to while it was copied: taken once it settles again.
        guard FileIdentity.of(library) == identity else {
            unlink(copy)
            known = nil
            return .failure(PreviewCommand.Refusal(words: "it changed while it was copied; it is taken once it stays as it is"))
        }
        return .success(copy)
    }

    /// Says why a build is not taken: alone, and for the workbench with the build it keeps.
    private func refuse(_ why: String) -> Look {
        refusal = why
        problem = "build at \(PageRenderer.clockTime(Clock.now())) not taken: \(why); the workbench shows build \(build)"
        return .refused
    }

    /// Takes the build whose samples came to `outcome` (drawn from `copy`), or says why not.
    private func finish(_ outcome: SampleCheck.Outcome, copy: String) -> Look {
        let refused = { (why: String) -> Look in
            unlink(copy)
            return self.refuse(why)
        }
        let drawn: (line: String, version: String, samples: [SampleCheck.Report], cut: String?)
        switch outcome {
        case .refused(let why): return refused(why)
        case .drawn(let line, let version, let samples, let cut): drawn = (line, version, samples, cut)
        }
        guard line.isEmpty || drawn.line == line else {
            return refused("it is line '\(drawn.line)', not '\(line)'; start imhost preview again for another line")
        }
        do throws(FileSystem.Failure) {
            if build == 0 { try writeConfig(line: drawn.line) }
            guard rename(copy, plugins + "/" + drawn.line + ".so") == 0 else { throw FileSystem.Failure(call: "rename", code: errno) }
        } catch {
            return refused("it cannot be put into \(plugins): \(error)")
        }
        (line, version, samples) = (drawn.line, drawn.version, drawn.samples)
        build += 1
        builtAt = Clock.now()
        takenAt = Clock.monotonic()
        refusal = nil
        problem = drawn.cut.map { "build \(build): the samples after the \(drawn.samples.count) shown could not be drawn: \($0)" }
        storeSamples()
        return .taken(build)
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
            var message = page?.messages.first { $0.number == index + 1 }
            // A builder of lines laid out for a terminal chat, not for the browser's width.
            if case .lines? = message?.body, let lines = sample.lines { message?.body = .lines(lines) }
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

/// Samples drawn on a thread of their own (``SampleCheck/run(file:executable:)`` waits on a
/// child that may take seconds), so the workbench's server goes on serving meanwhile.
final class SampleJob: Sendable {
    private let result = Mutex<SampleCheck.Outcome?>(nil)

    init(file: String) {
        let executable = Executable.path
        let started = DetachedThread.start { [self] in
            let outcome = SampleCheck.run(file: file, executable: executable)
            result.withLock { $0 = outcome }
        }
        if !started { result.withLock { $0 = .refused("no thread could be made to draw its samples") } }
    }

    /// What drawing came to; `nil` while it goes on.
    var outcome: SampleCheck.Outcome? { result.withLock { $0 } }
}

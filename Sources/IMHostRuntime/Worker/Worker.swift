#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// A chat worker's long-running work: a chat typed into, or a scenario played, one message of
/// its supervisor at a time. Every message is answered with ``FromWorker/ready(_:)`` (or
/// ``FromWorker/failed(reason:resume:)``), carrying what a new worker reopens after a crash.
final class Worker {
    private let host: ChatHost
    private let channel: WorkerChannel
    private let output: Output
    private let width: Int
    private let colors: Bool
    private let arguments: Arguments
    /// What to take up, when this worker replaces one that crashed.
    private let resume: WorkerResume?
    /// The builds of lines last told to the supervisor.
    private var toldBuilds: [LineBuild]?
    /// What the open chat would reopen now, for telling the supervisor between commands.
    private var currentResume: (() -> WorkerResume)?
    /// Whether the supervisor was last told the session is another host's.
    private var toldElsewhere = false
    /// The pictures of the open lines last told to the supervisor (a browser's page only).
    private var toldPictures: [String] = []

    init(host: ChatHost, channel: WorkerChannel, output: Output, width: Int, colors: Bool, arguments: Arguments, resume: WorkerResume?) {
        self.host = host
        self.channel = channel
        self.output = output
        self.width = width
        self.colors = colors
        self.arguments = arguments
        self.resume = resume
    }

    private var configPath: String { CommandLineTool.configPath(arguments) }

    /// The exit code at the end of input, or after SIGINT/SIGTERM.
    private func exitCode() -> Int32 { Interruption.signal.map(Interruption.exitCode) ?? CommandLineTool.ExitCode.ok }

    /// The supervisor's messages, until its input ends.
    private func messages() -> AnyIterator<ToWorker> {
        AnyIterator { [channel] in
            guard case .message(let message) = WorkerCommand.nextMessage(channel) else { return nil }
            return message
        }
    }

    private func unexpected(_ message: ToWorker) -> String {
        "the worker was sent \(message), which this mode does not take"
    }

    // MARK: chat

    /// What a chat without a transport says, once a store.
    static func noTransport(_ configPath: String) -> String {
        "no transport in \(FileSystem.baseName(configPath)): this host works alone, and what you send stays queued (said once)"
    }

    func chat(url: String) -> Int32 {
        let session: ChatSession
        do {
            // After a crash or a line's new build the user stays as they were: offline, if they
            // asked to be, or thrown off by another host of theirs, until /online.
            try host.signIn(online: resume?.online ?? true, elsewhere: resume?.elsewhere ?? false)
            toldElsewhere = resume?.elsewhere ?? false
            if resume == nil { awaitFleet() }
            if resume == nil {
                CommandLineTool.reportNotes(host.store, output: output)
                if !host.hasTransport, host.store?.firstTime("told: no transport") == true {
                    output.diagnostic("imhost: \(Self.noTransport(configPath))")
                }
            }
            // A browser's page says what a person saw (``ToWorker/seen(through:)``); a terminal's
            // chat is read as it is drawn.
            session = try ChatSession(host: host, url: resume?.url ?? url, window: resume?.window ?? 20, configPath: configPath,
                                      output: output, width: width, readsWhatItDraws: !arguments.flags.contains("--web-page")) { [weak self, channel] page in
                // A browser's page fetches the pictures its cards show from its server: they go first.
                self?.tellPictures()
                channel.say(.page(page))
            }
            // Opens the conversation's files now: an id the store refuses is refused here.
            _ = try session.page.messageCount()
        } catch let error as ChatHost.OpenError {
            // It says what kind of refusal it is ("refused:", "not found:") itself.
            output.diagnostic("imhost chat: \(error)")
            return CommandLineTool.ExitCode.failure
        } catch {
            output.diagnostic("imhost chat: refused: \(error)")
            return CommandLineTool.ExitCode.failure
        }
        CommandLineTool.reportNotes(host.store, output: output)
        session.show()
        if arguments.flags.contains("--terminal") && resume == nil { output.out("Type /help for commands.\n") }
        if CommandLineTool.outputLost(output, command: "chat") { return CommandLineTool.ExitCode.failure }
        let state = { [host] in
            WorkerResume(url: session.url, window: session.page.window, online: host.wantsOnline,
                         elsewhere: host.courier?.connectedElsewhere, conversation: session.page.conversation)
        }
        currentResume = state
        func ready() {
            CommandLineTool.reportNotices(host, output: output)
            tellBuilds()
            toldElsewhere = host.courier?.connectedElsewhere ?? false
            channel.say(.ready(state()))
        }
        takeUpDrafts(session)
        ready()
        while let message = nextCommand(session) {
            switch message {
            case .command(let text, let draft):
                guard host.sending(draft: draft, { session.handle(text) }) else { return CommandLineTool.ExitCode.ok }
            case .reload:
                session.perform(.reload)
            case .refresh:
                // What changed is shown as the loop looks at the store again, before the next wait.
                break
            case .seen(let through):
                session.seen(through: through)
            case .start, .step:
                output.diagnostic("imhost: \(unexpected(message))")
            }
            // Nobody reads the chat any more (a closed pipe, a full disk): stop taking input.
            if CommandLineTool.outputLost(output, command: "chat") { return CommandLineTool.ExitCode.failure }
            ready()
        }
        return exitCode()
    }

    /// Sends, or refuses, what was typed into this chat and left as a draft by a worker that
    /// crashed before it was queued (or by a chat killed outright). Taps, menu, bar items and
    /// quick replies are never kept, so never done again.
    private func takeUpDrafts(_ session: ChatSession) {
        guard let store = host.store, let drafts = try? store.drafts(of: session.page.conversation), !drafts.isEmpty else { return }
        // Another chat of the user, running now, sends its own drafts.
        let supervisor = getppid()
        for draft in drafts where draft.isLeft(supervisor: supervisor) {
            output.out(TerminalText.safe("taking up what you typed before the chat restarted: \(draft.typed)", newlines: false) + "\n")
            _ = host.sending(draft: draft.id) { session.handle(draft.typed) }
        }
    }

    /// The supervisor's next command; meanwhile, the connection runs (messages arrive and are
    /// shown, receipts change what the page says), or, when another process holds it, the
    /// database is watched for what that process stores. `nil` at the end of input.
    private func nextCommand(_ session: ChatSession?, follow: (([Courier.Event]) -> Void)? = nil) -> ToWorker? {
        while Interruption.signal == nil {
            // The connection runs before every wait, so a stream of commands never starves it.
            let courier = host.courier
            if courier != nil {
                // A scenario shows what arrived when a step asks (await, show), not as it comes.
                let events = host.serviceConnection()
                session?.present(events)
                // Drawing what arrived may have opened a line.
                if session != nil, !events.isEmpty { tellBuilds() }
                // Thrown off by another host of the user (or back): a worker started after this
                // must not take the session back by itself.
                if let currentResume, let courier, courier.connectedElsewhere != toldElsewhere {
                    toldElsewhere = courier.connectedElsewhere
                    channel.say(.resume(currentResume()))
                }
                follow?(events)
            } else if host.hasTransport {
                // The process holding the connection keeps what the operator publishes in the cache.
                if let applied = host.followFleetCache() {
                    session?.present([applied])
                    follow?([applied])
                }
                if host.store?.changedElsewhere() == true { session?.showIfChanged() }
            }
            // Storing an arrival or drawing the page may have found the database damaged: said now.
            CommandLineTool.reportNotes(host.store, output: output)
            if CommandLineTool.outputLost(output, command: session == nil ? "play" : "chat") { return nil }
            let wait = courier?.wakeAfter() ?? 1000
            switch channel.receive(waiting: wait, wake: courier?.readable ?? [], wakeWriting: courier?.writable ?? []) {
            case .message(let message): return message
            case .end: return nil
            case .unreadable(let line): output.diagnostic("imhost __worker: ignored a message that is not one: \(line)")
            case .quiet: continue
            }
        }
        return nil
    }

    /// Tells the supervisor which builds of lines the chat serves, when that changed: it watches
    /// their files for a new build.
    private func tellBuilds() {
        let builds = host.lines.builds
        guard builds != toldBuilds else { return }
        toldBuilds = builds
        channel.say(.lines(builds: builds))
    }

    /// Tells the server of a browser's page the pictures of the lines it opened, when they changed.
    private func tellPictures() {
        guard arguments.flags.contains("--web-page") else { return }
        let pictures = host.lines.pictures
        let names = pictures.map { "\($0.line)/\($0.version)/\($0.name)" }
        guard names != toldPictures else { return }
        toldPictures = names
        channel.say(.pictures(pictures))
    }

    /// A scenario of several people: signs in and waits (at most 10 s) until the broker hands
    /// this user's messages to it, so what others send from the first step on arrives.
    private func connectForScenario() throws {
        try host.signIn()
        runConnection(seconds: 10, say: { notice in
            // Connecting is what a scenario does first: only what went otherwise is said.
            if case .connected(_, _, again: false) = notice { return }
            output.diagnostic("imhost: \(host.userID): \(ConnectionWords.notice(notice))")
        }, until: { $0.inboxConfirmed })
    }

    /// Runs the connection before a page is open, until `done` (or `seconds` pass): notices go
    /// to `say`, arrivals are stored, and a fleet configuration that comes is applied.
    private func runConnection(seconds: Int64, say: (ConnectionNotice) -> Void, until done: (Courier) -> Bool) {
        guard let courier = host.courier else { return }
        let deadline = Clock.monotonic() + UInt64(seconds) * 1_000_000_000
        while !done(courier), courier.wantsOnline, Clock.monotonic() < deadline, Interruption.signal == nil {
            for event in host.serviceConnection() {
                if case .notice(let notice) = event { say(notice) }
            }
            if done(courier) { break }
            courier.wait(milliseconds: min(courier.wakeAfter(), 100))
        }
    }

    /// Before a chat's first page: the fleet configuration the broker retains (at most
    /// ``Courier/fleetWait`` after subscribing; the cached one if the broker cannot be reached).
    private func awaitFleet() {
        // Said as the chat says its notices: a line each, on standard output.
        runConnection(seconds: 5, say: { output.out(ConnectionWords.notice($0) + "\n") }, until: { $0.fleetSettled })
        if host.courier != nil, host.config.fleet == nil {
            output.diagnostic("imhost: no fleet configuration from the broker and none cached: this host opens on host.json alone")
        }
    }

    // MARK: play

    func play(file: String, demo: Bool) -> Int32 {
        let scenario: Scenario
        do {
            let bundled = demo ? DemoScenario.named(file) : nil
            let text = try bundled?.text ?? FileSystem.readDocument(file, limit: HostConfig.Limits.documentBytes)
            scenario = try Scenario.parse(text, file: bundled?.name ?? file, folder: bundled != nil ? DemoFiles.folder ?? "/nonexistent" : nil,
                                          lineOrder: host.config.lineOrder)
        } catch {
            output.diagnostic("imhost play: \(error)")
            return CommandLineTool.ExitCode.usage
        }
        let runner = ScenarioRunner(scenario: scenario, host: host, output: output, width: width, colors: colors,
                                    fixedClock: demo || arguments.flags.contains("--fixed-clock"), configPath: configPath)
        if let resume {
            do {
                try host.signIn()
                try runner.restore(resume.scenario ?? ScenarioProgress(), url: resume.url, window: resume.window)
            } catch {
                output.diagnostic("imhost play: cannot reopen the chat after a crash: \(error)")
                return CommandLineTool.ExitCode.failure
            }
        } else if host.courier == nil, host.connectionCommand != nil {
            do {
                try connectForScenario()
            } catch {
                output.diagnostic("imhost play: cannot sign \(host.userID) in: \(error)")
                return CommandLineTool.ExitCode.failure
            }
        }
        func answer(failure: String? = nil) {
            CommandLineTool.reportNotices(host, output: output)
            let state = WorkerResume(url: runner.url, window: runner.page?.window, scenario: runner.progress)
            channel.say(failure.map { .failed(reason: $0, resume: state) } ?? .ready(state))
        }
        answer()
        // With a connection, it runs between steps too: what this user sends goes out, what
        // others send comes in, as in a chat.
        let next: () -> ToWorker? = host.connectionCommand == nil ? messages().next : { self.nextCommand(nil, follow: runner.follow) }
        while let message = next() {
            if CommandLineTool.outputLost(output, command: "play") { return CommandLineTool.ExitCode.failure }
            guard case .step(let number) = message else {
                answer(failure: unexpected(message))
                continue
            }
            do {
                try runner.perform(number)
                answer()
            } catch {
                answer(failure: error.description)
            }
        }
        return exitCode()
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CIMHostSupport
import IMHost
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// A chat worker's long-running work: a chat typed into, or a scenario played, one message of
/// its supervisor at a time. Every message is answered with ``FromWorker/ready(_:)`` (or
/// ``FromWorker/failed(reason:resume:)``), carrying what a new worker reopens after a crash.
package final class Worker {
    /// How the worker was started, as its command line said.
    package struct Settings: Sendable {
        /// The host.json it reads, as `--config` named it.
        package var configPath: String
        /// The page is drawn for a browser; the serving process holds the connection.
        package var webPage = false
        /// The supervisor draws on a terminal.
        package var terminal = false
        /// A scenario plays on a fixed clock.
        package var fixedClock = false

        package init(configPath: String, webPage: Bool = false, terminal: Bool = false, fixedClock: Bool = false) {
            self.configPath = configPath
            self.webPage = webPage
            self.terminal = terminal
            self.fixedClock = fixedClock
        }
    }

    package let host: ChatHost
    package let channel: WorkerChannel
    package let output: Output
    package let width: Int
    package let colors: Bool
    package let settings: Settings
    /// What to take up, when this worker replaces one that crashed.
    package let resume: WorkerResume?
    /// The builds of lines last told to the supervisor.
    private var toldBuilds: [LineBuild]?
    /// What the open chat would reopen now, for telling the supervisor between commands.
    private var currentResume: (() -> WorkerResume)?
    /// Whether the supervisor was last told the session is another host's.
    private var toldElsewhere = false
    /// The pictures of the open lines last told to the supervisor (a browser's page only).
    private var toldPictures: [String] = []
    /// What wakes a worker that does not hold the connection: the user's store and the fleet
    /// cache changing (made on first need; `nil` when the kernel gives no watch).
    private lazy var changeWatch: ChangeWatch? = host.store.flatMap { store in
        ChangeWatch(files: [store.path, store.path + "-wal", FleetCache(dataFolder: host.dataFolder).path])
    }
    /// The longest a worker without the connection sleeps when nothing wakes it.
    static let quietMilliseconds: Int32 = 60_000

    package init(host: ChatHost, channel: WorkerChannel, output: Output, width: Int, colors: Bool, settings: Settings, resume: WorkerResume?) {
        self.host = host
        self.channel = channel
        self.output = output
        self.width = width
        self.colors = colors
        self.settings = settings
        self.resume = resume
    }

    package var configPath: String { settings.configPath }

    /// The exit code at the end of input, or after SIGINT/SIGTERM.
    package func exitCode() -> Int32 { Interruption.signal.map(Interruption.exitCode) ?? ExitCode.ok }

    /// The supervisor's messages, until its input ends.
    package func messages() -> AnyIterator<ToWorker> {
        AnyIterator { [channel] in
            guard case .message(let message) = Self.nextMessage(channel) else { return nil }
            return message
        }
    }

    /// The supervisor's next message; `.end` at end of input or on SIGINT/SIGTERM.
    package static func nextMessage(_ channel: WorkerChannel) -> WorkerChannel.Received {
        while Interruption.signal == nil {
            switch channel.receive(waiting: 200) {
            case .quiet: continue
            case .unreadable(let line):
                Output.standard.diagnostic("imhost __worker: ignored a message that is not one: \(line)")
            case let received: return received
            }
        }
        return .end
    }

    /// A spare's chat: the URL its supervisor sends once a page wants it; `nil` when the input
    /// closed first.
    private func awaitChat() -> String? {
        while true {
            switch Self.nextMessage(channel) {
            case .message(.open(let url)):
                Self.name(spare: false)
                return url
            case .message(let other): output.diagnostic("imhost __worker: \(unexpected(other))")
            default: return nil
            }
        }
    }

    /// Names the process (what `ps` and /proc/PID/comm show) a spare worker's, `imhost-spare`,
    /// or, once it has its chat, a page's, `imhost-worker`.
    package static func name(spare: Bool) {
        _ = imhost_set_process_name(spare ? "imhost-spare" : "imhost-worker")
    }

    package func unexpected(_ message: ToWorker) -> String {
        "the worker was sent \(message), which this mode does not take"
    }

    // MARK: chat

    /// What a chat without a transport says, once a store.
    package static func noTransport(_ configPath: String) -> String {
        "no transport in \(FileSystem.baseName(configPath)): this host works alone, and what you send stays queued (said once)"
    }

    /// Opens the chat at `url` and serves it until its supervisor closes the input. `nil`: a
    /// spare's, whose chat comes once a page wants one (``ToWorker/open(url:)``): it signs in
    /// first, so what is left to do then is only the chat's own.
    package func chat(url: String?) -> Int32 {
        let session: ChatSession
        do {
            // After a crash or a line's new build the user stays as they were: offline, if they
            // asked to be, or thrown off by another host of theirs, until /online.
            try host.signIn(online: resume?.online ?? true, elsewhere: resume?.elsewhere ?? false)
            toldElsewhere = resume?.elsewhere ?? false
            if resume == nil { awaitFleet() }
            if resume == nil {
                Reports.notes(host.store, output: output)
                if !host.hasTransport, host.store?.firstTime("told: no transport") == true {
                    output.diagnostic("imhost: \(Self.noTransport(configPath))")
                }
            }
            // Let go before any page wanted it (the server ended, or reloaded its settings).
            guard let url = url ?? awaitChat() else { return ExitCode.ok }
            // A browser's page says what a person saw (``ChatAction/seen(through:)``); a terminal's
            // chat is read as it is drawn.
            session = try ChatSession(host: host, url: resume?.url ?? url, window: resume?.window ?? 20, configPath: configPath,
                                      output: output, width: width, readsWhatItDraws: !settings.webPage, draw: { [weak self, channel] page in
                // A browser's page fetches the pictures its cards show from its server: they go first.
                self?.tellPictures()
                channel.say(.page(page))
            }, reply: { [channel] reply in channel.say(.replied(reply)) })
            // Opens the conversation's files now: an id the store refuses is refused here.
            _ = try session.page.messageCount()
        } catch let error as ChatHost.OpenError {
            // It says what kind of refusal it is ("refused:", "not found:") itself.
            output.diagnostic("imhost chat: \(error)")
            return ExitCode.failure
        } catch {
            output.diagnostic("imhost chat: refused: \(error)")
            return ExitCode.failure
        }
        Reports.notes(host.store, output: output)
        session.show()
        if Reports.outputLost(output, command: "chat") { return ExitCode.failure }
        let state = { [host] in
            WorkerResume(url: session.url, window: session.page.window, online: host.wantsOnline,
                         elsewhere: host.courier?.connectedElsewhere, conversation: session.page.conversation)
        }
        currentResume = state
        func ready() {
            Reports.notices(host, output: output)
            tellBuilds()
            toldElsewhere = host.courier?.connectedElsewhere ?? false
            channel.say(.ready(state()))
        }
        takeUpDrafts(session)
        ready()
        while let message = nextCommand(session) {
            switch message {
            case .act(let action, let draft):
                host.sending(draft: draft) { session.perform(action) }
            case .reload:
                session.perform(.reload)
            case .refresh:
                // What changed is shown as the loop looks at the store again, before the next wait.
                break
            case .start, .open, .step:
                output.diagnostic("imhost: \(unexpected(message))")
            }
            // Nobody reads the chat any more (a closed pipe, a full disk): stop taking input.
            if Reports.outputLost(output, command: "chat") { return ExitCode.failure }
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
            guard let action = DraftKeeper.action(of: draft.typed) else {
                _ = try? store.discardDraft(draft.id)
                continue
            }
            channel.say(.replied(.draftTakenUp(action)))
            host.sending(draft: draft.id) { session.perform(action) }
        }
    }

    /// The supervisor's next command; meanwhile, the connection runs (messages arrive and are
    /// shown, receipts change what the page says), or, when this process holds none, the
    /// database is watched for what other processes store. `nil` at the end of input.
    package func nextCommand(_ session: ChatSession?, follow: (([Courier.Event]) -> Void)? = nil) -> ToWorker? {
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
            } else {
                _ = changeWatch?.drain()
                // The process holding the connection keeps what the operator publishes in the cache.
                if host.hasTransport, let applied = host.followFleetCache() {
                    session?.present([applied])
                    follow?([applied])
                }
                // What another process stored (the connection's holder, or `imhost play` on this
                // folder) shows as it would had it arrived here.
                if host.store?.changedElsewhere() == true { session?.showIfChanged() }
            }
            // Storing an arrival or drawing the page may have found the database damaged: said now.
            Reports.notes(host.store, output: output)
            if Reports.outputLost(output, command: session == nil ? "play" : "chat") { return nil }
            // Without the connection, what other processes store or cache wakes this one (a
            // minute at most between looks, should the kernel miss one); without a watch, every second.
            let watch = courier == nil ? changeWatch : nil
            let wait = courier?.wakeAfter() ?? (watch != nil ? Self.quietMilliseconds : 1000)
            switch channel.receive(waiting: wait, wake: (courier?.readable ?? []) + (watch.map { [$0.descriptor] } ?? []),
                                   wakeWriting: courier?.writable ?? []) {
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
        guard settings.webPage else { return }
        let pictures = host.lines.pictures
        let names = pictures.map { "\($0.line)/\($0.version)/\($0.name)" }
        guard names != toldPictures else { return }
        toldPictures = names
        channel.say(.pictures(pictures))
    }

    /// A scenario of several people: signs in and waits (at most 10 s) until the broker hands
    /// this user's messages to it, so what others send from the first step on arrives.
    package func connectForScenario() throws {
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
        runConnection(seconds: 5, say: { [channel] in channel.say(.replied(.notice(ConnectionWords.notice($0), .init($0)))) }, until: { $0.fleetSettled })
        if host.courier != nil, host.config.fleet == nil {
            output.diagnostic("imhost: no fleet configuration from the broker and none cached: this host opens on host.json alone")
        }
    }
}

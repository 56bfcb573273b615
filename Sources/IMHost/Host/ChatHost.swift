@_spi(Host) import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// The running host: its configuration, the plugin files and lines (``LineTable``), the
/// converter and route table, and the signed-in user with their conversations and services.
///
/// Every command builds its host the same way, through ``init(config:options:)``: the plugin
/// cache, the scanner, host.json, pins and the quarantine are applied here, once. Line code runs
/// only through this host, inside breadcrumb frames. Libraries are never unloaded.
public final class ChatHost {
    /// The configuration in force.
    public private(set) var config: HostConfig
    /// Conversations, quarantine and crash records live here.
    public let dataFolder: String
    /// The plugin files and lines, and where each stands.
    public let lines: LineTable
    /// Routes jump URLs with the configuration in force.
    public private(set) var converter: Converter
    /// The signed-in user.
    public private(set) var userID: String
    /// Milliseconds since 1970 for new messages; tests fix it.
    public var clock: () -> Int64 = { Clock.now() }
    /// Says something a person should know at once, while the host is still busy (it waits for
    /// another process importing the same store, say). The terminal sets it; default: nothing.
    public var announce: (String) -> Void = { _ in }
    /// Crashes found at start in breadcrumbs of processes that died with nobody to record them.
    public private(set) var recoveredCrashes: [CrashRecord] = []

    let lineGuard: LineGuard
    private var reservation: Breadcrumb.Reservation?
    private let durable: Bool
    /// The signed-in user: their services, conversations and the sender for their messages.
    private var signedIn: SignedIn?
    /// The command to hold the user's connection for, if this process talks to the broker.
    public let connectionCommand: String?
    /// The user's connection, in the process that holds it (``signIn(online:)`` takes it).
    public internal(set) var courier: Courier?
    /// Who holds the user's connection, when another process does.
    public internal(set) var connectionHolder: ConnectionLock.Holder?
    /// Why the cached fleet configuration could not be used, when it could not.
    var fleetProblem: String?
    /// The fleet cache as last looked at (inode, size, modification time), to notice another
    /// process of this data folder keeping a newer one.
    var fleetCacheStamp: [Int] = []
    /// Fleet configurations not applied and said in the current minute, and those not said.
    var fleetRefusals = RefusalLimit()

    private struct SignedIn {
        let session: UserSession
        let store: MessageStore
        let sender: MessageSender
    }

    /// The host's own services, which lines' services may depend on.
    static var hostServices: [ServiceRegistration] {
        [ServiceRegistration(id: ConnectionService.id) { ConnectionService() }]
    }

    /// Loads host.json at `configPath` and builds the host from it.
    /// - Throws: ``ConfigError`` when host.json is missing or invalid; nothing is loaded then.
    public convenience init(configPath: String, options: Options = Options()) throws(ConfigError) {
        self.init(config: try HostConfig.load(from: configPath), options: options)
    }

    /// Builds the host for a configuration: records crashes left by processes that died
    /// unsupervised, examines the plugin folder (cache, scanner, pins, quarantine), and makes
    /// the converter. Signs nobody in and opens no line's library yet.
    public init(config: HostConfig, options: Options) {
        dataFolder = options.dataFolder ?? config.dataFolder
        durable = options.durable
        connectionCommand = options.connection
        userID = options.user ?? config.user
        // The last good fleet configuration, before any page opens: fleet control never fails open.
        var config = config
        let cached = FleetCache(dataFolder: dataFolder).load()
        config.fleet = cached.config.map { FleetState(config: $0, user: options.user ?? config.user) }
        fleetProblem = cached.problem
        self.config = config

        var breadcrumb: Breadcrumb?
        switch options.breadcrumbs {
        case .none:
            break
        case .own:
            if let made = try? Breadcrumb.Reservation(dataFolder: dataFolder) {
                reservation = made
                breadcrumb = try? Breadcrumb(fd: made.fd)
            }
        case .attach(let fd):
            breadcrumb = try? Breadcrumb(fd: fd)
            close(fd)
        }
        breadcrumb?.watchCrashes()
        lineGuard = LineGuard(breadcrumb: breadcrumb)

        var recovered: [CrashRecord] = []
        let folder = dataFolder
        Breadcrumb.collectOrphans(dataFolder: folder) { snapshot in
            // Its own crash handler caught a fatal signal in line code: the line's crash. Killed
            // from outside with a call in flight (its supervisor killed, the worker dying with
            // it): nothing says the line was at fault, so it is recorded and not held against it.
            let record: CrashRecord
            if snapshot.fatalSignal != 0 {
                record = CrashRecord(snapshot.frame, ending: CrashRecord.signalName(snapshot.fatalSignal),
                                     detail: "the process died of it in line code with nobody watching; found at the next start")
            } else {
                record = CrashRecord(snapshot.frame, ending: "unknown",
                                     detail: "the process was killed from outside (its supervisor ended too) during this call; not counted against the line")
            }
            if case .success(let written) = Quarantine.record(record, dataFolder: folder, holding: snapshot.fatalSignal != 0) {
                recovered.append(written.crash)
            }
        }
        // What chats killed outright said they run is not so any more.
        OpenChats.removeLeftovers(dataFolder: folder)
        // The program started again as the plugin scanner decodes photos too.
        PhotoDecoder.shared.use(executable: options.scanner)
        lines = LineTable(config: config, dataFolder: dataFolder, cachePath: config.pluginCachePath, scanner: options.scanner,
                          quarantine: options.quarantine)
        converter = Converter(config: config, lines: lines.availability)
        recoveredCrashes = recovered
    }

    deinit {
        signedIn?.session.finalize()
        reservation?.remove()
    }

    // MARK: The user

    /// Signs the user in, if nobody is: opens their store (importing a 1.0 data folder the
    /// first time) and builds their services (the host's now; a line's when the line is first
    /// used). `online` says whether the user wants the connection; without a transport there is
    /// none, and what they send stays queued. Every command that opens a chat or a route signs
    /// in first, explicitly: nothing signs in as a side effect.
    /// - Throws: ``StoreError`` when the user's store cannot be opened.
    /// `elsewhere`: another host of the user took the session before this process started (a
    /// chat's worker started again after that): the connection stays offline until `/online`.
    public func signIn(online: Bool = true, elsewhere: Bool = false) throws {
        guard signedIn == nil else { return }
        let store = durable ? try MessageStore(dataFolder: dataFolder, user: userID, say: announce) : try MessageStore(memoryFor: userID)
        let sender = MessageSender(
            userID: userID, store: store, limits: config.limits, lineGuard: lineGuard,
            lookup: { [weak self] key in self?.registeredBuilder(for: key) },
            degrade: { [weak self] key in self?.degrade(forKey: key) },
            clock: { [weak self] in self?.clock() ?? Clock.now() })
        let lineTransport = Transport(isOnline: false) { [weak sender] (key, payload, peer) throws(SendError) in
            guard let sender else { throw SendError(.notStored, "the user signed out") }
            return try sender.send(key: key, payload: payload, to: peer).envelope
        }
        let session = UserSession(user: userID, transport: lineTransport, guard: lineGuard) { [weak self] line in self?.lines.mark(of: line) }
        session.start(Self.hostServices)
        for line in lines.registeredLines where lines.availability(of: line) == .available {
            session.start(lines.services(of: line))
            lines.setServicesStarted(line, true)
        }
        wantsOnline = online
        signedIn = SignedIn(session: session, store: store, sender: sender)
        takeConnection(store: store, sender: sender, online: online, elsewhere: elsewhere)
    }

    /// Signs the current user out (every service finalized, in reverse order) and then signs
    /// `user` in: their own store and newly built services. No state crosses users.
    public func switchUser(to user: String) throws {
        signOut()
        userID = user
        // Rollouts are decided per user.
        if config.fleet != nil { apply(config) }
        try signIn()
    }

    /// Signs the user out: services go offline and are finalized in reverse order; the
    /// connection, if this process held it, is let go.
    public func signOut() {
        courier = nil
        connectionHolder = nil
        reportedServiceProblems = 0
        signedIn?.session.finalize()
        for line in lines.registeredLines { lines.setServicesStarted(line, false) }
        signedIn = nil
    }

    /// The signed-in user's messages; `nil` until ``signIn(online:)``.
    public var store: MessageStore? { signedIn?.store }

    /// Runs `body` with the next message sent coming from the typed line `draft`
    /// (``MessageStore/Draft``): queueing it forgets the draft in the same transaction. A draft
    /// nothing was queued from (refused, or nothing sent) is forgotten after.
    public func sending<T>(draft: Int64?, _ body: () throws -> T) rethrows -> T {
        guard let draft, let signedIn else { return try body() }
        signedIn.sender.draft = draft
        defer {
            // Still there when nothing was queued from it. One a send queued is gone already, and
            // its id may be another chat's new draft by now (SQLite gives a deleted largest rowid
            // again): never forgotten twice.
            if signedIn.sender.draft != nil { _ = try? signedIn.store.discardDraft(draft) }
            signedIn.sender.draft = nil
        }
        return try body()
    }

    /// Runs `body` with the next message sent replying to `reply`: the send that queues a
    /// message takes it; nothing sent, it is forgotten after.
    public func sending<T>(reply: ReplyTo?, _ body: () throws -> T) rethrows -> T {
        guard let reply, let signedIn else { return try body() }
        signedIn.sender.reply = reply
        defer { signedIn.sender.reply = nil }
        return try body()
    }

    /// The signed-in user's context, with their services; `nil` until ``signIn(online:)``.
    public var user: UserContext? { signedIn?.session.context }

    /// Whether the user is online: connected through a transport.
    public var isOnline: Bool { signedIn?.session.isOnline ?? false }

    /// Whether the user wants to be online (`/online`, `/offline`).
    public internal(set) var wantsOnline = true

    /// The signed-in user's services (their online state follows the connection's).
    var session: UserSession? { signedIn?.session }

    // MARK: Lines

    /// What happened since it was last asked that a person should know: a line that was vetted
    /// but failed to open when it was needed. Each is said once.
    public func takeNotices() -> [String] {
        // Services that could not start since the last look (a prepare or initialize threw).
        if let problems = signedIn?.session.problems, problems.count > reportedServiceProblems {
            notices += problems[reportedServiceProblems...]
            reportedServiceProblems = problems.count
        }
        defer { notices = [] }
        return notices
    }

    private var notices: [String] = []
    private var reportedServiceProblems = 0

    /// Opens and registers a loaded line the first time something needs it, and starts its
    /// services for the signed-in user. Returns whether the line serves.
    @discardableResult
    func activate(_ line: String) -> Bool {
        guard lines.availability(of: line) == .available else { return false }
        if lines.isRegistered(line) { return true }
        guard lines.activate(line, guard: lineGuard) else {
            converter = Converter(config: config, lines: lines.availability)
            if let entry = lines.status(ofLine: line), let problem = entry.problem {
                notices.append("\(entry.state.rawValue) \(entry.fileName.map { $0 + ": " } ?? "")line '\(line)': \(problem); its chats open on the legacy page")
            }
            return false
        }
        if let session = signedIn?.session {
            session.start(lines.services(of: line))
            lines.setServicesStarted(line, true)
        }
        return true
    }

    /// The builder for a message key, opening its line first when it is not opened yet (a
    /// line's keys are `<line id>.<name>`, so the key names the line to open).
    func registeredBuilder(for key: String) -> RegisteredBuilder? {
        if let entry = lines.registry.builder(for: key) { return entry }
        // A registered line's keys are in the registry already: activate answers at once.
        guard let owner = LineID.owner(ofMessageKey: key), activate(String(owner)) else { return nil }
        return lines.registry.builder(for: key)
    }

    /// Why messages with `key` cannot show now, if they cannot.
    func degrade(forKey key: String) -> Degrade? { lines.degrade(forKey: key) }

    /// What the host could not use, one line each for standard error: file, line, reason, fix.
    /// Two files refused for the same reason (both claiming one line) are said once.
    public var problems: [String] {
        var said: [String] = lines.folderProblem.map { [$0] } ?? []
        if let problem = lines.quarantineProblem { said.append(problem) }
        if let problem = lines.cacheProblem { said.append(problem) }
        if let fleetProblem { said.append(fleetProblem) }
        var seen: Set<String> = []
        for entry in lines.rows {
            // A quarantined line is not a problem of every command, as a killed one is not:
            // the converter and route table say so where it matters.
            guard [.refused, .failed, .missing, .crashed, .hung].contains(entry.state), let problem = entry.problem else { continue }
            let subject: String
            if problem.code == .duplicateLineID, let id = entry.lineID {
                subject = "line '\(id)': "
            } else if problem.code == .pinnedElsewhere {
                subject = (entry.fileName ?? "") + ": "
            } else {
                subject = (entry.fileName.map { $0 + ": " } ?? "") + (entry.lineID.map { "line '\($0)': " } ?? "")
            }
            let text = "\(entry.state.rawValue) \(subject)\(problem)"
            if seen.insert(text).inserted { said.append(text) }
        }
        return said + (signedIn?.session.problems ?? [])
    }

    /// Applies a new configuration (and the quarantine as it is now) to what opens from now on:
    /// routes, the kill switch, enabled lines, new and changed plugin files. A line that stops
    /// serving has its services stopped; one that serves again has them started again. A
    /// library is never unloaded: a line turned off is routed away from.
    public func apply(_ config: HostConfig) {
        // host.json says nothing of the fleet: the fleet configuration applied stays.
        apply(config, fleet: self.config.fleet?.config)
    }

    /// Applies `config` with `fleet` as the fleet configuration, decided for the signed-in user.
    func apply(_ config: HostConfig, fleet: FleetConfig?) {
        var config = config
        config.fleet = fleet.map { FleetState(config: $0, user: userID) }
        self.config = config
        signedIn?.sender.limits = config.limits
        courier?.showsOnline = config.onlineStatus == .everyone
        let (stopped, resumed) = lines.apply(config)
        for line in stopped {
            signedIn?.session.stop(line: line)
            lines.setServicesStarted(line, false)
        }
        if let session = signedIn?.session {
            for line in resumed {
                session.start(lines.services(of: line))
                lines.setServicesStarted(line, true)
            }
        }
        converter = Converter(config: config, lines: lines.availability)
        courier?.fleetReport = fleetReport
        courier?.drawnLines = Envelope.Draws.lines(of: lines.builds)
    }

    // MARK: Opening URLs

    /// What opening a URL did.
    public enum Opened {
        /// A chat page.
        case page(ChatPage)
        /// A line's route handler opened something; the text says what.
        case opened(String)
    }

    /// Why a URL did not open.
    public struct OpenError: Error, CustomStringConvertible, Equatable {
        /// What kind of refusal, for tools and tests.
        public enum Kind: String, Sendable { case malformed, notFound = "not-found", external, failed }
        public var kind: Kind
        public var description: String
    }

    /// Opens any URL through the route table: a chat jump, a line's page, or a line's route.
    /// An external open (a push, the web) of an internal route is refused; a URL no route
    /// matches goes to the host's not-found handler, which says why. A line's route opens the
    /// line first; an unavailable line's routes answer not-found with the reason.
    public func open(route url: String, external: Bool = false, window: Int = 50) throws(OpenError) -> Opened {
        guard let separator = RoutePattern.schemeSeparator(in: url) else {
            throw OpenError(kind: .malformed, description: "refused: \(url) is not a URL (scheme://host/path); check it")
        }
        let scheme = url[..<separator.lowerBound].lowercased()
        // Chat URLs are decided as `imhost route` decides them, so the two agree on every URL.
        if scheme == "im", url[separator.upperBound...].prefix(4).lowercased() == "chat",
           url[separator.upperBound...].dropFirst(4).first.map({ "/?#".contains($0) }) ?? true {
            do {
                return .page(try page(for: converter.decide(chatURL: url), window: window))
            } catch {
                throw OpenError(kind: .malformed, description: "refused: \(error)")
            }
        }
        if scheme != "im", LineID.isValid(scheme), lines.status(ofLine: scheme) != nil || config.lines[scheme] != nil {
            if case .unavailable(_, let why) = lines.availability(of: scheme) {
                throw OpenError(kind: .notFound, description: "not found: \(url) belongs to line '\(scheme)', but \(why)")
            }
            guard activate(scheme) else {
                let why = lines.status(ofLine: scheme)?.problem?.description ?? "it failed to load"
                throw OpenError(kind: .notFound, description: "not found: \(url) belongs to line '\(scheme)', which failed to load: \(why)")
            }
        }
        guard let match = lines.routes.match(url) else {
            throw OpenError(kind: .notFound, description: "not found: no route matches \(url); check the URL, or load the line that handles it")
        }
        if external && !match.route.allowExternal {
            throw OpenError(kind: .external, description: "refused: \(match.route.pattern) (line '\(match.route.line)') is internal and cannot be opened from outside the app")
        }
        let user: UserContext
        do {
            try signIn()
            user = signedIn!.session.context
        } catch {
            throw OpenError(kind: .failed, description: "refused: \(url) needs the signed-in user, and \(error)")
        }
        let request = RouteRequest(url: url, parameters: match.parameters, isExternal: external, user: user)
        do {
            return .opened(try lineGuard.run(.route, lines.mark(of: match.route.line), key: url) { try match.route.handler(request) })
        } catch {
            throw OpenError(kind: .failed, description: "refused: \(match.route.pattern) could not open \(url): \(error)")
        }
    }

    /// Opens the chat page a jump URL routes to.
    ///
    /// - Throws: ``JumpURL/Malformed`` for a bad URL or one without a `peer`.
    public func open(_ url: String, window: Int = 50) throws -> ChatPage {
        try page(for: try converter.decide(chatURL: url), window: window)
    }

    private func page(for decision: Converter.Decision, window: Int) throws -> ChatPage {
        var decision = decision
        if case .line(let id) = decision.target, !activate(id) {
            // The line was vetted but failed to open now: decide again without it.
            decision = decision.named.map { converter.decide(decision.jump, line: $0) } ?? converter.decide(decision.jump)
        }
        guard let peer = decision.jump.peer else {
            throw JumpURL.Malformed(description: "\"\(decision.jump.legacyURL)\" has no peer; add peer=<user id> to open a chat")
        }
        if let problem = transportProblem(peer: peer) { throw JumpURL.Malformed(description: problem) }
        var pageType: CarrierPage.Type = LegacyPage.self
        var mark: LineMark?
        if case .line(let id) = decision.target {
            pageType = lines.page(of: id) ?? CarrierPage.self
            mark = lines.mark(of: id)
        }
        try signIn()
        let page = ChatPage(decision: decision, pageType: pageType, peer: peer, window: window,
                            environment: environment(mark: mark, legacy: pageType == LegacyPage.self))
        // The conversation opens on this page from now on (`imhost chat --peer`, `imhost chats`).
        try? signedIn?.store.remember(page.page, for: peer)
        return page
    }

    /// What a page needs from the host, handed to it: it never reaches into the host itself.
    private func environment(mark: LineMark?, legacy: Bool) -> PageEnvironment {
        let signedIn = signedIn!
        return PageEnvironment(
            user: signedIn.session.context, store: signedIn.store, sender: signedIn.sender,
            lineGuard: lineGuard, mark: mark, isLegacy: legacy,
            lookup: { [weak self] key in self?.registeredBuilder(for: key) },
            degrade: { [weak self] key in self?.degrade(forKey: key) },
            lineServes: { [weak self] line in self?.lines.availability(of: line) == .available },
            degradeMessage: { [weak self] sender, id, key in self?.lines.degrade(forMessage: sender, globalID: id, key: key) },
            picture: { [weak self] line, name in self?.lines.picture(line: line, name: name) },
            lineVersion: { [weak self] line in self?.lines.version(of: line) },
            lineKeys: { [weak self] line in self?.lines.status(ofLine: line)?.manifest?.messageKeys.sorted() ?? [] },
            killedComponents: config.killedComponents,
            componentPlace: { [config] component in config.switchedOff(component: component)?.place("components") },
            limits: config.limits,
            open: { [weak self] url in
                guard let self else { return .refused("the host is gone") }
                do throws(OpenError) {
                    switch try self.open(route: url) {
                    case .opened(let what): return .opened(what)
                    case .page(let page): return .opened("chat page \(page.decision.url)")
                    }
                } catch {
                    return error.kind == .notFound ? .notFound(error.description) : .refused(error.description)
                }
            })
    }
}

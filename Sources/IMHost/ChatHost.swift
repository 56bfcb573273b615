@_spi(Host) import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// The running host: its configuration, the plugins as loaded, the converter and route table,
/// and the signed-in user with their conversations and services.
///
/// Plugins are loaded once per process; they are never unloaded.
public final class ChatHost {
    /// The configuration in force.
    public private(set) var config: HostConfig
    /// The plugins found, loaded, refused or failed, and what they registered.
    public private(set) var catalog: PluginCatalog
    /// Routes jump URLs with the configuration in force.
    public private(set) var converter: Converter
    /// The signed-in user.
    public private(set) var selfUser: String
    /// The signed-in user's conversations.
    public private(set) var store: any ConversationStore
    /// Milliseconds since 1970 for new messages; tests fix it.
    public var clock: () -> Int64 = { ChatHost.now() }

    private(set) var session: UserSession
    private let dataFolder: String?

    /// The host's own services, which lines' services may depend on.
    static var hostServices: [ServiceRegistration] {
        [ServiceRegistration(id: MessageTransport.id) { MessageTransport() }]
    }

    /// `im://chat`: the URL callers send; the converter picks the page.
    static let chatPattern = RoutePattern(scheme: "im", host: "chat", segments: [])

    /// `im://chat/<line>`: a line's page, as the converter rewrites the URL.
    static let linePagePattern = RoutePattern(scheme: "im", host: "chat", segments: [.parameter("line")])

    /// Loads host.json and the plugins it names, and signs in its user (or `user`).
    ///
    /// - Parameter durable: keep conversations in the configured data folder (else in memory).
    /// - Throws: ``ConfigError`` when host.json is missing or invalid (nothing is loaded then),
    ///   or ``FileConversationStore/Failure`` when the data folder cannot be used.
    public convenience init(configPath: String, durable: Bool = false, user: String? = nil) throws {
        let config = try HostConfig.load(from: configPath)
        try self.init(config: config, dataFolder: durable ? config.dataFolder : nil, user: user)
    }

    /// Loads the plugins a configuration names and signs in its user (or `user`), keeping
    /// conversations under `dataFolder` (in memory when `nil`).
    ///
    /// - Parameter pluginCache: a plugin cache file to start from (see ``PluginCache``): plugins
    ///   it knows load when first needed. `nil` loads every plugin now.
    ///   With `trustCache` false, every plugin loads now and the cache is rewritten.
    public init(config: HostConfig, dataFolder: String?, user: String? = nil, pluginCache: String? = nil,
                trustCache: Bool = true) throws {
        self.config = config
        catalog = PluginLoader.load(config: config, cache: pluginCache, trustCache: trustCache)
        converter = Converter(config: config, catalog: catalog)
        self.dataFolder = dataFolder
        let user = user ?? config.user
        (store, session) = try Self.signIn(user, dataFolder: dataFolder, services: catalog.registered.services)
        selfUser = user
    }

    /// Opens a user's store and builds their services, then takes them online.
    private static func signIn(_ user: String, dataFolder: String?, services: [ServiceRegistration]) throws
        -> (any ConversationStore, UserSession) {
        var store: any ConversationStore = MemoryConversationStore()
        var outbox = Outbox(memory: ())
        if let dataFolder {
            let files = try FileConversationStore(dataFolder: dataFolder, user: user)
            outbox = try Outbox(path: files.folder + "/outbox.jsonl")
            store = files
        }
        let transport = ServiceRegistration(id: MessageTransport.id) { [outbox] in MessageTransport(outbox: outbox) }
        let session = UserSession(user: user, services: services.map { $0.id == MessageTransport.id ? transport : $0 })
        session.setOnline(true)
        return (store, session)
    }

    /// Signs the current user out (every service finalized, in reverse order) and then signs
    /// `user` in: their own store and newly built services. No state crosses users.
    public func switchUser(to user: String) throws {
        session.finalize()
        (store, session) = try Self.signIn(user, dataFolder: dataFolder, services: catalog.registered.services)
        selfUser = user
    }

    /// Signs the user out: services go offline and are finalized in reverse order.
    public func signOut() { session.finalize() }

    /// The signed-in user's context, with their services.
    public var user: UserContext { session.context }

    /// Services that could not start, one line each.
    public var serviceProblems: [String] { session.problems }

    /// Whether the user is online.
    public var isOnline: Bool { session.isOnline }

    /// Takes the user online (services' `online()` in order; pending messages are delivered)
    /// or offline (`offline()` in reverse).
    /// - Returns: the messages delivered by going online, in order.
    @discardableResult
    public func setOnline(_ online: Bool) -> [(conversation: String, id: String)] {
        session.setOnline(online)
        guard online, let transport else { return [] }
        return transport.lastDelivered.map { ($0.conversation, $0.id) }
    }

    /// Loads a line known from the plugin cache, the first time something needs it, and starts
    /// its services for the signed-in user. Returns whether the line is loaded.
    @discardableResult
    func activate(_ line: String) -> Bool {
        guard let entry = catalog.loadedLine(line) else { return false }
        guard entry.isLazy else { return true }
        let loaded = catalog.activate(line, config: config)
        if loaded {
            session.start(catalog.registered.services.filter { $0.line == line })
        } else {
            converter = Converter(config: config, catalog: catalog)
        }
        return loaded
    }

    /// The builder for a message key, loading its line first when it is known from the cache.
    func messageEntry(for key: String) -> MessageRegistry.Entry? {
        if let entry = catalog.registry.entry(for: key) { return entry }
        guard let line = catalog.registry.lazyLine(for: key), activate(line) else { return nil }
        return catalog.registry.entry(for: key)
    }

    var transport: MessageTransport? { session.context.service(MessageTransport.self) }

    /// Messages sent while offline in an earlier run and delivered when this user signed in.
    public var deliveredAtSignIn: [(conversation: String, id: String)] {
        transport?.lastDelivered.map { ($0.conversation, $0.id) } ?? []
    }

    /// The lines the host could not use, each as one line for stderr: file, line, reason, fix.
    public var problems: [String] {
        var lines: [String] = catalog.folderProblem.map { [$0] } ?? []
        for entry in catalog.entries where [.refused, .failed, .missing].contains(entry.status) {
            guard let problem = entry.problem else { continue }
            let file = entry.file.map { FileSystem.baseName($0) + ": " } ?? ""
            let line = entry.lineID.map { "line '\($0)': " } ?? ""
            lines.append("\(entry.status.rawValue) \(file)\(line)\(problem)")
        }
        return lines + session.problems
    }

    /// Applies a new configuration to what opens from now on: routes, the kill switch, enabled
    /// lines. A line enabled now is registered now; a line disabled now is routed away from (a
    /// plugin is never unloaded). The plugin folder is scanned at start-up only.
    public func apply(_ config: HostConfig) {
        self.config = config
        catalog.registerNewlyEnabled(config)
        converter = Converter(config: config, catalog: catalog)
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
    /// matches goes to the host's not-found handler, which says why.
    public func open(route url: String, external: Bool = false, window: Int = 50) throws(OpenError) -> Opened {
        guard let match = catalog.routes.match(url) else {
            throw OpenError(kind: .notFound, description: "not found: no route matches \(url); check the URL, or load the line that handles it")
        }
        if external && !match.route.allowExternal {
            let owner = match.route.line.map { "line '\($0)'" } ?? "the host"
            throw OpenError(kind: .external, description: "refused: \(match.route.pattern) (\(owner)) is internal and cannot be opened from outside the app")
        }
        switch match.route.target {
        case .lazy(let line):
            guard activate(line) else {
                throw OpenError(kind: .failed, description: "refused: \(match.route.pattern) belongs to line '\(line)', which failed to load: \(catalog.entry(forLine: line)?.problem?.description ?? "")")
            }
            return try open(route: url, external: external, window: window)
        case .handler(let handler):
            let request = RouteRequest(url: url, parameters: match.parameters, isExternal: external, user: session.context)
            do {
                return .opened(try handler(request))
            } catch {
                throw OpenError(kind: .failed, description: "refused: \(match.route.pattern) could not open \(url): \(error)")
            }
        case .converter:
            do {
                return .page(try page(for: converter.decide(url), window: window))
            } catch {
                throw OpenError(kind: .malformed, description: "refused: \(error)")
            }
        case .chatPage:
            let line = match.parameters["line"] ?? ""
            let query = url.firstIndex(of: "?").map { String(url[url.index(after: $0)...]) } ?? ""
            do {
                let jump = try JumpURL.parse("im://chat?" + query)
                return .page(try page(for: converter.decide(jump, line: line), window: window))
            } catch {
                throw OpenError(kind: .malformed, description: "refused: \(error)")
            }
        }
    }

    /// Opens the chat page a jump URL routes to: the converter decides, and its rewritten URL
    /// opens through the route table like any other.
    ///
    /// - Throws: ``JumpURL/Malformed`` for a bad URL or one without a `peer`.
    public func open(_ url: String, window: Int = 50) throws(JumpURL.Malformed) -> ChatPage {
        try page(for: try converter.decide(url), window: window)
    }

    private func page(for decision: Converter.Decision, window: Int) throws(JumpURL.Malformed) -> ChatPage {
        var decision = decision
        if case .line(let id) = decision.target, !activate(id) {
            // The line was known from the cache but failed to load now: decide again without it.
            decision = converter.decide(decision.jump)
        }
        guard let peer = decision.jump.peer else {
            throw JumpURL.Malformed(description: "\"\(decision.jump.legacyURL)\" has no peer; add peer=<user id> to open a chat")
        }
        var pageType: CarrierPage.Type = LegacyPage.self
        var legacy = true
        if case .line(let id) = decision.target, let match = catalog.routes.match(decision.url),
           case .chatPage = match.route.target, match.parameters["line"] == id {
            pageType = catalog.loadedLine(id)?.page ?? CarrierPage.self
            legacy = false
        }
        return ChatPage(decision: decision, pageType: pageType, isLegacy: legacy, host: self, peer: peer,
                        killedComponents: config.killSwitch.components, window: window)
    }

    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}

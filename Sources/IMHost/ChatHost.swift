@_spi(Host) import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// The running host: its configuration, the plugins as loaded, and the converter built from both.
///
/// Plugins are loaded once per process; they are never unloaded.
public final class ChatHost {
    /// The signed-in user.
    public let selfUser: String
    /// Where conversations are kept.
    public let store: any ConversationStore
    /// Milliseconds since 1970 for new messages; tests fix it.
    public var clock: () -> Int64 = { ChatHost.now() }
    /// The configuration in force.
    public private(set) var config: HostConfig
    /// The plugins found, loaded, refused or failed.
    public private(set) var catalog: PluginCatalog
    /// Routes jump URLs with the configuration in force.
    public private(set) var converter: Converter

    /// Loads host.json and the plugins it names.
    ///
    /// - Throws: ``ConfigError`` when host.json is missing or invalid; nothing is loaded then.
    public convenience init(configPath: String, store: any ConversationStore = MemoryConversationStore(),
                            user: String = "me") throws(ConfigError) {
        self.init(config: try HostConfig.load(from: configPath), store: store, user: user)
    }

    /// Loads the plugins a configuration names.
    public init(config: HostConfig, store: any ConversationStore = MemoryConversationStore(), user: String = "me") {
        self.config = config
        self.store = store
        selfUser = user
        catalog = PluginLoader.load(config: config)
        converter = Converter(config: config, catalog: catalog)
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
        return lines
    }

    /// Applies a new configuration to what opens from now on: routes, the kill switch, enabled
    /// lines. A line enabled now is registered now; a line disabled now is routed away from (a
    /// plugin is never unloaded). The plugin folder is scanned at start-up only.
    public func apply(_ config: HostConfig) {
        self.config = config
        catalog.registerNewlyEnabled(config)
        converter = Converter(config: config, catalog: catalog)
    }

    /// Opens the page a jump URL routes to, with the conversation with its `peer`.
    ///
    /// - Throws: ``JumpURL/Malformed`` for a bad URL or one without a `peer`.
    public func open(_ url: String, window: Int = 50) throws(JumpURL.Malformed) -> ChatPage {
        let decision = try converter.decide(url)
        guard let peer = decision.jump.peer else {
            throw JumpURL.Malformed(description: "\"\(url)\" has no peer; add peer=<user id> to open a chat")
        }
        var pageType: CarrierPage.Type = LegacyPage.self
        var legacy = true
        if case .line(let id) = decision.target {
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

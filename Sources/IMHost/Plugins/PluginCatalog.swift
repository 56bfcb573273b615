@_spi(Host) import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// What the host knows about installed plugins after loading them: every file found, every
/// configured line, and the builders the loaded lines registered.
public struct PluginCatalog {
    /// Where one line stands.
    public enum Status: String, Sendable, Codable {
        /// Registered; its chats open on its page.
        case loaded
        /// Loaded and registered, but in `killSwitch.lines`: its chats open on the legacy page.
        case killed
        /// In host.json with `"enabled": false`; never registered.
        case disabled
        /// Found in the plugin folder but not in host.json's `lines`; never registered.
        case notConfigured = "not-configured"
        /// The file failed a check before registration; nothing of it ran but, at most, its entry.
        case refused
        /// Its registration failed; nothing it registered remains.
        case failed
        /// Enabled in host.json, but no plugin file provides it.
        case missing
    }

    /// One row of the report: a plugin file, or a configured line without a file.
    public struct Entry: Sendable {
        /// The plugin file, absolute; `nil` for a missing line.
        public var file: String?
        /// The line id, once the descriptor was read.
        public var lineID: String?
        public var displayName: String?
        public var pluginVersion: String?
        /// The status at load time; ``PluginCatalog/status(of:killSwitch:)`` adds the kill switch.
        public var status: Status
        /// Why it is refused, failed, not configured or missing, and what to do.
        public var problem: PluginRefusal?
        /// The carrier page registered, if loaded.
        public var page: CarrierPage.Type?
        /// The message keys registered, if loaded.
        public var messageKeys: [String] = []
        /// The service ids registered, if loaded.
        public var services: [String] = []
        /// The route patterns registered, if loaded.
        public var routes: [String] = []
        /// The routes registered, with whether each may be opened from outside.
        var routeClaims: [(pattern: String, allowExternal: Bool)] = []
        /// The address of the plugin's descriptor, once read (plugins are never unloaded).
        var descriptorAddress: UInt?
        /// The page's type name, known from the cache before the line is loaded.
        var pageName: String?
        /// Registered according to the plugin cache, not loaded yet: it loads on first use.
        var isLazy = false

        /// The name of the line's page, loaded or cached.
        public var pageTypeName: String? { page.map { String(describing: $0) } ?? pageName }
    }

    /// The plugin folder scanned.
    public var folder: String
    /// Why the folder itself could not be used, if so (then no plugin loads).
    public var folderProblem: String?
    /// One entry per `.so` file, in file-name order, then one per missing line.
    public var entries: [Entry]
    /// What the host and the loaded lines registered.
    struct Registered {
        var registry = MessageRegistry.builtIn
        var services: [ServiceRegistration] = []
        var routes = RouteTable()

        /// Who holds a claim already, as errors name owners.
        func owner(of claim: LineRegistrar.Claim) -> String? {
            switch claim {
            case .messageKey(let key): registry.owner(of: key)
            case .service(let id): services.first { $0.id == id }?.owner
            case .route(let shape): routes.owner(ofShape: shape)
            }
        }
    }

    var registered: Registered

    /// Built-in builders plus every loaded line's.
    public var registry: MessageRegistry { registered.registry }
    /// Every route, the host's and the lines'.
    public var routes: RouteTable { registered.routes }

    private var loadedByLine: [String: Int] = [:]

    init(folder: String, folderProblem: String?, entries: [Entry], registered: Registered) {
        self.folder = folder
        self.folderProblem = folderProblem
        self.entries = entries
        self.registered = registered
        indexLoadedLines()
    }

    private mutating func indexLoadedLines() {
        loadedByLine = [:]
        for (index, entry) in entries.enumerated() where entry.status == .loaded {
            if let id = entry.lineID { loadedByLine[id] = index }
        }
    }

    /// Loads and registers a line known from the cache, the first time it is needed. Returns
    /// whether the line is loaded; when its registration now fails, it becomes `failed` and
    /// its cached claims are dropped.
    mutating func activate(_ line: String, config: HostConfig) -> Bool {
        guard let index = loadedByLine[line] else { return false }
        guard entries[index].isLazy, let path = entries[index].file else { return true }
        var entry = entries[index]
        entry.isLazy = false
        do throws(PluginRefusal) {
            let folderInfo: stat
            let folderReal: String
            do {
                folderInfo = try FileSystem.status(folder, followLinks: true)
                folderReal = try FileSystem.realPath(folder)
            } catch {
                throw PluginRefusal(.unreadable, "cannot use plugin folder \(folder): \(error)", fix: "restore the folder")
            }
            let pointer = try PluginLoader.open(path, folder: folder, folderReal: folderReal, folderMode: folderInfo.st_mode)
            let descriptor = try PluginLoader.read(pointer, into: &entry)
            entry.status = try PluginLoader.register(descriptor, config: config, into: &registered, entry: &entry)
        } catch {
            entry.status = error.code == .registrationFailed ? .failed : .refused
            entry.problem = error
            entry.messageKeys = []
            entry.services = []
            entry.routes = []
            registered.registry.removeLazy(line: line)
            registered.routes.removeLazy(line: line)
        }
        entries[index] = entry
        indexLoadedLines()
        return entry.status == .loaded
    }

    /// Registers lines that a new configuration enables but that were not registered at start
    /// (disabled or not configured then). Lines already loaded stay as they are: plugins are never
    /// unloaded, and a line disabled later is routed away from, not removed.
    mutating func registerNewlyEnabled(_ config: HostConfig) {
        for index in entries.indices {
            let entry = entries[index]
            guard entry.status == .disabled || entry.status == .notConfigured,
                  let id = entry.lineID, config.lines[id]?.enabled == true,
                  let address = entry.descriptorAddress,
                  let descriptor = PluginLoader.Descriptor(address: address, lineID: id) else { continue }
            var updated = entry
            updated.problem = nil
            do {
                updated.status = try PluginLoader.register(descriptor, config: config, into: &registered, entry: &updated)
            } catch {
                updated.status = .failed
                updated.problem = error
            }
            entries[index] = updated
        }
        indexLoadedLines()
    }

    /// The entry of a line that registered successfully.
    public func loadedLine(_ id: String) -> Entry? {
        loadedByLine[id].map { entries[$0] }
    }

    /// The entry that says most about a line: its loaded entry, else the first that names it.
    public func entry(forLine id: String) -> Entry? {
        loadedLine(id) ?? entries.first { $0.lineID == id }
    }

    /// A status with the kill switch applied: a loaded line in `killSwitch.lines` is killed.
    public func status(of entry: Entry, killSwitch: HostConfig.KillSwitch) -> Status {
        if entry.status == .loaded, let id = entry.lineID, killSwitch.lines.contains(id) { return .killed }
        return entry.status
    }
}

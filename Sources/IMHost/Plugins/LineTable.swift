@_spi(Host) import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// The plugin files in the plugin folder and the business lines they provide, and the one owner
/// of each line's state. Every command, the plugin cache, a reload and the tests go through it.
///
/// ```
/// discovered ─ facts ok ─▶ checked ─ enabled ─▶ loaded ─ register ok ─▶ registered ─ services ─▶ active
///     │                      │                    │                                               │
///     └─ refused             ├─ crashed / hung    └─ failed                                       ├─ killed (operator)
///                            ├─ failed (scan)                                                     ├─ quarantined (host)
///                            └─ disabled / not configured: never opened in the host              └─ disabled by reload
/// ```
///
/// *checked*: the file passed the trust and ELF checks and its descriptor and manifest are known,
/// from the plugin cache or from the scanner child that opened it. *loaded*: its line is enabled
/// and nothing holds it back; the host may open its library when the line is first needed (its
/// page opens, one of its messages shows, one of its routes is opened). *registered*: opened and
/// registered in this process. *active*: its services run for the signed-in user.
///
/// Looking at the folder is a ``FolderExamination``; opening a library is ``LineLoader``; what
/// the table knows, it keeps: the rows, which lines serve (a ``LineAvailability`` snapshot), the
/// registry of builders and the route table. Files of lines that are not configured or not
/// enabled are never opened in the host.
public final class LineTable {
    /// Where a plugin file or line stands.
    public enum State: String, Sendable, Codable, CaseIterable {
        case discovered, checked, loaded, registered, active
        case refused, failed, crashed, hung
        case quarantined, killed, disabled
        case notConfigured = "not-configured"
        case missing
    }

    /// Every change of state a line can make; ``LineStatus/move(to:problem:)`` allows nothing else.
    static func allows(_ from: State, _ to: State) -> Bool {
        // A switch rather than a table of sets: it runs for every file on every start.
        switch from {
        case .discovered: [.checked, .refused, .crashed, .hung, .failed].contains(to)
        case .checked: [.loaded, .refused, .failed, .disabled, .notConfigured].contains(to)
        case .loaded: [.registered, .failed, .refused, .killed, .quarantined, .disabled, .notConfigured].contains(to)
        case .registered: [.active, .killed, .quarantined, .disabled, .notConfigured].contains(to)
        case .active: [.registered, .killed, .quarantined, .disabled, .notConfigured].contains(to)
        case .killed: [.loaded, .registered, .active, .quarantined, .disabled, .notConfigured].contains(to)
        case .quarantined: [.loaded, .registered, .active, .killed, .disabled, .notConfigured].contains(to)
        case .disabled: [.loaded, .registered, .active, .killed, .quarantined, .notConfigured, .refused].contains(to)
        case .notConfigured: [.loaded, .registered, .active, .killed, .quarantined, .disabled, .refused].contains(to)
        case .refused, .failed, .crashed, .hung, .missing: false
        }
    }

    /// The plugin folder.
    public let folder: String
    /// Why the folder itself could not be used; then no plugin loads.
    public private(set) var folderProblem: String?
    /// One row per `.so` file, in name order, then one per missing line.
    public private(set) var rows: [LineStatus] = []
    /// Crashes and hangs recorded while examining the files (in the scanner).
    public private(set) var recordedCrashes: [CrashRecord] = []
    /// The files the last examination had a scanner open (none on a warm start).
    public private(set) var scannedFiles: [String] = []
    /// Why `<data>/quarantine.json` could not be read, when it could not.
    public private(set) var quarantineProblem: String?
    /// Why the plugin cache is not used, when it is not.
    public private(set) var cacheProblem: String?
    /// Which lines serve now, and why the others do not.
    public private(set) var availability = LineAvailability.none

    /// The row of the file that provides each line, when one does.
    private var providers: [String: Int] = [:]
    /// The lines opened and registered in this process, kept across reloads: a library is never
    /// unloaded, so a line registered once stays registered (and is routed away from if need be).
    private var registered: [String: RegisteredLine] = [:]

    /// Built-in builders plus every registered line's.
    public private(set) var registry = MessageRegistry.builtIn
    /// The host's routes and every registered line's.
    private(set) var routes = RouteTable()
    /// Keys turned off: by `killSwitch.messages`, or quarantined by the host.
    private var blockedKeys: [String: Degrade] = [:]
    /// Single messages from other hosts quarantined by the host.
    private var blockedMessages: [String: Degrade] = [:]
    /// Why one sender's messages of a key are held, by sender and key.
    private var blockedSenders: [String: Degrade] = [:]

    private var config: HostConfig
    private let dataFolder: String
    private let cachePath: String?
    private let scanner: String
    /// Quarantine holds kept in memory only (a supervisor could not write them down).
    private let extraQuarantine: [Quarantine.Hold]

    /// Examines the plugin folder for `config`: reads the plugin cache at `cachePath`, has new
    /// or changed files vetted by scanner children of `scanner`, records their crashes in
    /// `dataFolder`, applies line pins, host.json and the quarantine, and rewrites the cache when
    /// anything changed. Opens no library in this process.
    package init(config: HostConfig, dataFolder: String, cachePath: String?, scanner: String, quarantine extra: [Quarantine.Hold] = []) {
        folder = config.pluginsFolder
        self.config = config
        self.dataFolder = dataFolder
        self.cachePath = cachePath
        self.scanner = scanner
        extraQuarantine = extra
        examine()
    }

    /// Applies a new configuration and the quarantine as it is now, re-examining the folder (new
    /// files are vetted, changed ones again). Lines registered in this process stay registered.
    /// Returns the lines that stopped serving and those that serve again, for their services.
    func apply(_ config: HostConfig) -> (stopped: [String], resumed: [String]) {
        let before = servingRegistered
        self.config = config
        examine()
        let after = servingRegistered
        return (before.subtracting(after).sorted(), after.subtracting(before).sorted())
    }

    private var servingRegistered: Set<String> {
        Set(rows.filter { $0.isServing && registered[$0.lineID ?? ""] != nil }.compactMap(\.lineID))
    }

    private func examine() {
        let stored = Quarantine(dataFolder: dataFolder)
        quarantineProblem = stored.problem
        let examination = FolderExamination.run(config: config, dataFolder: dataFolder, cachePath: cachePath, scanner: scanner,
                                                quarantine: stored.holds + extraQuarantine,
                                                holdingAll: stored.isUnreadable ? stored.problem : nil,
                                                registered: registered.mapValues(\.identity))
        folderProblem = examination.folderProblem
        cacheProblem = examination.cacheProblem
        recordedCrashes = examination.recordedCrashes
        scannedFiles = examination.scannedFiles
        rows = examination.rows
        reindex()
    }

    static func digestMismatch(_ digest: String?, pin: String, line: String) -> PluginRefusal {
        PluginRefusal(.digestMismatch, "its SHA-256 is \(digest ?? "unreadable"), host.json pins \(pin)",
                      fix: "install the file host.json pins, or update lines.\(line).sha256 to the new file's digest")
    }

    static func notConfigured(_ id: String, config: HostConfig) -> PluginRefusal {
        PluginRefusal(.notConfigured, "line '\(id)' is found but not in \(FileSystem.baseName(config.file))",
                      fix: "add \"\(id)\": { \"enabled\": true } to \"lines\" to enable it")
    }

    // MARK: The index

    /// Rebuilds the lookups after the rows changed: who provides each line, the availability
    /// snapshot, the blocked keys, the registry and the routes.
    private func reindex() {
        // Indices, not `for row in rows`: a row is large, and these loops run at every start. A
        // local copy of the array, so its reads pay no exclusivity check.
        var rows: [LineStatus] = []
        swap(&rows, &self.rows)
        defer { self.rows = rows }
        providers = [:]
        var unavailable: [String: Availability] = [:]
        var serving: Set<String> = []
        providers.reserveCapacity(rows.count)
        serving.reserveCapacity(rows.count)
        var others = false
        for index in rows.indices {
            guard let id = rows[index].lineID else { continue }
            switch rows[index].state {
            case .loaded, .registered, .active:
                // One file claims a line (two are refused): it provides it.
                providers[id] = index
                serving.insert(id)
            case .killed, .quarantined, .disabled, .notConfigured:
                if providers[id] == nil { providers[id] = index }
                others = true
            default:
                others = true
            }
        }
        // What the lines that do not serve say (none, usually).
        for index in rows.indices where others && !rows[index].isServing {
            guard let id = rows[index].lineID, unavailable[id] == nil, !serving.contains(id) else { continue }
            unavailable[id] = rows[providers[id] ?? index].availability(config: config)
        }
        for id in config.lineOrder where unavailable[id] == nil && providers[id] == nil && config.lines[id]?.enabled == false {
            unavailable[id] = .unavailable(.lineDisabled, "line '\(id)' is disabled in host.json")
        }
        availability = LineAvailability(serving: serving, unavailable: unavailable)
        for (id, line) in registered {
            guard let index = providers[id], rows[index].isServing else { continue }
            rows[index].follow(servicesStarted: line.servicesStarted)
        }

        blockedKeys = [:]
        for key in config.killedKeys { blockedKeys[key] = .killedKey(config.switchedOff(key: key)?.place("messages") ?? "") }
        blockedMessages = [:]
        blockedSenders = [:]
        for index in rows.indices where rows[index].isServing {
            for (key, held) in rows[index].quarantinedKeys where blockedKeys[key] == nil {
                blockedKeys[key] = .quarantinedKey(held.reason)
            }
            for (message, held) in rows[index].quarantinedMessages {
                blockedMessages[message] = .quarantinedMessage(held.reason)
            }
            for (senderKey, held) in rows[index].heldSenders {
                blockedSenders[senderKey] = .heldSender(sender: held.sender ?? "", key: held.key ?? "", why: held.reason)
            }
        }

        var registry = MessageRegistry.builtIn
        var routes = RouteTable()
        for (id, line) in registered.sorted(by: { $0.key < $1.key }) {
            registry.add(line.builders, line: id, mark: line.mark, version: line.version)
            for route in line.routes { routes.add(route) }
        }
        self.registry = registry
        self.routes = routes
    }

    // MARK: Questions

    /// Whether a line can serve now, and if not, why.
    public func availability(of line: String) -> Availability { availability.of(line) }

    /// The row that says most about a line: the file that provides it, else the first naming it.
    public func status(ofLine id: String) -> LineStatus? {
        providers[id].map { rows[$0] } ?? rows.first { $0.lineID == id }
    }

    /// Why a message with `key` cannot show now, if it cannot: the key is turned off or
    /// quarantined, or its line is unavailable.
    func degrade(forKey key: String) -> Degrade? {
        if let blocked = blockedKeys[key] { return blocked }
        guard let owner = LineID.owner(ofMessageKey: key), let (reason, why) = availability.whyKnownUnavailable(String(owner)) else { return nil }
        return .lineUnavailable(line: String(owner), reason: reason, why: why)
    }

    /// Why one message from another host cannot show now: the host quarantined it, or holds its
    /// sender's messages of its key.
    func degrade(forMessage sender: String, globalID: String, key: String) -> Degrade? {
        if !blockedMessages.isEmpty, let why = blockedMessages[Self.messageKey(sender: sender, globalID: globalID)] { return why }
        return blockedSenders.isEmpty ? nil : blockedSenders[Self.messageKey(sender: sender, globalID: key)]
    }

    /// How a quarantined message is looked up.
    static func messageKey(sender: String, globalID: String) -> String { sender + "\u{0}" + globalID }

    /// The carrier page of a registered line.
    func page(of line: String) -> CarrierPage.Type? { registered[line]?.page }

    /// The breadcrumb mark of a registered line.
    func mark(of line: String) -> LineMark? { registered[line]?.mark }

    /// The services of a registered line.
    func services(of line: String) -> [ServiceRegistration] { registered[line]?.services ?? [] }

    /// The lines registered in this process.
    var registeredLines: [String] { registered.keys.sorted() }

    /// Whether a line is registered in this process.
    func isRegistered(_ line: String) -> Bool { registered[line] != nil }

    /// The build of each line that serves: the one opened in this process, or the one it would
    /// open (what a chat worker tells its supervisor).
    public var builds: [LineBuild] {
        rows.compactMap { row in
            guard row.isServing, let id = row.lineID else { return nil }
            if let opened = registered[id], let identity = opened.identity {
                return LineBuild(line: id, version: opened.version ?? "?", file: opened.file, identity: identity, opened: true)
            }
            guard let file = row.file, let identity = row.identity else { return nil }
            return LineBuild(line: id, version: row.descriptor?.version ?? "?", file: file, identity: identity, opened: false)
        }
    }

    /// Picture `name` of line `line`, when the line is open and registered one by that name,
    /// with the line's version.
    /// The version of an open line (`nil`: not open, or it says none).
    public func version(of line: String) -> String? { registered[line]?.version }

    public func picture(line: String, name: String) -> (version: String, picture: LinePicture)? {
        guard let opened = registered[line], let picture = opened.pictures[name] else { return nil }
        return (opened.version ?? "?", picture)
    }

    /// Every picture of the open lines, as a front end that serves them (the browser's) gets them.
    public var pictures: [ShippedPicture] {
        registered.flatMap { line, opened in
            opened.pictures.map { name, picture in
                ShippedPicture(line: line, version: opened.version ?? "?", name: name, photo: picture.photo, bytes: picture.bytes)
            }
        }.sorted { ($0.line, $0.name) < ($1.line, $1.name) }
    }

    /// Lines that are configured, enabled and not serving: refused, failed, crashed, hung,
    /// quarantined or missing. (Killed and disabled lines are the operator's choice.)
    public var notServing: [LineStatus] {
        let ids = config.lineOrder.filter { config.lines[$0]?.enabled == true && config.switchedOff(line: $0) == nil }
        return ids.compactMap { id in
            guard case .unavailable = availability.of(id) else { return nil }
            return status(ofLine: id)
        }
    }

    /// Records that a line's services started or stopped. Only the line's own state follows
    /// (registered or active): nothing ``reindex()`` derives depends on it.
    func setServicesStarted(_ line: String, _ started: Bool) {
        guard registered[line] != nil else { return }
        registered[line]!.servicesStarted = started
        guard let index = providers[line], rows[index].isServing else { return }
        rows[index].follow(servicesStarted: started)
    }

    // MARK: Opening a line

    /// Opens and registers a loaded line, the first time something needs it (``LineLoader``).
    /// Returns whether the line is registered. A registration that fails now fails the line for
    /// this process (the next start tries again).
    func activate(_ line: String, guard lineGuard: LineGuard) -> Bool {
        if registered[line] != nil { return availability.of(line) == .available }
        guard let index = providers[line], rows[index].state == .loaded else { return false }
        do throws(PluginRefusal) {
            registered[line] = try LineLoader.open(rows[index], as: line, guard: lineGuard)
            rows[index].move(to: .registered)
            reindex()
            return true
        } catch {
            rows[index].move(to: error.code == .registrationFailed ? .failed : .refused, problem: error)
            // What the cache said about this file did not hold: forget it, so the next start
            // has the scanner look again.
            if let cachePath, var cache = PluginCache.read(cachePath), let name = rows[index].fileName,
               cache.files.removeValue(forKey: name) != nil {
                cache.write(cachePath)
            }
            reindex()
            return false
        }
    }
}

/// Where one plugin file, or one configured line that no file provides, stands: a row of the
/// ``LineTable``. Its state changes only through ``move(to:problem:)``, which allows only the
/// transitions ``LineTable/allows(_:_:)`` lists.
public struct LineStatus: Sendable {
    /// The plugin file, absolute; `nil` for a missing line.
    public var file: String?
    /// The file's name in the plugin folder.
    public var fileName: String?
    /// The file's identity when it was examined.
    public var identity: FileIdentity?
    /// What is known about the file's bytes: descriptor and manifest (decoded when asked for).
    var facts: PluginFacts?
    /// A descriptor read by a scan that came to no facts (it failed, and is tried again).
    var scannedDescriptor: PluginDescriptor?
    /// What its descriptor says, once known.
    public var descriptor: PluginDescriptor? { facts?.descriptor ?? scannedDescriptor }
    /// The valid line id it claims (or, for a missing line, the line).
    public var lineID: String?
    /// What the line registers, once known.
    public var manifest: LineManifest? { facts?.manifest }
    /// Where it stands.
    public fileprivate(set) var state: LineTable.State
    /// Why it does not serve, and what to do; `nil` when it serves.
    public var problem: PluginRefusal?
    /// The crash or hang behind a crashed, hung or quarantined state.
    public var crash: CrashRecord?
    /// Message keys of the line the host quarantined.
    public var quarantinedKeys: [String: Quarantine.Hold] = [:]
    /// Single messages from other hosts the host quarantined, by ``LineTable/messageKey(sender:globalID:)``.
    public var quarantinedMessages: [String: Quarantine.Hold] = [:]
    /// Senders whose messages of one key are held, by ``LineTable/messageKey(sender:globalID:)``
    /// with the key in place of the global id.
    public var heldSenders: [String: Quarantine.Hold] = [:]
    /// Whether its name in the folder is a symbolic link (to a file in the folder).
    public var isLink = false
    /// A note about the line in this process (a replaced file keeps its loaded version).
    public var note: String?

    /// Whether the line serves chats: loaded, registered or active.
    public var isServing: Bool { state == .loaded || state == .registered || state == .active }

    /// A plugin file, just found.
    init(file: String, fileName: String) {
        self.file = file
        self.fileName = fileName
        state = .discovered
    }

    /// A line host.json enables that no file provides.
    init(missing line: String, problem: PluginRefusal) {
        lineID = line
        state = .missing
        self.problem = problem
    }

    /// The one place a state changes; refuses a change the state machine does not have.
    mutating func move(to state: LineTable.State, problem: PluginRefusal? = nil) {
        precondition(LineTable.allows(self.state, state), "line state cannot go from \(self.state) to \(state)")
        self.state = state
        self.problem = problem
    }

    /// A serving line follows whether its services run: registered or active.
    fileprivate mutating func follow(servicesStarted: Bool) {
        if state == .loaded { move(to: .registered) }
        let target: LineTable.State = servicesStarted ? .active : .registered
        if state != target { move(to: target) }
    }

    /// Why this row's line does not serve, as the converter and placeholders say it.
    fileprivate func availability(config: HostConfig) -> Availability {
        let id = lineID ?? "?"
        let why = problem?.reason ?? ""
        switch state {
        case .loaded, .registered, .active: return .available
        case .killed:
            let off = config.switchedOff(line: id) ?? .hostJSON
            let reason: UnavailableReason = switch off {
            case .hostJSON: .killed
            case .fleet: .fleetKilled
            case .outsideRollout: .outsideRollout
            }
            return .unavailable(reason, off.lineReason(id))
        case .quarantined, .crashed, .hung: return .unavailable(.quarantined, "line '\(id)' is quarantined: \(why)")
        case .disabled: return .unavailable(.lineDisabled, "line '\(id)' is disabled in host.json")
        case .notConfigured: return .unavailable(.lineDisabled, "line '\(id)' is not in \(FileSystem.baseName(config.file))'s lines")
        case .failed: return .unavailable(.lineFailed, "line '\(id)' failed to register: \(why)")
        case .refused: return .unavailable(.lineRefused, "line '\(id)' was refused: \(why)")
        case .missing, .discovered, .checked: return .unavailable(.lineMissing, "no plugin provides line '\(id)'")
        }
    }
}

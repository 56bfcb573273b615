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
/// Files of lines that are not configured or not enabled are never opened in the host.
public final class LineTable {
    /// Where a plugin file or line stands.
    public enum State: String, Sendable, Codable, CaseIterable {
        case discovered, checked, loaded, registered, active
        case refused, failed, crashed, hung
        case quarantined, killed, disabled
        case notConfigured = "not-configured"
        case missing
    }

    /// Every change of state a line can make; ``move(_:to:)`` allows nothing else.
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

    /// One row: a plugin file, or a configured line no file provides.
    public struct Entry: Sendable {
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
        public fileprivate(set) var state: State
        /// Why it does not serve, and what to do; `nil` when it serves.
        public var problem: PluginRefusal?
        /// The crash or hang behind a crashed, hung or quarantined state.
        public var crash: CrashRecord?
        /// Message keys of the line the host quarantined.
        public var quarantinedKeys: [String: Quarantine.Entry] = [:]
        /// Whether its name in the folder is a symbolic link (to a file in the folder).
        public var isLink = false
        /// A note about the line in this process (a replaced file keeps its loaded version).
        public var note: String?

        /// Whether the line serves chats: loaded, registered or active.
        public var isServing: Bool { state == .loaded || state == .registered || state == .active }

    }

    /// Why a line cannot serve, as the converter and route table say it.
    public enum Availability: Equatable, Sendable {
        case available
        case unavailable(Converter.Reason, String)
    }

    /// The plugin folder.
    public let folder: String
    /// Why the folder itself could not be used; then no plugin loads.
    public private(set) var folderProblem: String?
    /// One entry per `.so` file, in name order, then one per missing line.
    public private(set) var entries: [Entry] = []
    /// Crashes and hangs recorded while examining the files (in the scanner).
    public private(set) var recordedCrashes: [CrashRecord] = []
    /// The files the last examination had a scanner open (none on a warm start).
    public private(set) var scannedFiles: [String] = []

    /// The entry of the file that provides each line, when one does.
    private var providers: [String: Int] = [:]
    /// What each line that is not available says about it.
    private(set) var unavailable: [String: Availability] = [:]
    /// The lines that serve.
    private(set) var serving: Set<String> = []

    /// The lines opened and registered in this process, kept across reloads: a library is never
    /// unloaded, so a line registered once stays registered (and is routed away from if need be).
    private var registered: [String: Registered] = [:]

    struct Registered {
        var page: CarrierPage.Type?
        var builders: [any MessageBuilder]
        var services: [ServiceRegistration]
        var routes: [RouteTable.Route]
        var mark: LineMark
        var identity: FileIdentity?
        var servicesStarted = false
    }

    /// Built-in builders plus every registered line's, and the keys of loaded lines, which load
    /// their line when first shown.
    public private(set) var registry = MessageRegistry.builtIn
    /// The host's routes and every registered line's.
    private(set) var routes = RouteTable()
    /// Keys turned off: by `killSwitch.messages`, or quarantined by the host.
    private var blockedKeys: [String: Degrade] = [:]

    private var config: HostConfig
    private let quarantineFolder: String
    private let cachePath: String?
    private let scanner: String

    /// Examines the plugin folder for `config`: reads the plugin cache at `cachePath`, has new
    /// or changed files vetted by scanner children of `scanner`, records their crashes in
    /// `dataFolder`, applies line pins, host.json and the quarantine, and rewrites the cache when
    /// anything changed. Opens no library in this process.
    init(config: HostConfig, dataFolder: String, cachePath: String?, scanner: String, quarantine extra: [Quarantine.Entry] = []) {
        folder = config.pluginsFolder
        self.config = config
        quarantineFolder = dataFolder
        self.cachePath = cachePath
        self.scanner = scanner
        extraQuarantine = extra
        examine()
    }

    /// Quarantine entries held in memory only (a supervisor could not write them down).
    private let extraQuarantine: [Quarantine.Entry]
    /// Why `<data>/quarantine.json` could not be read, when it could not.
    public private(set) var quarantineProblem: String?

    /// Applies a new configuration and the quarantine as it is now, re-examining the folder (new
    /// files are vetted, changed ones again). Lines registered in this process stay registered.
    /// Returns the lines that stopped serving and those that serve again, for their services.
    func apply(_ config: HostConfig) -> (stopped: [String], resumed: [String]) {
        let before = Set(entries.filter { $0.isServing && registered[$0.lineID ?? ""] != nil }.compactMap(\.lineID))
        self.config = config
        examine()
        let after = Set(entries.filter { $0.isServing && registered[$0.lineID ?? ""] != nil }.compactMap(\.lineID))
        return (before.subtracting(after).sorted(), after.subtracting(before).sorted())
    }

    // MARK: Examining the folder

    private func examine() {
        let stored = Quarantine(dataFolder: quarantineFolder)
        quarantineProblem = stored.problem
        let quarantine = (entries: stored.entries + extraQuarantine, stored: stored)
        let cache = cachePath.flatMap(PluginCache.read)
        // Starts as the cache's own facts (shared, not copied); files that are gone are dropped below.
        var facts: [String: PluginFacts] = cache?.files ?? [:]
        // A local list: the loops below touch every entry, and a class's own array would pay an
        // exclusivity check on each touch.
        var entries: [Entry] = []
        entries.reserveCapacity(64)
        defer {
            self.entries = entries
            reindex()
        }
        // Set when a fact is learnt that the cache did not hold.
        var cacheChanged = cache == nil
        folderProblem = nil
        recordedCrashes = []
        scannedFiles = []

        var names: [String] = []
        var folderRefusal: PluginRefusal?
        do {
            var undecodable: [String] = []
            names = try FileSystem.entries(of: folder, undecodable: &undecodable).filter { $0.hasSuffix(".so") }
            for shown in undecodable where shown.hasSuffix(".so") {
                var entry = Entry(file: folder + "/" + shown, fileName: shown, state: .discovered)
                move(&entry, to: .refused, problem: PluginRefusal(
                    .unsafeName, "its name is not valid UTF-8 (\(TerminalText.safe(shown)))",
                    fix: "rename it to plain letters, digits, '-' and '.'"))
                entries.append(entry)
            }
        } catch {
            folderProblem = "cannot use plugin folder \(folder): \(error.call): \(error); create it or fix \"plugins\" in \(config.file)"
        }
        let folderReal = (try? FileSystem.realPath(folder)) ?? folder
        if folderProblem == nil {
            folderRefusal = Self.trustFolders(folderReal)
            // Reached through a link: whoever may replace the link chooses the folder, so the
            // folders the configured path names must be trusted too.
            if folderRefusal == nil, folderReal != folder, folder.hasPrefix("/") {
                folderRefusal = Self.trustFolders(FileSystem.directory(of: folder)) ?? Self.trustLinkHops(folder, stoppingAt: nil)
            }
        }
        // Files are looked up by name in the open folder: the path to it is walked once, not
        // once a file.
        let folderFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if folderFD >= 0 { close(folderFD) } }

        // Files host.json pins by name and digest.
        var pinnedDigests: [String: (line: String, digest: String)] = [:]
        for (id, settings) in config.lines {
            if let file = settings.file, let digest = settings.sha256 { pinnedDigests[file] = (id, digest) }
        }
        // A file's digest is read once an examination, though it is checked before the scan
        // (a pinned file) and after it (any line with a digest).
        var digests: [String: String?] = [:]
        func digest(of name: String, at path: String) -> String? {
            if let known = digests[name] { return known }
            let found = try? SHA256.hex(ofFile: path)
            digests[name] = found
            return found
        }

        // 1. Files: trust, identity, then facts from the cache or the ELF header.
        var needScan: [(path: String, identity: FileIdentity)] = []
        for name in names {
            let path = folder + "/" + name
            var entry = Entry(file: path, fileName: name, state: .discovered)
            do throws(PluginRefusal) {
                // Printable ASCII needs no escape: checked on the bytes first, as most names are.
                if name.utf8.withContiguousStorageIfAvailable({ !$0.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }) ?? true,
                   name.unicodeScalars.contains(where: { TerminalText.needsEscape($0, newlines: false) }) {
                    throw PluginRefusal(.unsafeName, "its name has control or bidirectional characters (\(TerminalText.safe(name)))",
                                        fix: "rename it to plain letters, digits, '-' and '.'")
                }
                let (identity, isLink) = try Self.trust(path, name: name, in: folderFD, folder: folder, folderReal: folderReal)
                entry.identity = identity
                entry.isLink = isLink
                if let folderRefusal { throw folderRefusal }
                if let crashed = quarantine.entries.first(where: { $0.file == name && $0.applies(to: identity) && Self.isLoadingCrash($0) }) {
                    entry.crash = crashed.crash
                    entry.lineID = crashed.line
                    move(&entry, to: crashed.crash.isHang ? .hung : .crashed,
                         problem: PluginRefusal(crashed.crash.isHang ? .hung : .crashed, crashed.reason,
                                                fix: "install a fixed file, or run imhost quarantine lift \(crashed.line ?? name) to try it again"))
                } else if let known = facts[name], known.identity == identity {
                    // Known: the cache's fact stands.
                    entry.facts = known
                } else if let pin = pinnedDigests[name], let digest = digest(of: name, at: path), digest != pin.digest {
                    // host.json names this file and its digest: a file with another digest is not
                    // even handed to the scanner.
                    entry.lineID = pin.line
                    throw Self.digestMismatch(digest, pin: pin.digest, line: pin.line)
                } else {
                    facts[name] = nil
                    let head: [UInt8]
                    do {
                        head = try FileSystem.readBytes(path, limit: 64)
                    } catch {
                        throw PluginRefusal(.unreadable, "cannot be read (\(error.call): \(error))", fix: "fix its permissions")
                    }
                    do throws(PluginRefusal) {
                        let header = try ELFHeader(bytes: head)
                        if let host = ELFHeader.host { try header.check(against: host) }
                        if ELFHeader.definesSymbol(withPrefix: "$s5IMKit", inFile: path) {
                            // It defines IMKit's own symbols (a line only uses them). Opened, a
                            // second copy of the SDK would register IMKit's types twice.
                            throw PluginRefusal(.sdkNotLine, "is the IMKit SDK (libIMKit.so), not a line; a line never ships it",
                                                fix: "remove it from the plugin folder: the host brings its own libIMKit.so")
                        }
                        needScan.append((path, identity))
                    } catch {
                        facts[name] = PluginFacts(identity: identity, descriptor: nil, verdict: .refused(error))
                        cacheChanged = true
                    }
                }
            } catch {
                move(&entry, to: .refused, problem: error)
            }
            entries.append(entry)
        }

        // 2. New and changed files: opened by scanner children, never here.
        if !needScan.isEmpty {
            scannedFiles = needScan.map { FileSystem.baseName($0.path) }
            // Only entries still being vetted: a refused one may share a shown name with a file.
            let byPath = Dictionary(entries.indices.filter { entries[$0].state == .discovered }.map { (entries[$0].file ?? "", $0) },
                                    uniquingKeysWith: { first, _ in first })
            for (path, outcome) in Scanner.scan(needScan, executable: scanner, limit: config.limits.scanSeconds) {
                guard let index = byPath[path] else { continue }
                switch outcome {
                case .facts(let found):
                    facts[FileSystem.baseName(path)] = found
                    cacheChanged = true
                case .failed(let descriptor, let refusal):
                    entries[index].scannedDescriptor = descriptor
                    if let id = descriptor?.lineID, LineID.isValid(id) { entries[index].lineID = id }
                    if refusal.code == .registrationFailed, let id = entries[index].lineID, config.lines[id]?.enabled != true {
                        // Not enabled: the operator's choice says more than a registration
                        // that is not needed; it is tried again when the line is enabled.
                        move(&entries[index], to: .checked)
                        continue
                    }
                    move(&entries[index], to: refusal.code == .registrationFailed || refusal.code == .scannerFailed ? .failed : .refused,
                         problem: refusal)
                case .crashed(let record):
                    let written = (try? Quarantine.record(record, dataFolder: quarantineFolder).get()) ?? record
                    recordedCrashes.append(written)
                    entries[index].crash = written
                    entries[index].lineID = written.line
                    let fix = written.quarantined == nil
                        ? "fix the plugin; the next start tries it again"
                        : "install a fixed file, or run imhost quarantine lift \(written.line ?? FileSystem.baseName(path)) to try it again"
                    move(&entries[index], to: written.isHang ? .hung : .crashed,
                         problem: PluginRefusal(written.isHang ? .hung : .crashed, "\(written.event) at \(written.time)", fix: fix))
                }
            }
        }

        // 3. What the facts say.
        for index in entries.indices where entries[index].state == .discovered {
            if entries[index].facts == nil, let name = entries[index].fileName {
                entries[index].facts = facts[name]
            }
            guard let found = entries[index].facts else { continue }
            if let id = found.lineID, LineID.isValid(id) { entries[index].lineID = id }
            if found.isLine {
                move(&entries[index], to: .checked)
            } else if case .refused(let refusal) = found.verdict {
                move(&entries[index], to: .refused, problem: refusal)
            }
        }

        // 4. One file a line: two claiming a line are both refused, unless host.json pins one.
        var firstClaim: [String: Int] = [:], claims: [String: [Int]] = [:]
        firstClaim.reserveCapacity(entries.count)
        let pinned = Set(config.lines.compactMap { $0.value.file == nil ? nil : $0.key })
        for index in entries.indices where entries[index].state == .checked {
            guard let id = entries[index].lineID else { continue }
            if let first = firstClaim[id] {
                claims[id, default: [first]].append(index)
            } else {
                firstClaim[id] = index
                if !pinned.isEmpty, pinned.contains(id) { claims[id] = [index] }
            }
        }
        for (id, indices) in claims {
            // Names for one file (a link beside its target) are one claim: the file keeps it,
            // each other name is refused as what it is.
            let pin = config.lines[id]?.file
            if indices.count > 1, Set(indices.map { entries[$0].identity }).count == 1,
               pin == nil || indices.contains(where: { entries[$0].fileName == pin }) {
                let keep = indices.first { entries[$0].fileName == pin } ?? indices.first { !entries[$0].isLink } ?? indices[0]
                let kept = entries[keep].fileName ?? ""
                for index in indices where index != keep {
                    let problem = entries[index].isLink
                        ? PluginRefusal(.otherName, "is another name for \(kept) (the same file), which provides line '\(id)'",
                                        fix: "remove this link; \(kept) serves the line")
                        : PluginRefusal(.otherName, "is the file \(kept) links to; host.json pins line '\(id)' to \(kept), which serves it",
                                        fix: "keep both, or pin lines.\(id).file to this name and remove the link")
                    move(&entries[index], to: .refused, problem: problem)
                }
                continue
            }
            let pinned = pin
            let files = indices.compactMap { entries[$0].fileName }
            for index in indices {
                let name = entries[index].fileName ?? ""
                if let pinned, pinned != name {
                    let pinnedLine = entries.first { $0.fileName == pinned }?.lineID
                    let elsewhere = pinnedLine.map { $0 == id ? "" : " (which provides line '\($0)')" } ?? " (which is not in the folder)"
                    move(&entries[index], to: .refused, problem: PluginRefusal(
                        .pinnedElsewhere, "claims line '\(id)', which host.json pins to \(pinned)\(elsewhere)",
                        fix: "remove this file, or change lines.\(id).file in \(FileSystem.baseName(config.file))"))
                } else if pinned == nil, indices.count > 1 {
                    move(&entries[index], to: .refused, problem: PluginRefusal(
                        .duplicateLineID, "line '\(id)' is claimed by \(files.count) files: \(files.joined(separator: ", "))",
                        fix: "remove all but one, or pin the line's file in \(FileSystem.baseName(config.file)) (lines.\(id).file)"))
                }
            }
        }

        // 5. host.json, digests, the quarantine and the kill switch.
        for index in entries.indices where entries[index].state == .checked {
            guard let id = entries[index].lineID, let name = entries[index].fileName else { continue }
            guard let settings = config.lines[id] else {
                move(&entries[index], to: .notConfigured, problem: Self.notConfigured(id, config: config))
                continue
            }
            guard settings.enabled else {
                move(&entries[index], to: .disabled)
                continue
            }
            if let pin = settings.sha256 {
                var found = facts[name]?.sha256
                if found == nil {
                    found = digest(of: name, at: entries[index].file ?? "")
                    facts[name]?.sha256 = found
                    cacheChanged = true
                }
                guard found == pin else {
                    entries[index].facts = facts[name]
                    move(&entries[index], to: .refused, problem: Self.digestMismatch(found, pin: pin, line: id))
                    continue
                }
            }
            move(&entries[index], to: .loaded)
            let identity = entries[index].identity
            for held in quarantine.entries where held.line == id && held.applies(to: identity) {
                if let key = held.key {
                    entries[index].quarantinedKeys[key] = held
                } else if entries[index].state != .quarantined {
                    entries[index].crash = held.crash
                    move(&entries[index], to: .quarantined, problem: PluginRefusal(
                        .quarantined, held.reason,
                        fix: "install a fixed file, or run imhost quarantine lift \(id)"))
                }
            }
            if entries[index].state == .loaded, config.killSwitch.lines.contains(id) {
                move(&entries[index], to: .killed, problem: PluginRefusal(
                    .killed, "line '\(id)' is in killSwitch.lines: its chats open on the legacy page",
                    fix: "remove it from killSwitch.lines to roll it forward"))
            }
        }

        // 6. Lines enabled in host.json that no file provides.
        let anonymous = entries.count { $0.file != nil && $0.lineID == nil }
        // Lines some file claims: those that got to checked are in `firstClaim`; the few others here.
        var claimed: Set<String> = []
        for index in entries.indices {
            switch entries[index].state {
            case .refused, .failed, .crashed, .hung:
                if let id = entries[index].lineID { claimed.insert(id) }
            default:
                break
            }
        }
        let present = pinned.isEmpty ? [] : Set(entries.compactMap(\.fileName))
        for id in config.lineOrder where config.lines[id]?.enabled == true {
            let pin = config.lines[id]?.file
            if let pin {
                guard !present.contains(pin) else { continue }
            } else {
                guard firstClaim[id] == nil, !claimed.contains(id) else { continue }
            }
            let reason: String
            if let pin {
                reason = "host.json pins line '\(id)' to \(pin), which is not in \(folder)"
            } else {
                let unknown = anonymous == 0 ? "" : " (\(anonymous) refused file\(anonymous == 1 ? "" : "s") could not be read for \(anonymous == 1 ? "its" : "their") line id)"
                reason = "no plugin in \(folder) provides line '\(id)'\(unknown)"
            }
            entries.append(Entry(file: nil, fileName: nil, lineID: id, state: .missing,
                                 problem: PluginRefusal(.missing, reason, fix: "install its .so there, or set \"enabled\": false")))
        }

        // A line registered in this process keeps the version it loaded.
        for (id, line) in registered {
            guard let index = entries.firstIndex(where: { $0.lineID == id && $0.file != nil }),
                  entries[index].identity != line.identity else { continue }
            entries[index].note = "its file changed on disk; this process keeps the version it loaded until it restarts"
        }

        if facts.count > names.count {
            let present = Set(names)
            facts = facts.filter { present.contains($0.key) }
        }
        if let cachePath, cacheChanged || facts.count != cache?.files.count {
            PluginCache(files: facts).write(cachePath)
        }
        if !quarantine.entries.isEmpty {
            let identities = Dictionary(entries.compactMap { entry in entry.fileName.map { ($0, entry.identity) } },
                                        uniquingKeysWith: { first, _ in first })
            quarantine.stored.prune { name in identities[name] ?? nil }
        }
    }

    /// A quarantine entry for a crash before the line was vetted: the file is not opened again.
    private static func isLoadingCrash(_ entry: Quarantine.Entry) -> Bool {
        [.load, .entry, .register].contains(entry.crash.site) || entry.scope == .file
    }

    /// Checks a plugin file before anything reads it: a regular file, or a link to one inside the
    /// folder, not writable by group or others. Returns its identity.
    private static func trust(_ path: String, name: String, in folderFD: Int32, folder: String, folderReal: String)
        throws(PluginRefusal) -> (identity: FileIdentity, isLink: Bool) {
        var info = stat()
        var isLink = false
        do {
            // One lstat a file on a warm start, by name in the open folder: only a link needs
            // resolving (a name read from the folder has no slash, so a file that is not a link
            // is in the folder).
            if folderFD >= 0 {
                guard fstatat(folderFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                    throw FileSystem.Failure(call: "lstat", code: errno)
                }
            } else {
                info = try FileSystem.status(path, followLinks: false)
            }
            if info.st_mode & S_IFMT == S_IFLNK {
                isLink = true
                let real = try FileSystem.realPath(path)
                guard real.hasPrefix(folderReal + "/") else {
                    throw PluginRefusal(.leavesFolder, "is a symbolic link to \(real), outside the plugin folder",
                                        fix: "copy the plugin into the folder instead of linking to it")
                }
                // Every folder a hop of the link lands in (a subfolder, or a folder a link on the
                // way sits in) must be as trusted as the plugin folder, or its owner could swap
                // the file or repoint the link.
                if let refusal = trustLinkHops(path, stoppingAt: folderReal) { throw refusal }
                info = try FileSystem.status(real, followLinks: true)
            }
        } catch let refusal as PluginRefusal {
            throw refusal
        } catch let failure as FileSystem.Failure {
            throw PluginRefusal(.unreadable, "cannot be read (\(failure.call): \(failure))", fix: "fix the file or link, or remove it")
        } catch {
            throw PluginRefusal(.unreadable, "cannot be read (\(error))", fix: "fix the file or link, or remove it")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw PluginRefusal(.notRegularFile, "is not a regular file", fix: "remove it from the plugin folder")
        }
        guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw PluginRefusal(.writableByOthers, "is writable by group or others (mode \(octal(info.st_mode)))",
                                fix: "run chmod go-w \(path)")
        }
        guard info.st_uid == 0 || info.st_uid == hostUser else {
            throw PluginRefusal(.untrustedOwner, "is owned by \(describe(user: info.st_uid)), not root or \(describe(user: hostUser)) (the host's user)",
                                fix: "run chown \(hostUser) \(path), or remove it: another user could change what the host runs")
        }
        return (FileIdentity(info), isLink)
    }

    /// The user the host runs as: the owner a plugin file or folder may have, besides root.
    static let hostUser = geteuid()

    /// "uid 1234 (alice)".
    static func describe(user uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "uid \(uid) (\(TerminalText.safe(String(cString: name))))"
    }

    /// The plugin folder and every folder above it, up to `/`, as sshd's StrictModes checks a
    /// user's files: each owned by root or the host's user, and not writable by group or others
    /// (a folder owned by root with the sticky bit, like /tmp, excepted: others may add files
    /// there but not replace ours). Otherwise another local user could swap a plugin.
    /// With `stop`, only the folders from `real` up to and excluding `stop` (the plugin folder,
    /// checked already): the folders between a link's target and the plugin folder.
    static func trustFolders(_ real: String, stoppingAt stop: String? = nil) -> PluginRefusal? {
        var path = real
        while path != stop {
            var info = stat()
            guard stat(path, &info) == 0 else {
                return PluginRefusal(.unreadable, "its folder \(path) cannot be checked (stat: \(String(cString: strerror(errno))))",
                                     fix: "check the folder exists and can be read")
            }
            let owner = info.st_uid
            guard owner == 0 || owner == hostUser else {
                return PluginRefusal(.untrustedOwner, "its folder \(path) is owned by \(describe(user: owner)), not root or \(describe(user: hostUser)) (the host's user)",
                                     fix: "run chown \(hostUser) \(path), or keep plugins in a folder you own")
            }
            let sticky = info.st_mode & S_ISVTX != 0 && owner == 0
            if info.st_mode & (S_IWGRP | S_IWOTH) != 0 && !sticky {
                return PluginRefusal(.writableByOthers, "its folder \(path) is writable by group or others (mode \(octal(info.st_mode)))",
                                     fix: "run chmod go-w \(path)")
            }
            if path == "/" { return nil }
            path = FileSystem.directory(of: path)
            if path.isEmpty { path = "/" }
        }
        return nil
    }

    /// Follows the links at `path` one hop at a time and checks the folder each hop lands in,
    /// as ``trustFolders(_:stoppingAt:)`` does (up to `stop`, or to `/` for a folder outside it):
    /// whoever may write in a folder a link passes through decides what the link names.
    static func trustLinkHops(_ path: String, stoppingAt stop: String?) -> PluginRefusal? {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return nil }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink(current, &buffer, buffer.count - 1)
            guard length > 0 else { return nil }
            let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let next = target.hasPrefix("/") ? target : FileSystem.directory(of: current) + "/" + target
            let holder = (try? FileSystem.realPath(FileSystem.directory(of: next))) ?? FileSystem.directory(of: next)
            if holder != stop, let refusal = trustFolders(holder, stoppingAt: stop.flatMap { holder.hasPrefix($0 + "/") ? $0 : nil }) {
                return refusal
            }
            current = next
        }
        return PluginRefusal(.unreadable, "has more than 40 links in a row", fix: "link straight to the file")
    }

    static func digestMismatch(_ digest: String?, pin: String, line: String) -> PluginRefusal {
        PluginRefusal(.digestMismatch, "its SHA-256 is \(digest ?? "unreadable"), host.json pins \(pin)",
                      fix: "install the file host.json pins, or update lines.\(line).sha256 to the new file's digest")
    }

    static func notConfigured(_ id: String, config: HostConfig) -> PluginRefusal {
        PluginRefusal(.notConfigured, "line '\(id)' is found but not in \(FileSystem.baseName(config.file))",
                      fix: "add \"\(id)\": { \"enabled\": true } to \"lines\" to enable it")
    }

    static func octal(_ mode: mode_t) -> String { "0" + String(mode & 0o7777, radix: 8) }

    // MARK: State

    /// The one place an entry's state changes; refuses a change the state machine does not have.
    private func move(_ entry: inout Entry, to state: State, problem: PluginRefusal? = nil) {
        precondition(Self.allows(entry.state, state),
                     "line state cannot go from \(entry.state) to \(state)")
        entry.state = state
        entry.problem = problem
    }

    /// Rebuilds the lookups after the entries changed: who provides each line, what each
    /// unavailable line says, the blocked keys, the registry and the routes.
    private func reindex() {
        // Indices, not `for entry in entries`: an entry is large, and these loops run at every
        // start. A local copy of the array, so its reads pay no exclusivity check.
        var entries: [Entry] = []
        swap(&entries, &self.entries)
        defer { self.entries = entries }
        providers = [:]
        unavailable = [:]
        serving = []
        providers.reserveCapacity(entries.count)
        serving.reserveCapacity(entries.count)
        var others = false
        for index in entries.indices {
            guard let id = entries[index].lineID else { continue }
            switch entries[index].state {
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
        for index in entries.indices where others && !entries[index].isServing {
            guard let id = entries[index].lineID, unavailable[id] == nil, !serving.contains(id) else { continue }
            unavailable[id] = Self.availability(of: entries[providers[id] ?? index], config: config)
        }
        for id in config.lineOrder where unavailable[id] == nil && providers[id] == nil && config.lines[id]?.enabled == false {
            unavailable[id] = .unavailable(.lineDisabled, "line '\(id)' is disabled in host.json")
        }
        for (id, line) in registered {
            guard let index = providers[id], entries[index].isServing else { continue }
            if entries[index].state == .loaded { move(&entries[index], to: .registered) }
            let target: State = line.servicesStarted ? .active : .registered
            if entries[index].state != target { move(&entries[index], to: target) }
        }

        blockedKeys = [:]
        for key in config.killSwitch.messages { blockedKeys[key] = .killedKey }
        for index in entries.indices where entries[index].isServing && !entries[index].quarantinedKeys.isEmpty {
            for (key, held) in entries[index].quarantinedKeys where blockedKeys[key] == nil {
                blockedKeys[key] = .quarantinedKey(held.reason)
            }
        }

        var registry = MessageRegistry.builtIn
        var routes = RouteTable()
        for (id, line) in registered.sorted(by: { $0.key < $1.key }) {
            registry.add(line.builders, line: id, mark: line.mark)
            for route in line.routes { routes.add(route) }
        }
        self.registry = registry
        self.routes = routes
    }

    private static func availability(of entry: Entry, config: HostConfig) -> Availability {
        let id = entry.lineID ?? "?"
        let why = entry.problem?.reason ?? ""
        switch entry.state {
        case .loaded, .registered, .active: return .available
        case .killed: return .unavailable(.killed, "line '\(id)' is in killSwitch.lines")
        case .quarantined, .crashed, .hung: return .unavailable(.quarantined, "line '\(id)' is quarantined: \(why)")
        case .disabled: return .unavailable(.lineDisabled, "line '\(id)' is disabled in host.json")
        case .notConfigured: return .unavailable(.lineDisabled, "line '\(id)' is not in \(FileSystem.baseName(config.file))'s lines")
        case .failed: return .unavailable(.lineFailed, "line '\(id)' failed to register: \(why)")
        case .refused: return .unavailable(.lineRefused, "line '\(id)' was refused: \(why)")
        case .missing, .discovered, .checked: return .unavailable(.lineMissing, "no plugin provides line '\(id)'")
        }
    }

    // MARK: Questions

    /// Whether a line can serve now, and if not, why.
    public func availability(of line: String) -> Availability {
        Self.availability(of: line, serving: serving, unavailable: unavailable)
    }

    /// Whether a line serves, from the lookups ``reindex()`` keeps (the converter keeps copies).
    static func availability(of line: String, serving: Set<String>, unavailable: [String: Availability]) -> Availability {
        serving.contains(line) ? .available : unavailable[line] ?? .unavailable(.lineMissing, "no plugin provides line '\(line)'")
    }

    /// The entry that says most about a line: the file that provides it, else the first naming it.
    public func entry(forLine id: String) -> Entry? {
        providers[id].map { entries[$0] } ?? entries.first { $0.lineID == id }
    }

    /// Why a message with `key` cannot show now, if it cannot: the key is turned off or
    /// quarantined, or its line is unavailable.
    func degrade(forKey key: String) -> Degrade? {
        if let blocked = blockedKeys[key] { return blocked }
        guard let owner = LineID.owner(ofMessageKey: key), case .unavailable(let reason, let why)? = unavailable[String(owner)] else { return nil }
        return .lineUnavailable(line: String(owner), reason: reason, why: why)
    }

    /// The carrier page of a registered line.
    func page(of line: String) -> CarrierPage.Type? { registered[line]?.page }

    /// The breadcrumb mark of a registered line.
    func mark(of line: String) -> LineMark? { registered[line]?.mark }

    /// The services of a registered line.
    func services(of line: String) -> [ServiceRegistration] { registered[line]?.services ?? [] }

    /// The lines registered in this process.
    var registeredLines: [String] { registered.keys.sorted() }

    /// Records that a line's services started or stopped.
    /// Only the line's own state follows (registered or active): nothing ``reindex()`` derives
    /// depends on it, so the lookups are not rebuilt.
    func setServicesStarted(_ line: String, _ started: Bool) {
        guard registered[line] != nil else { return }
        registered[line]!.servicesStarted = started
        guard let index = providers[line], entries[index].isServing else { return }
        if entries[index].state == .loaded { move(&entries[index], to: .registered) }
        let target: State = started ? .active : .registered
        if entries[index].state != target { move(&entries[index], to: target) }
    }

    /// Whether a line is registered in this process.
    func isRegistered(_ line: String) -> Bool { registered[line] != nil }

    /// Lines that are configured, enabled and not serving: refused, failed, crashed, hung,
    /// quarantined or missing. (Killed and disabled lines are the operator's choice.)
    public var notServing: [Entry] {
        let ids = config.lineOrder.filter { config.lines[$0]?.enabled == true && !config.killSwitch.lines.contains($0) }
        return ids.compactMap { id in
            guard case .unavailable = availability(of: id) else { return nil }
            return entry(forLine: id)
        }
    }

    // MARK: Loading a line in this process

    /// Opens and registers a loaded line, the first time something needs it, with every step
    /// inside a breadcrumb frame. Returns whether the line is registered. A registration that
    /// fails now fails the line for this process (the next start tries again).
    func activate(_ line: String, guard lineGuard: LineGuard) -> Bool {
        if registered[line] != nil { return availability(of: line) == .available }
        guard let index = providers[line], entries[index].state == .loaded, let path = entries[index].file else { return false }
        let entry = entries[index]
        let mark = LineMark(line: line, file: path, identity: entry.identity)
        do throws(PluginRefusal) {
            guard FileIdentity.of(path) == entry.identity else {
                throw PluginRefusal(.unreadable, "changed on disk after it was checked", fix: "run the command again to check the new file")
            }
            let handle = try lineGuard.run(.load, mark) { () throws(PluginRefusal) in try PluginImage.load(path) }
            // A thread the line starts from now on is the line's: a crash there names it.
            if let symbol = dlsym(handle, "imkit_plugin_entry") { Breadcrumb.register(image: UnsafeRawPointer(symbol), of: mark) }
            let pointer = try lineGuard.run(.entry, mark) { () throws(PluginRefusal) in try PluginImage.entry(handle) }
            let descriptor = PluginImage.describe(pointer)
            guard descriptor == entry.descriptor else {
                throw PluginRefusal(.registrationFailed, "its descriptor differs from the one checked (\(descriptor.lineID ?? "?") \(descriptor.version ?? "?"))",
                                    fix: "reinstall the plugin")
            }
            let staged = try lineGuard.run(.register, mark) { () throws(PluginRefusal) in try PluginImage.register(pointer, lineID: line) }
            guard staged.manifest == entry.manifest else {
                throw PluginRefusal(.registrationFailed, "it registered something else than when it was checked (\(Self.describe(staged.manifest)))",
                                    fix: "make the line's register(with:) register the same things every time")
            }
            let routes = staged.routes.map {
                RouteTable.Route(pattern: $0.pattern, allowExternal: $0.allowExternal, line: line, handler: $0.handler)
            }
            registered[line] = Registered(page: staged.page, builders: staged.builders, services: staged.services, routes: routes,
                                          mark: mark, identity: entry.identity)
            move(&entries[index], to: .registered)
            reindex()
            return true
        } catch {
            move(&entries[index], to: error.code == .registrationFailed ? .failed : .refused, problem: error)
            // What the cache said about this file did not hold: forget it, so the next start
            // has the scanner look again.
            if let cachePath, var cache = PluginCache.read(cachePath), let name = entries[index].fileName,
               cache.files.removeValue(forKey: name) != nil {
                cache.write(cachePath)
            }
            reindex()
            return false
        }
    }

    private static func describe(_ manifest: LineManifest) -> String {
        "page \(manifest.page ?? "none"), keys \(manifest.messageKeys.joined(separator: ", ")), routes \(manifest.routes.map(\.pattern).joined(separator: ", "))"
    }
}

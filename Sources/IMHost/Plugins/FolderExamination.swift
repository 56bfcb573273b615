@_spi(Host) import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// One look at the plugin folder for a configuration, in named steps that ``run`` takes in
/// order: ``listFiles()``, ``checkFiles()``, ``scanNewFiles()``, ``applyFacts()``,
/// ``resolveClaims()``, ``applyConfiguration()``, ``addMissingLines()``, ``finish(registered:)``.
/// Each can be run and checked on its own. Every state change goes through
/// ``LineStatus/move(to:problem:)``. Opens no library in this process: only scanner children
/// run plugin code.
struct FolderExamination {
    let config: HostConfig
    let folder: String
    /// Where crashes are recorded and the quarantine is kept.
    let dataFolder: String
    let cachePath: String?
    /// The executable started as the plugin scanner.
    let scanner: String
    /// The quarantine as it is now: the file's holds, and those kept in memory only.
    let quarantine: [Quarantine.Hold]
    /// Why every line is held: the quarantine file cannot be read, so nothing is known clean.
    let holdingAll: String?

    /// One row a plugin file (in name order), then one a missing line.
    private(set) var rows: [LineStatus] = []
    /// Why the folder itself could not be used; then no plugin loads.
    private(set) var folderProblem: String?
    /// Crashes and hangs recorded while scanning.
    private(set) var recordedCrashes: [CrashRecord] = []
    /// The files a scanner opened (none on a warm start).
    private(set) var scannedFiles: [String] = []
    /// Why the plugin cache is neither read nor written (something else is in its place).
    private(set) var cacheProblem: String?

    /// Facts by file name: the cache's, then what was learnt.
    private(set) var facts: [String: PluginFacts]
    /// Whether a fact was learnt that the cache did not hold.
    private(set) var cacheChanged: Bool
    private let cachedCount: Int?
    private var names: [String] = []
    private var folderReal: String
    private var folderRefusal: PluginRefusal?
    private var needScan: [(path: String, identity: FileIdentity)] = []
    /// Each file's digest, read at most once an examination.
    private var digests: [String: String?] = [:]
    /// Lines that reached *checked* under a file, by the first file that claims them.
    private var firstClaim: [String: Int] = [:]
    /// Lines host.json pins to a file name.
    private let pinned: Set<String>

    init(config: HostConfig, dataFolder: String, cachePath: String?, scanner: String, quarantine: [Quarantine.Hold],
         holdingAll: String? = nil) {
        self.config = config
        folder = config.pluginsFolder
        self.dataFolder = dataFolder
        self.cachePath = cachePath
        self.scanner = scanner
        self.quarantine = quarantine
        self.holdingAll = holdingAll
        var info = stat()
        if let cachePath, lstat(cachePath, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            cacheProblem = "the plugin cache \(cachePath) is \(FileSystem.kind(info.st_mode)), not a regular file: it is neither read nor written, so every start scans the plugins again; remove it"
        }
        let cache = cacheProblem == nil ? cachePath.flatMap(PluginCache.read) : nil
        // Starts as the cache's own facts (shared, not copied); files that are gone are dropped at the end.
        facts = cache?.files ?? [:]
        cachedCount = cache?.files.count
        cacheChanged = cache == nil
        folderReal = folder
        pinned = Set(config.lines.compactMap { $0.value.file == nil ? nil : $0.key })
        rows.reserveCapacity(64)
    }

    /// Runs every step in order.
    static func run(config: HostConfig, dataFolder: String, cachePath: String?, scanner: String,
                    quarantine: [Quarantine.Hold], holdingAll: String? = nil, registered: [String: FileIdentity?]) -> FolderExamination {
        var examination = FolderExamination(config: config, dataFolder: dataFolder, cachePath: cachePath, scanner: scanner,
                                            quarantine: quarantine, holdingAll: holdingAll)
        examination.listFiles()
        examination.checkFiles()
        examination.scanNewFiles()
        examination.applyFacts()
        examination.resolveClaims()
        examination.applyConfiguration()
        examination.addMissingLines()
        examination.finish(registered: registered)
        return examination
    }

    // MARK: 1. The folder

    /// Lists the `.so` files, refusing names that are not UTF-8, and checks the folder's trust.
    mutating func listFiles() {
        do {
            var undecodable: [String] = []
            names = try FileSystem.entries(of: folder, undecodable: &undecodable).filter { $0.hasSuffix(".so") }
            for shown in undecodable where shown.hasSuffix(".so") {
                var row = LineStatus(file: folder + "/" + shown, fileName: shown)
                row.move(to: .refused, problem: PluginRefusal(
                    .unsafeName, "its name is not valid UTF-8 (\(shown))",
                    fix: "rename it to plain letters, digits, '-' and '.'"))
                rows.append(row)
            }
        } catch {
            folderProblem = "cannot use plugin folder \(folder): \(error.call): \(error); create it or fix \"plugins\" in \(config.file)"
            return
        }
        folderReal = (try? FileSystem.realPath(folder)) ?? folder
        folderRefusal = PluginFolderTrust.checkFolder(folder, real: folderReal)
    }

    // MARK: 2. Each file

    /// Trust, identity, then facts from the cache, or the ELF header of a file to scan.
    mutating func checkFiles() {
        // Files are looked up by name in the open folder: the path to it is walked once.
        let folderFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if folderFD >= 0 { close(folderFD) } }
        // Files host.json pins by name and digest: one with another digest is not even scanned.
        var pinnedDigests: [String: (line: String, digest: String)] = [:]
        for (id, settings) in config.lines {
            if let file = settings.file, let digest = settings.sha256 { pinnedDigests[file] = (id, digest) }
        }
        for name in names {
            var row = LineStatus(file: folder + "/" + name, fileName: name)
            do throws(PluginRefusal) {
                if let refusal = PluginFolderTrust.nameProblem(name) { throw refusal }
                let (identity, isLink) = try PluginFolderTrust.checkFile(name, in: folderFD, folder: folder, folderReal: folderReal)
                row.identity = identity
                row.isLink = isLink
                if let folderRefusal { throw folderRefusal }
                if let crashed = quarantine.first(where: { $0.file == name && $0.applies(to: identity) && $0.isLoadingCrash }) {
                    row.crash = crashed.crash
                    row.lineID = crashed.line
                    let hang = crashed.crash.isHang
                    row.move(to: hang ? .hung : .crashed, problem: PluginRefusal(
                        hang ? .hung : .crashed, crashed.reason,
                        fix: "install a fixed file, or run imhost quarantine lift \(crashed.line ?? name) to try it again"))
                } else if let known = facts[name], known.identity == identity {
                    row.facts = known
                } else if let pin = pinnedDigests[name], let digest = digest(of: name), digest != pin.digest {
                    row.lineID = pin.line
                    throw LineTable.digestMismatch(digest, pin: pin.digest, line: pin.line)
                } else {
                    facts[name] = nil
                    try checkHeader(name, identity: identity)
                }
            } catch {
                row.move(to: .refused, problem: error)
            }
            rows.append(row)
        }
    }

    /// A new or changed file: its ELF header must suit this host, and it must not be the SDK.
    /// A refusal of the bytes is a fact (cached); a file that passes is to be scanned.
    private mutating func checkHeader(_ name: String, identity: FileIdentity) throws(PluginRefusal) {
        let path = folder + "/" + name
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
                // It defines IMKit's own symbols (a line only uses them). Opened, a second copy
                // of the SDK would register IMKit's types twice.
                throw PluginRefusal(.sdkNotLine, "is the IMKit SDK (libIMKit.so), not a line; a line never ships it",
                                    fix: "remove it from the plugin folder: the host brings its own libIMKit.so")
            }
            needScan.append((path, identity))
        } catch {
            facts[name] = PluginFacts(identity: identity, descriptor: nil, verdict: .refused(error))
            cacheChanged = true
        }
    }

    /// A file's SHA-256, read once an examination though it is asked before the scan (a pinned
    /// file) and after it (any line with a digest).
    private mutating func digest(of name: String) -> String? {
        if let known = digests[name] { return known }
        let found = try? SHA256.hex(ofFile: folder + "/" + name)
        digests[name] = found
        return found
    }

    // MARK: 3. Scanning

    /// Has scanner children open the new and changed files, and records what they found.
    mutating func scanNewFiles() {
        guard !needScan.isEmpty else { return }
        scannedFiles = needScan.map { FileSystem.baseName($0.path) }
        // Only rows still being vetted: a refused one may share a shown name with a file.
        let byPath = Dictionary(rows.indices.filter { rows[$0].state == .discovered }.map { (rows[$0].file ?? "", $0) },
                                uniquingKeysWith: { first, _ in first })
        for (path, outcome) in Scanner.scan(needScan, executable: scanner, limit: config.limits.scanSeconds) {
            guard let index = byPath[path] else { continue }
            switch outcome {
            case .facts(let found):
                facts[FileSystem.baseName(path)] = found
                cacheChanged = true
            case .failed(let descriptor, let refusal):
                rows[index].scannedDescriptor = descriptor
                if let id = descriptor?.lineID, LineID.isValid(id) { rows[index].lineID = id }
                if refusal.code == .registrationFailed, let id = rows[index].lineID, config.lines[id]?.enabled != true {
                    // Not enabled: the operator's choice says more than a registration that is
                    // not needed; it is tried again when the line is enabled.
                    rows[index].move(to: .checked)
                    continue
                }
                rows[index].move(to: refusal.code == .registrationFailed || refusal.code == .scannerFailed ? .failed : .refused,
                                 problem: refusal)
            case .crashed(let record):
                let written = (try? Quarantine.record(record, dataFolder: dataFolder).get())?.crash ?? record
                recordedCrashes.append(written)
                rows[index].crash = written
                rows[index].lineID = written.line
                let fix = written.quarantined == nil
                    ? "fix the plugin; the next start tries it again"
                    : "install a fixed file, or run imhost quarantine lift \(written.line ?? FileSystem.baseName(path)) to try it again"
                rows[index].move(to: written.isHang ? .hung : .crashed,
                                 problem: PluginRefusal(written.isHang ? .hung : .crashed, "\(written.event) at \(written.time)", fix: fix))
            }
        }
    }

    // MARK: 4. Facts

    /// A file whose facts say it is a line is *checked*; one whose bytes are refused is refused.
    mutating func applyFacts() {
        for index in rows.indices where rows[index].state == .discovered {
            if rows[index].facts == nil, let name = rows[index].fileName {
                rows[index].facts = facts[name]
            }
            guard let found = rows[index].facts else { continue }
            if let id = found.lineID, LineID.isValid(id) { rows[index].lineID = id }
            if found.isLine {
                rows[index].move(to: .checked)
            } else if case .refused(let refusal) = found.verdict {
                rows[index].move(to: .refused, problem: refusal)
            }
        }
    }

    // MARK: 5. One file a line

    /// Two files claiming one line are both refused, naming both, unless host.json pins one;
    /// two names of one file (a link beside its target) are one claim.
    mutating func resolveClaims() {
        var claims: [String: [Int]] = [:]
        firstClaim.reserveCapacity(rows.count)
        for index in rows.indices where rows[index].state == .checked {
            guard let id = rows[index].lineID else { continue }
            if let first = firstClaim[id] {
                claims[id, default: [first]].append(index)
            } else {
                firstClaim[id] = index
                if !pinned.isEmpty, pinned.contains(id) { claims[id] = [index] }
            }
        }
        for (id, indices) in claims {
            let pin = config.lines[id]?.file
            if indices.count > 1, Set(indices.map { rows[$0].identity }).count == 1,
               pin == nil || indices.contains(where: { rows[$0].fileName == pin }) {
                keepOneName(of: indices, line: id, pin: pin)
                continue
            }
            let files = indices.compactMap { rows[$0].fileName }
            for index in indices {
                let name = rows[index].fileName ?? ""
                if let pin, pin != name {
                    let pinnedLine = rows.first { $0.fileName == pin }?.lineID
                    let elsewhere = pinnedLine.map { $0 == id ? "" : " (which provides line '\($0)')" } ?? " (which is not in the folder)"
                    rows[index].move(to: .refused, problem: PluginRefusal(
                        .pinnedElsewhere, "claims line '\(id)', which host.json pins to \(pin)\(elsewhere)",
                        fix: "remove this file, or change lines.\(id).file in \(FileSystem.baseName(config.file))"))
                } else if pin == nil, indices.count > 1 {
                    rows[index].move(to: .refused, problem: PluginRefusal(
                        .duplicateLineID, "line '\(id)' is claimed by \(files.count) files: \(files.joined(separator: ", "))",
                        fix: "remove all but one, or pin the line's file in \(FileSystem.baseName(config.file)) (lines.\(id).file)"))
                }
            }
        }
    }

    /// Names of one file: the file keeps the line (the pinned name, else the one that is not a
    /// link), each other name is refused as what it is.
    private mutating func keepOneName(of indices: [Int], line id: String, pin: String?) {
        let keep = indices.first { rows[$0].fileName == pin } ?? indices.first { !rows[$0].isLink } ?? indices[0]
        let kept = rows[keep].fileName ?? ""
        for index in indices where index != keep {
            let problem = rows[index].isLink
                ? PluginRefusal(.otherName, "is another name for \(kept) (the same file), which provides line '\(id)'",
                                fix: "remove this link; \(kept) serves the line")
                : PluginRefusal(.otherName, "is the file \(kept) links to; host.json pins line '\(id)' to \(kept), which serves it",
                                fix: "keep both, or pin lines.\(id).file to this name and remove the link")
            rows[index].move(to: .refused, problem: problem)
        }
    }

    // MARK: 6. host.json, digests, quarantine, kill switch

    /// A checked line is not configured, disabled, refused for its digest, quarantined, killed,
    /// or loaded (ready to open when first needed).
    mutating func applyConfiguration() {
        for index in rows.indices where rows[index].state == .checked {
            guard let id = rows[index].lineID, let name = rows[index].fileName else { continue }
            guard let settings = config.lines[id] else {
                rows[index].move(to: .notConfigured, problem: LineTable.notConfigured(id, config: config))
                continue
            }
            guard settings.enabled else {
                rows[index].move(to: .disabled)
                continue
            }
            if let pin = settings.sha256 {
                var found = facts[name]?.sha256
                if found == nil {
                    found = digest(of: name)
                    facts[name]?.sha256 = found
                    cacheChanged = true
                }
                guard found == pin else {
                    rows[index].facts = facts[name]
                    rows[index].move(to: .refused, problem: LineTable.digestMismatch(found, pin: pin, line: id))
                    continue
                }
            }
            rows[index].move(to: .loaded)
            let identity = rows[index].identity
            for held in quarantine where held.line == id && held.applies(to: identity) {
                if let sender = held.sender, let globalID = held.globalID {
                    rows[index].quarantinedMessages[LineTable.messageKey(sender: sender, globalID: globalID)] = held
                } else if let sender = held.sender, let key = held.key {
                    rows[index].heldSenders[LineTable.messageKey(sender: sender, globalID: key)] = held
                } else if let key = held.key {
                    rows[index].quarantinedKeys[key] = held
                } else if rows[index].state != .quarantined {
                    rows[index].crash = held.crash
                    rows[index].move(to: .quarantined, problem: PluginRefusal(
                        .quarantined, held.reason, fix: "install a fixed file, or run imhost quarantine lift \(id)"))
                }
            }
            if let holdingAll, rows[index].state == .loaded {
                rows[index].move(to: .quarantined, problem: PluginRefusal(.quarantined, holdingAll, fix: "make the quarantine file readable, or remove it"))
            }
            if rows[index].state == .loaded, let off = config.switchedOff(line: id) {
                rows[index].move(to: .killed, problem: PluginRefusal(.killed, off.lineReason(id) + ": its chats open on the legacy page", fix: off.lineFix(id)))
            }
        }
    }

    // MARK: 7. Missing lines

    /// One row for each line host.json enables that no file provides (nor claims, refused).
    mutating func addMissingLines() {
        let anonymous = rows.count { $0.file != nil && $0.lineID == nil }
        // Lines some file claims: those that got to checked are in `firstClaim`; the few others here.
        var claimed: Set<String> = []
        for index in rows.indices {
            switch rows[index].state {
            case .refused, .failed, .crashed, .hung:
                if let id = rows[index].lineID { claimed.insert(id) }
            default:
                break
            }
        }
        let present = pinned.isEmpty ? [] : Set(rows.compactMap(\.fileName))
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
            rows.append(LineStatus(missing: id, problem: PluginRefusal(.missing, reason, fix: "install its .so there, or set \"enabled\": false")))
        }
    }

    // MARK: 8. Finishing

    /// Notes lines registered in this process whose file changed (they keep the version they
    /// loaded), writes the plugin cache when it learnt something, and prunes quarantine entries
    /// of files that changed since they crashed. `registered` gives each registered line's
    /// file identity.
    mutating func finish(registered: [String: FileIdentity?]) {
        for (id, identity) in registered {
            guard let index = rows.firstIndex(where: { $0.lineID == id && $0.file != nil }), rows[index].identity != identity else { continue }
            rows[index].note = "its file changed on disk; this process keeps the version it loaded until it restarts"
        }
        if facts.count > names.count {
            let present = Set(names)
            facts = facts.filter { present.contains($0.key) }
        }
        if let cachePath, cacheProblem == nil, cacheChanged || facts.count != cachedCount {
            PluginCache(files: facts).write(cachePath)
        }
        if !quarantine.isEmpty {
            let identities = Dictionary(rows.compactMap { row in row.fileName.map { ($0, row.identity) } },
                                        uniquingKeysWith: { first, _ in first })
            Quarantine.prune(dataFolder: dataFolder, holds: quarantine) { name in identities[name] ?? nil }
        }
    }
}

import IMKit

/// The operator's configuration, read from host.json: which lines are enabled, the routing
/// table, and the kill switch. A value of this type is always whole and valid: loading either
/// succeeds completely or throws a ``ConfigError``.
public struct HostConfig: Sendable, Equatable {
    /// One line's settings.
    public struct Line: Sendable, Equatable {
        /// Whether the line may be loaded and serve chats.
        public var enabled: Bool
        /// The file name in the plugin folder that provides the line, when pinned: another file
        /// claiming the line is refused instead of both.
        public var file: String?
        /// The SHA-256 the line's file must have, in lowercase hex, when pinned.
        public var sha256: String?

        public init(enabled: Bool, file: String? = nil, sha256: String? = nil) {
            self.enabled = enabled
            self.file = file
            self.sha256 = sha256
        }
    }

    /// How long line code may take before the host calls it hung.
    public struct Limits: Sendable, Equatable {
        /// Seconds the plugin scanner may spend on one file (default 5).
        public var scanSeconds: Double
        /// Seconds one call into a line may take in a chat (default 5).
        public var callSeconds: Double
        /// Seconds the builders of one page may take together (default 1): messages left when
        /// they are spent show as placeholders ("drawing took too long"), tried again at the
        /// next draw, so a slow line cannot freeze the chat for a whole page of its calls.
        public var drawSeconds: Double = 1
        /// The largest message payload stored or sent, in bytes of JSON (default 64 KiB).
        public var payloadBytes: Int
        /// The longest line of chat input, in bytes (default 1 MiB); a longer one is dropped.
        public var inputLineBytes: Int
        /// The most bytes of pictures one message carries, as files (default 1 MiB): a photo
        /// sent, or taken from a peer. It travels base64 in the envelope, beside the payload, so
        /// the broker's `max_packet_size` is sized from it too (``Envelope/limit(payloadLimit:photoLimit:fileLimit:)``).
        public var photoBytes: Int = 1 << 20
        /// The most bytes of a file one message carries (default 10 MiB): a résumé, a contract.
        /// It travels base64 in the envelope too, so the broker's `max_packet_size` is sized from
        /// the larger of it and ``photoBytes``.
        public var fileBytes: Int = 10 << 20
        /// The most messages stored from one peer in a day (UTC) (default 5,000): past it, that
        /// peer's messages are refused (`budget`) until the day ends.
        public var peerMessagesPerDay: Int = 5000
        /// The most bytes one peer's messages may add to the store in a day (UTC), as stored: the
        /// row, its summary and its share of the search index (``MessageStore/storedBytes(of:recipient:)``;
        /// default 50 MB).
        public var peerBytesPerDay: Int = 50_000_000
        /// How long after sending it a message can be recalled, in seconds (default 120, at
        /// most a day).
        public var recallSeconds: Int = 120

        /// How deeply a payload's JSON may nest (objects and arrays). host.json and scenario
        /// files may nest up to 512 levels.
        public static let nestingDepth = 64
        /// The largest host.json (or scenario file) read, in bytes.
        public static let documentBytes = 1 << 20

        public init(scanSeconds: Double = 5, callSeconds: Double = 5, payloadBytes: Int = 64 * 1024, inputLineBytes: Int = 1 << 20) {
            self.scanSeconds = scanSeconds
            self.callSeconds = callSeconds
            self.payloadBytes = payloadBytes
            self.inputLineBytes = inputLineBytes
        }
    }

    /// How `imhost web` serves the user's chats.
    public struct Web: Sendable, Equatable {
        /// The most chat pages one server runs at once, each a worker process (default 8):
        /// past it, the page nobody has watched longest is closed, and a new one is refused while
        /// every open page is watched.
        public var maxPages = 8

        /// The most `maxPages` may be.
        public static let maxPagesLimit = 256

        public init(maxPages: Int = 8) {
            self.maxPages = maxPages
        }
    }

    /// Which sub-categories a route rule matches.
    public enum CateMatch: Sendable, Hashable {
        /// `"*"`: every cateID of the rootCateID (an exact rule wins over it).
        case any
        /// The listed cateIDs.
        case ids([Int])
    }

    /// One rule of the routing table.
    public struct Route: Sendable, Equatable {
        /// Its place in `routes`, counted from 0, to name it in decisions and errors.
        public var index: Int
        public var rootCateID: Int
        public var cateID: CateMatch
        public var line: String
    }

    /// What the operator turned off.
    public struct KillSwitch: Sendable, Equatable {
        /// Lines whose chats open on the legacy page.
        public var lines: [String] = []
        /// Message keys shown as placeholders everywhere.
        public var messages: [String] = []
        /// Components no page shows.
        public var components: ComponentSet = []

        public init(lines: [String] = [], messages: [String] = [], components: ComponentSet = []) {
            self.lines = lines
            self.messages = messages
            self.components = components
        }
    }

    /// The file this was read from.
    public var file: String
    /// The folder plugins are scanned in, absolute.
    public var pluginsFolder: String
    /// The folder conversations are kept in, absolute (default `.imhost` beside host.json).
    public var dataFolder: String
    /// The user signed in, unless `--user` names another (default `me`).
    public var user: String

    /// Where the host keeps what each plugin registered, to start without loading them all.
    public var pluginCachePath: String { dataFolder + "/plugins.cache" }
    /// Configured lines by id, with their order in the file.
    public var lines: [String: Line]
    /// Line ids in the order host.json lists them.
    public var lineOrder: [String]
    public var routes: [Route]
    public var killSwitch: KillSwitch
    /// Time limits on line code.
    public var limits = Limits()
    /// `imhost web`'s settings.
    public var web = Web()
    /// Whether the person's peers see when they are online: `everyone` (the default) or
    /// `nobody` (then nothing is sent, and nothing of others is shown either).
    public var onlineStatus: OnlineStatus = .everyone

    /// host.json's `privacy.onlineStatus`.
    public enum OnlineStatus: String, Sendable, Equatable {
        case everyone, nobody
    }
    /// The broker this host chats through; `nil`: the host works alone, and what is sent stays
    /// queued.
    public var transport: Transport?
    /// The fleet configuration this host applies (from the broker, or its cache), with the user
    /// its rollouts are decided for; `nil`: host.json alone. Not read from host.json.
    public var fleet: FleetState?

    /// The settings a line may have.
    static let lineKeys = ["enabled", "file", "sha256"]

    /// Reads and validates the host.json at `path`: a regular file of at most
    /// ``Limits/documentBytes`` bytes of UTF-8.
    public static func load(from path: String) throws(ConfigError) -> HostConfig {
        let text: String
        do {
            text = try FileSystem.readDocument(path, limit: Limits.documentBytes)
        } catch FileSystem.DocumentFailure.unreadable(let failure) {
            throw ConfigError(file: path, position: nil, path: "",
                              message: "cannot read the configuration (\(failure)); create it (see docs/reference/host-json.md) or pass --config PATH")
        } catch {
            throw ConfigError(file: path, position: error.position, path: "", message: "\(error); pass --config PATH to a host.json")
        }
        return try parse(text, file: path)
    }

    /// Validates host.json text. `file` names it in errors and anchors relative folders.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> HostConfig {
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw ConfigError(file: file, position: error.position, path: "", message: "JSON syntax: \(error.message)")
        }
        return try DocumentReader(file: file).read(root)
    }
}

/// Reads host.json's schema.
extension DocumentReader {
    func read(_ root: JSONNode) throws(ConfigError) -> HostConfig {
        let top = try members(root, "", allowed: ["plugins", "data", "user", "lines", "routes", "killSwitch", "limits", "transport", "web", "privacy"])
        func member(_ key: String) -> JSONNode? { top.member(key) }

        let folder = FileSystem.directory(of: file)
        var pluginsFolder = "Plugins"
        if let node = member("plugins") {
            pluginsFolder = try string(node, "plugins")
            guard !pluginsFolder.isEmpty else { throw fail(node, "plugins", "the plugin folder cannot be empty; use \"Plugins\"") }
        }

        var dataFolder = ".imhost"
        if let node = member("data") {
            dataFolder = try string(node, "data")
            guard !dataFolder.isEmpty else { throw fail(node, "data", "the data folder cannot be empty; use \".imhost\"") }
        }
        var user = "me"
        if let node = member("user") {
            user = try string(node, "user")
            if let problem = StorePath.problem(withID: user) { throw fail(node, "user", "the user id \(problem)") }
        }

        var lines: [String: HostConfig.Line] = [:]
        var lineOrder: [String] = []
        if let node = member("lines") {
            for entry in try members(node, "lines", allowed: nil) {
                // Made only when a setting is given or a mistake is said: most lines have neither.
                var path: String { "lines." + entry.key }
                guard LineID.isValid(entry.key) else {
                    throw ConfigError(file: file, position: entry.keyPosition, path: path,
                                      message: "\"\(entry.key)\" is not a line id; use [a-z][a-z0-9-]{0,31}, e.g. \"house\"")
                }
                var line = HostConfig.Line(enabled: true)
                for setting in try members(entry.value, path, allowed: HostConfig.lineKeys) {
                    let settingPath = path + "." + setting.key
                    switch setting.key {
                    case "enabled":
                        line.enabled = try bool(setting.value, settingPath)
                    case "file":
                        let name = try string(setting.value, settingPath)
                        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
                            throw fail(setting.value, settingPath, "expected a file name in the plugin folder, such as \"\(entry.key).so\", found \"\(name)\"")
                        }
                        line.file = name
                    default:
                        let digest = try string(setting.value, settingPath).lowercased()
                        guard digest.utf8.count == 64, digest.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
                            throw fail(setting.value, settingPath, "expected 64 hexadecimal digits, as sha256sum prints them")
                        }
                        line.sha256 = digest
                    }
                }
                lines[entry.key] = line
                lineOrder.append(entry.key)
            }
        }

        // Looked up for every route: a set, so a long host.json loads in linear time.
        let known = Set(lineOrder)
        func knownLine(_ node: JSONNode, _ path: String) throws(ConfigError) -> String {
            try self.knownLine(node, path, lineOrder: lineOrder, known: known)
        }

        var routes: [HostConfig.Route] = []
        var claimed: [String: Int] = [:]
        if let node = member("routes") {
            for (index, element) in try array(node, "routes").enumerated() {
                let path = "routes[\(index)]"
                let fields = try members(element, path, allowed: ["rootCateID", "cateID", "line"])
                func field(_ key: String) throws(ConfigError) -> JSONNode {
                    guard let value = fields.member(key) else {
                        throw fail(element, path, "missing \"\(key)\"; a route is { \"rootCateID\": 1, \"cateID\": \"*\", \"line\": \"house\" }")
                    }
                    return value
                }
                let root = try id(try field("rootCateID"), path + ".rootCateID")
                let cateNode = try field("cateID")
                let cate: HostConfig.CateMatch
                switch cateNode.value {
                case .string("*"): cate = .any
                case .number: cate = .ids([try id(cateNode, path + ".cateID")])
                case .array(let elements) where !elements.isEmpty:
                    var ids: [Int] = []
                    for (i, element) in elements.enumerated() { ids.append(try id(element, path + ".cateID[\(i)]")) }
                    cate = .ids(ids)
                default:
                    throw fail(cateNode, path + ".cateID", "expected \"*\", a cateID, or a non-empty array of cateIDs, found \(cateNode.kindName)")
                }
                let line = try knownLine(try field("line"), path + ".line")
                let keys: [String] = switch cate {
                case .any: ["\(root)/*"]
                case .ids(let ids): ids.map { "\(root)/\($0)" }
                }
                for key in keys {
                    if let earlier = claimed[key] {
                        let cateText = key.hasSuffix("/*") ? "\"*\"" : String(key.split(separator: "/")[1])
                        guard earlier < index else {
                            throw fail(cateNode, path + ".cateID", "cateID \(cateText) is listed twice in this rule; list it once")
                        }
                        throw fail(element, path, "rootCateID \(root), cateID \(cateText) is already routed by routes[\(earlier)] (to \"\(routes[earlier].line)\"); remove one of the two rules")
                    }
                    claimed[key] = index
                }
                routes.append(HostConfig.Route(index: index, rootCateID: root, cateID: cate, line: line))
            }
        }

        var killSwitch = HostConfig.KillSwitch()
        if let node = member("killSwitch") {
            killSwitch = try self.killSwitch(node, "killSwitch", lineOrder: lineOrder, known: known)
        }

        var limits = HostConfig.Limits()
        if let node = member("limits") {
            for entry in try members(node, "limits", allowed: ["scanSeconds", "callSeconds", "drawSeconds", "payloadBytes", "inputLineBytes",
                                                                "photoBytes", "fileBytes", "peerMessagesPerDay", "peerBytesPerDay", "recallSeconds"]) {
                let path = "limits." + entry.key
                guard case .number(let value, let text) = entry.value.value else {
                    throw fail(entry.value, path, "expected a number, found \(entry.value.kindName)")
                }
                switch entry.key {
                case "payloadBytes", "inputLineBytes":
                    guard value == value.rounded(), value >= 1024, value <= Double(64 << 20) else {
                        throw fail(entry.value, path, "expected a whole number of bytes from 1024 to \(64 << 20), found \(text)")
                    }
                    if entry.key == "payloadBytes" { limits.payloadBytes = Int(value) } else { limits.inputLineBytes = Int(value) }
                case "photoBytes":
                    guard value == value.rounded(), value >= 1024, value <= Double(16 << 20) else {
                        throw fail(entry.value, path, "expected a whole number of bytes from 1024 to \(16 << 20), found \(text)")
                    }
                    limits.photoBytes = Int(value)
                case "fileBytes":
                    guard value == value.rounded(), value >= 1024, value <= Double(64 << 20) else {
                        throw fail(entry.value, path, "expected a whole number of bytes from 1024 to \(64 << 20), found \(text)")
                    }
                    limits.fileBytes = Int(value)
                case "peerMessagesPerDay":
                    guard value == value.rounded(), value >= 1, value <= 10_000_000 else {
                        throw fail(entry.value, path, "expected a whole number of messages from 1 to 10000000, found \(text)")
                    }
                    limits.peerMessagesPerDay = Int(value)
                case "peerBytesPerDay":
                    guard value == value.rounded(), value >= 1024, value <= Double(1 << 40) else {
                        throw fail(entry.value, path, "expected a whole number of bytes from 1024 to \(1 << 40), found \(text)")
                    }
                    limits.peerBytesPerDay = Int(value)
                case "recallSeconds":
                    guard value == value.rounded(), value >= 0, value <= 86_400 else {
                        throw fail(entry.value, path, "expected a whole number of seconds from 0 (no recalls) to 86400, found \(text)")
                    }
                    limits.recallSeconds = Int(value)
                default:
                    guard value >= 0.1, value <= 600 else {
                        throw fail(entry.value, path, "expected seconds from 0.1 to 600, found \(text)")
                    }
                    switch entry.key {
                    case "scanSeconds": limits.scanSeconds = value
                    case "drawSeconds": limits.drawSeconds = value
                    default: limits.callSeconds = value
                    }
                }
            }
        }

        var web = HostConfig.Web()
        if let node = member("web") {
            for entry in try members(node, "web", allowed: ["maxPages"]) {
                let limit = HostConfig.Web.maxPagesLimit
                guard case .number(let value, _) = entry.value.value, value == value.rounded(), value >= 1, value <= Double(limit) else {
                    throw fail(entry.value, "web.maxPages", "expected a whole number of pages from 1 to \(limit), found \(entry.value.kindName)")
                }
                web.maxPages = Int(value)
            }
        }

        var onlineStatus = HostConfig.OnlineStatus.everyone
        if let node = member("privacy") {
            for entry in try members(node, "privacy", allowed: ["onlineStatus"]) {
                guard case .string(let text) = entry.value.value, let value = HostConfig.OnlineStatus(rawValue: text) else {
                    throw fail(entry.value, "privacy.onlineStatus", "expected \"everyone\" or \"nobody\", found \(entry.value.kindName)")
                }
                onlineStatus = value
            }
        }

        var transport: HostConfig.Transport?
        if let node = member("transport") {
            transport = try self.transport(node, folder: folder)
            // The user's id becomes a topic level and a broker user name. "operator" is the
            // host.json of `imhost fleet`, which never chats.
            if let problem = TransportID.problem(user, allowingOperator: true) {
                throw fail(member("user") ?? node, member("user") == nil ? "transport" : "user",
                           "the user id \"\(user)\" \(problem)\(member("user") == nil ? "; set \"user\"" : "")")
            }
            // A device's login is its user's: the broker grants it the user's topics only.
            if let login = transport?.login, let node = member("transport"), DynamicSecurity.parse(login: login)?.user != user {
                throw fail(node, "transport.login", "the login \"\(login)\" is not one of \(user)'s devices: a device of \(user) logs in as \(user) or \(user)\(DynamicSecurity.separator)DEVICE (imhost broker add-device DIR \(user) DEVICE prints its members)")
            }
        }

        var config = HostConfig(file: file, pluginsFolder: FileSystem.resolve(pluginsFolder, against: folder),
                                dataFolder: FileSystem.resolve(dataFolder, against: folder), user: user,
                                lines: lines, lineOrder: lineOrder, routes: routes, killSwitch: killSwitch, limits: limits,
                                web: web, transport: transport)
        config.onlineStatus = onlineStatus
        return config
    }

    package func knownLine(_ node: JSONNode, _ path: String, lineOrder: [String], known: Set<String>) throws(ConfigError) -> String {
        let name = try string(node, path)
        guard known.contains(name) else {
            let hint = closestMatch(to: name, among: lineOrder).map { "did you mean \"\($0)\", or " } ?? ""
            throw fail(node, path, "line \"\(name)\" is not in \"lines\"; \(hint)add \"\(name)\": { \"enabled\": true } to \"lines\"")
        }
        return name
    }

    /// A kill switch object; its lines must be among `lineOrder`.
    package func killSwitch(_ node: JSONNode, _ base: String, lineOrder: [String], known: Set<String>? = nil) throws(ConfigError) -> HostConfig.KillSwitch {
        let known = known ?? Set(lineOrder)
        var killSwitch = HostConfig.KillSwitch()
        for entry in try members(node, base, allowed: ["lines", "messages", "components"]) {
            let path = base + "." + entry.key
            for (i, element) in try array(entry.value, path).enumerated() {
                let itemPath = path + "[\(i)]"
                switch entry.key {
                case "lines":
                    killSwitch.lines.append(try knownLine(element, itemPath, lineOrder: lineOrder, known: known))
                case "messages":
                    let key = try string(element, itemPath)
                    guard LineID.isValidMessageKey(key) else {
                        throw fail(element, itemPath, "\"\(key)\" is not a message key; use a built-in key like \"image\" or \"<line>.<name>\" like \"house.listing\"")
                    }
                    killSwitch.messages.append(key)
                default:
                    let name = try string(element, itemPath)
                    guard let component = ComponentSet(name: name) else {
                        let names = ComponentSet.all.names
                        let hint = closestMatch(to: name, among: names).map { "did you mean \"\($0)\"? " } ?? ""
                        throw fail(element, itemPath, "unknown component \"\(name)\"; \(hint)components: \(names.joined(separator: ", "))")
                    }
                    killSwitch.components.insert(component)
                }
            }
        }
        return killSwitch
    }
}

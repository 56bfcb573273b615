import IMKit

/// The operator's configuration, read from host.json: which lines are enabled, the routing
/// table, and the kill switch. A value of this type is always whole and valid: loading either
/// succeeds completely or throws a ``ConfigError``.
public struct HostConfig: Sendable, Equatable {
    /// One line's settings.
    public struct Line: Sendable, Equatable {
        /// Whether the line's plugin is registered at start-up.
        public var enabled: Bool
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

    /// Reads and validates the host.json at `path`.
    public static func load(from path: String) throws(ConfigError) -> HostConfig {
        let text: String
        do {
            text = try FileSystem.readText(path)
        } catch {
            throw ConfigError(file: path, position: nil, path: "",
                              message: "cannot read the configuration (\(error)); create it (see README.md) or pass --config PATH")
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
        let top = try members(root, "", allowed: ["plugins", "data", "user", "lines", "routes", "killSwitch"])
        func member(_ key: String) -> JSONNode? { top.first { $0.key == key }?.value }

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
            guard !user.isEmpty else { throw fail(node, "user", "the user id cannot be empty") }
        }

        var lines: [String: HostConfig.Line] = [:]
        var lineOrder: [String] = []
        if let node = member("lines") {
            for entry in try members(node, "lines", allowed: nil) {
                let path = "lines." + entry.key
                guard LineID.isValid(entry.key) else {
                    throw ConfigError(file: file, position: entry.keyPosition, path: path,
                                      message: "\"\(entry.key)\" is not a line id; use [a-z][a-z0-9_-]{0,31}, e.g. \"house\"")
                }
                var enabled = true
                for setting in try members(entry.value, path, allowed: ["enabled"]) {
                    enabled = try bool(setting.value, path + ".enabled")
                }
                lines[entry.key] = HostConfig.Line(enabled: enabled)
                lineOrder.append(entry.key)
            }
        }

        func knownLine(_ node: JSONNode, _ path: String) throws(ConfigError) -> String {
            try self.knownLine(node, path, lineOrder: lineOrder)
        }

        var routes: [HostConfig.Route] = []
        var claimed: [String: Int] = [:]
        if let node = member("routes") {
            for (index, element) in try array(node, "routes").enumerated() {
                let path = "routes[\(index)]"
                let fields = try members(element, path, allowed: ["rootCateID", "cateID", "line"])
                func field(_ key: String) throws(ConfigError) -> JSONNode {
                    guard let value = fields.first(where: { $0.key == key })?.value else {
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
                        throw fail(element, path, "rootCateID \(root), cateID \(cateText) is already routed by routes[\(earlier)] (to \"\(routes[earlier].line)\"); remove one of the two rules")
                    }
                    claimed[key] = index
                }
                routes.append(HostConfig.Route(index: index, rootCateID: root, cateID: cate, line: line))
            }
        }

        var killSwitch = HostConfig.KillSwitch()
        if let node = member("killSwitch") {
            killSwitch = try self.killSwitch(node, "killSwitch", lineOrder: lineOrder)
        }

        return HostConfig(file: file, pluginsFolder: FileSystem.resolve(pluginsFolder, against: folder),
                          dataFolder: FileSystem.resolve(dataFolder, against: folder), user: user,
                          lines: lines, lineOrder: lineOrder, routes: routes, killSwitch: killSwitch)
    }

    func knownLine(_ node: JSONNode, _ path: String, lineOrder: [String]) throws(ConfigError) -> String {
        let name = try string(node, path)
        guard lineOrder.contains(name) else {
            let hint = closestMatch(to: name, among: lineOrder).map { "did you mean \"\($0)\", or " } ?? ""
            throw fail(node, path, "line \"\(name)\" is not in \"lines\"; \(hint)add \"\(name)\": { \"enabled\": true } to \"lines\"")
        }
        return name
    }

    /// A kill switch object; its lines must be among `lineOrder`.
    func killSwitch(_ node: JSONNode, _ base: String, lineOrder: [String]) throws(ConfigError) -> HostConfig.KillSwitch {
        var killSwitch = HostConfig.KillSwitch()
        for entry in try members(node, base, allowed: ["lines", "messages", "components"]) {
            let path = base + "." + entry.key
            for (i, element) in try array(entry.value, path).enumerated() {
                let itemPath = path + "[\(i)]"
                switch entry.key {
                case "lines":
                    killSwitch.lines.append(try knownLine(element, itemPath, lineOrder: lineOrder))
                case "messages":
                    let key = try string(element, itemPath)
                    guard LineID.isValidMessageKey(key) else {
                        throw fail(element, itemPath, "\"\(key)\" is not a message key; use a built-in key like \"image\" or \"<line>.<name>\" like \"house.listing\"")
                    }
                    killSwitch.messages.append(key)
                default:
                    let name = try string(element, itemPath)
                    guard let component = ComponentSet(name: name) else {
                        let names = ComponentSet.named.map(\.name)
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

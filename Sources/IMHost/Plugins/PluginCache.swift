#if canImport(Glibc)
import Glibc
#endif
@_spi(Host) import IMKit

/// What each plugin file said and registered the last time it was loaded, keyed by the file's
/// identity (size, modification and change times, inode), so a host start reads one small file
/// instead of opening every plugin. A line is then loaded only when something first needs it: a
/// jump to its page, one of its messages, one of its routes.
///
/// The cache is only trusted for the same host build (executable and libIMKit.so) and a file
/// whose identity is unchanged; anything else is loaded for real and the cache rewritten.
/// `imhost plugins` always loads every plugin and rewrites the cache.
struct PluginCache: Equatable {
    static let format = 1

    struct Signature: Equatable {
        var size: Int
        var modified: Int
        var changed: Int
        var inode: UInt
        var device: UInt

        init(size: Int, modified: Int, changed: Int, inode: UInt, device: UInt) {
            self.size = size
            self.modified = modified
            self.changed = changed
            self.inode = inode
            self.device = device
        }

        init(_ info: stat) {
            size = Int(info.st_size)
            modified = Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec)
            changed = Int(info.st_ctim.tv_sec) * 1_000_000_000 + Int(info.st_ctim.tv_nsec)
            inode = UInt(info.st_ino)
            device = UInt(info.st_dev)
        }
    }

    struct Route: Equatable {
        var pattern: String
        var allowExternal: Bool
    }

    /// What a line registered.
    struct Registration: Equatable {
        var page: String?
        var keys: [String]
        var services: [String]
        var routes: [Route]
    }

    struct File: Equatable {
        var signature: Signature
        var lineID: String?
        var displayName: String?
        var pluginVersion: String?
        /// The status when it was loaded for real.
        var status: PluginCatalog.Status
        var problem: PluginRefusal?
        var registration: Registration?
    }

    var format: Int
    /// Which host build wrote it.
    var host: String
    var files: [String: File]

    /// The identity of this host build: compiler, ABI, and the executable and libIMKit.so files.
    static let hostIdentity: String = {
        var parts = ["swift \(SwiftCompiler.version)", "abi \(PluginEntry.abiVersion)"]
        // The libIMKit.so this process mapped: a rebuilt SDK invalidates every cached registration.
        let maps = (try? FileSystem.readText("/proc/self/maps")) ?? ""
        let imkit = maps.split(separator: "\n").lazy.compactMap { line -> String? in
            guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last,
                  path.hasSuffix("/libIMKit.so") else { return nil }
            return String(path)
        }.first
        for path in ["/proc/self/exe", imkit].compactMap({ $0 }) {
            if let status = try? FileSystem.status(path, followLinks: true) {
                let signature = Signature(status)
                parts.append("\(signature.size)/\(signature.modified)/\(signature.inode)")
            }
        }
        return parts.joined(separator: " ")
    }()

    /// The cache at `path`, if it exists, parses, and was written by this host build.
    static func read(_ path: String) -> PluginCache? {
        guard let text = try? FileSystem.readText(path) else { return nil }
        return PluginCache(text: text)
    }

    /// Writes the cache atomically (a temporary file renamed over the old one). A cache that
    /// cannot be written only costs speed, so failures are ignored.
    func write(_ path: String) {
        let bytes = Array(text.utf8)
        let folder = FileSystem.directory(of: path)
        _ = mkdir(folder, 0o700)
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written == bytes.count { rename(temporary, path) } else { unlink(temporary) }
    }

    // MARK: The file format
    //
    // Read at every start, so it is plain text parsed in one pass rather than JSON through
    // Codable (which took longer than everything else a start does). A header line, then one
    // line a plugin file; fields are separated by tabs, list items by U+001F, a route's pattern
    // and flag by U+001E. Text fields are escaped (backslash, tab, newline and the separators),
    // and an optional field is empty when absent and starts with "=" when present.

    private static let magic = "imhost-plugin-cache"

    var text: String {
        var out = "\(Self.magic)\t\(format)\t\(Self.escape(host))\n"
        for (name, file) in files.sorted(by: { $0.key < $1.key }) {
            let signature = file.signature
            var fields = [Self.escape(name), "\(signature.size)", "\(signature.modified)", "\(signature.changed)",
                          "\(signature.inode)", "\(signature.device)", Self.optional(file.lineID),
                          Self.optional(file.displayName), Self.optional(file.pluginVersion), file.status.rawValue,
                          Self.optional(file.problem?.code.rawValue), Self.optional(file.problem?.reason), Self.optional(file.problem?.fix)]
            if let registration = file.registration {
                fields += ["=", Self.optional(registration.page),
                           registration.keys.map(Self.escape).joined(separator: "\u{1F}"),
                           registration.services.map(Self.escape).joined(separator: "\u{1F}"),
                           registration.routes.map { Self.escape($0.pattern) + "\u{1E}" + ($0.allowExternal ? "1" : "0") }
                               .joined(separator: "\u{1F}")]
            } else {
                fields += ["", "", "", "", ""]
            }
            out += fields.joined(separator: "\t") + "\n"
        }
        return out
    }

    init(format: Int, host: String, files: [String: File]) {
        self.format = format
        self.host = host
        self.files = files
    }

    /// Parses the text form; `nil` when it is not a cache of this format and host build.
    init?(text: String) {
        // Split on bytes: splitting on Characters looks for grapheme boundaries first.
        func fields(_ line: Substring) -> [Substring] {
            line.utf8.split(separator: 0x09, omittingEmptySubsequences: false).map { Substring($0) }
        }
        var lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: true).map { Substring($0) }
        guard !lines.isEmpty else { return nil }
        let header = fields(lines.removeFirst())
        guard header.count == 3, header[0] == Self.magic, Int(header[1]) == Self.format,
              Self.unescape(header[2]) == Self.hostIdentity else { return nil }
        var files: [String: File] = [:]
        for line in lines {
            let f = fields(line)
            guard f.count == 18, let size = Int(f[1]), let modified = Int(f[2]), let changed = Int(f[3]),
                  let inode = UInt(f[4]), let device = UInt(f[5]), let status = PluginCatalog.Status(rawValue: String(f[9])) else {
                return nil
            }
            var problem: PluginRefusal?
            if let code = Self.optional(f[10]).flatMap(PluginRefusal.Code.init(rawValue:)) {
                problem = PluginRefusal(code, Self.optional(f[11]) ?? "", fix: Self.optional(f[12]) ?? "")
            }
            var registration: Registration?
            if f[13] == "=" {
                func list(_ field: Substring) -> [String] {
                    field.isEmpty ? [] : field.utf8.split(separator: 0x1F, omittingEmptySubsequences: false).map { Self.unescape(Substring($0)) }
                }
                let routes = list(f[17]).compactMap { item -> Route? in
                    let parts = item.utf8.split(separator: 0x1E, omittingEmptySubsequences: false).map { Substring($0) }
                    guard parts.count == 2 else { return nil }
                    return Route(pattern: String(parts[0]), allowExternal: parts[1] == "1")
                }
                registration = Registration(page: Self.optional(f[14]), keys: list(f[15]), services: list(f[16]), routes: routes)
            }
            let signature = Signature(size: size, modified: modified, changed: changed, inode: inode, device: device)
            files[Self.unescape(f[0])] = File(signature: signature, lineID: Self.optional(f[6]), displayName: Self.optional(f[7]),
                                              pluginVersion: Self.optional(f[8]), status: status, problem: problem,
                                              registration: registration)
        }
        self.init(format: Self.format, host: Self.hostIdentity, files: files)
    }

    private static func optional(_ value: String?) -> String { value.map { "=" + escape($0) } ?? "" }

    private static func optional(_ field: Substring) -> String? {
        field.first == "=" ? unescape(field.dropFirst()) : nil
    }

    private static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x1E || $0 == 0x1F }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\u{1E}": out += "\\r"
            case "\u{1F}": out += "\\u"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func unescape(_ text: Substring) -> String {
        guard text.utf8.contains(0x5C) else { return String(text) }
        var out = ""
        var escaping = false
        for scalar in text.unicodeScalars {
            if escaping {
                switch scalar {
                case "t": out += "\t"
                case "n": out += "\n"
                case "r": out += "\u{1E}"
                case "u": out += "\u{1F}"
                default: out.unicodeScalars.append(scalar)
                }
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

extension PluginCache.File {
    /// What a file's entry says, as loaded for real.
    init(_ entry: PluginCatalog.Entry, signature: PluginCache.Signature) {
        self.signature = signature
        lineID = entry.lineID
        displayName = entry.displayName
        pluginVersion = entry.pluginVersion
        status = entry.status
        problem = entry.problem
        if entry.status == .loaded {
            registration = PluginCache.Registration(page: entry.pageTypeName, keys: entry.messageKeys, services: entry.services,
                                                    routes: entry.routeClaims.map { PluginCache.Route(pattern: $0.pattern, allowExternal: $0.allowExternal) })
        }
    }
}

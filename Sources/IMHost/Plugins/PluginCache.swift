#if canImport(Glibc)
import Glibc
#endif
@_spi(Host) import IMKit

/// Facts about each plugin file, keyed by its name and identity (device, inode, size,
/// modification and change times): what its descriptor says, and what its line registers or why
/// the file is refused for good. A warm start reads this one file and stats the plugins; it
/// spawns no scanner and opens no library.
///
/// Only facts are kept, never a decision that depends on host.json (enabled, killed, pinned) or
/// on the moment (a failed registration, a missing library, a crash): those are decided anew on
/// every start. The cache is trusted only for the host build that wrote it (executable and
/// libIMKit.so); a cache that does not read is ignored and rewritten.
struct PluginCache: Equatable {
    static let format = 2

    /// Which host build wrote it.
    var host: String
    /// Facts by file name.
    var files: [String: PluginFacts]

    /// The identity of this host build: compiler, ABI, and the executable and libIMKit.so files.
    static let hostIdentity: String = {
        var parts = ["swift \(SwiftCompiler.version)", "abi \(PluginEntry.abiVersion)"]
        // The libIMKit.so this process mapped: a rebuilt SDK invalidates every cached manifest.
        let maps = (try? FileSystem.readText("/proc/self/maps")) ?? ""
        let imkit = maps.split(separator: "\n").lazy.compactMap { line -> String? in
            guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last,
                  path.hasSuffix("/libIMKit.so") else { return nil }
            return String(path)
        }.first
        for path in ["/proc/self/exe", imkit].compactMap({ $0 }) {
            if let identity = FileIdentity.of(path) {
                parts.append("\(identity.size)/\(identity.modified)/\(identity.inode)")
            }
        }
        return parts.joined(separator: " ")
    }()

    /// The cache at `path`, if it exists, parses, and was written by this host build.
    static func read(_ path: String) -> PluginCache? {
        guard let text = try? FileSystem.readText(path) else { return nil }
        return PluginCache(text: text)
    }

    /// Writes the cache atomically. A cache that cannot be written only costs speed.
    func write(_ path: String) {
        try? FileSystem.makeFolders(FileSystem.directory(of: path))
        try? FileSystem.writeAtomically(Array(text.utf8), to: path)
    }

    // MARK: The file format
    //
    // Read at every start, so it is plain text parsed in one pass rather than JSON through
    // Codable (which took longer than everything else a start does). A header line, then one
    // line a plugin file; fields are separated by tabs, list items by U+001F, a route's pattern
    // and flag by U+001E. Text fields are escaped (backslash, tab, newline and the separators),
    // and an optional field is empty when absent and starts with "=" when present.

    private static let magic = "imhost-plugin-cache"
    private static let fieldCount = 20

    var text: String {
        var out = "\(Self.magic)\t\(Self.format)\t\(Self.escape(host))\n"
        for (name, facts) in files.sorted(by: { $0.key < $1.key }) {
            let id = facts.identity
            var fields = [Self.escape(name), "\(id.size)", "\(id.modified)", "\(id.changed)", "\(id.inode)", "\(id.device)"]
            if let descriptor = facts.descriptor {
                fields += ["=", Self.optional(descriptor.lineID), Self.optional(descriptor.displayName),
                           Self.optional(descriptor.version), Self.optional(descriptor.swiftVersion)]
            } else {
                fields += ["", "", "", "", ""]
            }
            switch facts.verdict {
            case .refused(let refusal):
                fields += ["refused", Self.optional(refusal.code.rawValue), Self.optional(refusal.reason), Self.optional(refusal.fix),
                           "", "", "", ""]
            case .line(let manifest):
                fields += ["line", "", "", "", Self.optional(manifest.page),
                           manifest.messageKeys.map(Self.escape).joined(separator: "\u{1F}"),
                           manifest.services.map(Self.escape).joined(separator: "\u{1F}"),
                           manifest.routes.map { Self.escape($0.pattern) + "\u{1E}" + ($0.allowExternal ? "1" : "0") }
                               .joined(separator: "\u{1F}")]
            }
            fields.append(Self.optional(facts.sha256))
            out += fields.joined(separator: "\t") + "\n"
        }
        return out
    }

    init(host: String = PluginCache.hostIdentity, files: [String: PluginFacts]) {
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
        var files: [String: PluginFacts] = [:]
        for line in lines {
            let f = fields(line)
            guard f.count == Self.fieldCount, let size = Int64(f[1]), let modified = Int64(f[2]), let changed = Int64(f[3]),
                  let inode = UInt64(f[4]), let device = UInt64(f[5]) else { return nil }
            let identity = FileIdentity(device: device, inode: inode, size: size, modified: modified, changed: changed)
            var descriptor: PluginDescriptor?
            if f[6] == "=" {
                descriptor = PluginDescriptor(lineID: Self.optional(f[7]), displayName: Self.optional(f[8]),
                                              version: Self.optional(f[9]), swiftVersion: Self.optional(f[10]))
            }
            let verdict: PluginFacts.Verdict
            switch f[11] {
            case "refused":
                guard let code = Self.optional(f[12]).flatMap(PluginRefusal.Code.init(rawValue:)) else { return nil }
                verdict = .refused(PluginRefusal(code, Self.optional(f[13]) ?? "", fix: Self.optional(f[14]) ?? ""))
            case "line":
                func list(_ field: Substring) -> [String] {
                    field.isEmpty ? [] : field.utf8.split(separator: 0x1F, omittingEmptySubsequences: false).map { Self.unescape(Substring($0)) }
                }
                let routes = list(f[18]).compactMap { item -> LineManifest.Route? in
                    let parts = item.utf8.split(separator: 0x1E, omittingEmptySubsequences: false).map { Substring($0) }
                    guard parts.count == 2 else { return nil }
                    return LineManifest.Route(pattern: String(parts[0]), allowExternal: parts[1] == "1")
                }
                verdict = .line(LineManifest(page: Self.optional(f[15]), messageKeys: list(f[16]), services: list(f[17]), routes: routes))
            default:
                return nil
            }
            files[Self.unescape(f[0])] = PluginFacts(identity: identity, descriptor: descriptor, verdict: verdict,
                                                     sha256: Self.optional(f[19]))
        }
        self.init(files: files)
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

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
        let maps = (try? FileSystem.readBytes("/proc/self/maps", limit: 4 << 20)) ?? []
        // The line ending in "/libIMKit.so": one pass over the bytes, checking each line's end.
        let suffix = Array("/libIMKit.so".utf8)
        let end: Int? = maps.withUnsafeBufferPointer { bytes in
            var index = suffix.count
            while index < bytes.count {
                if bytes[index] == 0x0A, bytes[(index - suffix.count)..<index].elementsEqual(suffix) { return index }
                index += 1
            }
            return nil
        }
        let imkit = end.map { end -> String in
            let start = maps[..<end].lastIndex(of: UInt8(ascii: " ")).map { $0 + 1 } ?? 0
            return String(decoding: maps[start..<end], as: UTF8.self)
        }
        for path in ["/proc/self/exe", imkit].compactMap({ $0 }) {
            if let identity = FileIdentity.of(path) {
                parts.append("\(identity.size)/\(identity.modified)/\(identity.inode)")
            }
        }
        return parts.joined(separator: " ")
    }()

    /// The cache at `path`, if it exists, parses, and was written by this host build.
    static func read(_ path: String) -> PluginCache? {
        guard let bytes = try? FileSystem.readBytes(path, limit: 64 << 20, followingLinks: false) else { return nil }
        return PluginCache(bytes: bytes)
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
    fileprivate static let fieldCount = 20

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

    /// Parses the text form from its bytes, in one pass: fields are byte ranges found by a
    /// single scan, and only the fields kept become strings (it runs on every start).
    init?(bytes: [UInt8]) {
        let parsed: [String: PluginFacts]? = bytes.withUnsafeBufferPointer { buffer in
            var files: [String: PluginFacts] = [:]
            var fields: [Range<Int>] = []
            fields.reserveCapacity(Self.fieldCount + 1)
            var lineStart = 0
            var header = true
            while lineStart < buffer.count {
                var end = lineStart
                fields.removeAll(keepingCapacity: true)
                var fieldStart = lineStart
                while end < buffer.count, buffer[end] != 0x0A {
                    if buffer[end] == 0x09 {
                        fields.append(fieldStart..<end)
                        fieldStart = end + 1
                    }
                    end += 1
                }
                fields.append(fieldStart..<end)
                defer { lineStart = end + 1 }
                if end == lineStart { continue }
                func field(_ index: Int) -> Field { buffer[fields[index]] }
                if header {
                    guard fields.count == 3, Self.text(field(0)) == Self.magic, Self.number(field(1)) == Int64(Self.format),
                          Self.unescape(field(2)) == Self.hostIdentity else { return nil }
                    header = false
                    files.reserveCapacity(buffer.count / 160)
                    continue
                }
                guard fields.count == Self.fieldCount, let facts = Self.facts(field, line: bytes[lineStart..<end]) else { return nil }
                files[Self.unescape(field(0))] = facts
            }
            return header ? nil : files
        }
        guard let parsed else { return nil }
        self.init(files: parsed)
    }

    /// One file's facts from the fields of its line: its identity, line id and verdict kind now,
    /// the rest from `line` when asked for.
    private static func facts(_ f: (Int) -> Field, line: ArraySlice<UInt8>) -> PluginFacts? {
        guard let size = number(f(1)), let modified = number(f(2)), let changed = number(f(3)),
              let inode = number(f(4)), let device = number(f(5)) else { return nil }
        let identity = FileIdentity(device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode), size: size,
                                    modified: modified, changed: changed)
        let kind = f(11).first
        guard kind == UInt8(ascii: "l") || kind == UInt8(ascii: "r") else { return nil }
        return PluginFacts(identity: identity, lineID: isPresent(f(6)) ? optional(f(7)) : nil, isLine: kind == UInt8(ascii: "l"),
                           sha256: optional(f(19)), cached: Line(bytes: line))
    }

    /// One file's line of the cache, kept as bytes until its descriptor or manifest is wanted.
    struct Line: Equatable, Sendable {
        /// The line, in the bytes of the whole cache (shared, not copied).
        let bytes: ArraySlice<UInt8>

        private func withFields<T>(_ body: ((Int) -> Field) -> T?) -> T? {
            bytes.withUnsafeBufferPointer { buffer in
                let fields = buffer.split(separator: 0x09, omittingEmptySubsequences: false)
                guard fields.count == PluginCache.fieldCount else { return nil }
                return body { fields[$0] }
            }
        }

        var descriptor: PluginDescriptor? {
            withFields { f in
                guard PluginCache.isPresent(f(6)) else { return nil }
                return PluginDescriptor(lineID: PluginCache.optional(f(7)), displayName: PluginCache.optional(f(8)), version: PluginCache.optional(f(9)),
                                        swiftVersion: PluginCache.optional(f(10)))
            }
        }

        var verdict: PluginFacts.Verdict? {
            withFields { f in
                switch f(11).first {
                case UInt8(ascii: "r"):
                    guard let code = PluginCache.optional(f(12)).flatMap(PluginRefusal.Code.init(rawValue:)) else { return nil }
                    return .refused(PluginRefusal(code, PluginCache.optional(f(13)) ?? "", fix: PluginCache.optional(f(14)) ?? ""))
                case UInt8(ascii: "l"):
                    let routes = PluginCache.list(f(18)).compactMap { item -> LineManifest.Route? in
                        guard let mark = item.firstIndex(of: 0x1E) else { return nil }
                        return LineManifest.Route(pattern: PluginCache.unescape(item[..<mark]), allowExternal: item[(mark + 1)...].first == UInt8(ascii: "1"))
                    }
                    return .line(LineManifest(page: PluginCache.optional(f(15)), messageKeys: PluginCache.list(f(16)).map(PluginCache.unescape),
                                              services: PluginCache.list(f(17)).map(PluginCache.unescape), routes: routes))
                default:
                    return nil
                }
            }
        }
    }

    /// The items of a list field, separated by U+001F.
    fileprivate static func list(_ field: Field) -> [Field] {
        guard !field.isEmpty else { return [] }
        guard field.contains(0x1F) else { return [field] }
        return field.split(separator: 0x1F, omittingEmptySubsequences: false)
    }

    fileprivate typealias Field = Slice<UnsafeBufferPointer<UInt8>>

    fileprivate static func text(_ field: Field) -> String { String(decoding: UnsafeBufferPointer(rebasing: field), as: UTF8.self) }

    fileprivate static func number(_ field: Field) -> Int64? {
        var value: Int64 = 0
        var negative = false
        var digits = 0
        for byte in field {
            if byte == UInt8(ascii: "-") && digits == 0 && !negative { negative = true; continue }
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - 0x30))
            guard !overflow1, !overflow2 else {
                // Device and inode numbers are unsigned and may not fit: read them as their bit pattern.
                return UInt64(text(field)).map { Int64(bitPattern: $0) }
            }
            value = sum
            digits += 1
        }
        return digits == 0 ? nil : (negative ? -value : value)
    }

    fileprivate static func isPresent(_ field: Field) -> Bool { field.first == UInt8(ascii: "=") }

    fileprivate static func optional(_ field: Field) -> String? {
        isPresent(field) ? unescape(field.dropFirst()) : nil
    }

    fileprivate static func unescape(_ field: Field) -> String {
        guard field.contains(0x5C) else { return text(field) }
        var out: [UInt8] = []
        var escaping = false
        for byte in field {
            if escaping {
                switch byte {
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x1E)
                case UInt8(ascii: "u"): out.append(0x1F)
                default: out.append(byte)
                }
                escaping = false
            } else if byte == 0x5C {
                escaping = true
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    fileprivate static func optional(_ value: String?) -> String { value.map { "=" + escape($0) } ?? "" }

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
}

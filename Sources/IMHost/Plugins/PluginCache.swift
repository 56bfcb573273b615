#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
struct PluginCache: Codable, Equatable {
    static let format = 1

    struct Signature: Codable, Equatable {
        var size: Int
        var modified: Int
        var changed: Int
        var inode: UInt
        var device: UInt

        init(_ info: stat) {
            size = Int(info.st_size)
            modified = Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec)
            changed = Int(info.st_ctim.tv_sec) * 1_000_000_000 + Int(info.st_ctim.tv_nsec)
            inode = UInt(info.st_ino)
            device = UInt(info.st_dev)
        }
    }

    struct Route: Codable, Equatable {
        var pattern: String
        var allowExternal: Bool
    }

    /// What a line registered.
    struct Registration: Codable, Equatable {
        var page: String?
        var keys: [String]
        var services: [String]
        var routes: [Route]
    }

    struct File: Codable, Equatable {
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
        guard let bytes = try? FileSystem.readBytes(path, limit: 16 << 20),
              let cache = try? JSONDecoder().decode(PluginCache.self, from: Data(bytes)),
              cache.format == format, cache.host == hostIdentity else { return nil }
        return cache
    }

    /// Writes the cache atomically (a temporary file renamed over the old one). A cache that
    /// cannot be written only costs speed, so failures are ignored.
    func write(_ path: String) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return }
        let folder = FileSystem.directory(of: path)
        _ = mkdir(folder, 0o700)
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written == data.count { rename(temporary, path) } else { unlink(temporary) }
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

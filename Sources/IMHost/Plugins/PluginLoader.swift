@_spi(Host) import IMKit
internal import CIMKitABI
#if canImport(Glibc)
import Glibc
#endif

/// Scans the plugin folder, checks each `.so` in a fixed order, reads its descriptor, and
/// registers the lines enabled in host.json. One bad plugin never stops the others.
///
/// Plugins are never unloaded (`dlclose`): Swift images cannot be unloaded safely, so a line is
/// turned off by routing away from it.
enum PluginLoader {
    /// The bytes given to a plugin to explain a failed registration.
    static let errorCapacity = 1024

    /// Loads the plugins a configuration names. With a cache path, files whose identity matches
    /// the cache are not opened: their lines register lazily, when first needed; every other
    /// file is loaded for real, and the cache is rewritten when anything changed.
    /// With `trustCache` false the cache is not read, only rewritten: every plugin loads now.
    static func load(config: HostConfig, cache cachePath: String? = nil, trustCache: Bool = true) -> PluginCatalog {
        let folder = config.pluginsFolder
        let cache = trustCache ? cachePath.flatMap(PluginCache.read) : nil
        var entries: [PluginCatalog.Entry] = []
        var registered = PluginCatalog.Registered()
        registered.services = ChatHost.hostServices
        registered.routes.add(RouteTable.Route(pattern: ChatHost.chatPattern, allowExternal: true, line: nil, target: .converter))
        registered.routes.add(RouteTable.Route(pattern: ChatHost.linePagePattern, allowExternal: true, line: nil, target: .chatPage))
        var folderProblem: String?
        var lineFiles: [String: String] = [:]
        var files: [String: PluginCache.File] = [:]

        do {
            let names = try FileSystem.entries(of: folder).filter { $0.hasSuffix(".so") }
            let folderInfo = try FileSystem.status(folder, followLinks: true)
            let folderReal = try FileSystem.realPath(folder)
            let folderSafe = folderInfo.st_mode & (S_IWGRP | S_IWOTH) == 0
            for name in names {
                let path = folder + "/" + name
                let signature = (try? FileSystem.status(path, followLinks: false)).map(PluginCache.Signature.init)
                if folderSafe, let signature, let cached = cache?.files[name], cached.signature == signature,
                   let entry = restore(cached, path: path, config: config, lineFiles: lineFiles, into: &registered) {
                    if let id = entry.lineID, entry.status != .refused { lineFiles[id] = path }
                    entries.append(entry)
                    files[name] = cached
                    continue
                }
                var entry = PluginCatalog.Entry(file: path, status: .refused)
                do throws(PluginRefusal) {
                    let pointer = try open(path, folder: folder, folderReal: folderReal, folderMode: folderInfo.st_mode)
                    let descriptor = try read(pointer, into: &entry)
                    if let other = lineFiles[descriptor.lineID] {
                        throw PluginRefusal(.duplicateLineID, "line id '\(descriptor.lineID)' is already provided by \(FileSystem.baseName(other))",
                                            fix: "remove one of the two files, or give one line another id")
                    }
                    lineFiles[descriptor.lineID] = path
                    entry.status = try register(descriptor, config: config, into: &registered, entry: &entry)
                } catch {
                    entry.problem = error
                    if error.code == .registrationFailed { entry.status = .failed }
                }
                entries.append(entry)
                if let signature, folderSafe { files[name] = PluginCache.File(entry, signature: signature) }
            }
        } catch {
            folderProblem = "cannot use plugin folder \(folder): \(error.call): \(error); create it or fix \"plugins\" in \(config.file)"
        }

        let anonymous = entries.count { $0.lineID == nil }
        let unknown = anonymous == 0 ? "" : " (\(anonymous) refused file\(anonymous == 1 ? "" : "s") could not be read for \(anonymous == 1 ? "its" : "their") line id)"
        for id in config.lineOrder where config.lines[id]?.enabled == true && lineFiles[id] == nil
            && !entries.contains(where: { $0.lineID == id }) {
            entries.append(PluginCatalog.Entry(
                lineID: id, status: .missing,
                problem: PluginRefusal(.missing, "no plugin in \(folder) provides line '\(id)'\(unknown)",
                                       fix: "install its .so there, or set \"enabled\": false")))
        }
        if let cachePath {
            let updated = PluginCache(format: PluginCache.format, host: PluginCache.hostIdentity, files: files)
            if updated != cache { updated.write(cachePath) }
        }
        return PluginCatalog(folder: folder, folderProblem: folderProblem, entries: entries, registered: registered)
    }

    /// An entry from the cache, with its registrations recorded as lazy; `nil` when the cache
    /// cannot answer (the line is enabled now but did not register when it was cached).
    static func restore(_ cached: PluginCache.File, path: String, config: HostConfig, lineFiles: [String: String],
                        into registered: inout PluginCatalog.Registered) -> PluginCatalog.Entry? {
        var entry = PluginCatalog.Entry(file: path, lineID: cached.lineID, displayName: cached.displayName,
                                        pluginVersion: cached.pluginVersion, status: cached.status, problem: cached.problem)
        guard cached.status != .refused else { return entry }
        guard let id = cached.lineID, lineFiles[id] == nil else { return nil }
        guard let settings = config.lines[id] else {
            entry.status = .notConfigured
            entry.problem = notConfigured(id, config: config)
            return entry
        }
        guard settings.enabled else {
            entry.status = .disabled
            entry.problem = nil
            return entry
        }
        if cached.status == .failed { return entry }
        guard cached.status == .loaded, let registration = cached.registration else { return nil }
        entry.pageName = registration.page
        entry.messageKeys = registration.keys
        entry.services = registration.services
        entry.routes = registration.routes.map(\.pattern)
        entry.routeClaims = registration.routes.map { ($0.pattern, $0.allowExternal) }
        entry.isLazy = true
        registered.registry.addLazy(registration.keys, line: id)
        for route in registration.routes {
            registered.routes.addLazy(route.pattern, line: id, allowExternal: route.allowExternal)
        }
        return entry
    }

    static func notConfigured(_ id: String, config: HostConfig) -> PluginRefusal {
        PluginRefusal(.notConfigured, "line '\(id)' is found but not in \(FileSystem.baseName(config.file))",
                      fix: "add \"\(id)\": { \"enabled\": true } to \"lines\" to enable it")
    }

    /// What a plugin says about itself, read without running any of its code but the entry.
    struct Descriptor {
        /// A descriptor read before, found again by its address.
        init?(address: UInt, lineID: String) {
            guard let pointer = UnsafePointer<imkit_plugin_descriptor>(bitPattern: address) else { return nil }
            self.init(pointer: pointer, lineID: lineID)
        }

        init(pointer: UnsafePointer<imkit_plugin_descriptor>, lineID: String) {
            self.pointer = pointer
            self.lineID = lineID
        }

        var pointer: UnsafePointer<imkit_plugin_descriptor>
        var lineID: String
    }

    /// The checks before the descriptor is read, in the documented order, ending with its ABI
    /// version: nothing else of a descriptor with another version is trusted.
    static func open(_ path: String, folder: String, folderReal: String, folderMode: mode_t) throws(PluginRefusal) -> UnsafePointer<imkit_plugin_descriptor> {
        let real: String
        let info: stat
        do {
            real = try FileSystem.realPath(path)
            info = try FileSystem.status(real, followLinks: true)
        } catch {
            throw PluginRefusal(.unreadable, "cannot be read (\(error.call): \(error))", fix: "fix the file or link, or remove it")
        }
        guard real.hasPrefix(folderReal + "/") else {
            throw PluginRefusal(.leavesFolder, "is a symbolic link to \(real), outside the plugin folder",
                                fix: "copy the plugin into the folder instead of linking to it")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw PluginRefusal(.notRegularFile, "is not a regular file", fix: "remove it from the plugin folder")
        }
        guard folderMode & (S_IWGRP | S_IWOTH) == 0 else {
            throw PluginRefusal(.writableByOthers, "its folder \(folder) is writable by group or others (mode \(octal(folderMode)))",
                                fix: "run chmod go-w \(folder)")
        }
        guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw PluginRefusal(.writableByOthers, "is writable by group or others (mode \(octal(info.st_mode)))",
                                fix: "run chmod go-w \(path)")
        }
        let head: [UInt8]
        do {
            head = try FileSystem.readBytes(real, limit: 64)
        } catch {
            throw PluginRefusal(.unreadable, "cannot be read (\(error.call): \(error))", fix: "fix its permissions")
        }
        let header = try ELFHeader(bytes: head)
        if let host = ELFHeader.host { try header.check(against: host) }

        // RTLD_LOCAL: every plugin exports imkit_plugin_entry; each must be found in its own image.
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let message = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw PluginRefusal(.dlopenFailed, "dlopen failed: \(message)",
                                fix: "install what it needs (a missing library is named above) or rebuild it")
        }
        guard let symbol = dlsym(handle, "imkit_plugin_entry") else {
            throw PluginRefusal(.noEntry, "does not export imkit_plugin_entry",
                                fix: "export it: @_cdecl(\"imkit_plugin_entry\") returning PluginEntry.descriptor(for:)")
        }
        let entry = unsafeBitCast(symbol, to: imkit_plugin_entry_fn.self)
        guard let pointer = entry() else {
            throw PluginRefusal(.noEntry, "imkit_plugin_entry returned no descriptor", fix: "return PluginEntry.descriptor(for:)")
        }
        // Only abi_version is read until it matches: the rest of the layout may differ.
        let abi = UnsafeRawPointer(pointer).load(as: UInt32.self)
        guard abi == PluginEntry.abiVersion else {
            throw PluginRefusal(.abiMismatch, "plugin ABI version \(abi), this host speaks \(PluginEntry.abiVersion)",
                                fix: "rebuild the plugin against this host's IMKit")
        }
        return pointer
    }

    /// Reads a descriptor whose ABI version matched, then checks its compiler and line id.
    /// The line id it claims is kept in `entry` even when refused, so reports can name it.
    static func read(_ pointer: UnsafePointer<imkit_plugin_descriptor>,
                     into entry: inout PluginCatalog.Entry) throws(PluginRefusal) -> Descriptor {
        let descriptor = pointer.pointee
        func text(_ field: UnsafePointer<CChar>?) -> String? { field.map { String(cString: $0) } }
        let claimedID = text(descriptor.line_id)
        if let claimedID, LineID.isValid(claimedID) { entry.lineID = claimedID }
        entry.displayName = text(descriptor.display_name)
        entry.pluginVersion = text(descriptor.plugin_version)
        let hostSwift = SwiftCompiler.version
        guard let swift = text(descriptor.swift_version), swift == hostSwift else {
            throw PluginRefusal(.swiftMismatch, "built with Swift \(text(descriptor.swift_version) ?? "(none)"), this host with Swift \(hostSwift)",
                                fix: "rebuild the plugin with Swift \(hostSwift): Swift has no stable ABI across compilers on Linux")
        }
        guard let lineID = entry.lineID else {
            throw PluginRefusal(.invalidLineID, "line id \(claimedID.map { "'\($0)'" } ?? "(none)") is not valid",
                                fix: "use [a-z][a-z0-9_-]{0,31}, e.g. \"house\"")
        }
        entry.descriptorAddress = UInt(bitPattern: pointer)
        return Descriptor(pointer: pointer, lineID: lineID)
    }

    /// Registers an enabled line, all or nothing, and says where the line stands.
    static func register(_ descriptor: Descriptor, config: HostConfig, into registered: inout PluginCatalog.Registered,
                         entry: inout PluginCatalog.Entry) throws(PluginRefusal) -> PluginCatalog.Status {
        let id = descriptor.lineID
        guard let settings = config.lines[id] else {
            entry.problem = notConfigured(id, config: config)
            return .notConfigured
        }
        guard settings.enabled else { return .disabled }
        guard let registerLine = descriptor.pointer.pointee.register_line else {
            throw PluginRefusal(.registrationFailed, "its descriptor has no register_line", fix: "set register_line in the descriptor")
        }
        registered.registry.removeLazy(line: id)
        registered.routes.removeLazy(line: id)
        // The registrar reads a snapshot of what is registered; it and the snapshot must be gone
        // before committing, or every table would be copied on write.
        let staged: (page: CarrierPage.Type?, builders: [any MessageBuilder], services: [any Service.Type],
                     routes: [(pattern: RoutePattern, allowExternal: Bool, handler: RouteHandler)])
        do {
            let current = registered
            let registrar = LineRegistrar(lineID: id, descriptor: UnsafeRawPointer(descriptor.pointer)) { current.owner(of: $0) }
            var buffer = [CChar](repeating: 0, count: errorCapacity)
            let result = withExtendedLifetime(registrar) {
                buffer.withUnsafeMutableBufferPointer { error in
                    registerLine(Unmanaged.passUnretained(registrar).toOpaque(), error.baseAddress, error.count)
                }
            }
            buffer[errorCapacity - 1] = 0
            if result != 0 || registrar.firstRefusal != nil {
                let said = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let reason = registrar.firstRefusal?.description ?? (said.isEmpty ? "register_line returned \(result)" : said)
                throw PluginRefusal(.registrationFailed, "registration failed: \(reason)",
                                    fix: "fix the line's register(with:); none of its registrations were kept")
            }
            staged = (registrar.page, registrar.builders, registrar.services, registrar.routes)
        }
        let services = staged.services.map { ServiceRegistration($0, line: id) }
        if let problem = checkDependencies(of: services, line: id, hostServices: registered.services.filter { $0.line == nil }) {
            throw PluginRefusal(.registrationFailed, "registration failed: \(problem)",
                                fix: "fix the line's services; none of its registrations were kept")
        }
        registered.registry.add(staged.builders, line: id)
        registered.services += services
        for route in staged.routes {
            registered.routes.add(RouteTable.Route(pattern: route.pattern, allowExternal: route.allowExternal, line: id, target: .handler(route.handler)))
        }
        entry.page = staged.page
        entry.messageKeys = staged.builders.map(\.key).sorted()
        entry.services = services.map(\.id)
        entry.routes = staged.routes.map { "\($0.pattern)" }
        entry.routeClaims = staged.routes.map { ("\($0.pattern)", $0.allowExternal) }
        return .loaded
    }

    /// A line's services may use the host's and their own line's; refuses a dependency on
    /// anything else (naming it) and a cycle (naming it).
    static func checkDependencies(of services: [ServiceRegistration], line: String,
                                  hostServices: [ServiceRegistration]) -> String? {
        let allowed = Set((hostServices + services).map(\.id))
        for service in services {
            for dependency in service.dependencies where !allowed.contains(dependency) {
                return "service '\(service.id)' depends on '\(dependency)', which is not a service of the host or of line '\(line)'; register it, or remove it from dependencies"
            }
        }
        if case .failure(let error) = ServiceRegistration.buildOrder(hostServices + services) {
            return error.description
        }
        return nil
    }

    static func octal(_ mode: mode_t) -> String {
        "0" + String(mode & 0o7777, radix: 8)
    }
}

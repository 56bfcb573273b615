@_spi(Host) import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// A line opened and registered in this process: what it registered, and the mark its code runs
/// under. Kept across reloads: a library is never unloaded.
struct RegisteredLine {
    var page: CarrierPage.Type?
    var builders: [any MessageBuilder]
    var services: [ServiceRegistration]
    var routes: [RouteTable.Route]
    var mark: LineMark
    /// The file it was opened from, its identity then, and the version its descriptor said.
    var file: String
    var identity: FileIdentity?
    var version: String?
    var servicesStarted = false
    /// The pictures it registered, by name.
    var pictures: [String: LinePicture] = [:]
}

/// Opens a vetted line's library in this process and registers it, every step inside a
/// breadcrumb frame, checking that what it does now is what the scanner saw.
enum LineLoader {
    /// Opens `status`'s file as line `line`: the file must be the one checked, its descriptor
    /// the one checked, and its registration must match the manifest.
    static func open(_ status: LineStatus, as line: String, guard lineGuard: LineGuard) throws(PluginRefusal) -> RegisteredLine {
        guard let path = status.file else {
            throw PluginRefusal(.missing, "no plugin provides line '\(line)'", fix: "install its .so")
        }
        let mark = LineMark(line: line, file: path, identity: status.identity)
        guard FileIdentity.of(path) == status.identity else {
            throw PluginRefusal(.unreadable, "changed on disk after it was checked", fix: "run the command again to check the new file")
        }
        let handle = try lineGuard.run(.load, mark) { () throws(PluginRefusal) in try PluginImage.load(path) }
        // A thread the line starts from now on is the line's: a crash there names it.
        if let symbol = dlsym(handle, "imkit_plugin_entry") { Breadcrumb.register(image: UnsafeRawPointer(symbol), of: mark) }
        let pointer = try lineGuard.run(.entry, mark) { () throws(PluginRefusal) in try PluginImage.entry(handle) }
        let descriptor = PluginImage.describe(pointer)
        guard descriptor == status.descriptor else {
            throw PluginRefusal(.registrationFailed, "its descriptor differs from the one checked (\(descriptor.lineID ?? "?") \(descriptor.version ?? "?"))",
                                fix: "reinstall the plugin")
        }
        let staged = try lineGuard.run(.register, mark) { () throws(PluginRefusal) in try PluginImage.register(pointer, lineID: line) }
        guard staged.manifest == status.manifest else {
            throw PluginRefusal(.registrationFailed, "it registered something else than when it was checked (\(describe(staged.manifest)))",
                                fix: "make the line's register(with:) register the same things every time")
        }
        let routes = staged.routes.map {
            RouteTable.Route(pattern: $0.pattern, allowExternal: $0.allowExternal, line: line, handler: $0.handler)
        }
        return RegisteredLine(page: staged.page, builders: staged.builders, services: staged.services, routes: routes,
                              mark: mark, file: path, identity: status.identity, version: descriptor.version, pictures: staged.pictures)
    }

    private static func describe(_ manifest: LineManifest) -> String {
        "page \(manifest.page ?? "none"), keys \(manifest.messageKeys.joined(separator: ", ")), routes \(manifest.routes.map(\.pattern).joined(separator: ", "))"
    }
}

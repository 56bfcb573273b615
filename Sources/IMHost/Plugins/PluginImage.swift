@_spi(Host) import IMKit
internal import CIMKitABI
#if canImport(Glibc)
import Glibc
#endif

/// Opening a plugin library and talking to it through the C ABI, one step at a time.
///
/// Every step runs the plugin's code, so every caller attributes it: the scanner child reports
/// each step to its parent before taking it, and the host enters a breadcrumb frame. The scanner
/// opens new files first; the host opens only files the scanner (or the cache) vetted, and only
/// for enabled lines, when they are first needed.
///
/// Libraries are never closed (`dlclose`): Swift images cannot be unloaded safely.
enum PluginImage {
    /// The bytes given to `register_line` for its error text.
    static let errorCapacity = 1024

    /// Opens the library; its ELF constructors run here.
    static func load(_ path: String) throws(PluginRefusal) -> UnsafeMutableRawPointer {
        // RTLD_LOCAL: every plugin exports imkit_plugin_entry; each must be found in its own image.
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let message = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw PluginRefusal(.dlopenFailed, "dlopen failed: \(message)",
                                fix: "check that the file is whole and that the libraries it needs are installed (dlopen's message says which)")
        }
        return handle
    }

    /// Calls `imkit_plugin_entry` and checks the descriptor's ABI version: nothing else of a
    /// descriptor with another version is read, as its layout may differ.
    static func entry(_ handle: UnsafeMutableRawPointer) throws(PluginRefusal) -> UnsafePointer<imkit_plugin_descriptor> {
        guard let symbol = dlsym(handle, "imkit_plugin_entry") else {
            throw PluginRefusal(.noEntry, "does not export imkit_plugin_entry",
                                fix: "export it: @c(imkit_plugin_entry) returning PluginEntry.descriptor(for:)")
        }
        // Safe: the symbol is the ABI's entry point, declared in imkit_plugin.h with this type.
        let entry = unsafeBitCast(symbol, to: imkit_plugin_entry_fn.self)
        guard let pointer = entry() else {
            throw PluginRefusal(.noEntry, "imkit_plugin_entry returned no descriptor", fix: "return PluginEntry.descriptor(for:)")
        }
        let abi = UnsafeRawPointer(pointer).load(as: UInt32.self)
        guard abi == PluginEntry.abiVersion else {
            throw PluginRefusal(.abiMismatch, "plugin ABI version \(abi), this host speaks \(PluginEntry.abiVersion)",
                                fix: "rebuild the plugin against this host's IMKit")
        }
        return pointer
    }

    /// The descriptor's fields, once its ABI version matched.
    static func describe(_ pointer: UnsafePointer<imkit_plugin_descriptor>) -> PluginDescriptor {
        let descriptor = pointer.pointee
        func text(_ field: UnsafePointer<CChar>?, limit: Int = 256) -> String? {
            guard let field else { return nil }
            let length = strnlen(field, limit)
            return String(decoding: UnsafeRawBufferPointer(start: field, count: length), as: UTF8.self)
        }
        return PluginDescriptor(lineID: text(descriptor.line_id, limit: LineID.maximumLength + 1),
                                displayName: text(descriptor.display_name), version: text(descriptor.plugin_version),
                                swiftVersion: text(descriptor.swift_version))
    }

    /// Checks the compiler a plugin was built with and the line id it claims, before any of its
    /// Swift code beyond the entry runs. Returns the line id.
    static func check(_ descriptor: PluginDescriptor) throws(PluginRefusal) -> String {
        let hostSwift = SwiftCompiler.version
        guard let swift = descriptor.swiftVersion, swift == hostSwift else {
            throw PluginRefusal(.swiftMismatch, "built with Swift \(descriptor.swiftVersion ?? "(none)"), this host with Swift \(hostSwift)",
                                fix: "rebuild the plugin with Swift \(hostSwift): Swift has no stable ABI across compilers on Linux")
        }
        guard let id = descriptor.lineID, LineID.isValid(id) else {
            throw PluginRefusal(.invalidLineID, "line id \(descriptor.lineID.map { "'\($0)'" } ?? "(none)") is not valid",
                                fix: "use [a-z][a-z0-9-]{0,31}, e.g. \"house\"")
        }
        return id
    }

    /// Calls `register_line` with a registrar scoped to `lineID` and keeps what it registered
    /// only if all of it was accepted: a line registers everything or nothing.
    static func register(_ pointer: UnsafePointer<imkit_plugin_descriptor>, lineID: String) throws(PluginRefusal) -> StagedLine {
        guard let registerLine = pointer.pointee.register_line else {
            throw PluginRefusal(.registrationFailed, "its descriptor has no register_line", fix: "set register_line in the descriptor")
        }
        let registrar = LineRegistrar(lineID: lineID, descriptor: UnsafeRawPointer(pointer)) { _ in nil }
        let buffer = GuardedBuffer(capacity: errorCapacity)
        defer { buffer.release() }
        let result = withExtendedLifetime(registrar) {
            registerLine(Unmanaged.passUnretained(registrar).toOpaque(), buffer.start, buffer.capacity)
        }
        if result != 0 || registrar.firstRefusal != nil {
            let said = buffer.text()
            let reason = registrar.firstRefusal?.description ?? (said.isEmpty ? "register_line returned \(result)" : said)
            throw PluginRefusal(.registrationFailed, "registration failed: \(reason)",
                                fix: "fix the line's register(with:); none of its registrations were kept")
        }
        let services = registrar.services.map { ServiceRegistration($0, line: lineID) }
        if let problem = checkDependencies(of: services, line: lineID) {
            throw PluginRefusal(.registrationFailed, "registration failed: \(problem)",
                                fix: "fix the line's services; none of its registrations were kept")
        }
        var pictures: [String: LinePicture] = [:]
        for (name, bytes, alt) in registrar.pictures {
            do throws(Photo.Refusal) {
                pictures[name] = LinePicture(photo: try PhotoDecoder.shared.check(bytes, limit: LineRegistrar.pictureBytesLimit), bytes: bytes, alt: alt)
            } catch {
                throw PluginRefusal(.registrationFailed, "registration failed: its picture '\(name)' cannot be shown: \(error.description)",
                                    fix: "register a PNG, JPEG or WebP file's bytes; none of its registrations were kept")
            }
        }
        return StagedLine(page: registrar.page, builders: registrar.builders, services: services, routes: registrar.routes, pictures: pictures)
    }

    /// A line's services may use the host's and their own line's; refuses a dependency on
    /// anything else, and a cycle, naming them.
    static func checkDependencies(of services: [ServiceRegistration], line: String) -> String? {
        let hostServices = ChatHost.hostServices
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
}

/// What a line registered, accepted as a whole, not yet part of the host's tables.
struct StagedLine {
    var page: CarrierPage.Type?
    var builders: [any MessageBuilder]
    var services: [ServiceRegistration]
    var routes: [RegisteredRoute]
    /// The pictures it registered, each read and checked, by name.
    var pictures: [String: LinePicture] = [:]

    /// What it registered, as names: the facts the cache keeps.
    var manifest: LineManifest {
        LineManifest(page: page.map { String(describing: $0) }, messageKeys: builders.map(\.key).sorted(),
                     services: services.map(\.id),
                     routes: routes.map { LineManifest.Route(pattern: "\($0.pattern)", allowExternal: $0.allowExternal) })
    }
}

/// A picture a line registered (`LineRegistrar.registerPicture`): what it is, its bytes, and
/// what it shows in words (`nil`: a line built before IMKit 1.4 said nothing).
public struct LinePicture: Sendable, Equatable {
    public var photo: Photo
    public var bytes: [UInt8]
    public var alt: String? = nil
}

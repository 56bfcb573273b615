internal import CIMKitABI
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// Exports a ``BusinessLine`` through the plugin ABI, so no plugin author writes pointer code.
///
/// Every plugin exports exactly one C function named `imkit_plugin_entry` that returns
/// ``descriptor(for:)``:
///
/// ```swift
/// @c(imkit_plugin_entry)
/// public func imkitPluginEntry() -> UnsafeRawPointer {
///     PluginEntry.descriptor(for: HouseLine.self)
/// }
/// ```
///
/// The host calls `imkit_plugin_entry` first in a scanner process, reads the descriptor, and
/// compares its ABI version and Swift compiler with its own before it calls anything else of
/// the plugin; a mismatch is refused there, and the file never runs in the host.
public enum PluginEntry {
    /// The ABI version this IMKit speaks (`IMKIT_PLUGIN_ABI_VERSION` in `imkit_plugin.h`).
    public static var abiVersion: UInt32 { UInt32(IMKIT_PLUGIN_ABI_VERSION) }

    /// The descriptor for `line`: made on the first call, the same pointer after. It records the
    /// compiler that built the calling plugin, which the host checks against its own.
    ///
    /// Emitted into the plugin (not called in libIMKit.so) so that ``SwiftCompiler/version`` is
    /// the plugin's compiler, read where the plugin is built; this is the only reason. It calls
    /// nothing but ``makeDescriptor(for:swiftVersion:)``, which may change freely inside.
    ///
    /// Since IMKit 1.4 it also records the IMKit minor version the plugin was built against
    /// (the number below is compiled into the plugin): what a line built against 1.4 must do
    /// that an older one need not (a picture's alt text) is checked by it.
    @_alwaysEmitIntoClient
    public static func descriptor<Line: BusinessLine>(for line: Line.Type) -> UnsafeRawPointer {
        makeDescriptor(for: line, swiftVersion: SwiftCompiler.version, kitMinor: 4)
    }

    /// Makes or finds the descriptor for `line`. Internal, but part of the ABI: plugins built
    /// against IMKit 1.0–1.3 call it from their copy of ``descriptor(for:)``, so its name and
    /// signature never change. They record no IMKit version: 3 stands for them all.
    @usableFromInline
    static func makeDescriptor(for line: any BusinessLine.Type, swiftVersion: String) -> UnsafeRawPointer {
        makeDescriptor(for: line, swiftVersion: swiftVersion, kitMinor: 3)
    }

    /// Makes or finds the descriptor for `line`, built against IMKit 1.`kitMinor`. Internal,
    /// but part of the ABI since IMKit 1.4: plugins call it from their copy of
    /// ``descriptor(for:)``, so its name and signature never change.
    @usableFromInline
    static func makeDescriptor(for line: any BusinessLine.Type, swiftVersion: String, kitMinor: Int) -> UnsafeRawPointer {
        exports.withLock { table in
            if let known = table.descriptors[ObjectIdentifier(line)] {
                return UnsafeRawPointer(bitPattern: known)!
            }
            let descriptor = UnsafeMutablePointer<imkit_plugin_descriptor>.allocate(capacity: 1)
            descriptor.initialize(to: imkit_plugin_descriptor(
                abi_version: UInt32(IMKIT_PLUGIN_ABI_VERSION),
                line_id: UnsafePointer(strdup(line.id)),
                display_name: UnsafePointer(strdup(line.displayName)),
                plugin_version: UnsafePointer(strdup(line.version)),
                swift_version: UnsafePointer(strdup(swiftVersion)),
                register_line: registerThunk))
            let address = UInt(bitPattern: descriptor)
            table.descriptors[ObjectIdentifier(line)] = address
            table.lines[address] = LineBox(type: line)
            table.kitMinor[address] = kitMinor
            return UnsafeRawPointer(descriptor)
        }
    }

    private struct LineBox: @unchecked Sendable {
        // A metatype is immutable; the box only exists because `any BusinessLine.Type` is not
        // declared Sendable. The table holding it is guarded by `exports`' mutex.
        let type: any BusinessLine.Type
    }

    private struct Table {
        var descriptors: [ObjectIdentifier: UInt] = [:]
        var lines: [UInt: LineBox] = [:]
        /// The IMKit 1.x minor version each descriptor's plugin was built against.
        var kitMinor: [UInt: Int] = [:]
    }

    /// Descriptors are made once per line and never freed: the host may read them at any time
    /// and plugins are never unloaded.
    private static let exports = Mutex(Table())

    /// The IMKit 1.x minor version the plugin of `descriptor` was built against: 3 for any
    /// plugin built before 1.4 (they do not say), and for a descriptor this IMKit did not make.
    static func builtAgainstMinor(_ descriptor: UnsafeRawPointer) -> Int {
        exports.withLock { $0.kitMinor[UInt(bitPattern: descriptor)] ?? 3 }
    }

    private static func line(forDescriptor address: UnsafeRawPointer) -> (any BusinessLine.Type)? {
        exports.withLock { $0.lines[UInt(bitPattern: address)]?.type }
    }

    /// The `register_line` of every Swift plugin: finds the line the registrar is for and runs
    /// its `register(with:)`, turning a thrown error into the ABI's error buffer.
    private static let registerThunk: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> Int32 = { raw, error, capacity in
        func fail(_ reason: String) -> Int32 {
            if let error, capacity > 0 {
                let bytes = reason.utf8.prefix(capacity - 1)
                for (offset, byte) in bytes.enumerated() { error[offset] = CChar(bitPattern: byte) }
                error[bytes.count] = 0
            }
            return 1
        }
        guard let raw else { return fail("register_line was called without a registrar") }
        let registrar = Unmanaged<LineRegistrar>.fromOpaque(raw).takeUnretainedValue()
        guard let descriptor = registrar.descriptor, let line = line(forDescriptor: descriptor) else {
            return fail("no Swift line is exported under this descriptor")
        }
        do {
            try line.register(with: registrar)
        } catch {
            return fail("\(error)")
        }
        if let refusal = registrar.firstRefusal { return fail(refusal.description) }
        return 0
    }
}

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
    @_alwaysEmitIntoClient
    public static func descriptor<Line: BusinessLine>(for line: Line.Type) -> UnsafeRawPointer {
        makeDescriptor(for: line, swiftVersion: SwiftCompiler.version)
    }

    /// Makes or finds the descriptor for `line`. Internal, but part of the ABI: plugins call it
    /// from their copy of ``descriptor(for:)``, so its name and signature never change.
    @usableFromInline
    static func makeDescriptor(for line: any BusinessLine.Type, swiftVersion: String) -> UnsafeRawPointer {
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
    }

    /// Descriptors are made once per line and never freed: the host may read them at any time
    /// and plugins are never unloaded.
    private static let exports = Mutex(Table())

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

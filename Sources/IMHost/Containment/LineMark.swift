import CIMHostSupport
#if canImport(Glibc)
import Glibc
#endif

/// What a breadcrumb frame says about a line, laid out once when the line is loaded so that
/// entering a frame copies it in one move: the file's identity, the line id and the file name.
struct LineMark: Sendable {
    static let lineLength = 40, line = 41, lineCapacity = 32
    static let nameLength = 80, name = 82, nameCapacity = 128
    static let size = IMHOST_CRUMB_MARK_LENGTH

    let line: String
    /// The bytes of frame offsets 8..<224.
    let bytes: [UInt8]

    init(line: String, file: String?, identity: FileIdentity?) {
        self.line = line
        var bytes = [UInt8](repeating: 0, count: Self.size)
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            withUnsafeBytes(of: value.littleEndian) { for (i, byte) in $0.enumerated() { bytes[offset + i] = byte } }
        }
        if let identity {
            put(identity.device, at: 0)
            put(identity.inode, at: 8)
            put(identity.size, at: 16)
            put(identity.modified, at: 24)
            put(identity.changed, at: 32)
        }
        let lineBytes = Array(line.utf8.prefix(Self.lineCapacity))
        bytes[Self.lineLength] = UInt8(lineBytes.count)
        bytes.replaceSubrange(Self.line..<(Self.line + lineBytes.count), with: lineBytes)
        let nameBytes = Array((file.map(FileSystem.baseName) ?? "").utf8.prefix(Self.nameCapacity))
        put(UInt16(nameBytes.count), at: Self.nameLength)
        bytes.replaceSubrange(Self.name..<(Self.name + nameBytes.count), with: nameBytes)
        self.bytes = bytes
    }
}

/// Turns user and conversation ids into file names that stay inside the data folder, whatever
/// the id: every byte but `A-Z a-z 0-9 _ -` is written as `%XX`, so `/`, `.` and `..` never
/// reach the file system, and two ids never share a name.
enum StorePath {
    /// The longest id accepted, in UTF-8 bytes (an encoded name must fit in 255 bytes).
    static let maximumIDLength = 80

    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    static func fileName(for id: String, kind: String) throws(Refused) -> String {
        guard !id.isEmpty else { throw Refused(description: "\(kind) id is empty") }
        guard id.utf8.count <= maximumIDLength else {
            throw Refused(description: "\(kind) id is \(id.utf8.count) bytes long; the limit is \(maximumIDLength)")
        }
        guard !id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw Refused(description: "\(kind) id contains a control character")
        }
        var name = ""
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                name.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                name += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return name
    }
}

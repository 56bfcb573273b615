/// A file a person sends (a résumé to a recruiter, a contract to a landlord): its name as the
/// sender gave it, made safe to show and to save; its type as its bytes say it, never as the
/// sender says; its size. Never opened by a host or a page: the browser downloads it.
public struct SharedFile: Sendable, Equatable, Codable {
    /// Its name, one path component: no folders, no control or bidirectional characters, at
    /// most ``nameBytes`` bytes.
    public var name: String
    /// Its media type, from its first bytes (and, for a ZIP or an OLE2 document, its name's
    /// extension among the office formats those containers hold).
    public var type: String
    /// Its size, in bytes.
    public var size: Int

    public init(name: String, type: String, size: Int) {
        self.name = name
        self.type = type
        self.size = size
    }

    /// The longest name kept, in bytes of UTF-8.
    public static let nameBytes = 200

    /// Why bytes are not a file a host sends or takes: one line for a person, and a code.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Code: String, Sendable, Codable {
            /// Empty, or larger than `limits.fileBytes`.
            case empty, tooLarge
            /// Its name is none once made safe.
            case name
        }

        public var code: Code
        public var description: String
        public init(_ description: String, code: Code) {
            self.description = description
            self.code = code
        }
    }

    /// `bytes` named `name` as a file of at most `limit` bytes: its name made safe, its type
    /// read from its bytes.
    public static func read(name: String, bytes: [UInt8], limit: Int) throws(Refusal) -> SharedFile {
        guard !bytes.isEmpty else { throw Refusal("it is empty", code: .empty) }
        guard bytes.count <= limit else {
            throw Refusal("it is \(bytes.count) bytes; the limit is \(limit) (limits.fileBytes in host.json)", code: .tooLarge)
        }
        guard let safe = safeName(name) else { throw Refusal("its name is no file name once made safe to show", code: .name) }
        return SharedFile(name: safe, type: type(of: bytes, name: safe), size: bytes.count)
    }

    /// `name` as one safe path component: the last of its `/`- or `\`-separated parts, without
    /// control, format or bidirectional characters, trimmed, cut to ``nameBytes``; `nil` when
    /// nothing is left, or it is `.` or `..`.
    public static func safeName(_ name: String) -> String? {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let kept = String(String.UnicodeScalarView(last.unicodeScalars.filter { scalar in
            let category = scalar.properties.generalCategory
            return category != .control && category != .format && category != .lineSeparator && category != .paragraphSeparator
                && !scalar.properties.isBidiControl
        })).drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
        var cut = ""
        for character in String(kept) {
            guard cut.utf8.count + character.utf8.count <= nameBytes else { break }
            cut.append(character)
        }
        guard !cut.isEmpty, cut != ".", cut != ".." else { return nil }
        return cut
    }

    /// The media type `bytes` are, by their first bytes; a ZIP or OLE2 container is the office
    /// format its name says when it is one that container holds.
    static func type(of bytes: [UInt8], name: String) -> String {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        func starts(_ prefix: [UInt8]) -> Bool { bytes.starts(with: prefix) }
        if starts(Array("%PDF-".utf8)) { return "application/pdf" }
        if starts([0x50, 0x4B, 0x03, 0x04]) {
            let office = ["docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                          "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                          "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
                          "odt": "application/vnd.oasis.opendocument.text", "ods": "application/vnd.oasis.opendocument.spreadsheet",
                          "odp": "application/vnd.oasis.opendocument.presentation"]
            return office[ext] ?? "application/zip"
        }
        if starts([0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) {
            let office = ["doc": "application/msword", "xls": "application/vnd.ms-excel", "ppt": "application/vnd.ms-powerpoint"]
            return office[ext] ?? "application/x-ole-storage"
        }
        if starts([0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts(Array("GIF8".utf8)) { return "image/gif" }
        if bytes.count >= 12, starts(Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        if starts(Array("{\\rtf".utf8)) { return "application/rtf" }
        // Text: UTF-8 with no control characters but tab and line ends.
        if String(validating: bytes, as: UTF8.self) != nil, !bytes.contains(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            return "text/plain; charset=utf-8"
        }
        return "application/octet-stream"
    }

    /// Its size as people read it: `812 bytes`, `182 KB`, `9.6 MB`.
    public var shownSize: String {
        if size < 1000 { return "\(size) bytes" }
        if size < 1_000_000 { return "\((size + 500) / 1000) KB" }
        let tenths = (size + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10) MB"
    }
}

/// A file as a message carries it: what it is and its bytes, or, for one a peer sent that
/// cannot be taken, why.
public enum AttachedFile: Sendable, Equatable {
    case file(SharedFile, bytes: [UInt8])
    case refused(why: String)

    /// What it is, without its bytes.
    public var slot: FileSlot {
        switch self {
        case .file(let file, _): .file(file)
        case .refused(let why): .refused(why)
        }
    }

    /// Its bytes (none for a refused one).
    public var bytes: [UInt8] {
        if case .file(_, let bytes) = self { bytes } else { [] }
    }
}

/// What a page knows of a message's file: what it is (its bytes are downloaded apart), or why it
/// is not offered.
public enum FileSlot: Sendable, Equatable, Codable {
    case file(SharedFile)
    case refused(String)
}

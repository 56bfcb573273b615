/// A picture's bytes, recognised by what they are rather than by a name: PNG, JPEG or WebP, with
/// the width and height its header says. ``read(_:limit:)`` looks at the header only; a photo a
/// person sends, a photo a peer sent, and a picture a line ships are then decoded whole by a
/// ``PhotoDecoder`` (``PhotoDecoder/check(_:limit:)``) before they are stored or served: a
/// header followed by anything else (an SVG, a page of HTML) is not a picture.
public struct Photo: Sendable, Equatable, Codable {
    /// The kinds a host takes. Another kind is refused, whatever its file is called.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case png, jpeg, webp

        /// Its media type, for a browser.
        public var mediaType: String {
            switch self {
            case .png: "image/png"
            case .jpeg: "image/jpeg"
            case .webp: "image/webp"
            }
        }

        /// Its name for a person.
        public var name: String {
            switch self {
            case .png: "PNG"
            case .jpeg: "JPEG"
            case .webp: "WebP"
            }
        }
    }

    public var kind: Kind
    public var width: Int
    public var height: Int
    /// Its size, in bytes.
    public var size: Int

    public init(kind: Kind, width: Int, height: Int, size: Int) {
        self.kind = kind
        self.width = width
        self.height = height
        self.size = size
    }

    /// The most pixels a message's photos may have together: a page shows several messages, and
    /// each photo costs a browser its pixels' memory to decode.
    public static let messagePixelLimit = pixelLimit
    /// The widest and tallest picture taken, in pixels.
    public static let sideLimit = 16_384
    /// The most pixels a picture may have (a small file can say it is huge, and a browser would
    /// spend its memory decoding it): 40 million, a large phone camera's photo.
    public static let pixelLimit = 40_000_000

    /// Why bytes are not a picture a host takes: one line for a person, and a code.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Code: String, Sendable, Codable {
            /// What the first bytes say: nothing, too many bytes, another kind, a broken header,
            /// a size no picture taken has.
            case header
            /// Decoded whole (``PhotoDecoder``): the data ends before the picture does.
            case truncated
            /// The decoder found damage.
            case corrupt
            /// More pixels, or more memory to decode them, than a photo may have.
            case tooLarge
            /// A feature the decoder does not take (a 12-bit JPEG, an animated WebP).
            case unsupported
            /// Bytes after the picture's end (PNG's IEND, JPEG's EOI, a WebP's RIFF size).
            case trailingBytes
            /// The header and the decoded picture disagree on its size.
            case sizeMismatch
            /// The decoder died on it, took too long, or could not be started.
            case decoderCrashed, decoderTimedOut, decoderUnavailable
        }

        public var code: Code
        public var description: String
        public init(_ description: String, code: Code = .header) {
            self.description = description
            self.code = code
        }
    }

    /// Reads `bytes` as a picture of at most `limit` bytes: its kind from its first bytes, its
    /// size from its header, both checked.
    public static func read(_ bytes: some Collection<UInt8>, limit: Int) throws(Refusal) -> Photo {
        guard !bytes.isEmpty else { throw Refusal("it is empty") }
        guard bytes.count <= limit else {
            throw Refusal("it is \(bytes.count) bytes; the limit is \(limit) (limits.photoBytes in host.json)")
        }
        // All of it, not a prefix: a phone's JPEG may carry more than 64 KiB of metadata before
        // the header that says its size. It is at most `limit` bytes, read in one pass.
        let header = Array(bytes)
        let photo: Photo
        if header.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            photo = try png(header, size: bytes.count)
        } else if header.starts(with: [0xFF, 0xD8, 0xFF]) {
            photo = try jpeg(header, size: bytes.count)
        } else if header.count >= 12, header.starts(with: Array("RIFF".utf8)), Array(header[8..<12]) == Array("WEBP".utf8) {
            photo = try webp(header, size: bytes.count)
        } else {
            throw Refusal("it is not a PNG, JPEG or WebP picture\(describe(header).map { " (it is \($0))" } ?? "")")
        }
        guard photo.width >= 1, photo.height >= 1 else { throw Refusal("its \(photo.kind.name) header says it is \(photo.width)×\(photo.height) pixels") }
        guard photo.width <= sideLimit, photo.height <= sideLimit, photo.width * photo.height <= pixelLimit else {
            throw Refusal("it is \(photo.width)×\(photo.height) pixels; the most is \(sideLimit) a side and \(pixelLimit / 1_000_000) million in all")
        }
        return photo
    }

    /// What a file's first bytes say it is, for a refusal, when they say a kind people know (the
    /// bytes themselves are not shown: the file may be anything the user can read).
    private static func describe(_ header: [UInt8]) -> String? {
        if header.starts(with: Array("GIF8".utf8)) { return "a GIF" }
        if header.starts(with: Array("%PDF".utf8)) { return "a PDF" }
        if header.starts(with: [0x42, 0x4D]) { return "a BMP" }
        if header.starts(with: Array("<svg".utf8)) || header.starts(with: Array("<?xml".utf8)) { return "XML or SVG" }
        if header.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return "a ZIP archive" }
        if header.count >= 12, header.starts(with: Array("RIFF".utf8)) { return "a RIFF file, not WebP" }
        if header.count >= 12, Array(header[4..<8]) == Array("ftyp".utf8) { return "an ISO media file (HEIC, AVIF or a video)" }
        return nil
    }

    private static func bigEndian(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int {
        (at..<at + count).reduce(0) { $0 << 8 | Int(bytes[$1]) }
    }

    private static func littleEndian(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int {
        (at..<at + count).reversed().reduce(0) { $0 << 8 | Int(bytes[$1]) }
    }

    /// PNG: the IHDR chunk comes first, 13 bytes long, width then height (big-endian).
    private static func png(_ bytes: [UInt8], size: Int) throws(Refusal) -> Photo {
        guard bytes.count >= 33, bigEndian(bytes, 8, 4) == 13, Array(bytes[12..<16]) == Array("IHDR".utf8) else {
            throw Refusal("it starts as a PNG but has no IHDR header")
        }
        let width = bigEndian(bytes, 16, 4), height = bigEndian(bytes, 20, 4)
        return Photo(kind: .png, width: width, height: height, size: size)
    }

    /// JPEG: markers from the start until a start-of-frame, whose body says height then width.
    private static func jpeg(_ bytes: [UInt8], size: Int) throws(Refusal) -> Photo {
        var at = 2
        while at + 3 < bytes.count {
            guard bytes[at] == 0xFF else { throw Refusal("it starts as a JPEG but its markers are broken at byte \(at)") }
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue }  // fill
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { at += 2; continue }  // no length
            if marker == 0xD9 || marker == 0xDA { break }  // end, or the image data before a frame
            let length = bigEndian(bytes, at + 2, 2)
            guard length >= 2 else { throw Refusal("it starts as a JPEG but a marker's length is \(length)") }
            let frames: Set<UInt8> = [0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF]
            if frames.contains(marker) {
                guard length >= 7, at + 9 <= bytes.count else { break }
                return Photo(kind: .jpeg, width: bigEndian(bytes, at + 7, 2), height: bigEndian(bytes, at + 5, 2), size: size)
            }
            at += 2 + length
        }
        throw Refusal("it starts as a JPEG but no frame header says its size")
    }

    /// WebP: a RIFF file whose first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended).
    private static func webp(_ bytes: [UInt8], size: Int) throws(Refusal) -> Photo {
        guard bytes.count >= 30 else { throw Refusal("it starts as a WebP but is cut short") }
        let chunk = String(decoding: bytes[12..<16], as: UTF8.self)
        switch chunk {
        case "VP8 ":
            // A key frame: 3 bytes of frame tag, the start code, then 14 bits each of size.
            guard Array(bytes[23..<26]) == [0x9D, 0x01, 0x2A] else { throw Refusal("it is a WebP whose VP8 frame has no start code") }
            return Photo(kind: .webp, width: littleEndian(bytes, 26, 2) & 0x3FFF, height: littleEndian(bytes, 28, 2) & 0x3FFF, size: size)
        case "VP8L":
            guard bytes[20] == 0x2F else { throw Refusal("it is a WebP whose VP8L stream has no signature") }
            let bits = littleEndian(bytes, 21, 4)
            return Photo(kind: .webp, width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1, size: size)
        case "VP8X":
            return Photo(kind: .webp, width: littleEndian(bytes, 24, 3) + 1, height: littleEndian(bytes, 27, 3) + 1, size: size)
        default:
            throw Refusal("it is a WebP with a first chunk of \"\(chunk)\", not VP8, VP8L or VP8X")
        }
    }
}

/// A photo as a message carries it: what it is and its bytes, or, for one a peer sent that is
/// not what it said it was (or not a picture at all), why it is not shown.
public enum AttachedPhoto: Sendable, Equatable {
    case photo(Photo, bytes: [UInt8])
    case refused(why: String)

    /// Reads a file's bytes as a photo to send, decoded whole by `decoder`: refused in one line
    /// when they are not one.
    public static func reading(_ bytes: [UInt8], limit: Int, decoder: PhotoDecoder = .shared) throws(Photo.Refusal) -> AttachedPhoto {
        .photo(try decoder.check(bytes, limit: limit), bytes: bytes)
    }

    /// What it is, without its bytes.
    public var slot: PhotoSlot {
        switch self {
        case .photo(let photo, _): .photo(photo)
        case .refused(let why): .refused(why)
        }
    }

    /// Its bytes (none for a refused one).
    public var bytes: [UInt8] {
        if case .photo(_, let bytes) = self { bytes } else { [] }
    }
}

/// What a page knows of a message's photo: what it is (its bytes are fetched apart, by the
/// front end that shows it), or why it is not shown.
public enum PhotoSlot: Sendable, Equatable, Codable {
    case photo(Photo)
    case refused(String)

    /// The photo, when it can be shown.
    public var photo: Photo? {
        if case .photo(let photo) = self { photo } else { nil }
    }
}

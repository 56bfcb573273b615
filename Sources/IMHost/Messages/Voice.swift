/// A voice recording's bytes, recognised by what they are: Opus in WebM (what a browser's
/// MediaRecorder writes) or in Ogg (what `opusenc` and most phones' apps write). Its length is
/// never what the file or the sender says: ``PhotoDecoder/checkVoice(_:limit:)`` decodes every
/// packet with libopus, and the length is the sum of the samples decoded.
public struct Voice: Sendable, Equatable, Codable {
    /// The containers a host takes. Another is refused, whatever its file is called.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case webm, ogg

        /// Its media type, for a browser's `<audio>`.
        public var mediaType: String {
            switch self {
            case .webm: "audio/webm"
            case .ogg: "audio/ogg"
            }
        }

        /// Its name for a person.
        public var name: String {
            switch self {
            case .webm: "WebM"
            case .ogg: "Ogg"
            }
        }
    }

    public var kind: Kind
    /// Its length, from the samples decoded.
    public var milliseconds: Int
    /// Its size, in bytes.
    public var size: Int

    public init(kind: Kind, milliseconds: Int, size: Int) {
        self.kind = kind
        self.milliseconds = milliseconds
        self.size = size
    }

    /// The most bytes a voice message's recording may have: its own limit, apart from photos'.
    public static let byteLimit = 1 << 20
    /// The longest recording, in seconds, as the browser records it.
    public static let secondsLimit = 60
    /// The most samples (48 kHz) decoded before a recording is refused as too long: the limit
    /// and half a second more, as a recorder stopped at 60 s ends with its last packet.
    static let sampleLimit = UInt64(secondsLimit) * 48_000 + 24_000

    /// Its length as people read it: `0:12`, `1:00`.
    public var shown: String {
        let seconds = (milliseconds + 500) / 1000
        return "\(seconds / 60):\(seconds % 60 < 10 ? "0" : "")\(seconds % 60)"
    }

    /// Why bytes are not a recording a host takes: one line for a person, and a code.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Code: String, Sendable, Codable {
            /// Not WebM or Ogg, empty, or larger than ``Voice/byteLimit``.
            case header, tooLarge
            /// The data ends inside an element or a page.
            case truncated
            /// A broken structure, or a packet libopus refuses.
            case corrupt
            /// Longer than ``Voice/secondsLimit``.
            case tooLong
            /// Not Opus, more than one track or stream, more than two channels.
            case unsupported
            /// Bytes after its end.
            case trailingBytes
            /// The decoder died on it, took too long, or could not be started.
            case decoderCrashed, decoderTimedOut, decoderUnavailable
        }

        public var code: Code
        public var description: String
        public init(_ description: String, code: Code) {
            self.description = description
            self.code = code
        }
    }

    /// The container `bytes` are in, by their first bytes, with at most `limit` of them.
    public static func kind(of bytes: [UInt8], limit: Int) throws(Refusal) -> Kind {
        guard !bytes.isEmpty else { throw Refusal("it is empty", code: .header) }
        guard bytes.count <= limit else {
            throw Refusal("it is \(bytes.count) bytes; a voice message has at most \(limit)", code: .tooLarge)
        }
        if bytes.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return .webm }
        if bytes.starts(with: Array("OggS".utf8)) { return .ogg }
        throw Refusal("it is not a WebM or Ogg recording with Opus", code: .header)
    }
}

/// A recording as a voice message carries it: what it is and its bytes, or, for one a peer sent
/// that does not decode, why it is not played.
public enum AttachedVoice: Sendable, Equatable {
    case voice(Voice, bytes: [UInt8])
    case refused(why: String)

    /// What it is, without its bytes.
    public var slot: VoiceSlot {
        switch self {
        case .voice(let voice, _): .voice(voice)
        case .refused(let why): .refused(why)
        }
    }

    /// Its bytes (none for a refused one).
    public var bytes: [UInt8] {
        if case .voice(_, let bytes) = self { bytes } else { [] }
    }
}

/// What a page knows of a voice message's recording: what it is (its bytes are fetched apart,
/// by the front end that plays it), or why it is not played ("Voice not shown").
public enum VoiceSlot: Sendable, Equatable, Codable {
    case voice(Voice)
    case refused(String)

    /// The recording, when it can be played.
    public var voice: Voice? {
        if case .voice(let voice) = self { voice } else { nil }
    }
}

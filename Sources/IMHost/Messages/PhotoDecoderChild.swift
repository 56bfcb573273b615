import CPhotoDecode
import CVoiceDecode
#if canImport(Glibc)
import Glibc
#endif

/// What the photo decoder child answers, one JSON object a line on its control pipe.
enum DecoderAnswer: Codable, Equatable, ChildMessage {
    /// First, once: the protocol version the child speaks.
    case hello(version: Int)
    /// What decoding one photo found: `ok`, or a refusal's code (``Photo/Refusal/Code``), the
    /// size the data decoded to (0 where it was not read), the bytes after the picture's end, and
    /// the library's words for a failure.
    case verdict(code: String, width: Int, height: Int, trailing: Int, detail: String)
    /// What decoding one voice recording found: `ok`, or a refusal's code
    /// (``Voice/Refusal/Code``), the samples (48 kHz) decoded less the pre-skip, the bytes after
    /// its end, and the reader's or the library's words for a failure.
    case heard(code: String, samples: Int, trailing: Int, detail: String)

    /// Changes whenever a request or an answer changes.
    static let version = 2

    static var protocolVersion: Int { version }
    var helloVersion: Int? { if case .hello(let version) = self { version } else { nil } }
}

/// The photo decoder child: the host run again (`imhost __decode-photo`) to decode photos whole
/// with libpng, libjpeg-turbo and libwebp, and voice recordings with libopus (and libogg), one at a time, as its parent's ``PhotoDecoder`` hands
/// them over. It holds nothing else (no store, no connection, no line), so a bug in a library,
/// reached by a crafted file, costs the photo it was decoding.
///
/// A request is a line, `KIND COUNT` (`png 24079`), then COUNT bytes, on standard input; each
/// answer is a ``DecoderAnswer`` on the control pipe. End of input ends it: its parent is done, or
/// gone (only the parent holds the pipe's other end).
package enum PhotoDecoderChild {
    /// The most memory the child may map beyond what it holds when it starts (RLIMIT_AS): a
    /// 40-million-pixel photo decoded with room to spare, and no more.
    static let memoryBudget: UInt64 = 768 << 20
    /// CPU seconds one photo may take in the child, whether or not its parent is there to stop it.
    static let cpuSeconds: UInt32 = 20
    /// The most bytes one request may carry: more than any photo limit a host allows.
    static let requestLimit = 64 << 20
    /// Test-only: a photo of exactly this many bytes makes the child raise SIGSEGV instead of
    /// decoding it, so the tests can show that a decoder's crash costs that photo only.
    package static let crashHook = "IMHOST_TEST_DECODER_CRASH_BYTES"

    package static func childMain(answers: ControlPipe) -> Int32 {
        // Past this, an allocation fails (the library reports it), where a bomb would otherwise
        // take the machine's memory.
        _ = imhost_photo_limit_memory(memoryBudget)
        answers.send(DecoderAnswer.hello(version: DecoderAnswer.version))
        let crashOn = getenv(crashHook).flatMap { Int(String(cString: $0)) }
        while let (word, bytes) = request() {
            if bytes.count == crashOn { raise(SIGSEGV) }
            // Its parent kills a decode past its time limit; this ends one whose parent is gone.
            _ = imhost_photo_limit_cpu(cpuSeconds)
            guard let kind = Photo.Kind(rawValue: word) else {
                guard let voice = Voice.Kind(rawValue: word), answers.send(hear(voice, bytes)) else { return 1 }
                continue
            }
            let verdict = bytes.withUnsafeBufferPointer { buffer in
                let decode = switch kind {
                case .png: imhost_photo_decode_png
                case .jpeg: imhost_photo_decode_jpeg
                case .webp: imhost_photo_decode_webp
                }
                return decode(buffer.baseAddress, buffer.count, UInt32(Photo.sideLimit), UInt64(Photo.pixelLimit))
            }
            let detail = text(of: verdict.detail)
            let code: String = switch Int(verdict.code) {
            case Int(IMHOST_PHOTO_OK): "ok"
            case Int(IMHOST_PHOTO_TRUNCATED): Photo.Refusal.Code.truncated.rawValue
            case Int(IMHOST_PHOTO_TOO_LARGE): Photo.Refusal.Code.tooLarge.rawValue
            case Int(IMHOST_PHOTO_UNSUPPORTED): Photo.Refusal.Code.unsupported.rawValue
            case Int(IMHOST_PHOTO_TRAILING): Photo.Refusal.Code.trailingBytes.rawValue
            default: Photo.Refusal.Code.corrupt.rawValue
            }
            guard answers.send(DecoderAnswer.verdict(code: code, width: Int(verdict.width), height: Int(verdict.height),
                                                     trailing: Int(verdict.trailing), detail: detail)) else { return 1 }
        }
        return 0
    }

    /// A verdict's `detail`, a C array of characters ending at its first NUL, as text.
    private static func text<Characters>(of detail: Characters) -> String {
        withUnsafeBytes(of: detail) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }

    /// A recording decoded whole by CVoiceDecode (libopus, and libogg for Ogg).
    private static func hear(_ kind: Voice.Kind, _ bytes: [UInt8]) -> DecoderAnswer {
        let verdict = bytes.withUnsafeBufferPointer { buffer in
            let decode = switch kind {
            case .webm: imhost_voice_decode_webm
            case .ogg: imhost_voice_decode_ogg
            }
            return decode(buffer.baseAddress, buffer.count, Voice.sampleLimit)
        }
        let detail = text(of: verdict.detail)
        let code: String = switch Int(verdict.code) {
        case Int(IMHOST_VOICE_OK): "ok"
        case Int(IMHOST_VOICE_TRUNCATED): Voice.Refusal.Code.truncated.rawValue
        case Int(IMHOST_VOICE_TOO_LONG): Voice.Refusal.Code.tooLong.rawValue
        case Int(IMHOST_VOICE_UNSUPPORTED): Voice.Refusal.Code.unsupported.rawValue
        case Int(IMHOST_VOICE_TRAILING): Voice.Refusal.Code.trailingBytes.rawValue
        default: Voice.Refusal.Code.corrupt.rawValue
        }
        return .heard(code: code, samples: Int(verdict.samples), trailing: Int(verdict.trailing), detail: detail)
    }

    /// The next request on standard input (a ``Photo/Kind`` or a ``Voice/Kind`` and its bytes);
    /// `nil` at its end, or when it is not one.
    private static func request() -> (String, [UInt8])? {
        var line: [UInt8] = []
        while line.last != UInt8(ascii: "\n") {
            guard line.count < 64, let byte = readExactly(1)?.first else { return nil }
            line.append(byte)
        }
        let words = String(decoding: line.dropLast(), as: UTF8.self).split(separator: " ")
        let kind = words.first.map(String.init) ?? ""
        guard words.count == 2, Photo.Kind(rawValue: kind) != nil || Voice.Kind(rawValue: kind) != nil, let count = Int(words[1]),
              count >= 0, count <= requestLimit, let bytes = readExactly(count) else { return nil }
        return (kind, bytes)
    }

    private static func readExactly(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress! + done, count - done) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return nil }
            done += got
        }
        return bytes
    }
}

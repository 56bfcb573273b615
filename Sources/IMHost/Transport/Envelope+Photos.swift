#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMKit

/// A message's photos as the wire carries them (``Envelope/Message/photos``), each read and
/// checked on its bytes.
extension Envelope {
    /// One element of a message's `photos`, with `room` bytes left of the message's limit:
    /// taken when its bytes are the picture it says (kind and size) and decode whole
    /// (``PhotoDecoder``), else the reason it is not, in words for the receiver's page. A peer's
    /// photo is never taken on its word; the message is kept whatever its photo is.
    static func photo(_ item: JSONNode, room: Int) -> AttachedPhoto {
        guard case .object(let fields) = item.value else { return .refused(why: "the photo is not an object") }
        guard case .string(let type)? = fields.member("type")?.value, case .number(let width, _)? = fields.member("width")?.value,
              case .number(let height, _)? = fields.member("height")?.value, case .string(let data)? = fields.member("data")?.value else {
            return .refused(why: "the photo does not say its type, width, height and data")
        }
        // Said back as a short word: a peer's "type" could be one letter and a million accents.
        let word = String(String.UnicodeScalarView(type.unicodeScalars.prefix(8).filter { $0.isASCII && $0.properties.isAlphabetic }))
        let side = { (value: Double) in Int(exactly: value).flatMap { $0 >= 0 && $0 < 1_000_000 ? String($0) : nil } ?? "?" }
        let said = "\(word.isEmpty ? "?" : word.lowercased()) \(side(width))×\(side(height))"
        guard data.utf8.count <= (room + 2) / 3 * 4 + 4 else {
            return .refused(why: "the photo is larger than the \(max(0, room)) bytes left of this host's limit (limits.photoBytes)")
        }
        guard let decoded = Data(base64Encoded: data) else { return .refused(why: "the photo's data is not base64") }
        let bytes = [UInt8](decoded)
        let photo: Photo
        do throws(Photo.Refusal) {
            photo = try Photo.read(bytes, limit: max(0, room))
            guard type == photo.kind.rawValue, Double(photo.width) == width, Double(photo.height) == height else {
                return .refused(why: "it said it was a \(said) picture, but its bytes are a \(photo.kind.rawValue) of \(photo.width)×\(photo.height)")
            }
            // Last, as it costs the most: the whole of it, in the decoder child.
            _ = try PhotoDecoder.shared.check(bytes, limit: max(0, room))
        } catch {
            return .refused(why: "it said it was a \(said) picture, but \(error.description)")
        }
        return .photo(photo, bytes: bytes)
    }
}

/// A voice message's recording as the wire carries it (``Envelope/Message/voice``).
extension Envelope {
    /// A message's `voice`: taken when its bytes are WebM or Ogg with Opus that decode whole
    /// within ``Voice/secondsLimit`` (``PhotoDecoder/checkVoice(_:limit:)``), its length counted
    /// from its samples; else the reason it is not played. The message is kept either way.
    /// `limit`: the most bytes this host takes of a recording (``Voice/byteLimit``, and no more
    /// than `limits.photoBytes`).
    static func voice(_ item: JSONNode, limit: Int) -> AttachedVoice {
        guard case .object(let fields) = item.value, case .string(let type)? = fields.member("type")?.value,
              case .string(let data)? = fields.member("data")?.value else {
            return .refused(why: "the recording does not say its type and data")
        }
        guard data.utf8.count <= (limit + 2) / 3 * 4 + 4 else {
            return .refused(why: "the recording is larger than the \(limit) bytes this host takes")
        }
        guard let decoded = Data(base64Encoded: data) else { return .refused(why: "the recording's data is not base64") }
        let bytes = [UInt8](decoded)
        do throws(Voice.Refusal) {
            let voice = try PhotoDecoder.shared.checkVoice(bytes, limit: limit)
            guard type == voice.kind.rawValue else {
                return .refused(why: "it said it was \(type == "ogg" ? "Ogg" : "WebM"), but its bytes are \(voice.kind.name)")
            }
            return .voice(voice, bytes: bytes)
        } catch {
            return .refused(why: error.description)
        }
    }
}

/// A file message's file as the wire carries it (``Envelope/Message/file``).
extension Envelope {
    /// A message's `file`: taken when it has a name that is one once made safe and at most
    /// `limit` bytes; its type is read from its bytes, never taken from the sender. Else the
    /// reason it is not offered; the message is kept either way.
    static func file(_ item: JSONNode, limit: Int) -> AttachedFile {
        guard case .object(let fields) = item.value, case .string(let name)? = fields.member("name")?.value,
              case .string(let data)? = fields.member("data")?.value else {
            return .refused(why: "the file does not say its name and data")
        }
        guard data.utf8.count <= (limit + 2) / 3 * 4 + 4 else {
            return .refused(why: "the file is larger than the \(limit) bytes this host takes (limits.fileBytes)")
        }
        guard let decoded = Data(base64Encoded: data) else { return .refused(why: "the file's data is not base64") }
        do throws(SharedFile.Refusal) {
            let bytes = [UInt8](decoded)
            return .file(try SharedFile.read(name: name, bytes: bytes, limit: limit), bytes: bytes)
        } catch {
            return .refused(why: error.description)
        }
    }
}

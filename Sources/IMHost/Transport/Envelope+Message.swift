#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMKit

extension Envelope {
    /// A message's members; `copy`: as a device copies its user's message to another (`seq` 0
    /// for one that had none).
    static func message(_ member: (String) -> JSONNode?, id: String?, payloadLimit: Int, photoLimit: Int, fileLimit: Int, copy: Bool = false) throws(Refusal) -> Message {
        guard let id else { throw Refusal(kind: .id, description: "a message whose id is not 1 to 64 of A-Z a-z 0-9 _ -") }
        func refuse(_ kind: Refusal.Kind, _ why: String) -> Refusal { Refusal(kind: kind, description: why, messageID: id) }
        guard case .number(let seqValue, _)? = member("seq")?.value, seqValue == seqValue.rounded(), seqValue >= (copy ? 0 : 1), seqValue <= 9_007_199_254_740_991 else {
            throw refuse(.payload, "message \(id) has no seq (a whole number from 1)")
        }
        var device: String?
        if let node = member("dev") {
            guard case .string(let name) = node.value, DynamicSecurity.deviceProblem(name) == nil else {
                throw refuse(.payload, "message \(id) has a dev that is not a device name (1 to 64 of A-Z a-z 0-9 . _ -)")
            }
            device = name
        }
        guard case .string(let key)? = member("key")?.value, LineID.isValidMessageKey(key) else {
            throw refuse(.key, "message \(id) has a key that is not a message key (a built-in key, or <line>.<name>)")
        }
        guard let payloadNode = member("payload"), case .object = payloadNode.value else {
            throw refuse(.payload, "message \(id) has no payload object")
        }
        let payload = MessagePayload(json: payloadNode.jsonText)
        do throws(SendError) {
            try MessageSender.check(payload, HostConfig.Limits(payloadBytes: payloadLimit))
        } catch {
            throw refuse(error.code == .tooLarge ? .tooLarge : .payload, "message \(id): \(error.description)")
        }
        guard let sent = milliseconds(member("sentAt")) else {
            throw refuse(.payload, "message \(id) has no sentAt (milliseconds since 1970)")
        }
        var jump: JumpPage?
        if let node = member("jump") {
            guard case .object(let fields) = node.value else { throw refuse(.payload, "message \(id) has a jump that is not an object") }
            func field(_ key: String) -> JSONNode? { fields.member(key) }
            guard case .number(let root, _)? = field("rootCateID")?.value, root == root.rounded(), root >= 0, root <= Double(Int32.max) else {
                throw refuse(.payload, "message \(id) has a jump without a rootCateID")
            }
            var page = JumpPage(rootCateID: Int(root))
            if let cate = field("cateID") {
                guard case .number(let value, _) = cate.value, value == value.rounded(), value >= 0, value <= Double(Int32.max) else {
                    throw refuse(.payload, "message \(id) has a jump whose cateID is not a whole number")
                }
                page.cateID = Int(value)
            }
            if let info = field("infoID") {
                guard case .string(let text) = info.value, text.utf8.count <= infoIDBytes,
                      !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                    throw refuse(.payload, "message \(id) has a jump whose infoID is not a short line of text")
                }
                page.infoID = text
            }
            jump = page
        }
        var photos: [AttachedPhoto] = []
        if let node = member("photos") {
            guard case .array(let items) = node.value, items.count <= photosPerMessage else {
                throw refuse(.payload, "message \(id) has a photos member that is not a list of at most \(photosPerMessage)")
            }
            var room = photoLimit, pixels = 0
            photos = items.map { item in
                var photo = Self.photo(item, room: room)
                if case .photo(let read, _) = photo {
                    if pixels + read.width * read.height > Photo.messagePixelLimit {
                        photo = .refused(why: "the message's photos together have more than \(Photo.messagePixelLimit / 1_000_000) million pixels")
                    } else {
                        pixels += read.width * read.height
                    }
                }
                room -= photo.bytes.count
                return photo
            }
        }
        // Additions, read leniently: a reply that does not name a message is left out (the
        // message shows without its quote); `recalled` is a copy's only.
        var reply: ReplyTo?
        if case .object(let fields)? = member("reply")?.value, case .string(let quoted)? = fields.member("id")?.value, GlobalID.isValid(quoted),
           case .string(let from)? = fields.member("from")?.value, TransportID.problem(from) == nil {
            reply = ReplyTo(from: from, id: quoted)
        }
        let recalledAt = copy ? milliseconds(member("recalled")) : nil
        // A recording only on the built-in voice message; anywhere else it is not read.
        let voice = key == "voice" ? member("voice").map { Self.voice($0, limit: min(Voice.byteLimit, photoLimit)) } : nil
        // A file only on the built-in file message, likewise.
        let file = key == "file" ? member("file").map { Self.file($0, limit: fileLimit) } : nil
        var message = Message(id: id, seq: Int(seqValue), key: key, payload: payload, sentAt: sent, jump: jump, photos: photos, voice: voice,
                              file: file, device: device, reply: reply, recalledAt: recalledAt)
        message.features = features(member("features"))
        return message
    }
}

/// The message a reply answers, as the wire names it: its sender (one of the two people in the
/// conversation) and that sender's id for it.
public struct ReplyTo: Sendable, Equatable, Hashable, Codable {
    public var from: String
    public var id: String

    public init(from: String, id: String) {
        self.from = from
        self.id = id
    }

    /// The reply a message row names (its `reply_sender` and `reply_id`): `nil` for none.
    static func stored(_ from: String?, _ id: String?) -> ReplyTo? {
        guard let from, let id else { return nil }
        return ReplyTo(from: from, id: id)
    }
}

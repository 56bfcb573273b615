#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMKit

/// What crosses the wire between two hosts: version 1 of imhost's envelope, one JSON object per
/// MQTT message, published QoS 1 to `imhost/u/<to>/from/<from>`. The sender is the topic's (the
/// broker's ACL lets a user publish only under its own name), never a field of the envelope.
///
/// ```
/// {"v":1,"kind":"message","id":ID,"seq":N,"key":KEY,"payload":{...},"sentAt":MS,
///  "jump":{"rootCateID":1,"cateID":12,"infoID":"L1001"},
///  "photos":[{"type":"png"|"jpeg"|"webp","width":W,"height":H,"data":BASE64},...],
///  "voice":{"type":"webm"|"ogg","data":BASE64},"file":{"name":NAME,"data":BASE64}}
/// {"v":1,"kind":"receipt","state":"delivered"|"read"|"refused","ids":[ID,...],"code":CODE,"reason":TEXT,"confirm":true,
///  "drawn":{ID:{"line":LINE,"version":V}|{"placeholder":WORD,"reason":TEXT},...},"features":[NAME,...],
///  "draws":{"at":MS,"lines":{LINE:V,...}}}
/// {"v":1,"kind":"confirm","ids":[ID,...]}
/// {"v":1,"kind":"status","state":"running"|"gone","version":N,"digest":D,"at":MS,"lines":[...],"keys":[...],
///  "drawn":{LINE:{"versions":{V:N,...},"placeholders":{WORD:N,...}},...},"partial":true}
/// ```
///
/// Everything read is input: it is parsed with limits and every field checked; what does not
/// pass is refused with a ``Envelope/Refusal`` that says why (and, for an envelope whose id
/// could be read, a `refused` receipt with a ``RefusalCode`` goes back).
///
/// The rule for changing it: `v` stays 1 while changes are additions. New kinds and new members
/// are additions; a host ignores members it does not know, and answers an envelope of a kind it
/// does not know with a typed refusal (`refused`, code `kind`) when the envelope has an `id`, so
/// a newer host never loses a message to an older one (it shows why it failed) and never sends it
/// again forever. A receipt or a confirmation is never answered, so two hosts never refuse each
/// other's refusals. Every kind that wants an answer therefore carries an `id`.
public enum Envelope: Sendable, Equatable {
    case message(Message)
    case receipt(Receipt)
    /// The sender of messages says it has the `read` receipts for these ids of its messages: the
    /// receiver stops sending them again. An answer to a receipt that asked for it (``Receipt/confirm``).
    case confirm(ids: [String])
    /// A host's check, at connect, that its own inbox reaches it (never sent to anyone else).
    case probe(id: String)
    /// A host says, retained on its own inbox (`imhost/u/<user>/from/<user>`), that it holds the
    /// user's session now: `id` names the connection (random, one a process), `at` when it took
    /// it. Only the user itself can write there and read it.
    case presence(id: String, at: Int64)
    /// A host's status, retained on its status topic (``Topic/fleetStatus(user:)``, never an
    /// inbox): the fleet configuration it applies, and its lines and message keys.
    case status(Status)
    /// Between the devices of one user, on its own topics (``Sibling``): never from anyone else.
    case sibling(Sibling)
    /// The sender recalls messages it sent the receiver (their ids), at `at`: the receiver
    /// replaces each with a mark that it was recalled, keeping nothing of what it said, and
    /// answers with a `recalled` receipt; until that comes, the recall is sent again. Sent only
    /// to a host whose receipts announce ``Feature/recall``.
    case recall(ids: [String], at: Int64)
    /// The sender reacts to a message of the conversation (its own or the receiver's), or takes
    /// its reaction back (an empty emoji). The receiver keeps the latest by `at`, and answers
    /// with a `reacted` receipt. Sent only to a host whose receipts announce ``Feature/react``.
    case react(Reaction)
    /// The sender is typing in the chat with the receiver (QoS 0, at most one every
    /// ``Feature/typingEvery``; shown until ``Feature/typingShown`` after the last). Never
    /// stored, never answered. Only to a host that announced ``Feature/typing``.
    case typing
    /// The sender's host is online (`true`: again at least every ``Feature/onlineEvery``) or
    /// leaves (`false`) (QoS 0; never stored, never answered). Only to a host that announced
    /// ``Feature/online``, and only from a host whose person lets others see it.
    case online(Bool)
    /// A new revision of a message of the conversation (its own or the receiver's): the card
    /// changed in place (``Revision``). The receiver keeps the newest, and answers with a
    /// `revised` receipt. Sent only to a host whose receipts announce ``Feature/revise``.
    case revise(Revision)

    /// The version this host writes and reads.
    public static let version = 1
    /// The most ids one receipt carries.
    public static let receiptIDs = 100
    /// The longest `reason` a refused receipt carries, in bytes.
    public static let reasonBytes = 300
    /// The longest `jump.infoID`, in bytes.
    public static let infoIDBytes = 128
    /// Bytes an envelope may take beyond its payload.
    public static let overhead = 4096
    /// The most photos one message carries.
    public static let photosPerMessage = 4

    /// The largest envelope a host takes: the payload, `photoLimit` bytes of photos (or of a
    /// voice message's recording, which has at most that and ``Voice/byteLimit``) or `fileLimit`
    /// bytes of a file, whichever is more, as base64 (4 characters for every 3 bytes), and
    /// ``overhead`` for the rest.
    public static func limit(payloadLimit: Int, photoLimit: Int, fileLimit: Int) -> Int {
        payloadLimit + overhead + (max(photoLimit, fileLimit) + 2) / 3 * 4
    }

    /// Room for the topic and the MQTT header around an envelope, in a packet.
    public static let topicRoom = 1024

    /// The largest packet these limits make: the largest envelope and a topic. A host's own
    /// maximum packet, and the broker's `max_packet_size` (`imhost broker init` sizes it so).
    public static func packetLimit(payloadLimit: Int, photoLimit: Int, fileLimit: Int) -> Int {
        limit(payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit) + topicRoom
    }

    /// A message.
    public struct Message: Sendable, Equatable {
        /// The sender's global id for it: 1 to 64 of `A-Z a-z 0-9 _ -`.
        public var id: String
        /// The sender's count of its messages to this peer, from 1.
        public var seq: Int
        public var key: String
        /// The payload, as JSON text of an object.
        public var payload: MessagePayload
        /// When the sender sent it, in milliseconds since 1970.
        public var sentAt: Int64
        /// The page the sender was on, if it said.
        public var jump: JumpPage?
        /// The photos it carries (at most ``Envelope/photosPerMessage``), beside the payload: as
        /// read, each one checked, a photo that is not what it says kept as the reason it is not
        /// shown.
        public var photos: [AttachedPhoto]
        /// A voice message's recording (`voice`, an addition: an older host shows the payload's
        /// length without it), decoded whole on its way in; `nil` for any other message.
        public var voice: AttachedVoice?
        /// A file message's file (`file`, an addition: an older host shows the message as one
        /// of a key it does not know), its type read from its bytes; `nil` for any other message.
        public var file: AttachedFile?
        /// The sender's device that wrote it (`dev`; absent: its first device). Each device
        /// numbers its own sends, so a sender's messages are in order by (device, seq).
        public var device: String?
        /// The message it replies to (`reply`, an addition: an older host shows it without its
        /// quote): that message's sender and id.
        public var reply: ReplyTo?
        /// In a copy between one user's devices: when the user recalled it (`recalled`); its
        /// payload is `{}` and it has no photos then.
        public var recalledAt: Int64?
        /// What the sender's host takes (``Feature``), as it says on every message and receipt
        /// (an addition); `nil` from a host before features.
        public var features: [String]?

        public init(id: String, seq: Int, key: String, payload: MessagePayload, sentAt: Int64, jump: JumpPage? = nil,
                    photos: [AttachedPhoto] = [], voice: AttachedVoice? = nil, file: AttachedFile? = nil, device: String? = nil,
                    reply: ReplyTo? = nil, recalledAt: Int64? = nil) {
            self.file = file
            self.voice = voice
            self.reply = reply
            self.recalledAt = recalledAt
            self.device = device
            self.photos = photos
            self.id = id
            self.seq = seq
            self.key = key
            self.payload = payload
            self.sentAt = sentAt
            self.jump = jump
        }
    }

    /// Why a receiver refused an envelope, in a word the sender's host reads: a code it does not
    /// know (from a newer host) is kept as it came and shown as the reason says.
    public struct RefusalCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A `v` the receiver does not read.
        public static let version = RefusalCode(rawValue: "version")
        /// A kind the receiver does not know: it is older than the sender.
        public static let kind = RefusalCode(rawValue: "kind")
        /// Larger than the receiver's limits.
        public static let tooLarge = RefusalCode(rawValue: "too-large")
        /// A key that is not a message key.
        public static let key = RefusalCode(rawValue: "key")
        /// A member missing or of the wrong shape.
        public static let payload = RefusalCode(rawValue: "payload")
        /// It named another sender than the topic's.
        public static let sender = RefusalCode(rawValue: "sender")
        /// The receiver blocked the sender.
        public static let blocked = RefusalCode(rawValue: "blocked")
        /// The sender is past the receiver's daily budget for one peer (`limits.peerBudget`).
        public static let budget = RefusalCode(rawValue: "budget")

        public var description: String { rawValue }

        /// A code as read: 1 to 32 of `a-z 0-9 -`.
        static func isValid(_ text: String) -> Bool {
            (1...32).contains(text.utf8.count) && text.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
        }
    }

    /// What a receiver says of messages it was sent.
    public struct Receipt: Sendable, Equatable {
        public enum State: String, Sendable, CaseIterable {
            /// Stored: the message is on the receiver's disk.
            case delivered
            /// Shown to the receiver in a chat.
            case read
            /// Never to be taken (its version, size or key, or a blocked sender): the sender
            /// marks it failed with the reason.
            case refused
            /// The answer to a ``Envelope/recall(ids:at:)``: the receiver replaced those messages
            /// (or will never store them): the sender stops sending the recall.
            case recalled
            /// The answer to a ``Envelope/react(_:)``: the receiver has the reaction of ``Receipt/at``
            /// (or a later one) to that message.
            case reacted
            /// The answer to a ``Envelope/revise(_:)``: the receiver has that revision of the
            /// message (or a newer one, or will never store it); ``Receipt/at`` is its time.
            case revised
        }

        public var state: State
        public var ids: [String]
        /// What kind of refusal, for `refused` (absent from hosts before the rule for changes).
        public var code: RefusalCode?
        /// Why, for `refused`: a line for the sender's user.
        public var reason: String?
        /// The receiver keeps sending this receipt until the sender answers ``Envelope/confirm(ids:)``
        /// (`read` receipts: the broker may lose them, and nothing else would say them again).
        public var confirm = false
        /// For `read`: how the receiver drew those of its ids that are a line's messages, by id
        /// (absent from hosts before it; read leniently, ids not among ``ids`` dropped).
        public var drawn: [String: Drawn] = [:]
        /// What the receiver's host can take (``Feature``), as it announces it on every receipt;
        /// `nil` from a host before features, which takes none of them.
        public var features: [String]?
        /// For `reacted`: the time of the reaction it answers.
        public var at: Int64?
        /// For `delivered` and `read`: the lines the receiver's host draws now (``Draws``); `nil`
        /// from a host before it, or one that says none.
        public var draws: Draws?

        public init(state: State, ids: [String], code: RefusalCode? = nil, reason: String? = nil, confirm: Bool = false,
                    drawn: [String: Drawn] = [:], features: [String]? = Feature.announced, at: Int64? = nil, draws: Draws? = nil) {
            self.draws = draws
            self.at = at
            self.features = features
            self.state = state
            self.ids = ids
            self.code = code
            self.reason = reason
            self.confirm = confirm
            self.drawn = drawn
        }
    }

    /// A host's status as the operator reads it. Read leniently, as hosts before this kind wrote
    /// it without one: a member that is not what a host writes is left out, names that are not
    /// line ids or message keys are dropped.
    public struct Status: Sendable, Equatable {
        public enum State: String, Sendable {
            /// It runs.
            case running
            /// It left, or its will says it vanished.
            case gone
        }

        /// `nil` when it said neither.
        public var state: State?
        /// When it reported, in ms since 1970.
        public var at: Int64?
        /// What it applies and what it has.
        public var report: FleetReport
        /// Whether it said what it has: hosts before fleet status carried lines report only their
        /// version, and a report that did not fit its limit says `"partial"`.
        public var inventory: Inventory

        public enum Inventory: Sendable, Equatable {
            case none, partial, complete
        }

        public init(state: State?, at: Int64?, report: FleetReport, inventory: Inventory) {
            self.state = state
            self.at = at
            self.report = report
            self.inventory = inventory
        }
    }

    /// `items` in receipts' worth: at most ``receiptIDs`` each, in order.
    static func inReceipts<Item>(_ items: [Item]) -> [ArraySlice<Item>] {
        stride(from: 0, to: items.count, by: receiptIDs).map { items[$0..<min($0 + receiptIDs, items.count)] }
    }

    // MARK: Writing

    /// The envelope as the bytes to publish.
    public var bytes: [UInt8] { Array(text.utf8) }

    /// The envelope as JSON text, members in the documented order.
    public var text: String {
        switch self {
        case .message(let message):
            var text = #"{"v":1,"kind":"message","id":\#(JSONNode.quoted(message.id)),"seq":\#(message.seq),"key":\#(JSONNode.quoted(message.key)),"payload":\#(message.payload.json),"sentAt":\#(message.sentAt)"#
            if let jump = message.jump {
                text += #","jump":{"rootCateID":\#(jump.rootCateID)"#
                if let cate = jump.cateID { text += #","cateID":\#(cate)"# }
                if let info = jump.infoID { text += #","infoID":\#(JSONNode.quoted(info))"# }
                text += "}"
            }
            let photos = message.photos.compactMap { attached -> String? in
                guard case .photo(let photo, let bytes) = attached else { return nil }
                return #"{"type":"\#(photo.kind.rawValue)","width":\#(photo.width),"height":\#(photo.height),"data":"\#(Data(bytes).base64EncodedString())"}"#
            }
            if !photos.isEmpty { text += #","photos":[\#(photos.joined(separator: ","))]"# }
            if case .voice(let voice, let bytes)? = message.voice {
                text += #","voice":{"type":"\#(voice.kind.rawValue)","data":"\#(Data(bytes).base64EncodedString())"}"#
            }
            if case .file(let file, let bytes)? = message.file {
                text += #","file":{"name":\#(JSONNode.quoted(file.name)),"data":"\#(Data(bytes).base64EncodedString())"}"#
            }
            if let device = message.device { text += #","dev":\#(JSONNode.quoted(device))"# }
            if let reply = message.reply { text += #","reply":{"id":\#(JSONNode.quoted(reply.id)),"from":\#(JSONNode.quoted(reply.from))}"# }
            if let at = message.recalledAt { text += #","recalled":\#(at)"# }
            if let features = message.features { text += #","features":[\#(features.map(JSONNode.quoted).joined(separator: ","))]"# }
            return text + "}"
        case .receipt(let receipt):
            let ids = receipt.ids.map(JSONNode.quoted).joined(separator: ",")
            let code = receipt.code.map { #","code":\#(JSONNode.quoted($0.rawValue))"# } ?? ""
            let reason = receipt.reason.map { #","reason":\#(JSONNode.quoted($0))"# } ?? ""
            let confirm = receipt.confirm ? #","confirm":true"# : ""
            // In the order of the ids.
            let entries = receipt.ids.compactMap { id in receipt.drawn[id].map { JSONNode.quoted(id) + ":" + $0.json } }
            let drawn = entries.isEmpty ? "" : #","drawn":{\#(entries.joined(separator: ","))}"#
            let features = receipt.features.map { #","features":[\#($0.map(JSONNode.quoted).joined(separator: ","))]"# } ?? ""
            let at = receipt.at.map { #","at":\#($0)"# } ?? ""
            let draws = receipt.draws.map { #","draws":"# + $0.json } ?? ""
            return #"{"v":1,"kind":"receipt","state":"\#(receipt.state.rawValue)","ids":[\#(ids)]\#(code)\#(reason)\#(confirm)\#(drawn)\#(features)\#(at)\#(draws)}"#
        case .confirm(let ids):
            return #"{"v":1,"kind":"confirm","ids":[\#(ids.map(JSONNode.quoted).joined(separator: ","))]}"#
        case .probe(let id):
            return #"{"v":1,"kind":"probe","id":\#(JSONNode.quoted(id))}"#
        case .recall(let ids, let at):
            return #"{"v":1,"kind":"recall","ids":[\#(ids.map(JSONNode.quoted).joined(separator: ","))],"at":\#(at)}"#
        case .typing:
            return #"{"v":1,"kind":"typing"}"#
        case .online(let online):
            return #"{"v":1,"kind":"online","online":\#(online)}"#
        case .revise(let revision):
            return revision.text
        case .react(let reaction):
            return #"{"v":1,"kind":"react","id":\#(JSONNode.quoted(reaction.id)),"of":\#(JSONNode.quoted(reaction.from)),"emoji":\#(JSONNode.quoted(reaction.emoji)),"at":\#(reaction.at)}"#
        case .presence(let id, let at):
            return #"{"v":1,"kind":"presence","id":\#(JSONNode.quoted(id)),"at":\#(at)}"#
        case .status(let status):
            let applied = status.report.applied
            var text = #"{"v":1,"kind":"status""#
            if let state = status.state { text += #","state":"\#(state.rawValue)""# }
            text += #","version":\#(applied.map { String($0.version) } ?? "null"),"digest":\#(applied.map { JSONNode.quoted($0.digest) } ?? "null")"#
            if let at = status.at { text += #","at":\#(at)"# }
            if status.inventory != .none {
                let list = { (names: [String]) in names.map(JSONNode.quoted).joined(separator: ",") }
                text += #","lines":[\#(list(status.report.lines))],"keys":[\#(list(status.report.keys))]"#
            }
            if !status.report.drawn.isEmpty { text += #","drawn":"# + DrawnCounts.json(DrawnCounts.ordered(status.report.drawn)) }
            return text + (status.inventory == .partial ? #","partial":true}"# : "}")
        case .sibling(let sibling): return sibling.text
        }
    }

    // MARK: Reading

    /// Why an envelope was not taken: what to count it as, and a line for a person.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The counter it goes to (`imhost sync --json`).
        public enum Kind: String, Sendable, CaseIterable {
            case notJSON = "not-json", tooLarge = "too-large", version, kind, id, key, payload, receipt, sender
        }

        public var kind: Kind
        /// One line, quoting whatever the envelope said (a key, a kind, a JSON error) as it is:
        /// it reaches this host's front end and, as a refused receipt's reason, the sender's,
        /// and each escapes it where it draws it.
        public var description: String
        /// The message's id, when one could be read: a `refused` receipt can then say so.
        public var messageID: String?

        public init(kind: Kind, description: String, messageID: String? = nil) {
            self.kind = kind
            self.description = description
            self.messageID = messageID
        }

        /// The code a `refused` receipt carries for it.
        public var code: RefusalCode { RefusalCode(rawValue: kind.rawValue) }
    }

    /// Reads an envelope from the bytes of an MQTT message, with `payloadLimit` the largest
    /// payload this host takes (host.json's `limits.payloadBytes`). `sender` is the topic's:
    /// an envelope that names another (a `from` or `sender` member) is refused, whatever else
    /// it says.
    /// `photoLimit` is the most bytes of photos one message may carry (`limits.photoBytes`).
    /// `fileLimit`, the most bytes of a file (`limits.fileBytes`).
    public static func read(_ bytes: [UInt8], payloadLimit: Int, photoLimit: Int = HostConfig.Limits().photoBytes,
                            fileLimit: Int = HostConfig.Limits().fileBytes,
                            sender: String? = nil) throws(Refusal) -> Envelope {
        let limit = Self.limit(payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit)
        guard bytes.count <= limit else {
            throw Refusal(kind: .tooLarge, description: "an envelope of \(bytes.count) bytes; the limit is \(limit) (limits.payloadBytes and the larger of limits.photoBytes and limits.fileBytes, as base64, + \(overhead))")
        }
        return try envelope(try object(bytes), payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit, sender: sender)
    }

    /// Reads a status from its topic: a status envelope, or a status document as hosts wrote it
    /// before it was one (no `kind`); `nil` for anything else, or more than `limit` bytes.
    public static func readStatus(_ bytes: [UInt8], limit: Int, sender: String) -> Status? {
        guard bytes.count <= limit, let members = try? object(bytes) else { return nil }
        guard members.member("kind") != nil else { return status(members.member) }
        guard case .status(let status)? = try? envelope(members, payloadLimit: limit, photoLimit: 0, fileLimit: 0, sender: sender) else { return nil }
        return status
    }

    /// The members of the JSON object `bytes` hold.
    private static func object(_ bytes: [UInt8]) throws(Refusal) -> [(key: String, keyPosition: SourcePosition, value: JSONNode)] {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Refusal(kind: .notJSON, description: "an envelope that is not UTF-8")
        }
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw Refusal(kind: .notJSON, description: "an envelope that is not JSON (\(error.message) at \(error.position))")
        }
        guard case .object(let members) = root.value else { throw Refusal(kind: .notJSON, description: "an envelope that is not a JSON object") }
        return members
    }

    /// The envelope an object's `members` make.
    private static func envelope(_ members: [(key: String, keyPosition: SourcePosition, value: JSONNode)], payloadLimit: Int,
                                 photoLimit: Int, fileLimit: Int, sender: String?) throws(Refusal) -> Envelope {
        func member(_ key: String) -> JSONNode? { members.member(key) }
        let id = member("id").flatMap { node -> String? in
            if case .string(let text) = node.value, GlobalID.isValid(text) { return text }
            return nil
        }
        if let sender {
            for key in ["from", "sender"] {
                guard let named = member(key) else { continue }
                guard case .string(let text) = named.value, text == sender else {
                    throw Refusal(kind: .sender, description: "an envelope whose \"\(key)\" is not its sender (the topic says \(sender); the broker vouches for the topic only)",
                                  messageID: id)
                }
            }
        }
        guard case .number(let version, _)? = member("v")?.value, version == Double(Self.version) else {
            throw Refusal(kind: .version, description: "an envelope of version \(member("v").map(\.kindName) ?? "(none)"); this host reads version \(Self.version)",
                          messageID: id)
        }
        guard case .string(let kind)? = member("kind")?.value else {
            throw Refusal(kind: .kind, description: "an envelope without a kind", messageID: id)
        }
        switch kind {
        case "message": return .message(try message(member, id: id, payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit))
        case "receipt": return .receipt(try receipt(member))
        case "confirm": return .confirm(ids: try ids(member, of: "a confirmation"))
        case "recall":
            guard let at = milliseconds(member("at")) else {
                throw Refusal(kind: .payload, description: "a recall without a time (at, milliseconds since 1970)")
            }
            return .recall(ids: try ids(member, of: "a recall"), at: at)
        case "typing": return .typing
        case "online":
            guard case .bool(let online)? = member("online")?.value else {
                throw Refusal(kind: .payload, description: "an online signal whose online is not true or false")
            }
            return .online(online)
        case "react":
            // `of`: the reacted message's sender (never `from`, which names an envelope's sender).
            guard let id, case .string(let from)? = member("of")?.value, TransportID.problem(from) == nil,
                  case .string(let emoji)? = member("emoji")?.value, emoji.isEmpty || Reaction.emoji.contains(emoji),
                  let at = milliseconds(member("at")) else {
                throw Refusal(kind: .payload, description: "a reaction without a message id, its sender, one of \(Reaction.emoji.joined(separator: " ")) (or \"\") and a time",
                              messageID: id)
            }
            return .react(Reaction(id: id, from: from, emoji: emoji, at: at))
        case "revise": return .revise(try Revision.read(member, id: id, payloadLimit: payloadLimit))
        case "probe":
            guard let id else { throw Refusal(kind: .id, description: "a probe without a valid id") }
            return .probe(id: id)
        case "presence":
            guard let id, let at = milliseconds(member("at")) else {
                throw Refusal(kind: .payload, description: "a presence record without a valid id and time")
            }
            return .presence(id: id, at: at)
        case "status": return .status(status(member))
        case _ where Sibling.kinds.contains(kind):
            return .sibling(try Sibling.read(kind: kind, member, id: id, payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit))
        default:
            throw Refusal(kind: .kind, description: "an envelope of kind \"\(kind.prefix(40))\", which this host does not know", messageID: id)
        }
    }
}

import IMKit

/// What crosses the wire between two hosts: version 1 of imhost's envelope, one JSON object per
/// MQTT message, published QoS 1 to `imhost/u/<to>/from/<from>`. The sender is the topic's (the
/// broker's ACL lets a user publish only under its own name), never a field of the envelope.
///
/// ```
/// {"v":1,"kind":"message","id":ID,"seq":N,"key":KEY,"payload":{...},"sentAt":MS,
///  "jump":{"rootCateID":1,"cateID":12,"infoID":"L1001"}}
/// {"v":1,"kind":"receipt","state":"delivered"|"read"|"refused","ids":[ID,...],"reason":TEXT}
/// ```
///
/// Everything read is input: it is parsed with limits and every field checked; what does not
/// pass is refused with a ``Envelope/Refusal`` that says why (and, for a message whose id could
/// be read, a `refused` receipt goes back). Members this version does not know are ignored, so
/// later versions can add some.
public enum Envelope: Sendable, Equatable {
    case message(Message)
    case receipt(Receipt)
    /// A host's check, at connect, that its own inbox reaches it (never sent to anyone else).
    case probe(id: String)

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

        public init(id: String, seq: Int, key: String, payload: MessagePayload, sentAt: Int64, jump: JumpPage? = nil) {
            self.id = id
            self.seq = seq
            self.key = key
            self.payload = payload
            self.sentAt = sentAt
            self.jump = jump
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
        }

        public var state: State
        public var ids: [String]
        /// Why, for `refused`.
        public var reason: String?

        public init(state: State, ids: [String], reason: String? = nil) {
            self.state = state
            self.ids = ids
            self.reason = reason
        }
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
            return text + "}"
        case .receipt(let receipt):
            let ids = receipt.ids.map(JSONNode.quoted).joined(separator: ",")
            let reason = receipt.reason.map { #","reason":\#(JSONNode.quoted($0))"# } ?? ""
            return #"{"v":1,"kind":"receipt","state":"\#(receipt.state.rawValue)","ids":[\#(ids)]\#(reason)}"#
        case .probe(let id):
            return #"{"v":1,"kind":"probe","id":\#(JSONNode.quoted(id))}"#
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
        public var description: String
        /// The message's id, when one could be read: a `refused` receipt can then say so.
        public var messageID: String?
    }

    /// Reads an envelope from the bytes of an MQTT message, with `payloadLimit` the largest
    /// payload this host takes (host.json's `limits.payloadBytes`). `sender` is the topic's:
    /// an envelope that names another (a `from` or `sender` member) is refused, whatever else
    /// it says.
    public static func read(_ bytes: [UInt8], payloadLimit: Int, sender: String? = nil) throws(Refusal) -> Envelope {
        guard bytes.count <= payloadLimit + overhead else {
            throw Refusal(kind: .tooLarge, description: "an envelope of \(bytes.count) bytes; the limit is \(payloadLimit + overhead) (limits.payloadBytes + \(overhead))")
        }
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
        func member(_ key: String) -> JSONNode? { members.first { $0.key == key }?.value }
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
        case "message": return .message(try message(member, id: id, payloadLimit: payloadLimit))
        case "receipt": return .receipt(try receipt(member))
        case "probe":
            guard let id else { throw Refusal(kind: .id, description: "a probe without a valid id") }
            return .probe(id: id)
        default:
            throw Refusal(kind: .kind, description: "an envelope of kind \"\(kind.prefix(40))\", which this host does not know", messageID: id)
        }
    }

    private static func message(_ member: (String) -> JSONNode?, id: String?, payloadLimit: Int) throws(Refusal) -> Message {
        guard let id else { throw Refusal(kind: .id, description: "a message whose id is not 1 to 64 of A-Z a-z 0-9 _ -") }
        func refuse(_ kind: Refusal.Kind, _ why: String) -> Refusal { Refusal(kind: kind, description: why, messageID: id) }
        guard case .number(let seqValue, _)? = member("seq")?.value, seqValue == seqValue.rounded(), seqValue >= 1, seqValue <= 9_007_199_254_740_991 else {
            throw refuse(.payload, "message \(id) has no seq (a whole number from 1)")
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
        guard case .number(let sent, _)? = member("sentAt")?.value, sent == sent.rounded(), sent >= 0, sent <= 9_007_199_254_740_991 else {
            throw refuse(.payload, "message \(id) has no sentAt (milliseconds since 1970)")
        }
        var jump: JumpPage?
        if let node = member("jump") {
            guard case .object(let fields) = node.value else { throw refuse(.payload, "message \(id) has a jump that is not an object") }
            func field(_ key: String) -> JSONNode? { fields.first { $0.key == key }?.value }
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
        return Message(id: id, seq: Int(seqValue), key: key, payload: payload, sentAt: Int64(sent), jump: jump)
    }

    private static func receipt(_ member: (String) -> JSONNode?) throws(Refusal) -> Receipt {
        guard case .string(let stateText)? = member("state")?.value, let state = Receipt.State(rawValue: stateText) else {
            throw Refusal(kind: .receipt, description: "a receipt whose state is not delivered, read or refused")
        }
        guard case .array(let elements)? = member("ids")?.value, (1...receiptIDs).contains(elements.count) else {
            throw Refusal(kind: .receipt, description: "a receipt without 1 to \(receiptIDs) ids")
        }
        var ids: [String] = []
        for element in elements {
            guard case .string(let id) = element.value, GlobalID.isValid(id) else {
                throw Refusal(kind: .receipt, description: "a receipt naming an id that is not one")
            }
            ids.append(id)
        }
        var reason: String?
        if let node = member("reason") {
            guard state == .refused, case .string(let text) = node.value else {
                throw Refusal(kind: .receipt, description: "a receipt with a reason that is not a refusal's text")
            }
            // Kept short and on one line: it is shown to the sender's user.
            reason = String(decoding: text.utf8.prefix(reasonBytes), as: UTF8.self)
        }
        return Receipt(state: state, ids: ids, reason: reason)
    }
}

import IMKit

/// A card changed in place (IMKit 1.4's revisions): the `revise` kind, its `revised` receipt,
/// and the feature that announces them.
///
/// ```
/// {"v":1,"kind":"revise","id":ID,"of":SENDER,"rev":N,"key":KEY,"payload":{...},"at":MS}
/// {"v":1,"kind":"receipt","state":"revised","ids":[ID],"at":MS}
/// ```
///
/// `id` and `of` name the message revised (its sender's id for it, and its sender: the user or
/// the peer); its author is the envelope's sender, as the topic says. The receiver keeps it
/// when it is newer than the revision it has (a larger `rev`; of two with one `rev`, the larger
/// author's id), of a message of their conversation with the same key, and answers `revised`
/// either way, so the sender stops sending it.
extension Envelope {
    /// A new revision of a message: which (its sender and id), its number (from 1; the first
    /// payload is revision 0), its key (the message's own), the new payload, and when.
    public struct Revision: Sendable, Equatable {
        public var id: String
        public var from: String
        public var number: Int
        public var key: String
        public var payload: MessagePayload
        public var at: Int64

        public init(id: String, from: String, number: Int, key: String, payload: MessagePayload, at: Int64) {
            self.id = id
            self.from = from
            self.number = number
            self.key = key
            self.payload = payload
            self.at = at
        }

        /// The most revisions a message may have: a number that only grows must not wrap.
        public static let most = 1_000_000
        /// How far past the revision a host has a peer's may be numbered and still be kept
        /// (newer ones queued while it was away replace each other before they go).
        public static let window = 100

        /// As JSON, members in the documented order.
        var text: String {
            #"{"v":1,"kind":"revise","id":\#(JSONNode.quoted(id)),"of":\#(JSONNode.quoted(from)),"rev":\#(number),"key":\#(JSONNode.quoted(key)),"payload":\#(payload.json),"at":\#(at)}"#
        }

        /// Whether this revision, by `author`, wins over `number` by `other` (the one kept).
        public func isNewer(byAuthor author: String, than number: Int?, by other: String?) -> Bool {
            guard let number else { return true }
            return self.number > number || (self.number == number && author > (other ?? ""))
        }

        /// Reads a `revise` envelope's members; `id` is its valid id, if it had one.
        static func read(_ member: (String) -> JSONNode?, id: String?, payloadLimit: Int) throws(Refusal) -> Revision {
            func refuse(_ why: String) -> Refusal { Refusal(kind: .payload, description: "a revision " + why, messageID: id) }
            guard let id else { throw Refusal(kind: .id, description: "a revision whose id is not 1 to 64 of A-Z a-z 0-9 _ -") }
            guard case .string(let from)? = member("of")?.value, TransportID.problem(from) == nil else { throw refuse("without the revised message's sender (of)") }
            guard case .number(let number, _)? = member("rev")?.value, number == number.rounded(), number >= 1, number <= Double(most) else {
                throw refuse("without its number (rev, a whole number from 1 to \(most))")
            }
            guard case .string(let key)? = member("key")?.value, LineID.isValidMessageKey(key) else {
                throw Refusal(kind: .key, description: "a revision whose key is not a message key", messageID: id)
            }
            guard let node = member("payload"), case .object = node.value else { throw refuse("without a payload object") }
            let payload = MessagePayload(json: node.jsonText)
            do throws(SendError) {
                try MessageSender.check(payload, HostConfig.Limits(payloadBytes: payloadLimit))
            } catch {
                throw Refusal(kind: error.code == .tooLarge ? .tooLarge : .payload, description: "a revision of \(id): \(error.description)", messageID: id)
            }
            guard let at = milliseconds(member("at")) else { throw refuse("without a time (at, milliseconds since 1970)") }
            return Revision(id: id, from: from, number: Int(number), key: key, payload: payload, at: at)
        }
    }
}

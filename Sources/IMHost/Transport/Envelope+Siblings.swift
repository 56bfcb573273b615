#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMKit

extension Envelope {
    /// What the devices of one user say to each other, on the user's own topics only: broadcast
    /// on `imhost/u/<user>/from/<user>` (every device of the user reads it), or to one device on
    /// `imhost/u/<user>/from/<user>/<device>` (`~` for the first device). The broker vouches
    /// that it comes from a device of the user; `by` says which (each device trusts its user's
    /// other devices as itself), and an envelope of these kinds from anyone else is refused.
    ///
    /// ```
    /// {"v":1,"kind":"copy","by":LOGIN,"peer":P,"out":true,"state":S, ...a message's members...}
    /// {"v":1,"kind":"sync","by":LOGIN,"since":{LOGIN:N,...},"limit":N,"unread":[P,...]}
    /// {"v":1,"kind":"index","by":LOGIN,"to":LOGIN,"items":[[P,ID,0|1],...],"start":N,"through":N,"last":true,"total":N,"read":{P:ID,...},
    ///  "recalled":[[P,ID,MS],...],"reacted":[[P,ID,OF,EMOJI,MS],...]}
    /// {"v":1,"kind":"want","by":LOGIN,"to":LOGIN,"items":[[P,ID,0|1],...]}
    /// {"v":1,"kind":"gone","by":LOGIN,"to":LOGIN,"missing":[[P,ID,0|1],...],"later":[...]}
    /// {"v":1,"kind":"seen","by":LOGIN,"peer":P,"upTo":ID}
    /// {"v":1,"kind":"block","by":LOGIN,"peer":P,"blocked":true|false}
    /// {"v":1,"kind":"recalled","by":LOGIN,"peer":P,"id":ID,"at":MS}
    /// {"v":1,"kind":"reacted","by":LOGIN,"peer":P,"id":ID,"of":USER,"emoji":E,"at":MS}
    /// {"v":1,"kind":"revised","by":LOGIN,"peer":P,"id":ID,"of":USER,"rev":N,"key":KEY,"payload":{...},"at":MS}
    /// ```
    ///
    /// A device that comes online (and every 30 s while it stays, once it knows another) asks
    /// the others (`sync`) for what they have since the point
    /// it knows of each (their own numbering of what they store, `through`); each answers with
    /// the ids it has (`index`, in order, a chunk at a time, each naming where it starts and
    /// ends); the device asks for those it lacks (`want`) and is sent each as a `copy`, as many as
    /// fit a few MiB at a time (`gone` names the rest to ask for again, and those it no longer has). A new device knows no point: it is sent the newest
    /// `limit` messages. A message a device sends goes as a `copy` to the others at once; a
    /// conversation read (`seen`) and a peer blocked (`block`) follow the person too. A `sync`
    /// names the conversations unread at the asking device (`unread`, an addition), and the last
    /// chunk of each answer says how far each of them is read at the answering one (`read`): a
    /// `seen` the asking device missed reaches it at its next catch-up.
    public enum Sibling: Sendable, Equatable {
        case copy(Copy)
        case sync(by: String, since: [String: Int64], limit: Int, unread: [String] = [])
        case index(Index)
        case want(by: String, to: String, items: [Item])
        case gone(by: String, to: String, missing: [Item], later: [Item])
        case seen(by: String, peer: String, upTo: String)
        case block(by: String, peer: String, blocked: Bool)
        /// The user recalled its message `id` to `peer` at `at`: every device replaces it (and
        /// keeps nothing of it).
        case recalled(by: String, peer: String, id: String, at: Int64)
        /// The user reacted to a message of its conversation with `peer` (or took it back).
        case reacted(by: String, peer: String, Reaction)
        /// The user made a new revision of a message of its conversation with `peer` (a card
        /// changed in place): every device keeps the newest.
        case revised(by: String, peer: String, Revision)

        /// The kinds, as the wire names them.
        static let kinds: Set<String> = ["copy", "sync", "index", "want", "gone", "seen", "block", "recalled", "reacted", "revised"]
        /// The most items an `index` or `want` carries.
        public static let itemsPerEnvelope = 200
        /// The most devices a `sync` names.
        static let sinceEntries = 64
        /// The most conversations a `sync`'s `unread` and an `index`'s `read` name (more are
        /// not read: a host that names more hears of the first ones).
        static let readEntries = 64

        /// One of the user's messages, named as a store knows it: the conversation's peer, the
        /// sender's id for it, and whether the user sent it (then its sender is the user).
        public struct Item: Sendable, Hashable {
            public var peer: String
            public var id: String
            public var outgoing: Bool
            public init(peer: String, id: String, outgoing: Bool) {
                self.peer = peer
                self.id = id
                self.outgoing = outgoing
            }
        }

        /// A message of the user's conversation with `peer`, as the device `by` has it.
        public struct Copy: Sendable, Equatable {
            public var by: String
            public var peer: String
            /// The user sent it (else `peer` did).
            public var outgoing: Bool
            /// Its state there: for the user's own, as ``StoredMessage/State`` names them; for
            /// the peer's, `received` or `read`.
            public var state: String
            public var message: Message
            public init(by: String, peer: String, outgoing: Bool, state: String, message: Message) {
                self.by = by
                self.peer = peer
                self.outgoing = outgoing
                self.state = state
                self.message = message
            }
        }

        /// Ids a device has, in the order it stored them, for the device `to` that asked.
        public struct Index: Sendable, Equatable {
            public var by: String, to: String
            public var items: [Item]
            /// Where it starts: the `through` of the chunk before it (or the point asked from).
            public var from: Int64
            /// Its numbering of the last message this index covers: the next `sync` asks from here.
            public var through: Int64
            /// The last chunk of the answer.
            public var last: Bool
            /// How many the whole answer names.
            public var total: Int
            /// How far the conversations the asking device said are unread are read at this
            /// one, by peer: the id of the peer's newest message read here (on the last chunk).
            public var read: [String: String]
            /// The user's messages most recently recalled at this device, by peer and id, with
            /// when (on the last chunk, an addition): a `recalled` note the asking device
            /// missed reaches it at its next catch-up, as `read` backs `seen`.
            public var recalled: [Recalled] = []
            /// The user's latest reactions at this device (taken back ones too, with an empty
            /// emoji), each with its conversation (on the last chunk, an addition): a `reacted`
            /// note the asking device missed reaches it at its next catch-up.
            public var reacted: [Reacted] = []
            public init(by: String, to: String, items: [Item], from: Int64, through: Int64, last: Bool, total: Int, read: [String: String] = [:],
                        recalled: [Recalled] = [], reacted: [Reacted] = []) {
                self.recalled = recalled
                self.reacted = reacted
                self.by = by
                self.to = to
                self.items = items
                self.from = from
                self.through = through
                self.last = last
                self.total = total
                self.read = read
            }
        }

        /// One of the user's messages recalled, in an ``Index``.
        public struct Recalled: Sendable, Equatable {
            public var peer: String, id: String, at: Int64
            public init(peer: String, id: String, at: Int64) {
                self.peer = peer
                self.id = id
                self.at = at
            }
        }

        /// One of the user's reactions, in an ``Index``: in the conversation with `peer`.
        public struct Reacted: Sendable, Equatable {
            public var peer: String
            public var reaction: Reaction
            public init(peer: String, reaction: Reaction) {
                self.peer = peer
                self.reaction = reaction
            }
        }

        /// The most recalls (and reactions) an index names: the latest.
        public static let recalledEntries = 100

        /// The device that wrote it.
        public var by: String {
            switch self {
            case .copy(let copy): copy.by
            case .sync(let by, _, _, _), .want(let by, _, _), .gone(let by, _, _, _), .seen(let by, _, _), .block(let by, _, _), .recalled(let by, _, _, _), .reacted(let by, _, _), .revised(let by, _, _): by
            case .index(let index): index.by
            }
        }

        /// The kind, as the wire names it.
        public var kind: String {
            switch self {
            case .copy: "copy"
            case .sync: "sync"
            case .index: "index"
            case .want: "want"
            case .gone: "gone"
            case .seen: "seen"
            case .block: "block"
            case .recalled: "recalled"
            case .reacted: "reacted"
            case .revised: "revised"
            }
        }

        // MARK: Writing

        var text: String {
            func quoted(_ text: String) -> String { JSONNode.quoted(text) }
            func items(_ items: [Item]) -> String {
                "[" + items.map { "[\(quoted($0.peer)),\(quoted($0.id)),\($0.outgoing ? 1 : 0)]" }.joined(separator: ",") + "]"
            }
            switch self {
            case .copy(let copy):
                // A message envelope's members, after the copy's own.
                let message = Envelope.message(copy.message).text
                return #"{"v":1,"kind":"copy","by":\#(quoted(copy.by)),"peer":\#(quoted(copy.peer)),"out":\#(copy.outgoing),"state":\#(quoted(copy.state)),"#
                    + message.dropFirst(#"{"v":1,"kind":"message","#.count)
            case .sync(let by, let since, let limit, let unread):
                let entries = since.sorted { $0.key < $1.key }.map { "\(quoted($0.key)):\($0.value)" }.joined(separator: ",")
                let peers = unread.isEmpty ? "" : #","unread":["# + unread.map(quoted).joined(separator: ",") + "]"
                return #"{"v":1,"kind":"sync","by":\#(quoted(by)),"since":{\#(entries)},"limit":\#(limit)\#(peers)}"#
            case .index(let index):
                let read = index.read.isEmpty ? ""
                    : #","read":{"# + index.read.sorted { $0.key < $1.key }.map { "\(quoted($0.key)):\(quoted($0.value))" }.joined(separator: ",") + "}"
                let recalled = index.recalled.isEmpty ? ""
                    : #","recalled":["# + index.recalled.map { "[\(quoted($0.peer)),\(quoted($0.id)),\($0.at)]" }.joined(separator: ",") + "]"
                let reacted = index.reacted.isEmpty ? ""
                    : #","reacted":["# + index.reacted.map {
                        "[\(quoted($0.peer)),\(quoted($0.reaction.id)),\(quoted($0.reaction.from)),\(quoted($0.reaction.emoji)),\($0.reaction.at)]"
                    }.joined(separator: ",") + "]"
                return #"{"v":1,"kind":"index","by":\#(quoted(index.by)),"to":\#(quoted(index.to)),"items":\#(items(index.items)),"start":\#(index.from),"through":\#(index.through),"last":\#(index.last),"total":\#(index.total)\#(read)\#(recalled)\#(reacted)}"#
            case .want(let by, let to, let wanted):
                return #"{"v":1,"kind":"want","by":\#(quoted(by)),"to":\#(quoted(to)),"items":\#(items(wanted))}"#
            case .gone(let by, let to, let missing, let later):
                return #"{"v":1,"kind":"gone","by":\#(quoted(by)),"to":\#(quoted(to)),"missing":\#(items(missing)),"later":\#(items(later))}"#
            case .seen(let by, let peer, let upTo):
                return #"{"v":1,"kind":"seen","by":\#(quoted(by)),"peer":\#(quoted(peer)),"upTo":\#(quoted(upTo))}"#
            case .block(let by, let peer, let blocked):
                return #"{"v":1,"kind":"block","by":\#(quoted(by)),"peer":\#(quoted(peer)),"blocked":\#(blocked)}"#
            case .recalled(let by, let peer, let id, let at):
                return #"{"v":1,"kind":"recalled","by":\#(quoted(by)),"peer":\#(quoted(peer)),"id":\#(quoted(id)),"at":\#(at)}"#
            case .revised(let by, let peer, let revision):
                // A revision's members, after the note's own.
                return #"{"v":1,"kind":"revised","by":\#(quoted(by)),"peer":\#(quoted(peer)),"# + revision.text.dropFirst(#"{"v":1,"kind":"revise","#.count)
            case .reacted(let by, let peer, let reaction):
                return #"{"v":1,"kind":"reacted","by":\#(quoted(by)),"peer":\#(quoted(peer)),"id":\#(quoted(reaction.id)),"of":\#(quoted(reaction.from)),"emoji":\#(quoted(reaction.emoji)),"at":\#(reaction.at)}"#
            }
        }

        // MARK: Reading

        static func read(kind: String, _ member: (String) -> JSONNode?, id: String?, payloadLimit: Int, photoLimit: Int, fileLimit: Int) throws(Refusal) -> Sibling {
            func refuse(_ why: String) -> Refusal { Refusal(kind: .payload, description: "a \(kind) from another device of this user \(why)") }
            func login(_ key: String) throws(Refusal) -> String {
                guard case .string(let text)? = member(key)?.value, DynamicSecurity.parse(login: text) != nil else {
                    throw refuse("whose \(key) is not a device's login")
                }
                return text
            }
            func peer() throws(Refusal) -> String {
                guard case .string(let text)? = member("peer")?.value, TransportID.problem(text) == nil else { throw refuse("whose peer is not a user id") }
                return text
            }
            func whole(_ key: String, from low: Double = 0) throws(Refusal) -> Int64 {
                guard case .number(let value, _)? = member(key)?.value, value == value.rounded(), value >= low, value <= 9_007_199_254_740_991 else {
                    throw refuse("whose \(key) is not a whole number")
                }
                return Int64(value)
            }
            func flag(_ key: String) throws(Refusal) -> Bool {
                guard case .bool(let value)? = member(key)?.value else { throw refuse("whose \(key) is not true or false") }
                return value
            }
            func items(_ key: String = "items") throws(Refusal) -> [Item] {
                guard case .array(let elements)? = member(key)?.value, elements.count <= itemsPerEnvelope else {
                    throw refuse("without \(key), a list of at most \(itemsPerEnvelope) items")
                }
                var items: [Item] = []
                for element in elements {
                    guard case .array(let parts) = element.value, parts.count == 3, case .string(let peer) = parts[0].value, TransportID.problem(peer) == nil,
                          case .string(let id) = parts[1].value, GlobalID.isValid(id), case .number(let out, _) = parts[2].value, out == 0 || out == 1 else {
                        throw refuse("naming an item that is not [peer, id, 0 or 1]")
                    }
                    items.append(Item(peer: peer, id: id, outgoing: out == 1))
                }
                return items
            }
            // Additions, read leniently (never refused): what is not a peer, or a peer and a
            // message id, is left out, as are entries past readEntries.
            func unread() -> [String] {
                guard case .array(let elements)? = member("unread")?.value else { return [] }
                let peers = elements.compactMap { element -> String? in
                    guard case .string(let peer) = element.value, TransportID.problem(peer) == nil else { return nil }
                    return peer
                }
                return Array(peers.prefix(readEntries))
            }
            // Read leniently: an entry that is not a peer, an id and a time is left out, as are
            // those past recalledEntries.
            func recalls() -> [Recalled] {
                guard case .array(let elements)? = member("recalled")?.value else { return [] }
                return Array(elements.compactMap { element -> Recalled? in
                    guard case .array(let parts) = element.value, parts.count == 3, case .string(let peer) = parts[0].value,
                          TransportID.problem(peer) == nil, case .string(let id) = parts[1].value, GlobalID.isValid(id),
                          case .number(let at, _) = parts[2].value, at == at.rounded(), at >= 0, at <= 9_007_199_254_740_991 else { return nil }
                    return Recalled(peer: peer, id: id, at: Int64(at))
                }.prefix(recalledEntries))
            }
            func reactions() -> [Reacted] {
                guard case .array(let elements)? = member("reacted")?.value else { return [] }
                return Array(elements.compactMap { element -> Reacted? in
                    guard case .array(let parts) = element.value, parts.count == 5, case .string(let peer) = parts[0].value,
                          TransportID.problem(peer) == nil, case .string(let id) = parts[1].value, GlobalID.isValid(id),
                          case .string(let of) = parts[2].value, TransportID.problem(of) == nil,
                          case .string(let emoji) = parts[3].value, emoji.isEmpty || Reaction.emoji.contains(emoji),
                          case .number(let at, _) = parts[4].value, at == at.rounded(), at >= 0, at <= 9_007_199_254_740_991 else { return nil }
                    return Reacted(peer: peer, reaction: Reaction(id: id, from: of, emoji: emoji, at: Int64(at)))
                }.prefix(recalledEntries))
            }
            func readPoints() -> [String: String] {
                guard case .object(let entries)? = member("read")?.value else { return [:] }
                var points: [String: String] = [:]
                for entry in entries where points.count < readEntries && TransportID.problem(entry.key) == nil && points[entry.key] == nil {
                    if case .string(let id) = entry.value.value, GlobalID.isValid(id) { points[entry.key] = id }
                }
                return points
            }
            let by = try login("by")
            switch kind {
            case "copy":
                let outgoing = try flag("out")
                guard case .string(let state)? = member("state")?.value,
                      (outgoing ? ["queued", "sent", "delivered", "read", "failed", "given-up"] : ["received", "read"]).contains(state) else {
                    throw refuse("whose state is not one its message can be in")
                }
                let message = try Envelope.message(member, id: id, payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit, copy: true)
                return .copy(Copy(by: by, peer: try peer(), outgoing: outgoing, state: state, message: message))
            case "sync":
                guard case .object(let entries)? = member("since")?.value, entries.count <= sinceEntries else {
                    throw refuse("without since, an object of at most \(sinceEntries) devices")
                }
                var since: [String: Int64] = [:]
                for entry in entries {
                    guard DynamicSecurity.parse(login: entry.key) != nil, case .number(let value, _) = entry.value.value, value == value.rounded(), value >= 0,
                          value <= 9_007_199_254_740_991 else { throw refuse("whose since is not device logins and whole numbers") }
                    since[entry.key] = Int64(value)
                }
                return .sync(by: by, since: since, limit: Int(min(try whole("limit"), 1_000_000)), unread: unread())
            case "index":
                return .index(Index(by: by, to: try login("to"), items: try items(), from: try whole("start"), through: try whole("through"), last: try flag("last"),
                                    total: Int(min(try whole("total"), 1_000_000_000)), read: readPoints(), recalled: recalls(),
                                    reacted: reactions()))
            case "want":
                return .want(by: by, to: try login("to"), items: try items())
            case "gone":
                return .gone(by: by, to: try login("to"), missing: try items("missing"), later: try items("later"))
            case "seen":
                guard case .string(let upTo)? = member("upTo")?.value, GlobalID.isValid(upTo) else { throw refuse("whose upTo is not a message id") }
                return .seen(by: by, peer: try peer(), upTo: upTo)
            case "recalled":
                guard let id else { throw refuse("whose id is not a message id") }
                return .recalled(by: by, peer: try peer(), id: id, at: try whole("at"))
            case "reacted":
                guard let id, case .string(let of)? = member("of")?.value, TransportID.problem(of) == nil,
                      case .string(let emoji)? = member("emoji")?.value, emoji.isEmpty || Reaction.emoji.contains(emoji) else {
                    throw refuse("that is not a reaction to a message")
                }
                return .reacted(by: by, peer: try peer(), Reaction(id: id, from: of, emoji: emoji, at: try whole("at")))
            case "revised":
                return .revised(by: by, peer: try peer(), try Revision.read(member, id: id, payloadLimit: payloadLimit))
            default:
                return .block(by: by, peer: try peer(), blocked: try flag("blocked"))
            }
        }
    }
}

/// The user's other devices, one of the ``Courier``'s parts (``Envelope/Sibling``). Each device
/// gets every message to its user from the broker (a session each); what this part adds is what
/// the broker cannot:
/// - what this device sends shows on the others: a `copy` goes to them as it is published;
/// - a device that was away past the broker's queue, or through a broker restart, catches up:
///   at each connect it asks the others (`sync`) for what they stored since the point it knows
///   of each, compares their ids with its own (`index`), asks for those it lacks (`want`), and
///   stores the copies it is sent, a chunk at a time, moving its point on as each chunk is
///   complete (an interrupted catch-up goes on from there at the next connect). A new device
///   knows no point: it is sent the newest ``historyLimit`` messages (at most
///   ``historyPhotoBytes`` of photos), and says how far it got;
/// - a conversation read on one device is read on all (`seen`), and a peer blocked on one is
///   blocked on all (`block`), from notes the store keeps until they are said. A `seen` that
///   names a message this device does not have yet is kept until it comes; one this device
///   missed (its device did not know this one yet, or the broker lost it) comes with the next
///   catch-up: a `sync` names the conversations unread here, and the answer says how far each
///   is read there.
final class Siblings {
    /// The most messages a new device is given, and the most bytes of photos among them.
    static let historyLimit = 10_000
    static let historyPhotoBytes = 200 << 20
    /// How long a catch-up waits for the copies it asked for before it leaves the rest to the
    /// next connect, in milliseconds.
    static let stallMilliseconds: Int64 = 15_000
    /// The most bytes of payloads and photos one answer to a `want` carries: well within what
    /// the broker keeps for one client (`max_queued_bytes`, 32 MiB); the rest is asked again.
    static let answerBytes = 8 << 20
    /// The most other devices a `sync` names.
    static let syncPoints = 64
    /// How often a device that knows others asks them again while it stays connected, in
    /// milliseconds: a message one of them stored that never reached this one (the broker lost
    /// this device's session in a restart while its sender's resends went to the other) comes
    /// within this long, not only at the next connect. An ask that finds nothing new costs a small
    /// publish and an empty answer.
    static let resyncMilliseconds: Int64 = 30_000

    private let store: MessageStore
    private let connection: BrokerConnection
    private let ledger: CourierLedger
    /// This device's login and name (`nil`: the user's first device), and the user's topics.
    private let login: String, device: String?, user: String
    private let everyDevice: String
    /// Whether the `sync` of this connection was sent, and when to ask again.
    private var asked = false
    private var askAgainAt: Int64 = 0
    /// The user's other devices this one has heard from (then its sends are copied to them):
    /// read from the store once, so what a sibling says costs no look-up to know it.
    private var known: Set<String>
    private var knowsSiblings: Bool { !known.isEmpty }
    /// What this device is catching up from each other device, by its login.
    private var catching: [String: Catching] = [:]
    /// What came in this service, applied at its end, in the order it came, after the
    /// messages and copies that came with it are stored.
    private var copies: [Envelope.Sibling.Copy] = []
    private var notes: [Envelope.Sibling] = []
    /// Whether the store may keep a `seen` whose message has not come (then each service looks
    /// whether it came): known at the first look.
    private var keepsSeen = true

    private struct Catching {
        /// Where the next index chunk must start (`nil`: the first of a new device's answer).
        var expect: Int64?
        /// Index chunks not yet compared.
        var chunks: [Envelope.Sibling.Index] = []
        /// The chunk being filled: what was asked for and not yet stored, and its point.
        var wanted: Set<Envelope.Sibling.Item> = []
        var through: Int64 = 0
        var last = false
        /// For saying how far it got.
        var total = 0, stored = 0
        var lastProgress: Int64 = 0
        var said = false
    }

    init(store: MessageStore, connection: BrokerConnection, ledger: CourierLedger) {
        self.store = store
        self.connection = connection
        self.ledger = ledger
        login = connection.login
        user = connection.user
        device = DynamicSecurity.parse(login: login)?.device
        everyDevice = Topic.inbox(to: connection.user, from: connection.user).name
        known = Set(((try? store.siblings()) ?? [:]).keys)
    }

    /// Where only the device `login` of `user` reads (``Topic/device(user:device:)``).
    static func topic(of login: String, user: String) -> String {
        Topic.device(user: user, device: DynamicSecurity.parse(login: login)?.device).name
    }

    /// The connection went or was made anew: the next one asks again; a catch-up under way goes
    /// on from its last complete chunk.
    func reset() {
        asked = false
        catching = [:]
        copies = []
        notes = []
    }

    // MARK: What this device says

    /// Once the connection is confirmed, asks the others for what it lacks (a first device that
    /// knows no other asks nothing: a new device makes itself known); says what the store noted
    /// for them; deals with a catch-up that stalled.
    func service(now: Int64) {
        guard connection.isOnline, connection.inboxConfirmed else { return }
        if !asked || (knowsSiblings && now >= askAgainAt && catching.isEmpty) {
            asked = true
            askAgainAt = now + Self.resyncMilliseconds
            if device != nil || knowsSiblings {
                let since = (try? store.siblingPoints(limit: Self.syncPoints)) ?? [:]
                let unread = (try? store.unreadPeers(limit: Envelope.Sibling.readEntries)) ?? []
                publish(.sync(by: login, since: since, limit: Self.historyLimit, unread: unread), to: everyDevice)
            }
        }
        tellNotes()
        for (sibling, state) in catching where now - state.lastProgress > Self.stallMilliseconds {
            catching[sibling] = nil
            // Asked again at the next service: an answer cut short (its device went away, or
            // the broker dropped part of it) is not waited for until the next connect.
            asked = false
            // The second stall on one chunk moves past it: what it could not give is not asked again.
            let movedOn = (try? store.siblingStalled(sibling, at: state.through)) ?? false
            ledger.say(.history(from: sibling, stored: state.stored, of: state.total, stalled: true))
            if movedOn { ledger.say(.history(from: sibling, stored: state.stored, of: state.total, stalled: false)) }
        }
    }

    /// A message this device sends, as it is first handed to the broker: copied to the others.
    func copyOut(_ send: QueuedSend, _ message: Envelope.Message) {
        guard knowsSiblings else { return }
        publish(.copy(Envelope.Sibling.Copy(by: login, peer: send.peer, outgoing: true, state: "sent", message: message)), to: everyDevice)
    }

    /// Says the notes the store holds for the other devices (a note needs no answer, so not the
    /// inbox confirmed either): the last thing a device does before it leaves.
    func tellBeforeLeaving() {
        guard connection.isOnline else { return }
        tellNotes()
    }

    private func tellNotes() {
        // Notes are kept only once another device is known (a single device reads nothing here).
        guard knowsSiblings, let notes = try? store.siblingNotes(by: login, limit: 100), !notes.isEmpty else { return }
        var told: Int64?
        for (row, note) in notes {
            guard publish(note, to: everyDevice) else { break }
            told = row
        }
        if let told { try? store.dropSiblingNotes(through: told) }
    }

    @discardableResult
    private func publish(_ sibling: Envelope.Sibling, to topic: String) -> Bool {
        connection.publish(topic: topic, payload: Envelope.sibling(sibling).bytes, as: .answer)
    }

    // MARK: What the others say

    /// Takes what another device of the user said (the broker vouches it is the user's; what
    /// this device wrote itself, back through the broadcast, is not news).
    func take(_ sibling: Envelope.Sibling, now: Int64) {
        let by = sibling.by
        guard by != login, DynamicSecurity.parse(login: by)?.user == user else { return }
        if !known.contains(by) {
            try? store.sawSibling(by, now: now)
            known.insert(by)
            ledger.say(.siblingKnown(by))
        }
        switch sibling {
        case .copy(let copy):
            copies.append(copy)
        case .seen, .block, .recalled, .reacted, .revised:
            notes.append(sibling)
        case .sync(_, let since, let limit, let unread):
            answer(by, since: since[login], limit: min(limit, Self.historyLimit), unread: unread)
        case .index(let index) where index.to == login:
            // How far the conversations unread here are read there, whatever becomes of the chunk.
            notes += index.read.map { .seen(by: by, peer: $0.key, upTo: $0.value) }
            // And the recalls there, as their notes would have said (one already applied changes nothing).
            notes += index.recalled.map { .recalled(by: by, peer: $0.peer, id: $0.id, at: $0.at) }
            notes += index.reacted.map { .reacted(by: by, peer: $0.peer, $0.reaction) }
            let point = (try? store.siblings()[by]) ?? nil
            var state = catching[by] ?? Catching(expect: point)
            // A chunk that starts at the point this device has (the last complete chunk's end)
            // begins an answer afresh (another sync's, or one left in the session from an
            // earlier connection, some of it perhaps dropped): what was under way gives way to
            // it. Any other chunk must start where the last one taken ended.
            if let point, index.from == point, index.from != state.expect {
                state = Catching(expect: point)
            } else if let expect = state.expect, index.from != expect {
                return
            }
            state.expect = index.through
            state.chunks.append(index)
            state.total = index.total
            state.lastProgress = now
            catching[by] = state
            next(from: by)
        case .want(_, let to, let items) where to == login:
            guard let answer = try? store.copies(of: items, by: login, device: device, byteBudget: Self.answerBytes) else { return }
            let topic = Self.topic(of: by, user: user)
            for copy in answer.copies { publish(.copy(copy), to: topic) }
            if !answer.missing.isEmpty || !answer.later.isEmpty {
                publish(.gone(by: login, to: by, missing: answer.missing, later: answer.later), to: topic)
            }
        case .gone(_, let to, let missing, let later) where to == login:
            guard var state = catching[by] else { return }
            // What it no longer has is not waited for; what did not fit is asked for again.
            for item in missing { state.wanted.remove(item) }
            state.lastProgress = now
            catching[by] = state
            let again = later.filter { state.wanted.contains($0) }
            if !again.isEmpty { publish(.want(by: login, to: by, items: again), to: Self.topic(of: by, user: user)) }
            if state.wanted.isEmpty { chunkDone(by) }
        case .index, .want, .gone:
            break
        }
    }

    /// Stores the copies that came in this service, in one transaction, moves each catch-up
    /// on, and applies what was read or blocked on another device.
    func flush(now: Int64) {
        if !copies.isEmpty {
            let taken = copies
            copies = []
            if let changed = try? store.storeCopies(taken, device: device) {
                if !changed.isEmpty { ledger.record(.changed(peers: changed)) }
                for copy in taken {
                    let item = Envelope.Sibling.Item(peer: copy.peer, id: copy.message.id, outgoing: copy.outgoing)
                    guard var state = catching[copy.by], state.wanted.remove(item) != nil else { continue }
                    state.stored += 1
                    state.lastProgress = now
                    catching[copy.by] = state
                }
                for sibling in Set(taken.map(\.by)) where catching[sibling]?.wanted.isEmpty == true { chunkDone(sibling) }
            }
        }
        let taken = notes
        notes = []
        for note in taken {
            switch note {
            case .seen(_, let peer, let upTo):
                switch try? store.siblingSaw(peer, upTo: upTo) {
                case .read?: ledger.record(.changed(peers: [peer]))
                case .kept?: keepsSeen = true
                case .unchanged?, nil: break
                }
            case .block(_, let peer, let blocked):
                try? store.setBlocked(peer, blocked, noteSiblings: false)
                ledger.record(.changed(peers: [peer]))
            case .recalled(_, let peer, let id, let at):
                // Only of a message this device holds: one it lacks comes as a recalled copy (a
                // recall taken first would keep its id as cleared, as a peer's early one does,
                // and the copy would then be dropped).
                guard (try? store.holds(sender: user, id: id)) == true else { continue }
                if (try? store.applyRecall(from: user, peer: peer, ids: [id], at: at)) == true { ledger.record(.changed(peers: [peer])) }
            case .reacted(_, let peer, let reaction):
                if (try? store.applyReaction(reaction, by: user, peer: peer)) == true { ledger.record(.changed(peers: [peer])) }
            case .revised(_, let peer, let revision):
                if (try? store.applyRevision(revision, by: user, peer: peer)) == true { ledger.record(.changed(peers: [peer])) }
            default:
                break
            }
        }
        // What was kept for a message that came now (with this service's arrivals or copies).
        if keepsSeen, let kept = try? store.siblingSawKept() {
            keepsSeen = kept.stillKept
            if !kept.changed.isEmpty { ledger.record(.changed(peers: Set(kept.changed))) }
        }
    }

    /// Whether copies came in this service and wait to be stored.
    var holdsCopies: Bool { !copies.isEmpty }

    /// Answers device `by`'s `sync`: the ids this device stored after `through`, a chunk an
    /// envelope (or an empty last one: nothing new), the last saying how far the conversations
    /// `unread` there are read here.
    private func answer(_ by: String, since through: Int64?, limit: Int, unread: [String]) {
        guard let items = try? store.siblingIndex(after: through, limit: limit, photoBytes: Self.historyPhotoBytes) else { return }
        let read = unread.isEmpty ? [:] : (try? store.readPoints(of: unread)) ?? [:]
        let recalled = (try? store.recentRecalls(limit: Envelope.Sibling.recalledEntries)) ?? []
        let reacted = (try? store.recentReactions(limit: Envelope.Sibling.recalledEntries)) ?? []
        let topic = Self.topic(of: by, user: user)
        var from = through ?? 0
        guard !items.isEmpty else {
            publish(.index(.init(by: login, to: by, items: [], from: from, through: from, last: true, total: 0, read: read, recalled: recalled,
                                 reacted: reacted)),
                    to: topic)
            return
        }
        let size = Envelope.Sibling.itemsPerEnvelope
        for start in stride(from: 0, to: items.count, by: size) {
            let chunk = items[start..<min(start + size, items.count)]
            let end = chunk.last!.row, last = start + size >= items.count
            publish(.index(.init(by: login, to: by, items: chunk.map(\.item), from: from, through: end, last: last, total: items.count,
                                 read: last ? read : [:], recalled: last ? recalled : [], reacted: last ? reacted : [])), to: topic)
            from = end
        }
    }

    /// Compares the index chunks from `sibling` with what this device has, one after another,
    /// and asks for what it lacks; chunks with nothing lacking move the point on at once.
    private func next(from sibling: String) {
        while var state = catching[sibling], state.wanted.isEmpty {
            guard !state.chunks.isEmpty else {
                if state.last {
                    if state.said { ledger.say(.history(from: sibling, stored: state.stored, of: state.total, stalled: false)) }
                    catching[sibling] = nil
                }
                return
            }
            let chunk = state.chunks.removeFirst()
            state.through = chunk.through
            state.last = chunk.last
            let lacking = (try? store.lacking(chunk.items)) ?? []
            state.wanted = Set(lacking)
            if lacking.isEmpty {
                try? store.setSiblingThrough(sibling, chunk.through)
            } else {
                if !state.said {
                    state.said = true
                    ledger.say(.history(from: sibling, stored: state.stored, of: state.total, stalled: false))
                }
                publish(.want(by: login, to: sibling, items: lacking), to: Self.topic(of: sibling, user: user))
            }
            catching[sibling] = state
        }
    }

    /// The chunk being filled from `sibling` is complete: the point moves on, and the next
    /// chunk is compared.
    private func chunkDone(_ sibling: String) {
        guard let state = catching[sibling] else { return }
        try? store.setSiblingThrough(sibling, state.through)
        next(from: sibling)
    }
}

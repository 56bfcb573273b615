/// What arrives in the user's inbox, `imhost/u/<user>/from/<sender>`, one of the ``Courier``'s
/// parts. Everything read is input: the sender is the topic's (the broker's ACL vouches for it),
/// each envelope is read with limits (``Envelope/read(_:payloadLimit:sender:)``), and what does
/// not pass is refused: counted, said in one line (ten a minute, then one line sums up the
/// rest), and answered `refused` with its code when its id could be read. Messages are stored
/// once each (by sender and id) in one transaction a batch, within each peer's daily budget, and
/// answered `delivered`; receipts, confirmations, probes and presence records go to the part
/// they are for.
final class Inbox {
    typealias Arrival = (sender: String, message: Envelope.Message)

    /// What an envelope in the inbox is for.
    enum Inbound {
        /// A message, to store.
        case message(Arrival)
        /// A receipt for the user's messages to `from`.
        case receipt(Envelope.Receipt, from: String)
        /// `from` has the user's read receipts for these ids.
        case confirm([String], from: String)
        /// The user's own probe came back.
        case probe(String)
        /// A presence record of the user's.
        case presence(String)
        /// Another device of the user said something (``Siblings``).
        case sibling(Envelope.Sibling)
        /// `from` recalled these messages of theirs.
        case recall([String], at: Int64, from: String)
        /// `from` reacted to a message of the conversation.
        case react(Envelope.Reaction, from: String)
        /// `from` made a new revision of a message of the conversation.
        case revise(Envelope.Revision, from: String)
        /// `from` is typing.
        case typing(from: String)
        /// `from` is online, or left.
        case online(Bool, from: String)
    }

    private let store: MessageStore
    private let connection: BrokerConnection
    private let ledger: CourierLedger
    private let payloadLimit: Int
    /// The most bytes of photos one message may carry (`limits.photoBytes`).
    private let photoLimit: Int
    /// The most bytes of a file one message may carry (`limits.fileBytes`).
    private let fileLimit: Int
    /// What one peer's messages may add to the store in a day.
    private let budget: MessageStore.PeerBudget
    private var refusals = RefusalLimit()
    /// Messages that arrived before this connection knew it holds the session: stored once it
    /// does, dropped (unanswered, so sent again) when another host holds it.
    private var held: [Arrival] = []

    init(store: MessageStore, connection: BrokerConnection, ledger: CourierLedger, payloadLimit: Int, photoLimit: Int, fileLimit: Int, budget: MessageStore.PeerBudget) {
        self.photoLimit = photoLimit
        self.fileLimit = fileLimit
        self.store = store
        self.connection = connection
        self.ledger = ledger
        self.payloadLimit = payloadLimit
        self.budget = budget
    }

    private var user: String { connection.user }

    /// Whether `topic` is where a host of `user` keeps its presence record: the user's own topic
    /// (its first device's) or one below it (another device's).
    private static func holdsPresence(_ topic: String, of user: String) -> Bool {
        switch Topic(topic) {
        case .inbox(let to, let from)?: to == user && from == user
        case .device(let owner, _)?: owner == user
        case .fleetConfig?, .fleetStatus?, .report?, nil: false
        }
    }

    /// The connection went or was made anew: what was held is dropped (its senders send it again).
    func reset() { held = [] }

    // MARK: Reading

    /// Reads a message the connection handed over. `nil`: refused, or nothing to do.
    func read(topic: String, payload: [UInt8], retained: Bool, now: Int64) -> Inbound? {
        // A host of this user leaving clears its presence record (an empty retained publish):
        // the broker sends that to whoever reads the topic, this host's other devices as it
        // goes, and a kept session the host left before it read it at its next connect. It is
        // no envelope, and nobody else may write there.
        if payload.isEmpty, Self.holdsPresence(topic, of: user) { return nil }
        // A retained message in an inbox would come again at every connect: nobody sends one but
        // a host of this user, its presence record; others are refused, once each time they come.
        // (A device's own record, below the inbox, comes live too, when a host of the same login
        // takes its session.)
        if retained || topic != Topic.inbox(to: user, from: user).name, topic == connection.presenceTopic,
           case .presence(let id, _)? = try? Envelope.read(payload, payloadLimit: payloadLimit, sender: user) {
            return .presence(id)
        }
        // Another device's presence record (the first device's, on the user's own topic), which
        // an MQTT 3.1.1 inbox subscription brings too (it cannot ask for no retained messages).
        if retained, topic == Topic.inbox(to: user, from: user).name { return nil }
        // MQTT 3.1.1 cannot ask for no retained messages: one planted in the inbox comes again at
        // every connect (it was stored the once it came live). Counted, not said each time.
        if retained, connection.version == .v311 {
            ledger.counters.refused["retained", default: 0] += 1
            return nil
        }
        guard !retained else {
            refuse("retained", .retainedRefused(topic: topic), now: now)
            return nil
        }
        // The sender is the topic's, which the broker's ACL vouches for; nothing else says who.
        // This device's own topic below the user's (``Siblings/topic(of:user:)``): only the
        // user's devices write there.
        let sender: String? = switch Topic(topic) {
        case .inbox(let to, let from)? where to == user: from
        case .device? where topic == connection.deviceTopic: user
        default: nil
        }
        guard let sender, sender == user || TransportID.problem(sender) == nil else {
            refuse("topic", .foreignTopic(topic), now: now)
            return nil
        }
        let envelope: Envelope
        do throws(Envelope.Refusal) {
            envelope = try Envelope.read(payload, payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit, sender: sender)
        } catch {
            refuse(error, from: sender, now: now)
            return nil
        }
        switch envelope {
        case .probe(let id): return sender == user ? .probe(id) : nil
        // Another device's record (the first device's, on the user's own topic) is not this one's.
        case .presence(let id, _): return sender == user && topic == connection.presenceTopic ? .presence(id) : nil
        case .message(let message): return .message((sender, message))
        case .receipt(let receipt): return .receipt(receipt, from: sender)
        case .confirm(let ids): return .confirm(ids, from: sender)
        // The user's own recalls reach its other devices as `recalled` notes, never this way.
        case .recall(let ids, let at): return sender == user ? nil : .recall(ids, at: at, from: sender)
        case .react(let reaction): return sender == user ? nil : .react(reaction, from: sender)
        case .revise(let revision): return sender == user ? nil : .revise(revision, from: sender)
        case .typing: return sender == user ? nil : .typing(from: sender)
        case .online(let online): return sender == user ? nil : .online(online, from: sender)
        case .status:
            refuse(Envelope.Refusal(kind: .kind, description: "a status, which belongs on a status topic, not in an inbox"), from: sender, now: now)
            return nil
        case .sibling(let sibling):
            guard sender == user else {
                refuse(Envelope.Refusal(kind: .sender, description: "a \(sibling.kind), which only the user's own devices say to each other,"), from: sender, now: now)
                return nil
            }
            return .sibling(sibling)
        }
    }

    /// Refuses an envelope: counted, said, and answered `refused` when its id could be read.
    private func refuse(_ refusal: Envelope.Refusal, from sender: String, now: Int64) {
        // Nothing is answered to the user's own devices (a refused copy would only come back).
        guard refuse(refusal.kind.rawValue, .refused(refusal, from: sender), now: now), let id = refusal.messageID, sender != user else { return }
        answer(sender, .refused, ids: [id], code: refusal.code, reason: refusal.description)
    }

    /// Counts a refusal under `counter` and says it, unless ten were said this minute (a flood of
    /// junk must not bury the chat; `sync --json` counts them all). Returns whether it was said.
    @discardableResult
    private func refuse(_ counter: String, _ notice: ConnectionNotice, now: Int64) -> Bool {
        ledger.counters.refused[counter, default: 0] += 1
        if refusals.isOver(at: now) { sumRefusals(now: now) }
        guard refusals.admits(at: now) else { return false }
        ledger.say(notice)
        return true
    }

    /// At the end of a minute in which refusals went unsaid: one line says how many.
    func sumRefusalsIfDue(now: Int64) {
        if refusals.unsaid > 0, refusals.isOver(at: now) { sumRefusals(now: now) }
    }

    private func sumRefusals(now: Int64) {
        let unsaid = refusals.endMinute(at: now)
        if unsaid > 0 { ledger.say(.refusalsSummed(unsaid)) }
    }

    // MARK: Storing

    /// Takes the messages of one service: stored (with what was held) when this host holds the
    /// session, held until it knows otherwise.
    func take(_ arrivals: [Arrival], now: Int64) {
        guard connection.holdsSession else {
            held += arrivals
            return
        }
        let all = held + arrivals
        held = []
        if !all.isEmpty { store(all, now: now) }
    }

    /// Stores what arrived in one transaction, and answers each sender `delivered` (or
    /// `refused`, for a blocked sender or one past its budget).
    private func store(_ arrivals: [Arrival], now: Int64) {
        let incoming = arrivals.map { arrival in
            IncomingMessage(from: arrival.sender, globalID: arrival.message.id, seq: arrival.message.seq, key: arrival.message.key,
                            payload: arrival.message.payload, sentAt: arrival.message.sentAt, jump: arrival.message.jump, arrived: true,
                            photos: arrival.message.photos, voice: arrival.message.voice, file: arrival.message.file, device: arrival.message.device,
                            reply: MessageStore.reply(arrival.message.reply, between: arrival.sender, and: user))
        }
        let results: [MessageStore.Arrival]
        do throws(StoreError) {
            results = try store.storeIncoming(incoming, budget: budget)
        } catch {
            // Not stored, so not answered: the sender sends them again.
            ledger.say(.notStored(count: arrivals.count, error))
            return
        }
        var delivered: [String: [String]] = [:], blocked: [String: [String]] = [:], overBudget: [String: [String]] = [:]
        var stored: [String: [StoredMessage]] = [:]
        for (arrival, result) in zip(arrivals, results) {
            switch result {
            case .stored(let message):
                ledger.counters.received += 1
                delivered[arrival.sender, default: []].append(arrival.message.id)
                stored[arrival.sender, default: []].append(message)
            case .duplicate:
                ledger.counters.duplicates += 1
                delivered[arrival.sender, default: []].append(arrival.message.id)
            case .overBudget:
                ledger.counters.overBudget += 1
                overBudget[arrival.sender, default: []].append(arrival.message.id)
            case .blocked:
                ledger.counters.blocked += 1
                blocked[arrival.sender, default: []].append(arrival.message.id)
            }
        }
        for (sender, ids) in delivered { answer(sender, .delivered, ids: ids) }
        for (sender, ids) in blocked { answer(sender, .refused, ids: ids, code: .blocked, reason: "the receiver blocked you") }
        for (sender, ids) in overBudget {
            answer(sender, .refused, ids: ids, code: .budget,
                   reason: "past \(user)'s budget of \(budget.messages) messages or \(budget.bytes) bytes a day from one person")
            if store.firstTime("budget said: \(sender) \(MessageStore.PeerBudget.day(of: now))") { ledger.say(.overBudget(peer: sender, budget: budget)) }
        }
        for (peer, messages) in stored {
            // A new conversation opens on the page its first message was sent from.
            if let jump = messages.compactMap(\.jump).first { try? store.remember(jump, for: peer, unlessKnown: true) }
            ledger.record(.arrived(peer: peer, messages))
        }
    }

    /// Applies `peer`'s recall of its messages `ids` and answers it `recalled` (also for those
    /// never stored here: they never will be). Not stored (the store failed), not answered: the
    /// peer sends it again.
    func recall(_ ids: [String], at time: Int64, from peer: String) {
        // Not this host's session (yet): left unanswered, so the peer sends it again to the one
        // that holds it.
        guard connection.holdsSession else { return }
        do throws(StoreError) {
            // A blocked peer's are answered (or it would send them forever), and change nothing.
            if try store.blocked(peer) {
                answer(peer, .recalled, ids: ids)
                return
            }
            if try store.applyRecall(from: peer, peer: peer, ids: ids, at: time) { ledger.record(.changed(peers: [peer])) }
        } catch {
            ledger.say(.notStored(count: ids.count, error))
            return
        }
        answer(peer, .recalled, ids: ids)
    }

    /// Keeps `peer`'s reaction and answers it `reacted` (also one about a message not stored
    /// here yet: it shows once the message comes). One about a message of neither of them is
    /// answered too, and kept nowhere: sent again, it would change nothing.
    func react(_ reaction: Envelope.Reaction, from peer: String) {
        guard connection.holdsSession else { return }
        do throws(StoreError) {
            if try store.applyReaction(reaction, by: peer, peer: peer) { ledger.record(.changed(peers: [peer])) }
        } catch {
            ledger.say(.notStored(count: 1, error))
            return
        }
        answer(peer, .reacted, ids: [reaction.id], at: reaction.at)
    }

    /// Keeps `peer`'s revision of a message of their conversation when it is newer than the one
    /// here, and answers it `revised` either way (one about a message not stored here, or of
    /// another key, is kept nowhere: sent again, it would change nothing).
    func revise(_ revision: Envelope.Revision, from peer: String) {
        guard connection.holdsSession else { return }
        do throws(StoreError) {
            if try store.applyRevision(revision, by: peer, peer: peer) { ledger.record(.changed(peers: [peer])) }
        } catch {
            ledger.say(.notStored(count: 1, error))
            return
        }
        answer(peer, .revised, ids: [revision.id], at: revision.at)
    }

    /// Publishes a receipt to `peer`, at most ``Envelope/receiptIDs`` ids each.
    private func answer(_ peer: String, _ state: Envelope.Receipt.State, ids: [String], code: Envelope.RefusalCode? = nil, reason: String? = nil,
                        at: Int64? = nil) {
        for chunk in Envelope.inReceipts(ids) {
            // A delivered receipt says which lines this host draws, so the sender's page knows.
            let receipt = Envelope.receipt(Envelope.Receipt(state: state, ids: Array(chunk), code: code, reason: reason, at: at,
                                                            draws: state == .delivered ? connection.draws : nil))
            connection.publish(topic: Topic.inbox(to: peer, from: user).name, payload: receipt.bytes, as: .answer)
        }
    }
}

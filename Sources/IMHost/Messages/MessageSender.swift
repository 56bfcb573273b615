@_spi(Host) import IMKit

/// The one way a message is sent, whoever sends it: a page (its input bar, a line's component,
/// `/send`), a line's ``Transport`` from a service, or a scenario. It checks the key and the
/// payload, then stores the message and queues it for delivery in one durable transaction; the
/// connection takes it from the queue. Made at sign-in for the signed-in user.
///
/// `/recv` and scenarios' `receive` store a message from a peer through ``receive(key:payload:from:)``:
/// kept whatever its key, checked only against the limits.
final class MessageSender {
    let userID: String
    private let store: MessageStore
    /// Told of every message queued, so the connection can take it at once.
    var onQueued: (StoredMessage) -> Void = { _ in }
    /// Called when a revision was queued for the peer: the connection should take it.
    var onRevised: () -> Void = {}
    /// The limits in force (host.json's, updated on reload).
    var limits: HostConfig.Limits
    /// The typed line (``MessageStore/Draft``) the next message sent comes from: it is forgotten
    /// in the transaction that queues the message.
    var draft: Int64?
    /// The message the next message sent replies to: the send that queues one takes it.
    var reply: ReplyTo?
    private let lineGuard: LineGuard
    /// The builder for a key, opening its line first if need be.
    private let lookup: (String) -> RegisteredBuilder?
    /// Why messages of a key cannot show now (turned off, quarantined, line unavailable).
    private let degrade: (String) -> Degrade?
    private let clock: () -> Int64

    init(userID: String, store: MessageStore, limits: HostConfig.Limits, lineGuard: LineGuard,
         lookup: @escaping (String) -> RegisteredBuilder?, degrade: @escaping (String) -> Degrade?, clock: @escaping () -> Int64) {
        self.userID = userID
        self.store = store
        self.limits = limits
        self.lineGuard = lineGuard
        self.lookup = lookup
        self.degrade = degrade
        self.clock = clock
    }

    /// Sends a message from the signed-in user to `peer`, in their conversation: the key's
    /// builder must exist, be allowed (from the legacy page: built-in keys only) and draw the
    /// message as the receiver's would (decode the payload, make its model and view): what the
    /// sender's own line cannot draw is not sent. Then it is stored and handed to the connection.
    /// `jump` is the page it was sent from, when a page sent it.
    /// `photos` (checked already: ``AttachedPhoto/reading(_:limit:)``) travel with it; together
    /// they may have `limits.photoBytes`, and a message at most ``Envelope/photosPerMessage``.
    func send(key: String, payload: MessagePayload, to peer: String, fromLegacyPage legacy: Bool = false,
              jump: JumpPage? = nil, photos: [AttachedPhoto] = [], voice: AttachedVoice? = nil,
              file: AttachedFile? = nil) throws(SendError) -> StoredMessage {
        if voice != nil, key != "voice" || !photos.isEmpty {
            throw SendError(.undecodable, "a recording goes with the built-in voice message only, without photos")
        }
        if file != nil, key != "file" || !photos.isEmpty || voice != nil {
            throw SendError(.undecodable, "a file goes with the built-in file message only, alone")
        }
        if let file, file.bytes.count > limits.fileBytes {
            throw SendError(.tooLarge, "the file is \(file.bytes.count) bytes; the limit is \(limits.fileBytes) (limits.fileBytes in host.json)")
        }
        let photoBytes = photos.reduce(0) { $0 + $1.bytes.count }
        guard photos.count <= Envelope.photosPerMessage else {
            throw SendError(.tooLarge, "a message carries at most \(Envelope.photosPerMessage) photos; this one has \(photos.count)")
        }
        let pixels = photos.reduce(0) { $0 + ($1.slot.photo.map { $0.width * $0.height } ?? 0) }
        guard pixels <= Photo.messagePixelLimit else {
            throw SendError(.tooLarge, "its photos together have \(pixels) pixels; a message's photos have at most \(Photo.messagePixelLimit / 1_000_000) million")
        }
        guard photoBytes <= limits.photoBytes else {
            throw SendError(.tooLarge, "its photos are \(photoBytes) bytes together; the limit is \(limits.photoBytes) (limits.photoBytes in host.json)")
        }
        if legacy, let line = LineID.owner(ofMessageKey: key) {
            throw SendError(.unavailable, "the legacy page sends built-in messages only; '\(key)' belongs to line '\(line)'")
        }
        if let why = degrade(key) {
            throw SendError(.unavailable, "message key '\(key)' cannot be sent now: \(why)")
        }
        guard let registered = lookup(key) else {
            if let why = degrade(key) { throw SendError(.unavailable, "message key '\(key)' cannot be sent now: \(why)") }
            throw SendError(.unknownKey, "no builder is registered for message key '\(key)'; check the key, or load the line that owns it")
        }
        if legacy, let line = registered.line {
            throw SendError(.unavailable, "the legacy page sends built-in messages only; '\(key)' belongs to line '\(line)'")
        }
        try drawsAsReceived(payload, of: key, by: registered, what: "this \(key)", refused: "it is not sent")
        try Self.check(payload, limits)
        if store.isReadOnly {
            throw SendError(.notStored, "cannot send: " + (store.readOnlyReason ?? "the store is read-only"))
        }
        let message: StoredMessage
        do throws(StoreError) {
            message = try store.storeOutgoing(to: peer, key: key, payload: payload, at: clock(), jump: jump, draft: draft, photos: photos,
                                              voice: voice, file: file, reply: reply)
            draft = nil
            reply = nil
        } catch {
            // Its draft is gone (another chat of the user sent it): nothing of it to forget.
            if error.code == .taken { draft = nil }
            throw SendError(.notStored, "the message could not be stored: \(error)")
        }
        onQueued(message)
        return message
    }

    /// Makes `payload` the next revision of `message` (of `key`, its own) in the conversation
    /// with `peer`: the key must be one this host can send now, and its builder must draw the
    /// payload as the receiver's would, as for a message sent. Then it is stored and queued for
    /// the peer's host and the user's other devices, and the connection is woken.
    func revise(_ message: MessageEnvelope, key: String, payload: MessagePayload, peer: String) throws(SendError) -> Envelope.Revision {
        guard let id = message.globalID else { throw SendError(.notRevisable, "this message has no id to revise it by") }
        if let why = degrade(key) { throw SendError(.unavailable, "message key '\(key)' cannot be sent now: \(why)") }
        guard let registered = lookup(key) else {
            throw SendError(.unknownKey, "no builder is registered for message key '\(key)'; check the key, or load the line that owns it")
        }
        try drawsAsReceived(payload, of: key, by: registered, what: "this revision of \(key)", refused: "it is not made")
        try Self.check(payload, limits)
        let outcome: MessageStore.ReviseOutcome
        do throws(StoreError) {
            outcome = try store.revise(peer, sender: message.from, id: id, key: key, payload: payload, at: clock())
        } catch {
            throw SendError(.notStored, "the revision could not be stored: \(error)")
        }
        switch outcome {
        case .revised(let revision):
            onRevised()
            return revision
        case .noMessage: throw SendError(.notRevisable, "the message is no longer in this chat")
        case .recalled: throw SendError(.notRevisable, "the message was recalled")
        case .notSent: throw SendError(.notRevisable, "the message has not reached \(peer)'s host yet; revise it once it is delivered")
        case .otherKey: throw SendError(.notRevisable, "a revision keeps the message's key")
        case .builtIn: throw SendError(.notRevisable, "'\(key)' is a built-in message: only a line's cards change in place")
        case .tooMany: throw SendError(.notRevisable, "the message has as many revisions as a message may have (\(Envelope.Revision.most))")
        }
    }

    /// Stores a message from `peer`, as if it had arrived, and sends nothing. It is kept whatever
    /// its key: a message this host cannot show is shown as a placeholder, never dropped.
    func receive(key: String, payload: MessagePayload, from peer: String, photos: [AttachedPhoto] = []) throws(SendError) -> StoredMessage {
        try Self.check(payload, limits)
        do throws(StoreError) {
            return try store.storeLocal(from: peer, key: key, payload: payload, at: clock(), photos: photos)
        } catch {
            throw SendError(.notStored, "\(error)")
        }
    }

    /// Refuses a payload larger than `limits.payloadBytes`, or nested deeper than
    /// ``HostConfig/Limits/nestingDepth``: in one pass over its bytes, before anything decodes it.
    static func check(_ payload: MessagePayload, _ limits: HostConfig.Limits) throws(SendError) {
        let size = payload.json.utf8.count
        guard size <= limits.payloadBytes else {
            throw SendError(.tooLarge, "the payload is \(size) bytes; the limit is \(limits.payloadBytes) (limits.payloadBytes in host.json)")
        }
        var depth = 0, inString = false, escaped = false
        for byte in payload.json.utf8 {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                guard depth <= HostConfig.Limits.nestingDepth else {
                    throw SendError(.tooLarge, "the payload nests deeper than \(HostConfig.Limits.nestingDepth) levels")
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
    }

    private enum Drawing {
        case drawn
        case undecodable(String)
        case failed(String)
    }

    /// Refuses `payload` (`what` it is, and what becomes of it when refused) unless `registered`
    /// draws it as the receiver's builder would: what the sender's own line cannot draw does not go.
    private func drawsAsReceived(_ payload: MessagePayload, of key: String, by registered: RegisteredBuilder, what: String,
                                 refused: String) throws(SendError) {
        switch lineGuard.run(.builder, registered.mark, key: key, { Self.draw(registered.builder, payload) }) {
        case .drawn: return
        case .undecodable(let why): throw SendError(.undecodable, "'\(key)' payload does not decode: \(why)")
        case .failed(let why):
            throw SendError(.undecodable, "your own \(registered.line.map { "'\($0)' line" } ?? "host") cannot draw \(what) (its builder failed: \(why)), so \(refused)")
        }
    }

    /// Draws `payload` as a page would (its content, model and view), to say whether it can be.
    private static func draw<Builder: MessageBuilder>(_ builder: Builder, _ payload: MessagePayload) -> Drawing {
        let content: Builder.Content
        do {
            content = try builder.content(from: payload)
        } catch {
            return .undecodable(PayloadDiagnosis.describe(error, payload: payload, as: Builder.Content.self))
        }
        do {
            let model = try builder.model(for: content, layout: MessageLayout(width: ChatPage.bodyWidth(forPage: ChatPage.defaultWidth)))
            // A card with a button no one could press shows as a placeholder at the receiver too.
            if let card = builder.view(for: model).card, let problem = card.ruleErrors().first {
                return .failed(problem.description)
            }
            return .drawn
        } catch {
            return .failed("\(error)")
        }
    }
}

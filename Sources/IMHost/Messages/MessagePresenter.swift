import IMKit

/// Turns stored messages into what a page shows: through the builder registered for the key, or
/// as a placeholder when the message cannot be shown there. Never throws and never changes the
/// stored message, so a message that degrades today renders again once the cause is gone.
package struct MessagePresenter {
    /// What a placeholder says first, on every page.
    package static let placeholderText = "Unsupported message type"

    /// The builder registered for a key (opening its line first, if need be).
    var lookup: (String) -> RegisteredBuilder?
    /// Why a key cannot show now, if it cannot.
    var degrade: (String) -> Degrade?
    /// Why one message from another host (its sender and global id) cannot show: quarantined.
    var degradeMessage: (_ sender: String, _ globalID: String, _ key: String) -> Degrade? = { _, _, _ in nil }
    var legacy: Bool
    var lineGuard: LineGuard
    /// The largest payload drawn, in bytes; a larger stored one is a placeholder that says so.
    var payloadLimit: Int = HostConfig.Limits().payloadBytes
    /// What a page's builders made already, reused when the same builder meets the same message
    /// at the same width again (a page drawn anew after one message changed); `nil`: build each.
    var cache: PresentationCache?

    init(lookup: @escaping (String) -> RegisteredBuilder?, degrade: @escaping (String) -> Degrade?, legacy: Bool,
         lineGuard: LineGuard) {
        self.lookup = lookup
        self.degrade = degrade
        self.legacy = legacy
        self.lineGuard = lineGuard
    }

    /// A presenter over a registry, for tools and benchmarks: `killedKeys` degrade, and with a
    /// `breadcrumb` file every builder call is recorded in it as a chat's would be.
    package init(registry: MessageRegistry, killedKeys: Set<String>, legacy: Bool, breadcrumb: String?) {
        lookup = { registry.builder(for: $0) }
        degrade = { killedKeys.contains($0) ? .killedKey("killSwitch.messages in host.json") : nil }
        self.legacy = legacy
        lineGuard = LineGuard(breadcrumb: breadcrumb.flatMap { try? Breadcrumb(path: $0) })
    }

    /// `origin` says, for a message from another host, who sent it and its global id: a crash
    /// drawing it is recorded against that message alone.
    /// `outOfTime` (the page's drawing budget, in seconds, when it is spent) turns a line's
    /// builder away: the message is a placeholder that says so, and no line code runs for it.
    package func present(_ message: MessageEnvelope, outgoing: Bool, width: Int, origin: Breadcrumb.MessageOrigin? = nil,
                         outOfTime: Double? = nil) -> PresentedMessage {
        func degraded(_ why: Degrade) -> PresentedMessage {
            PresentedMessage(shown: ShownMessage(envelope: message, model: nil, isOutgoing: outgoing), view: nil, degrade: why)
        }
        if message.key == MessageEnvelope.unreadableKey {
            return degraded(.unreadable("the log line is not a message record (damaged, or written by something else); it is kept as it is"))
        }
        let size = message.payload.json.utf8.count
        if size > payloadLimit { return degraded(.tooLarge(size: size, limit: payloadLimit)) }
        if let origin, let sender = origin.sender, let id = origin.globalID, let why = degradeMessage(sender, id, message.key) { return degraded(why) }
        if let why = degrade(message.key) { return degraded(why) }
        // The legacy page shows built-ins only: a line's key degrades before its line is touched.
        if legacy && LineID.owner(ofMessageKey: message.key) != nil { return degraded(.legacyPage) }
        guard let entry = lookup(message.key) else {
            // Opening the line may just have failed: then say why.
            return degraded(degrade(message.key) ?? .unknownKey)
        }
        if legacy && entry.line != nil { return degraded(.legacyPage) }
        // Every gate above is asked each time (a key turned off since shows as such); what the
        // builder made of these very bytes at this width is not made again.
        let key = cache.map { _ in PresentationCache.Key(message, outgoing: outgoing, width: width, line: entry.line, version: entry.version) }
        if let key, let made = cache?.made(key) {
            return PresentedMessage(shown: ShownMessage(envelope: message, model: made.model, isOutgoing: outgoing), view: made.view, degrade: nil,
                                    made: made)
        }
        // The host's own builders are not slow; a line's wait for the next draw.
        if let outOfTime, entry.line != nil { return degraded(.drawingTooSlow(seconds: outOfTime)) }
        do {
            let (model, view) = try lineGuard.run(.builder, entry.mark, key: message.key, message: origin?.crumb ?? message.id) {
                try render(entry.builder, message.payload, width: width)
            }
            let made = key.flatMap { cache?.keep($0, model: model, view: view) }
            return PresentedMessage(shown: ShownMessage(envelope: message, model: model, isOutgoing: outgoing), view: view, degrade: nil,
                                    made: made)
        } catch let failure as Failure {
            return degraded(failure.degrade)
        } catch {
            return degraded(.builderFailed("\(error)"))
        }
    }

    /// Every reason a message shows as a placeholder, the deepest first: what no page could
    /// fix (the stored data, a key no line serves, the operator's or the host's switches, holds
    /// on the message) before what this page adds (the legacy page), then what its builder said.
    /// Empty when it shows normally.
    package func causes(of message: MessageEnvelope, outgoing: Bool, width: Int, origin: Breadcrumb.MessageOrigin? = nil) -> [Degrade] {
        guard let first = present(message, outgoing: outgoing, width: width, origin: origin).degrade else { return [] }
        switch first {
        case .unreadable, .tooLarge, .drawingTooSlow: return [first]
        default: break
        }
        var found: [Degrade] = []
        let lineKey = LineID.owner(ofMessageKey: message.key) != nil
        if let why = degrade(message.key) {
            found.append(why)
        } else if lineKey, let entry = lookup(message.key) {
            // The legacy page never runs the builder, so whether the payload decodes is asked
            // here: a card that would not show on its line's page either says so, first.
            if legacy, let why = decodes(entry, message, origin: origin) { found.append(why) }
        } else if lineKey {
            found.append(degrade(message.key) ?? .unknownKey)
        }
        if let origin, let sender = origin.sender, let id = origin.globalID, let why = degradeMessage(sender, id, message.key) { found.append(why) }
        if legacy, lineKey { found.append(.legacyPage) }
        return found.isEmpty ? [first] : found
    }

    private struct Failure: Error { var degrade: Degrade }

    /// Why `message`'s payload does not decode with `entry`'s builder (its first step only, in
    /// the builder's breadcrumb frame); `nil` when it does.
    private func decodes(_ entry: RegisteredBuilder, _ message: MessageEnvelope, origin: Breadcrumb.MessageOrigin?) -> Degrade? {
        func check<Builder: MessageBuilder>(_ builder: Builder) -> Degrade? {
            do {
                _ = try builder.content(from: message.payload)
                return nil
            } catch {
                return .undecodable(PayloadDiagnosis.describe(error, payload: message.payload, as: Builder.Content.self))
            }
        }
        return lineGuard.run(.builder, entry.mark, key: message.key, message: origin?.crumb ?? message.id) { check(entry.builder) }
    }

    /// Runs the builder's three steps, telling a payload that does not decode from a builder that fails.
    private func render<Builder: MessageBuilder>(_ builder: Builder, _ payload: MessagePayload, width: Int) throws -> (MessageModel, MessageView) {
        let content: Builder.Content
        do {
            content = try builder.content(from: payload)
        } catch {
            throw Failure(degrade: .undecodable(PayloadDiagnosis.describe(error, payload: payload, as: Builder.Content.self)))
        }
        do {
            let model = try builder.model(for: content, layout: MessageLayout(width: width))
            let view = builder.view(for: model)
            if let card = view.card, let problem = card.ruleErrors().first { throw problem }
            return (model, view)
        } catch {
            throw Failure(degrade: .builderFailed("\(error)"))
        }
    }

}

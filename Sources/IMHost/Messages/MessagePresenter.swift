import IMKit

/// Turns stored messages into what a page shows: through the builder registered for the key, or
/// as a placeholder when the message cannot be shown there. Never throws and never changes the
/// stored message, so a message that degrades today renders again once the cause is gone.
struct MessagePresenter {
    /// Why a message shows as a placeholder.
    enum Degrade: Equatable, CustomStringConvertible {
        case unknownKey
        case killed
        case legacyPage
        case undecodable(String)
        case builderFailed(String)

        var description: String {
            switch self {
            case .unknownKey: "no builder is registered for this key"
            case .killed: "the key is in killSwitch.messages"
            case .legacyPage: "the legacy page shows built-in messages only"
            case .undecodable(let why): "the payload does not decode: \(why)"
            case .builderFailed(let why): "the builder failed: \(why)"
            }
        }
    }

    /// A message ready to draw: its model and view, or why it degraded.
    struct Presented {
        var shown: ShownMessage
        var view: MessageView?
        var degrade: Degrade?
        /// Sent while offline and not delivered yet.
        var pending = false
    }

    static let placeholderText = "Unsupported message type"

    /// The builder registered for a key (loading its line first, if need be).
    var lookup: (String) -> MessageRegistry.Entry?
    var killedKeys: Set<String>
    var legacy: Bool

    func present(_ message: MessageEnvelope, outgoing: Bool, width: Int) -> Presented {
        func degraded(_ why: Degrade) -> Presented {
            Presented(shown: ShownMessage(envelope: message, model: nil, isOutgoing: outgoing), view: nil, degrade: why)
        }
        if killedKeys.contains(message.key) { return degraded(.killed) }
        // The legacy page shows built-ins only: a line's key degrades before its line is touched.
        if legacy && LineID.owner(ofMessageKey: message.key) != nil { return degraded(.legacyPage) }
        guard let entry = lookup(message.key) else { return degraded(.unknownKey) }
        if legacy && entry.line != nil { return degraded(.legacyPage) }
        do {
            let (model, view) = try render(entry.builder, message.payload, width: width)
            return Presented(shown: ShownMessage(envelope: message, model: model, isOutgoing: outgoing), view: view, degrade: nil)
        } catch let failure as Failure {
            return degraded(failure.degrade)
        } catch {
            return degraded(.builderFailed("\(error)"))
        }
    }

    private struct Failure: Error { var degrade: Degrade }

    /// Runs the builder's three steps, telling a payload that does not decode from a builder that fails.
    private func render<Builder: MessageBuilder>(_ builder: Builder, _ payload: MessagePayload, width: Int) throws -> (MessageModel, MessageView) {
        let content: Builder.Content
        do {
            content = try builder.content(from: payload)
        } catch {
            throw Failure(degrade: .undecodable(Self.describe(error)))
        }
        do {
            let model = try builder.model(for: content, layout: MessageLayout(width: width))
            return (model, builder.view(for: model))
        } catch {
            throw Failure(degrade: .builderFailed("\(error)"))
        }
    }

    /// Decoding errors, said briefly.
    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong type at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\""
        case DecodingError.dataCorrupted(let context): context.debugDescription
        default: "\(error)"
        }
    }
}

/// Turns one kind of message into something a chat page can show: payload → content → model →
/// view. Register one builder per message key through ``LineRegistrar/registerBuilder(_:)``.
///
/// The host calls a builder for every message with its key, in any page that shows the message,
/// including other lines' pages (messages roam). The host never draws bubbles or senders around
/// your view: it wraps the same view in a sent cell or a received cell. When the user taps the
/// message, the page's ``CarrierPage/didTap(_:)`` is asked first; if it returns
/// ``TapResult/ignored``, the builder's ``didTap(_:message:context:)`` is. A builder may show a
/// card (``MessageCard``, since IMKit 1.3) instead of lines; its buttons reach
/// ``didTapButton(_:content:message:context:)``.
///
/// Any step may throw. The host then shows the message as a placeholder with a short reason
/// ("does not decode", "builder failed") and keeps the stored message unchanged, so it renders
/// again once the cause is fixed; the chat's `/why N` shows the whole reason.
///
/// A builder is a `Sendable` value and keeps no per-message state: the host may call it for
/// many messages, on the chat's thread today and possibly on other threads later.
///
/// Stored messages outlive the builder version that wrote them. When you add a field to
/// `Content`, make it optional or give it a default, so messages stored in the older shape keep
/// decoding.
///
/// ```swift
/// struct GreetingBuilder: MessageBuilder {
///     struct Content: Codable, Sendable { var text: String }
///     let key = "demo.greeting"
///     func model(for content: Content, layout: MessageLayout) throws -> MessageModel {
///         MessageModel(content: content, lines: layout.wrap("👋 " + content.text))
///     }
/// }
/// ```
public protocol MessageBuilder: Sendable {
    /// The decoded payload, for example a listing with its title and price.
    associatedtype Content: Sendable

    /// The message key this builder handles: `<lineid>.<name>` for a line.
    var key: String { get }

    /// Decodes a stored or received payload. Has a default for `Decodable` content.
    func content(from payload: MessagePayload) throws -> Content

    /// Encodes content for sending. Has a default for `Encodable` content.
    func payload(for content: Content) throws -> MessagePayload

    /// Lays the content out for the width the page gives the message body. The model's lines
    /// fix its size; they must fit `layout.width` columns (the host cuts longer lines).
    func model(for content: Content, layout: MessageLayout) throws -> MessageModel

    /// The view shown for a model. The default shows the model's lines as they are.
    func view(for model: MessageModel) -> MessageView

    /// Called when the user taps a message of this key on any page whose own
    /// ``CarrierPage/didTap(_:)`` ignored it. `message` is the message as shown; `context` is
    /// the page's (which may be another line's page). Default: ``TapResult/ignored``.
    func didTap(_ content: Content, message: ShownMessage, context: ChatContext) -> TapResult

    /// Called when the user presses a button of this key's card (``MessageCard/buttons``) on
    /// any page the card is shown: a click in the browser, `/tap N ID` in the terminal. `button`
    /// is the pressed button's ``CardButton/id``: the host calls this only with an id of a
    /// button the card shows now, and refuses any other itself. `content` is the message's
    /// decoded content, `message` the message as shown, `context` the page's (which may be
    /// another line's page). Return what pressing it did; the chat shows it as it shows a tap's.
    /// The page is not asked first, as it is for a tap: a card's buttons are its builder's.
    /// Default: ``TapResult/ignored``. Since IMKit 1.3.
    func didTapButton(_ button: String, content: Content, message: ShownMessage, context: ChatContext) -> TapResult

    /// How a reply quotes a message of this key: a short line the host shows above the reply
    /// (it keeps the first 100 characters, on one line). Return `nil` to let the host choose:
    /// the card's title for a card, the first line of a message shown as lines. `message` is
    /// the quoted message as shown. Called inside the line's frame, as every builder step is.
    /// Default: `nil`. Since IMKit 1.4.
    func quote(_ content: Content, message: ShownMessage) -> String?

    /// Called when the user presses a button of this key's card that ``CardButton/submits``,
    /// with the values of the card's ``MessageCard/inputs``, already checked by the host against
    /// each input's rules (a value that breaks one is said next to its input, and this is not
    /// called). `button` is the pressed button's id; the rest as for
    /// ``didTapButton(_:content:message:context:)``. To change the card where it stands (the
    /// answer, "Viewing booked for Sat 10:00"), call ``ChatContext/revise(_:to:with:)``; the
    /// people see a new revision of the same message. Default: ``TapResult/ignored``. Since IMKit 1.4.
    func didSubmit(_ button: String, values: CardValues, content: Content, message: ShownMessage, context: ChatContext) -> TapResult

    /// Examples of this key's content, each with a name: what the workbench (`imhost preview`)
    /// and `imhost plugins --samples` draw and check, with no chat and no peer. Give one for each way the
    /// card looks (available, reserved, let; with and without a photo). Default: none. Since IMKit 1.4.
    var samples: [MessageSample<Content>] { get }
}

/// A named example of a builder's content (``MessageBuilder/samples``). Since IMKit 1.4.
public struct MessageSample<Content: Sendable>: Sendable {
    /// What the example shows, e.g. `"reserved, no photo"`: 1 to 60 characters.
    public var name: String
    /// The content, as the builder's ``MessageBuilder/payload(for:)`` encodes it for the host.
    public var content: Content

    /// Creates a sample.
    public init(_ name: String, _ content: Content) {
        self.name = name
        self.content = content
    }
}

extension MessageBuilder where Content: Decodable {
    /// Decodes the payload's JSON as `Content`.
    public func content(from payload: MessagePayload) throws -> Content {
        try payload.decode(Content.self)
    }
}

extension MessageBuilder where Content: Encodable {
    /// Encodes `Content` as JSON with sorted keys.
    public func payload(for content: Content) throws -> MessagePayload {
        try MessagePayload(encoding: content)
    }
}

extension MessageBuilder {
    /// Shows the model's lines as they are, or its card.
    public func view(for model: MessageModel) -> MessageView {
        if let card = model.card { return MessageView(card: card, lines: model.lines) }
        return MessageView(lines: model.lines)
    }

    /// Does nothing: the tap is ignored.
    public func didTap(_ content: Content, message: ShownMessage, context: ChatContext) -> TapResult {
        .ignored
    }

    /// Does nothing: the button is ignored.
    public func didTapButton(_ button: String, content: Content, message: ShownMessage, context: ChatContext) -> TapResult {
        .ignored
    }

    /// Lets the host quote the message: the card's title, or the first line.
    public func quote(_ content: Content, message: ShownMessage) -> String? {
        nil
    }

    /// Does nothing: the submission is ignored.
    public func didSubmit(_ button: String, values: CardValues, content: Content, message: ShownMessage, context: ChatContext) -> TapResult {
        .ignored
    }

    /// None.
    public var samples: [MessageSample<Content>] { [] }

    /// Runs the three steps for one payload, as a page would, and returns the view: handy in a
    /// line's own tests.
    public func render(_ payload: MessagePayload, layout: MessageLayout) throws -> MessageView {
        view(for: try model(for: try content(from: payload), layout: layout))
    }
}

import IMHost
import IMHostRuntime
import IMKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A chat page as `imhost open --json` prints it: what a script or a test would check.
struct PageJSON: Encodable {
    struct Message: Encodable {
        var number: Int
        var id: String
        var from: String
        var key: String
        var outgoing: Bool
        /// Where it stands: queued, sent, delivered, read, failed (the user's own); received or
        /// read (the peer's).
        var state: String
        /// Why it failed, for one that failed (or the state this imhost does not know): its code
        /// and data (``MessageFailure``: `{"code":"refused-by-peer","peer":"bob","refusal":"budget"}`).
        var failure: MessageFailure?
        /// The id its sender gave it.
        var globalID: String?
        /// The builder's lines, or its card as the terminal draws it; absent for a placeholder.
        var lines: [String]?
        /// A text message's text (a photo's caption) whole, as its sender wrote it; absent for
        /// any other.
        var text: String?
        /// The card, for a message its builder shows as one (IMKit 1.3).
        var card: PageView.Card?
        /// Why the message shows as a placeholder, in full: every cause, the deepest first;
        /// absent when it shows normally.
        var why: String?
        /// The short reason the placeholder shows.
        var short: String?
        /// For a message that arrived late, the number of the shown message it was sent before
        /// (it shows where it arrived); absent for every other message.
        var sentBefore: Int?
        /// How many of the builder's lines are folded (past the page's limit for one message,
        /// 40); absent when every line is in `lines`.
        var folded: Int?
        /// The photos it carries, in order; absent when it carries none.
        var photos: [PhotoJSON]?
        /// A voice message's recording: its container, its length decoded and its bytes, or why
        /// it is not played; absent for any other message.
        var voice: VoiceJSON?
        /// A file message's file: its name, type (as its bytes say) and size, or why it is not
        /// offered; absent for any other message.
        var file: FileJSON?
        /// For the user's own message of a line's key: how the peer drew it, as its read receipt
        /// said; absent until one says.
        var drawn: PeerDrawn?
        /// For a reply: the message it quotes; absent for any other.
        var reply: Quote?
        /// Its reactions: each emoji with who gave it (user ids), in the order first given;
        /// absent when it has none.
        var reactions: [PageView.Reaction]?
        /// `true` for a message its sender recalled (nothing of what it said is kept); absent otherwise.
        var recalled: Bool?
        /// For a card changed in place (IMKit 1.4): the revision it shows (`number`, from 1),
        /// who made it (`by`, a user id) and when (`at`, ms since 1970); absent otherwise.
        var revised: StoredMessage.Revised? = nil
    }

    /// What a reply quotes: the quoted message's sender, its number here (absent when this
    /// store does not hold it), what it is (`text`, `photo`, `voice`, `location`, `image`,
    /// `recalled`, `placeholder`, `missing`) and its words (a text's first words, a card's
    /// title, a caption, a place's name), or its length for a voice message.
    struct Quote: Encodable {
        var from: String
        var number: Int?
        var kind: String
        var text: String?
        var seconds: Int?

        init(_ quote: PageView.Quote) {
            from = quote.from
            number = quote.number
            switch quote.excerpt {
            case .text(let words): (kind, text) = ("text", words)
            case .photo(let caption): (kind, text) = ("photo", caption)
            case .voice(let length): (kind, seconds) = ("voice", length)
            case .location(let name): (kind, text) = ("location", name)
            case .file(let name): (kind, text) = ("file", name)
            case .image: kind = "image"
            case .recalled: kind = "recalled"
            case .placeholder: kind = "placeholder"
            case .missing: kind = "missing"
            }
        }
    }

    /// A message's photo: its kind (`png`, `jpeg`, `webp`), size in pixels and bytes, or why it
    /// is not shown (`refused`).
    struct PhotoJSON: Encodable {
        var kind: String?
        var width: Int?
        var height: Int?
        var bytes: Int?
        var refused: String?

        init(_ slot: PhotoSlot) {
            switch slot {
            case .photo(let photo): (kind, width, height, bytes) = (photo.kind.rawValue, photo.width, photo.height, photo.size)
            case .refused(let why): refused = why
            }
        }
    }

    /// A voice message's recording: its container (`webm`, `ogg`), its length in milliseconds as
    /// decoded, its size in bytes; or why it is not played (`refused`).
    struct VoiceJSON: Encodable {
        var kind: String?
        var milliseconds: Int?
        var bytes: Int?
        var refused: String?

        init(_ slot: VoiceSlot) {
            switch slot {
            case .voice(let voice): (kind, milliseconds, bytes) = (voice.kind.rawValue, voice.milliseconds, voice.size)
            case .refused(let why): refused = why
            }
        }
    }

    /// A file message's file: its safe name, its type as its bytes say, its size in bytes; or
    /// why it is not offered (`refused`).
    struct FileJSON: Encodable {
        var name: String?
        var type: String?
        var bytes: Int?
        var refused: String?

        init(_ slot: FileSlot) {
            switch slot {
            case .file(let file): (name, type, bytes) = (file.name, file.type, file.size)
            case .refused(let why): refused = why
            }
        }
    }

    /// How a peer drew one of the user's messages: by `line` at `version`, or as a
    /// `placeholder` (a word) with a `reason`; `said` is what the page says of it.
    struct PeerDrawn: Encodable {
        var line: String?
        var version: String?
        var placeholder: String?
        var reason: String?
        var said: String

        init(_ drawn: Drawn, peer: String) {
            switch drawn {
            case .line(let line, let version): (self.line, self.version) = (line, version)
            case .placeholder(let word, let reason): (placeholder, self.reason) = (word, reason)
            }
            said = TerminalText.safe(drawn.said(at: peer))
        }
    }

    var url: String
    var line: String?
    var legacy: Bool
    var title: String
    /// Each component's lines, in the platform's order.
    var components: [[String]]
    var total: Int
    var messages: [Message]
    /// Why the converter chose this page (`routed`, `killed`, `fleet-killed`, ...), who turned
    /// the line off when someone did, and the fleet version the host applies.
    var reason: String
    var source: String?
    var fleetVersion: Int64?
    /// When the peer's host will show this page's line's messages as a placeholder (its receipts
    /// said it has no such line): `{"code":"no-line","peer":"bob","line":"rent","keys":["rent.offer"],"said":…}`;
    /// absent when it draws them, or nothing is known of it.
    var peerPlaceholder: PeerPlaceholder?

    /// ``PageView/PeerPlaceholder`` with what the terminal says of it.
    struct PeerPlaceholder: Encodable {
        var code: String
        var peer: String
        var line: String
        var keys: [String]
        var said: String

        init(_ warning: PageView.PeerPlaceholder) {
            (code, peer, line, keys) = (warning.code.rawValue, warning.peer, warning.line, warning.keys)
            said = TerminalText.safe(PageRenderer.peerPlaceholderText(warning))
        }
    }

    /// Every reason the placeholder #`number` names, the deepest first (as `/why` says them).
    private static func why(_ page: ChatPage, _ number: Int, first: Degrade) -> String {
        guard let causes = try? page.causes(number), !causes.isEmpty else { return first.description }
        return causes.map(\.description).joined(separator: "; and ")
    }

    init(_ page: ChatPage, view: PageView, fleetVersion: Int64?) {
        url = page.decision.url
        reason = page.decision.reason.rawValue
        source = page.decision.reason.source
        self.fleetVersion = fleetVersion
        line = view.lineID
        legacy = view.isLegacy
        title = view.title
        components = view.components.map { PageRenderer.lines(of: $0, width: view.width - 1) }
        peerPlaceholder = view.peerPlaceholder.map(PeerPlaceholder.init)
        total = view.total
        messages = view.messages.map { message in
            let envelope = message.envelope
            var lines = PageRenderer.body(of: message, width: ChatPage.bodyWidth(forPage: view.width))
            var folded = message.folded
            var text: String?
            if case .text(let whole) = message.body {
                text = whole
                // The text travels whole; its lines are folded as the terminal folds them.
                if let all = lines {
                    let cut = PageView.fold(all)
                    lines = cut.lines
                    if cut.folded > 0 { folded = cut.folded }
                }
            }
            return Message(number: message.number, id: envelope.id, from: envelope.from, key: envelope.key,
                           outgoing: message.isOutgoing, state: message.state.rawValue, failure: message.failure,
                           globalID: envelope.globalID,
                           lines: lines, text: text, card: message.body.card,
                           // The page value carries its placeholders' causes (a message the drawing budget
                           // turned away: that one, without running its builder again).
                           why: message.body.degrade.map { first in
                               message.causes.isEmpty ? Self.why(page, message.number, first: first)
                                   : message.causes.map(\.description).joined(separator: "; and ")
                           },
                           short: message.body.degrade?.short, sentBefore: message.sentBefore, folded: folded,
                           photos: message.photos.isEmpty ? nil : message.photos.map(PhotoJSON.init),
                           voice: message.voice.map(VoiceJSON.init), file: message.file.map(FileJSON.init),
                           drawn: message.isOutgoing ? message.peerDrawn.map { PeerDrawn($0, peer: envelope.to) } : nil,
                           reply: message.reply.map(Quote.init), reactions: message.reactions.isEmpty ? nil : message.reactions,
                           recalled: message.body == .recalled ? true : nil, revised: message.revised)
        }
    }
}

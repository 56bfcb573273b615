import IMHost
import IMHostRuntime
@_spi(Host) import IMKit

/// Draws a chat page as text, deterministically for a width: the title, the components in the
/// platform's order, then the messages. Received messages sit on the left under their sender,
/// sent ones on the right; the host draws every bubble, builders only their content. Widths are
/// terminal columns, so Chinese text (two columns a character) lines up.
public struct PageRenderer {
    /// The width used when none is given.
    public static let defaultWidth = ChatPage.defaultWidth

    /// The page width in terminal columns.
    public let width: Int
    let colors: Bool

    /// Horizontal rules and runs of spaces of every length up to the width, made once.
    private let rules: [String]
    private let spaces: [String]

    /// A renderer for pages `width` columns wide, with ANSI colour or without.
    public init(width: Int, colors: Bool) {
        self.width = max(24, width)
        self.colors = colors
        rules = (0...self.width + 2).map { String(repeating: "─", count: $0) }
        spaces = (0...self.width).map { String(repeating: " ", count: $0) }
    }

    private func style(_ code: String, _ text: String) -> String {
        colors ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// Draws a page as its hooks and builders made it.
    public func render(_ page: PageView) -> String {
        var lines: [String] = []
        let rule = String(repeating: "═", count: width)
        // The tag takes at most half the width: a long line id is cut, so the title still shows.
        let name = page.isLegacy ? "legacy" : TextWidth.truncate(page.lineID ?? "base", to: max(1, width / 2 - 7))
        let tag = "[\(name) page]"
        let title = TextWidth.truncate(TerminalText.safe(page.title), to: width - TextWidth.columns(tag) - 3)
        lines.append(rule)
        lines.append(style("1", " " + TextWidth.pad(title, to: width - TextWidth.columns(tag) - 2) + tag + " "))
        lines.append(rule)
        // What the peer will see of this page's cards goes just above where they are sent from.
        let warning = page.peerPlaceholder.map { warning in
            TextWidth.wrap(TerminalText.safe(Self.peerPlaceholderText(warning)), width: width - 3).enumerated().map { ($0.offset == 0 ? " ! " : "   ") + $0.element }
        } ?? []
        for component in page.components {
            if component.kind == .inputBar { lines += warning }
            lines += Self.lines(of: component, width: width - 1).map { " " + TextWidth.truncate(TerminalText.safe($0), to: width - 1) }
        }
        if page.component(.inputBar) == nil { lines += warning }
        lines.append(String(repeating: "─", count: width))
        let older = page.total - page.messages.count
        if older > 0 {
            lines.append(style("2", " ↑ \(older) older message\(older == 1 ? "" : "s")"))
        }
        if page.messages.isEmpty {
            lines.append(style("2", " No messages yet."))
        }
        for message in page.messages {
            lines += cell(message)
        }
        return lines.map { $0.trailingSpacesRemoved }.joined(separator: "\n") + "\n"
    }

    /// Draws one message of a page as its cell: the meta line and the bubble (the workbench's
    /// terminal drawing of a sample).
    public func render(message: PageView.Message) -> String {
        cell(message).map { $0.trailingSpacesRemoved }.joined(separator: "\n") + "\n"
    }

    /// Draws a chat page at this renderer's width.
    public func render(_ page: ChatPage) throws -> String {
        render(try page.view(width: width))
    }

    /// A component's text at `width` columns, from what it shows.
    static func lines(of component: PageView.Component, width: Int) -> [String] {
        switch component {
        case .topPost(let post):
            guard let post else { return [] }
            return [post.title, post.detail].filter { !$0.isEmpty }.map { TextWidth.truncate($0, to: width) }
        case .quickReplies(let phrases, let available):
            let label = available ? "Quick replies: " : "Quick replies (unavailable, no input bar): "
            return TextWidth.wrap(label + phrases.enumerated().map { "[\($0.offset + 1)] \($0.element)" }.joined(separator: "  "), width: width)
        // Numbered as /bar N and /menu N choose them: an item not shown keeps its number.
        case .bottomBar(let items):
            return TextWidth.wrap(items.filter(\.isShown).map(item).joined(separator: "  "), width: width)
        case .menu(let items):
            return TextWidth.wrap("Menu ☰ " + items.filter(\.isShown).map(item).joined(separator: " · "), width: width)
        case .inputBar:
            return ["> " + TextWidth.pad("type a message", to: max(0, width - 2))]
        }
    }

    /// What the terminal says before a card is sent when the peer's host will show it as a
    /// placeholder: "bob's host has no rent line: bob will see a placeholder for rent.offer".
    /// Unescaped: the caller escapes it.
    public static func peerPlaceholderText(_ warning: PageView.PeerPlaceholder) -> String {
        let keys = warning.keys.count > 3 ? warning.keys.prefix(3).joined(separator: ", ") + " and \(warning.keys.count - 3) more" : warning.keys.joined(separator: ", ")
        switch warning.code {
        case .noLine: return "\(warning.peer)'s host has no \(warning.line) line: \(warning.peer) will see a placeholder for \(keys)"
        }
    }

    /// A bar or menu item as the terminal draws it: `[N] Name`, and for a line's item that
    /// answered ignored, that it does nothing.
    private static func item(_ item: PageView.Item) -> String {
        "[\(item.number)] \(item.name)" + (item.ignored ? " (does nothing here)" : "")
    }

    /// A message cell: a meta line and a bubble, on the left for received, the right for sent.
    private func cell(_ message: PageView.Message) -> [String] {
        let view = Self.body(of: message, width: ChatPage.bodyWidth(forPage: width)).map { MessageView(lines: $0) }
        return cell(number: message.number, envelope: message.envelope, view: view, outgoing: message.isOutgoing,
                    state: message.isOutgoing ? message.state : nil, degrade: message.body.degrade, sentBefore: message.sentBefore,
                    folded: message.folded ?? 0, peerDrawn: message.isOutgoing ? message.peerDrawn : nil)
    }

    /// A message's body as text for `width` columns: its lines or its card, then a line for
    /// each photo its card does not show (`[Photo 640×400]`); `nil` for a placeholder.
    static func body(of message: PageView.Message, width: Int) -> [String]? {
        var lines: [String]
        let layout = MessageLayout(width: width)
        switch message.body {
        // The built-ins as their own builders lay them out (the page value carries what they are).
        case .text(let text): lines = text.isEmpty ? [] : layout.wrap(text)
        case .voice(let voice):
            // A recording it carries is drawn from the recording: its length as decoded.
            lines = message.voice.map { [voiceText($0)] } ?? Self.laidOut(BuiltinBuilders.Voice(), voice, layout)
        case .location(let place): lines = Self.laidOut(BuiltinBuilders.Location(), place, layout)
        case .file(let file):
            // The file it carries, by its safe name and the size held here.
            lines = message.file.map { TextWidth.wrap(fileText($0), width: width) } ?? Self.laidOut(BuiltinBuilders.File(), file, layout)
        case .image(let image): lines = Self.laidOut(BuiltinBuilders.Image(), image, layout)
        case .lines(let text): lines = text
        case .card(let card): lines = Self.lines(of: card, message: message, width: width)
        case .recalled: lines = [message.isOutgoing ? "(you recalled this message)" : "(\(message.envelope.from) recalled this message)"]
        case .placeholder: return nil
        }
        if !message.reactions.isEmpty { lines.append(reactionsText(message.reactions, peer: message.envelope.conversation)) }
        if let revised = message.revised {
            let who = revised.by == message.envelope.conversation ? TerminalText.safe(revised.by) : "you"
            lines.append(TextWidth.truncate("(updated by \(who) at \(clockTime(revised.at)))", to: width))
        }
        if let quote = message.reply { lines.insert(TextWidth.truncate(Self.quoteText(quote, peer: message.envelope.conversation), to: width), at: 0) }
        for (index, slot) in message.photosAfterBody {
            lines += TextWidth.wrap(photoText(slot, index: index), width: width)
        }
        return lines
    }

    /// A message's reactions as the terminal draws them, under its body: `👍 alice · ❤️ you`.
    static func reactionsText(_ reactions: [PageView.Reaction], peer: String) -> String {
        reactions.map { $0.emoji + " " + $0.people.map { $0 == peer ? peer : "you" }.joined(separator: ", ") }.joined(separator: " · ")
    }

    /// A reply's quote as the terminal draws it, above the reply: `↪ #3 bob: first words`.
    static func quoteText(_ quote: PageView.Quote, peer: String) -> String {
        let words: String = switch quote.excerpt {
        case .text(let text): "\"" + text + "\""
        case .photo(let caption?): "[Photo] \"" + caption + "\""
        case .photo(nil): "[Photo]"
        case .voice(let seconds): "[Voice \(seconds / 60):\(seconds % 60 < 10 ? "0" : "")\(seconds % 60)]"
        case .location(let name): "[Location] " + name
        case .file(let name): "[File] " + name
        case .image: "[Picture]"
        case .recalled: "(recalled)"
        case .placeholder: "(a message shown as a placeholder)"
        case .missing: "(a message not on this device)"
        }
        return "↪ " + (quote.number.map { "#\($0) " } ?? "") + (quote.from == peer ? peer : "you") + ": " + words
    }

    /// `content` as the host's own `builder` lays it out at `layout`'s width (it never throws
    /// for content it decoded itself).
    private static func laidOut<Builder: MessageBuilder>(_ builder: Builder, _ content: Builder.Content, _ layout: MessageLayout) -> [String] {
        (try? builder.model(for: content, layout: layout).lines) ?? []
    }

    /// A voice message's recording as the terminal names it: `[Voice 0:12]`.
    static func voiceText(_ slot: VoiceSlot) -> String {
        switch slot {
        case .voice(let voice): "[Voice \(voice.shown)]"
        case .refused(let why): "[Voice not shown: " + TerminalText.safe(why, newlines: false) + "]"
        }
    }

    /// A file as the terminal names it: `[File résumé.pdf · 182 KB]`.
    static func fileText(_ slot: FileSlot) -> String {
        switch slot {
        case .file(let file): "[File " + TerminalText.safe(file.name, newlines: false) + " · " + file.shownSize + "]"
        case .refused(let why): "[File not offered: " + TerminalText.safe(why, newlines: false) + "]"
        }
    }

    /// A photo as the terminal names it.
    static func photoText(_ slot: PhotoSlot, index: Int) -> String {
        switch slot {
        case .photo(let photo): "[Photo \(photo.width)×\(photo.height)]"
        case .refused(let why): "[Photo not shown: " + TerminalText.safe(why, newlines: false) + "]"
        }
    }

    /// A card as the box of text the terminal draws: IMKit's text of the card (title, subtitle,
    /// badge, the picture's place, fields) for `width` columns, then each button on a line of
    /// its own with what to type to press it (`[Details] /tap 2 details`).
    static func lines(of card: PageView.Card, message: PageView.Message, width: Int) -> [String] {
        let number = message.number
        var text = card.messageCard
        text.buttons = []
        // A photo the message does not carry keeps no place (a listing sent without one).
        if case .photo(let index)? = card.image, !message.photos.indices.contains(index) { text.image = nil }
        var lines = MessageLayout(width: width).card(text) { _ in
            switch card.image {
            case .picture(let name, _, _, let photo?, _)?: "Picture \(name) \(photo.width)×\(photo.height)"
            case .picture(let name, _, _, nil, _)?: "No picture \"\(name)\""
            case .photo(let index)? where message.photos.indices.contains(index): String(photoText(message.photos[index], index: index).dropFirst().dropLast())
            case .photo?, nil: ""
            }
        }
        for button in card.buttons {
            let label = "[" + TerminalText.safe(button.label) + "]"
            // A button that sends the card's inputs names each that holds nothing yet, for what
            // to type after it (one not named keeps what the card shows in it).
            let empty = (card.inputs ?? []).filter { $0.value == nil && ($0.chosen ?? []).isEmpty }
            let inputs = button.submits == true ? empty.map { " " + TerminalText.safe($0.id) + "=…" }.joined() : ""
            let typed = button.ignored == true ? "(does nothing here)" : "/tap \(number) " + TerminalText.safe(button.id) + inputs
            if TextWidth.columns(label) + 1 + TextWidth.columns(typed) <= width {
                lines.append(label + " " + typed)
            } else {
                // Too narrow for both: the label, then what to type on a line of its own.
                lines += TextWidth.wrap(label, width: width) + TextWidth.wrap(typed, width: width)
            }
        }
        return lines
    }

    /// A message cell: the meta line (number, sender, time, for the user's own messages where
    /// they stand, and for a message that arrived late the number of the one it was sent before)
    /// and the bubble around the view, on the left for a received message and the right for a
    /// sent one; a `nil` view is the placeholder. The same view serves both directions: builders
    /// never draw bubbles. Under a sent message of a line's, how the peer drew it, when its read
    /// receipt said (`peerDrawn`): "shown as a placeholder at bob: line rent not installed".
    public func cell(number: Int, envelope: MessageEnvelope, view: MessageView?, outgoing: Bool, state: MessageState? = nil,
                     degrade: Degrade? = nil, sentBefore: Int? = nil, folded: Int = 0, peerDrawn: Drawn? = nil) -> [String] {
        let bodyWidth = ChatPage.bodyWidth(forPage: width)
        var body = view.map { $0.lines.isEmpty ? ["(empty message)"] : Self.escaped($0.lines, width: bodyWidth) }
            ?? Self.placeholder(degrade, number: number)
        // At most PageView.messageLineLimit lines a message, escaping's extra lines included;
        // what is folded (here, or already in the page value) is said on the last.
        var more = 0
        if view != nil {
            (body, more) = PageView.fold(body, more: folded)
            if more > 0 { body.append(PageView.foldMarker(more)) }
        }
        var widths = body.map(TextWidth.columns)
        for index in body.indices where widths[index] > bodyWidth {
            body[index] = TextWidth.truncate(body[index], to: bodyWidth)
            widths[index] = TextWidth.columns(body[index])
        }
        let inner = widths.max() ?? 0
        var meta = "#\(number) \(outgoing ? "me" : TerminalText.safe(envelope.from)) · \(Self.clockTime(envelope.timestamp))"
        if view == nil { meta += " · \(TerminalText.safe(envelope.key))" }
        if let state { meta += " · " + Self.words(state) }
        if let sentBefore { meta += " · sent before #\(sentBefore)" }
        let rule = rules[inner + 2]
        let indent = outgoing ? spaces[max(1, width - (inner + 4))] : " "
        let metaIndent = outgoing ? spaces[max(1, width - TextWidth.columns(meta))] : " "
        var rows = [metaIndent + style("2", meta), indent + "╭" + rule + "╮"]
        for (index, (line, used)) in zip(body, widths).enumerated() {
            let text = line + spaces[inner - used]
            let marker = more > 0 && index == body.count - 1
            rows.append(indent + "│ " + (view == nil || marker ? style("2", text) : text) + " │")
        }
        rows.append(indent + "╰" + rule + "╯")
        if let peerDrawn {
            // The peer's words (its reason) escaped; right-aligned under the bubble.
            for line in TextWidth.wrap(TerminalText.safe(peerDrawn.said(at: envelope.to)), width: width - 2) {
                rows.append(spaces[max(1, width - TextWidth.columns(line))] + style("2", line))
            }
        }
        return rows
    }

    /// Where a sent message stands, as its meta line says it.
    static func words(_ state: MessageState) -> String {
        switch state {
        case .queued: "queued"
        case .sent: "sent"
        case .delivered: "delivered ✓"
        case .read: "read ✓✓"
        case .failed, .givenUp: "failed (/why)"
        case .unknown: "state unknown (/why)"
        case .received: "received"
        }
    }

    /// A view's lines made safe for the terminal. A builder wraps its text to the body's width,
    /// but a control character it could not see grows into a visible escape (`\x01`,
    /// `\u{202E}`): such a line is wrapped again, so nothing of the message is cut off.
    static func escaped(_ lines: [String], width: Int) -> [String] {
        var out: [String] = []
        out.reserveCapacity(lines.count)
        for line in lines {
            let safe = TerminalText.safe(line)
            if safe.utf8.count != line.utf8.count, TextWidth.columns(safe) > width {
                out += TextWidth.wrap(safe, width: width)
            } else {
                out.append(safe)
            }
        }
        return out
    }

    /// The placeholder's text: what shows instead of a message that cannot be shown here, with
    /// a short reason and, on a line of its own so it is never cut, the command that gives the
    /// whole one.
    static func placeholder(_ degrade: Degrade?, number: Int) -> [String] {
        // `short` quotes what a line or a payload said as it is.
        [MessagePresenter.placeholderText] + (degrade.map { ["(\(TerminalText.safe($0.short)))", "/why \(number) says why"] } ?? [])
    }

    /// `HH:MM` in UTC for a timestamp in milliseconds.
    static func clockTime(_ milliseconds: Int64) -> String {
        let minutes = (milliseconds / 60_000) % (24 * 60)
        let hours = minutes / 60, rest = minutes % 60
        return (hours < 10 ? "0" : "") + "\(hours):" + (rest < 10 ? "0" : "") + "\(rest)"
    }
}

extension String {
    var trailingSpacesRemoved: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}

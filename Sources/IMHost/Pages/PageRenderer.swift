import IMKit

/// Draws a chat page as text, deterministically for a width: the title, the components in the
/// platform's order, then the messages. Received messages sit on the left under their sender,
/// sent ones on the right; the host draws every bubble, builders only their content. Widths are
/// terminal columns, so Chinese text (two columns a character) lines up.
public struct PageRenderer {
    /// The width used when none is given.
    public static let defaultWidth = 72

    /// The columns a message body gets on a page of `width` columns.
    static func bodyWidth(forPage width: Int) -> Int {
        max(8, min(width - 8, width * 2 / 3))
    }

    var width: Int
    var colors: Bool

    init(width: Int, colors: Bool) {
        self.width = max(24, width)
        self.colors = colors
    }

    private func style(_ code: String, _ text: String) -> String {
        colors ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    func render(_ page: ChatPage, messages: [(number: Int, message: MessagePresenter.Presented)], total: Int) -> String {
        var lines: [String] = []
        let rule = String(repeating: "═", count: width)
        let tag = page.isLegacy ? "[legacy page]" : "[\(page.lineID ?? "base") page]"
        let title = TextWidth.truncate(page.carrier.title, to: width - TextWidth.columns(tag) - 3)
        lines.append(rule)
        lines.append(style("1", " " + TextWidth.pad(title, to: width - TextWidth.columns(tag) - 2) + tag + " "))
        lines.append(rule)
        for component in page.components {
            lines += component.render(width: width - 1).map { " " + $0 }
        }
        lines.append(String(repeating: "─", count: width))
        let older = total - messages.count
        if older > 0 {
            lines.append(style("2", " ↑ \(older) older message\(older == 1 ? "" : "s")"))
        }
        if messages.isEmpty {
            lines.append(style("2", " No messages yet."))
        }
        for (number, presented) in messages {
            lines += cell(number: number, presented)
        }
        return lines.map { $0.trailingSpacesRemoved }.joined(separator: "\n") + "\n"
    }

    /// A message cell: a meta line and a bubble, on the left for received, the right for sent.
    private func cell(number: Int, _ presented: MessagePresenter.Presented) -> [String] {
        let envelope = presented.shown.envelope
        let outgoing = presented.shown.isOutgoing
        let body = presented.view?.lines ?? [MessagePresenter.placeholderText]
        let bodyWidth = Self.bodyWidth(forPage: width)
        let inner = min(bodyWidth, body.map(TextWidth.columns).max() ?? 0)
        var meta = "#\(number) \(outgoing ? "me" : envelope.from) · \(Self.clockTime(envelope.timestamp))"
        if presented.view == nil { meta += " · \(envelope.key)" }
        if presented.pending { meta += " · pending" }
        var bubble = ["╭" + String(repeating: "─", count: inner + 2) + "╮"]
        for line in body {
            let text = TextWidth.pad(line, to: inner)
            bubble.append("│ " + (presented.view == nil ? style("2", text) : text) + " │")
        }
        bubble.append("╰" + String(repeating: "─", count: inner + 2) + "╯")
        let indent = outgoing ? String(repeating: " ", count: max(1, width - (inner + 4))) : " "
        let metaIndent = outgoing ? String(repeating: " ", count: max(1, width - TextWidth.columns(meta))) : " "
        return [metaIndent + style("2", meta)] + bubble.map { indent + $0 }
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

/// Text a person wrote, as the page draws it: escaped and never re-wrapped (the browser wraps
/// it, in the page's own type), its `http` and `https` addresses made links that open in a tab
/// of their own and tell the site nothing of the page (`rel="noopener noreferrer"`), and a long
/// one shown to a point, the rest opened in place by "Show more".
enum TextHTML {
    /// Past this many characters, or this many lines, a text is folded.
    static let foldCharacters = 700
    static let foldLines = 12

    /// `text` as HTML inside its bubble.
    static func html(_ text: String, _ say: WebLanguage = .english) -> String {
        let pieces = self.pieces(text)
        guard let cut = foldPoint(text, pieces) else { return pieces.map(html).joined() }
        var shown = "", rest = ""
        for piece in pieces {
            if piece.range.upperBound <= cut {
                shown += html(piece)
            } else if piece.range.lowerBound >= cut {
                rest += html(piece)
            } else {
                // Only plain text is cut (the fold point is never inside an address).
                shown += PageHTML.escape(String(text[piece.range.lowerBound..<cut]))
                rest += PageHTML.escape(String(text[cut..<piece.range.upperBound]))
            }
        }
        return shown + "<span class=\"rest\">" + rest + "</span>"
            + "<button type=\"button\" class=\"more\" data-more aria-expanded=\"false\">" + say("Show more") + "</button>"
    }

    /// A run of the text: words, or an address.
    struct Piece {
        var text: Substring
        var isLink = false
        var range: Range<String.Index> { text.startIndex..<text.endIndex }
    }

    private static func html(_ piece: Piece) -> String {
        let shown = PageHTML.escape(String(piece.text))
        guard piece.isLink else { return shown }
        return "<a href=\"" + shown + "\" rel=\"noopener noreferrer\" target=\"_blank\">" + shown + "</a>"
    }

    /// The text cut into runs of words and addresses. An address starts with `http://` or
    /// `https://` (any case) where no letter or digit comes before it, has something after the
    /// scheme, and runs to the next space, control character or one of `<>"` `` ` ``; closing
    /// punctuation at its end (`.`, `,`, `)` without its `(`, …) is the sentence's, not its.
    static func pieces(_ text: String) -> [Piece] {
        var pieces: [Piece] = []
        var plainStart = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            if let end = address(in: text, at: index) {
                if plainStart < index { pieces.append(Piece(text: text[plainStart..<index])) }
                pieces.append(Piece(text: text[index..<end], isLink: true))
                index = end
                plainStart = end
            } else {
                index = text.index(after: index)
            }
        }
        if plainStart < text.endIndex { pieces.append(Piece(text: text[plainStart...])) }
        return pieces
    }

    /// The end of an address starting at `start`, if one does.
    private static func address(in text: String, at start: String.Index) -> String.Index? {
        let c = text[start]
        guard c == "h" || c == "H" else { return nil }
        if start > text.startIndex {
            let before = text[text.index(before: start)]
            if before.isLetter || before.isNumber { return nil }
        }
        var index = start
        var scheme = ""
        while index < text.endIndex, scheme.count < 8, text[index] != ":" {
            scheme.append(text[index])
            index = text.index(after: index)
        }
        let lowered = scheme.lowercased()
        guard lowered == "http" || lowered == "https", text[index...].hasPrefix("://") else { return nil }
        index = text.index(index, offsetBy: 3)
        let bodyStart = index
        while index < text.endIndex, !ends(text[index]) { index = text.index(after: index) }
        // Closing punctuation the sentence put after the address; a bracket is the address's when
        // the address opened one more than it closed before it. (Counted once, then kept as the
        // end moves back: a peer's ten thousand brackets cost one pass, not ten thousand.)
        var opened: [Character: Int] = ["(": 0, ")": 0, "[": 0, "]": 0]
        for c in text[bodyStart..<index] where opened[c] != nil { opened[c]! += 1 }
        while index > bodyStart {
            let last = text[text.index(before: index)]
            let trailing: Bool = switch last {
            case ".", ",", ";", ":", "!", "?", "'", "*": true
            case ")": opened["("]! <= opened[")"]! - 1
            case "]": opened["["]! <= opened["]"]! - 1
            default: false
            }
            guard trailing else { break }
            if opened[last] != nil { opened[last]! -= 1 }
            index = text.index(before: index)
        }
        // `https://` alone, or with only punctuation after it, is no address.
        guard text[bodyStart..<index].contains(where: { $0.isLetter || $0.isNumber }) else { return nil }
        return index
    }

    private static func ends(_ c: Character) -> Bool {
        if c.isWhitespace || c == "<" || c == ">" || c == "\"" || c == "`" { return true }
        return c.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }
    }

    /// Where a long text folds: after ``foldLines`` lines or about ``foldCharacters``
    /// characters, at a line's end or a space (never inside an address); `nil` when it all shows.
    static func foldPoint(_ text: String, _ pieces: [Piece]) -> String.Index? {
        var lines = 1, count = 0
        var index = text.startIndex
        var lastSpace: String.Index?
        while index < text.endIndex {
            let c = text[index]
            if c == "\n" {
                lines += 1
                if lines > foldLines { break }
            }
            count += 1
            if count > foldCharacters { break }
            if c.isWhitespace { lastSpace = index }
            index = text.index(after: index)
        }
        guard index < text.endIndex else { return nil }
        var cut = text[index] == "\n" ? index : (lastSpace ?? index)
        // Not inside an address: before it.
        if let inside = pieces.first(where: { $0.isLink && $0.range.lowerBound < cut && cut < $0.range.upperBound }) {
            cut = inside.range.lowerBound
        }
        // Folding almost nothing away, or from the first character, is no fold worth a button.
        guard cut > text.startIndex, text.distance(from: cut, to: text.endIndex) > 40 || text[cut...].contains("\n") else { return nil }
        return cut
    }
}

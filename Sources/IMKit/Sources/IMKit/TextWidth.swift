/// Widths of text in terminal columns, as a terminal draws it.
///
/// Every code point takes the width the C library's `wcwidth` gives it: one column for most,
/// two for East Asian wide and full-width characters and emoji shown as emoji (Chinese,
/// Japanese, Korean, 🚗 ✅ ⭐), none for combining marks, joiners and variation selectors (the
/// table is generated from the C library, and a test compares every code point). A grapheme
/// cluster that is an emoji sequence takes the width terminals draw it with: an emoji
/// followed by VS16 (U+FE0F) takes two columns (❤️, 🅿️), by VS15 one (VS16 after a letter or a
/// space changes nothing); a flag (two regional
/// indicators) two; a ZWJ sequence (👨‍👩‍👧) or an emoji with a skin tone (👍🏽) the width of its first
/// emoji. Wrapping and cutting never split a grapheme cluster.
public enum TextWidth {
    /// The columns one character (a grapheme cluster) takes on a terminal.
    public static func columns(of character: Character) -> Int {
        if let ascii = character.asciiValue { return ascii >= 0x20 && ascii < 0x7F ? 1 : 0 }
        let scalars = character.unicodeScalars
        if scalars.count == 1 { return columns(of: scalars.first!) }
        var width = 0
        var emojiSequence = false
        var textPresentation = false
        var regionalIndicators = 0
        for scalar in scalars {
            switch scalar.value {
            case 0xFE0F, 0x200D, 0x20E3, 0x1F3FB...0x1F3FF, 0xE0020...0xE007F: emojiSequence = true
            case 0xFE0E: textPresentation = true
            case 0x1F1E6...0x1F1FF: regionalIndicators += 1
            default: break
            }
            width += columns(of: scalar)
        }
        if regionalIndicators == 2 { return 2 }
        let first = columns(of: scalars.first!)
        if textPresentation { return min(first, 1) }
        if emojiSequence {
            // VS16 shows an emoji base as an emoji, two columns; after any other character
            // (a letter, a space) it changes nothing. A joined or modified sequence is drawn as
            // its first emoji.
            return scalars.contains("\u{FE0F}") && scalars.first!.properties.isEmoji ? 2 : first
        }
        return width
    }

    /// The columns a string takes on a terminal.
    public static func columns(_ text: String) -> Int {
        var total = 0
        var ascii = true
        for byte in text.utf8 {
            if byte >= 0x80 { ascii = false; break }
            if byte >= 0x20 && byte < 0x7F { total += 1 }
        }
        guard !ascii else { return total }
        // Code point by code point, unless an emoji sequence needs its cluster measured whole.
        total = 0
        for scalar in text.unicodeScalars {
            if isSequencePart(scalar.value) {
                total = 0
                for character in text { total += columns(of: character) }
                return total
            }
            total += columns(of: scalar)
        }
        return total
    }

    /// The code points that make a cluster an emoji sequence or a flag.
    private static func isSequencePart(_ value: UInt32) -> Bool {
        switch value {
        case 0xFE0E, 0xFE0F, 0x200D, 0x20E3, 0x1F1E6...0x1F1FF, 0x1F3FB...0x1F3FF, 0xE0020...0xE007F: true
        default: false
        }
    }

    /// The columns a code point takes, as `wcwidth` says (controls take none here: they are
    /// escaped before they reach a terminal).
    public static func columns(of scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v < 0x7F { return v >= 0x20 ? 1 : 0 }
        if v < 0xA0 { return 0 }
        // The common wide blocks without a search: CJK ideographs and Hangul syllables.
        if (0x4E00...0x9FFF).contains(v) || (0xAC00...0xD7A3).contains(v) { return 2 }
        if contains(zeroWidthRanges, v) { return 0 }
        return contains(doubleWidthRanges, v) ? 2 : 1
    }

    /// Whether `v` is in one of the sorted start, end pairs of `ranges`: a binary search.
    private static func contains(_ ranges: [UInt32], _ v: UInt32) -> Bool {
        var low = 0, high = ranges.count / 2
        while low < high {
            let middle = (low + high) / 2
            if v < ranges[middle * 2] { high = middle } else if v > ranges[middle * 2 + 1] { low = middle + 1 } else { return true }
        }
        return false
    }

    /// Pads `text` with spaces on the right to `width` columns, or cuts it to fit.
    public static func pad(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        var text = text
        var used = columns(text)
        if used > width {
            text = truncate(text, to: width)
            used = columns(text)
        }
        guard used < width else { return text }
        var padded = text
        padded.reserveCapacity(text.utf8.count + width - used)
        for _ in used..<width { padded.append(" ") }
        return padded
    }

    /// Cuts `text` to at most `width` columns, ending with `…` when it was cut.
    public static func truncate(_ text: String, to width: Int) -> String {
        guard columns(text) > width else { return text }
        guard width > 0 else { return "" }
        var result = ""
        var used = 0
        for character in text {
            let w = columns(of: character)
            if used + w > width - 1 { break }
            result.append(character)
            used += w
        }
        return result + "…"
    }

    /// Wraps text into lines of at most `width` columns: at spaces where it can, inside a word
    /// (or between CJK characters, which need no spaces) where it must, never between a
    /// character and the marks that combine with it. `\n` starts a new line.
    public static func wrap(_ text: String, width: Int) -> [String] {
        let width = max(1, width)
        var lines: [String] = []
        // Split on the newline byte: splitting on Characters finds grapheme boundaries first.
        for line in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let paragraph = Substring(line)
            if paragraph.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
                // Printable ASCII, the common case: one column a byte.
                wrap(Array(paragraph.utf8), isSpace: { $0 == UInt8(ascii: " ") }, width: width,
                     columns: { _ in 1 }, into: &lines) {
                    String(decoding: $0, as: UTF8.self)
                }
            } else {
                // Wrap over code points where each is a cluster of its own, over grapheme
                // clusters where one may not be (combining marks, emoji sequences, Indic
                // scripts): a line never ends inside a cluster. Lines are cut out of the UTF-8
                // bytes: building strings unit by unit costs more than the wrapping.
                let bytes = Array(paragraph.utf8)
                var offsets: [Int] = []
                var widths: [Int] = []
                var isSpace: [Bool] = []
                var offset = 0
                if paragraph.unicodeScalars.allSatisfy({ isSingleCluster($0.value) }) {
                    for scalar in paragraph.unicodeScalars {
                        offsets.append(offset)
                        widths.append(columns(of: scalar))
                        isSpace.append(scalar == " ")
                        offset += UTF8.width(scalar)
                    }
                } else {
                    for character in paragraph {
                        offsets.append(offset)
                        widths.append(columns(of: character))
                        isSpace.append(character == " ")
                        offset += character.utf8.count
                    }
                }
                offsets.append(offset)
                wrap(Array(0..<widths.count), isSpace: { isSpace[$0] }, width: width, columns: { widths[$0] },
                     into: &lines) { range in
                    guard let first = range.first else { return "" }
                    return String(decoding: bytes[offsets[first]..<offsets[range.last! + 1]], as: UTF8.self)
                }
            }
        }
        return lines
    }

    /// The greedy wrap over bytes or scalars with their widths. A zero-width unit stays with
    /// the unit before it.
    private static func wrap<Unit>(_ units: [Unit], isSpace: (Unit) -> Bool, width: Int, columns: (Unit) -> Int,
                                   into lines: inout [String], make: (ArraySlice<Unit>) -> String) {
        var start = 0
        var used = 0
        var lastSpace: Int?
        var index = 0
        while index < units.count {
            let unit = units[index]
            let w = columns(unit)
            if w > 0 && used + w > width && index > start {
                if isSpace(unit) {
                    lines.append(make(units[start..<index]))
                    start = index + 1
                    used = 0
                    lastSpace = nil
                    index += 1
                    continue
                }
                if let breakAt = lastSpace {
                    lines.append(make(units[start..<breakAt]))
                    start = breakAt + 1
                } else {
                    lines.append(make(units[start..<index]))
                    start = index
                }
                used = 0
                for unit in units[start..<index] { used += columns(unit) }
                lastSpace = nil
            }
            if isSpace(unit) { lastSpace = index }
            used += w
            index += 1
        }
        lines.append(make(units[start..<units.count]))
    }

    /// Whether a code point never joins a grapheme cluster with its neighbours: printable ASCII,
    /// Latin-1, CJK ideographs and punctuation, kana, Hangul syllables and full-width forms.
    /// (A Hangul syllable may take a trailing jamo, but the jamo is not in this set.)
    private static func isSingleCluster(_ v: UInt32) -> Bool {
        (0x20...0x7E).contains(v) || (0xA0...0x2FF).contains(v) || (0x3000...0x3029).contains(v)
            || (0x3030...0x303F).contains(v) || (0x3041...0x3096).contains(v) || (0x30A0...0x30FF).contains(v)
            || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v) || (0xAC00...0xD7A3).contains(v)
            || (0xFF01...0xFF60).contains(v)
    }
}

/// Widths of text in terminal columns, as `wcswidth` counts them: most characters take one
/// column, East Asian wide and full-width characters (Chinese, Japanese, Korean, most emoji)
/// take two, combining marks, joiners and variation selectors none.
public enum TextWidth {
    /// The columns one character takes on a terminal.
    public static func columns(of character: Character) -> Int {
        if let ascii = character.asciiValue { return ascii >= 0x20 && ascii < 0x7F ? 1 : 0 }
        var width = 0
        for scalar in character.unicodeScalars { width += columns(of: scalar) }
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
        total = 0
        for scalar in text.unicodeScalars { total += columns(of: scalar) }
        return total
    }

    /// Pads `text` with spaces on the right to `width` columns, or cuts it to fit.
    public static func pad(_ text: String, to width: Int) -> String {
        let used = columns(text)
        if used > width { return pad(truncate(text, to: width), to: width) }
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
                // Wrap over scalars, but cut the lines out of the UTF-8 bytes: building strings
                // scalar by scalar costs more than the wrapping.
                let bytes = Array(paragraph.utf8)
                var offsets: [Int] = []
                var widths: [Int] = []
                var isSpace: [Bool] = []
                var offset = 0
                for scalar in paragraph.unicodeScalars {
                    offsets.append(offset)
                    widths.append(columns(of: scalar))
                    isSpace.append(scalar == " ")
                    offset += UTF8.width(scalar)
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

    private static func columns(of scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v < 0x7F { return v >= 0x20 ? 1 : 0 }
        if v < 0xA0 { return 0 }
        if v < 0x300 { return 1 }
        if isZeroWidth(v) { return 0 }
        return isWide(v) ? 2 : 1
    }

    private static func isZeroWidth(_ v: UInt32) -> Bool {
        (0x0300...0x036F).contains(v) || (0x200B...0x200F).contains(v)
            || (0x20D0...0x20FF).contains(v) || (0xFE00...0xFE0F).contains(v)
            || (0xFE20...0xFE2F).contains(v) || v == 0x2060 || v == 0xFEFF
            || (0xE0100...0xE01EF).contains(v)
    }

    private static func isWide(_ v: UInt32) -> Bool {
        guard v >= 0x1100 else { return false }
        return (0x1100...0x115F).contains(v) || (0x2E80...0x303E).contains(v)
            || (0x3041...0x33FF).contains(v) || (0x3400...0x4DBF).contains(v)
            || (0x4E00...0x9FFF).contains(v) || (0xA000...0xA4CF).contains(v)
            || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v)
            || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
            || (0xFFE0...0xFFE6).contains(v) || (0x1F300...0x1F64F).contains(v)
            || (0x1F900...0x1F9FF).contains(v) || (0x20000...0x3FFFD).contains(v)
    }
}

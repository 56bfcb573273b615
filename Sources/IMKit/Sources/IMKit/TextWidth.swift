/// Widths of text in terminal columns: most characters take one column, East Asian wide and
/// full-width characters (Chinese, Japanese, Korean, most emoji) take two, combining marks none.
public enum TextWidth {
    /// The columns one character takes on a terminal.
    public static func columns(of character: Character) -> Int {
        var width = 0
        for scalar in character.unicodeScalars {
            width = max(width, columns(of: scalar))
        }
        return width
    }

    /// The columns a string takes on a terminal.
    public static func columns(_ text: String) -> Int {
        var total = 0
        for character in text { total += columns(of: character) }
        return total
    }

    /// Pads `text` with spaces on the right to `width` columns, or cuts it to fit.
    public static func pad(_ text: String, to width: Int) -> String {
        let fitted = truncate(text, to: width)
        return fitted + String(repeating: " ", count: max(0, width - columns(fitted)))
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
    /// (or between CJK characters, which need no spaces) where it must. `\n` starts a new line.
    public static func wrap(_ text: String, width: Int) -> [String] {
        let width = max(1, width)
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            var used = 0
            var lastSpace: (index: String.Index, used: Int)?
            for character in paragraph {
                let w = columns(of: character)
                if used + w > width {
                    if character == " " {
                        lines.append(line)
                        line = ""; used = 0; lastSpace = nil
                        continue
                    }
                    if let space = lastSpace {
                        lines.append(String(line[..<space.index]))
                        line = String(line[line.index(after: space.index)...])
                        used -= space.used + 1
                    } else {
                        lines.append(line)
                        line = ""; used = 0
                    }
                    lastSpace = nil
                }
                if character == " " { lastSpace = (line.endIndex, used) }
                line.append(character)
                used += w
            }
            lines.append(line)
        }
        return lines
    }

    private static func columns(of scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v == 0 { return 0 }
        if v < 0x20 || (v >= 0x7F && v < 0xA0) { return 0 }
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

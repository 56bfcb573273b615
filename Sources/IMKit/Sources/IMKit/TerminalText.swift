/// The one boundary text from outside crosses before it reaches a terminal: messages, peer and
/// user ids, URLs, plugin names and errors, file names, what a child process printed.
///
/// Control characters (C0 and DEL, and C1), and the bidirectional controls that can make a line
/// read differently from what it holds, become visible escapes such as `\x1b`, `\u{9b}` and
/// `\u{202e}`, so nothing from outside can move the cursor, change colours, retitle the window
/// or reorder a line. A newline is kept only where the caller allows it; a diagnostic stays one line.
public enum TerminalText {
    /// `text`, safe to print.
    public static func safe(_ text: String, newlines: Bool = false) -> String {
        // Fast path: most text has nothing to escape.
        if !text.unicodeScalars.contains(where: { needsEscape($0, newlines: newlines) }) { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar, newlines: newlines) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0..<0x20, 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\x" + (hex.count == 1 ? "0" : "") + hex
            default:
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
        return out
    }

    /// Whether a scalar must not reach a terminal as it is: C0 controls (a newline only when
    /// `newlines` is false), DEL, C1 controls and bidirectional controls.
    public static func needsEscape(_ scalar: Unicode.Scalar, newlines: Bool) -> Bool {
        switch scalar.value {
        case 0x0A: return !newlines
        case 0..<0x20, 0x7F...0x9F: return true
        // Bidirectional controls: marks, embeddings and overrides, isolates.
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}

/// Typing on a terminal in non-canonical mode (``TerminalMode``), key by key: printable text is
/// added and echoed through the ``ChatScreen``; Backspace or DEL takes away the last character
/// (a grapheme: "é" or a flag, whatever its bytes); Ctrl-U clears the line; Ctrl-D on an empty
/// line ends the input; Enter sends. Escape sequences (arrow and function keys) and other
/// control keys are skipped.
///
/// A line longer than the limit is treated as a pipe's is: what goes past the limit is not
/// kept, and Enter reports the line as too long, with its length, and sends nothing.
final class LineEditor {
    private let screen: ChatScreen
    private let limit: Int
    /// Bytes read and not yet taken: a chunk may hold several lines (a paste).
    private var pending: [UInt8] = []
    private var typed = ""
    /// Bytes typed past the limit.
    private var over = 0
    private var escape = Escape.none

    /// Where an escape sequence stands: after ESC, inside `ESC [ …` (CSI) up to its final byte,
    /// or before the one byte after `ESC O` (SS3).
    private enum Escape {
        case none, started, csi, ss3
    }

    init(screen: ChatScreen, limit: Int) {
        self.screen = screen
        self.limit = limit
    }

    /// Adds bytes read from the terminal.
    func feed(_ bytes: some Collection<UInt8>) { pending.append(contentsOf: bytes) }

    /// Takes bytes until a line is sent or the input ends; `nil` once the bytes run out first.
    /// The start of a character cut off at the end of a read waits for the rest.
    func next() -> LineReader.Event? {
        var index = 0
        defer { pending.removeFirst(index) }
        while index < pending.count {
            let byte = pending[index]
            let control = byte < 0x20 || byte == 0x7F
            if escape != .none {
                // A control key ends a sequence it interrupts and counts (Esc, then Enter).
                if control {
                    escape = .none
                } else {
                    index += 1
                    skipEscape(byte)
                    continue
                }
            }
            guard control else {
                // A run of text, up to the next control byte; a cut character at its end waits.
                var end = index
                while end < pending.count, pending[end] >= 0x20, pending[end] != 0x7F { end += 1 }
                let run = pending[index..<end]
                let whole = end == pending.count ? run.count - UTF8Tail.incompleteCount(run) : run.count
                guard whole > 0 else { return nil }
                type(String(decoding: run.prefix(whole), as: UTF8.self))
                index += whole
                continue
            }
            index += 1
            switch byte {
            case 0x0A, 0x0D:
                let event: LineReader.Event = over > 0 ? .tooLong(typed.utf8.count + over) : .line(typed)
                typed = ""
                over = 0
                screen.submitted()
                return event
            case 0x08, 0x7F:
                guard !typed.isEmpty else { continue }
                typed.removeLast()
                screen.edited(typed, appended: nil)
            case 0x15:
                typed = ""
                over = 0
                screen.edited(typed, appended: nil)
            case 0x04 where typed.isEmpty && over == 0:
                screen.submitted()
                return .end
            case 0x1B:
                escape = .started
            default:
                continue
            }
        }
        return nil
    }

    /// Adds typed text, without control characters (C1 ones included), up to the limit.
    private func type(_ text: String) {
        var added = ""
        for character in text where !character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            if over > 0 || typed.utf8.count + added.utf8.count + character.utf8.count > limit {
                over += character.utf8.count
            } else {
                added.append(character)
            }
        }
        guard !added.isEmpty else { return }
        typed += added
        screen.edited(typed, appended: added)
    }

    private func skipEscape(_ byte: UInt8) {
        switch escape {
        case .started: escape = byte == UInt8(ascii: "[") ? .csi : byte == UInt8(ascii: "O") ? .ss3 : .none
        case .csi: if (0x40...0x7E).contains(byte) { escape = .none }
        case .ss3, .none: escape = .none
        }
    }
}

/// Where UTF-8 text read in pieces may be cut.
enum UTF8Tail {
    /// How many bytes at the end of `bytes` start a character that is not complete yet (0 to 3).
    static func incompleteCount(_ bytes: some BidirectionalCollection<UInt8>) -> Int {
        var count = 0
        for byte in bytes.reversed() {
            count += 1
            if byte & 0xC0 == 0x80 {
                // A continuation byte: its lead is further back (at most three).
                if count == 4 { return 0 }
                continue
            }
            guard byte >= 0xC0 else { return 0 }
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
            return length > count ? count : 0
        }
        return 0
    }
}

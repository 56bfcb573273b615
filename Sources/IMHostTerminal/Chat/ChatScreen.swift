import IMHostRuntime
import IMKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A chat on a terminal: the prompt and what the person has typed so far stay at the bottom.
///
/// Everything the chat writes to the terminal goes through here: the pages and lines the worker
/// sends, as the supervisor draws them, and the supervisor's own lines. While the prompt is drawn, a write first clears the input line (`\r`, then
/// `ESC [ K`, or `ESC [ J` from the first row when the typed text wraps), and once the output
/// ends a line the prompt and the typed text are drawn again. So a message that arrives while
/// the person types never takes their half-typed line off the screen.
///
/// `Sendable` (a lock around its state) because writers are `@Sendable` closures (``Output``);
/// the chat's loop is the only thread that uses it.
final class ChatScreen: Sendable {
    static let prompt = "> "

    private struct State {
        /// What is typed and not yet sent.
        var typed = ""
        /// Whether the chat waits for input: the prompt belongs on the screen.
        var prompting = false
        /// Whether the prompt and the typed text are on the screen, the cursor after them.
        var drawn = false
        /// Whether the last byte written ended a line (the prompt starts a line of its own).
        var atLineStart = true
    }

    private let state = Mutex(State())
    /// The terminal's standard output and error; a failed write is remembered as ``Output``
    /// remembers it, so a chat whose terminal is gone stops.
    private let terminal = Output.standard
    private let errorsOnTerminal = isatty(STDERR_FILENO) == 1

    /// Writes through the screen: what the chat says, on standard output and error.
    var output: Output {
        Output(out: { [self] text in write(Array(text.utf8), errors: false) },
               err: { [self] text in write(Array(text.utf8), errors: true) })
    }

    /// The chat waits for input: draws the prompt and what is typed, unless they are shown.
    func showPrompt() {
        state.withLock { state in
            state.prompting = true
            guard !state.drawn else { return }
            terminal.out((state.atLineStart ? "" : "\n") + Self.prompt + state.typed)
            state.drawn = true
            state.atLineStart = false
        }
    }

    /// Draws the input line again (the terminal was given back after Ctrl-Z and `fg`).
    func redraw() {
        state.withLock { state in
            guard state.drawn else { return }
            terminal.out(clear(state.typed) + Self.prompt + state.typed)
        }
    }

    /// The typed text changed: `appended` was added at its end (echoed as it is), or, when it
    /// is `nil`, something was taken away (the line is drawn again).
    func edited(_ typed: String, appended: String?) {
        state.withLock { state in
            let before = state.typed
            state.typed = typed
            guard state.drawn else { return }
            if let appended {
                terminal.out(appended)
            } else {
                terminal.out(clear(before) + Self.prompt + typed)
            }
        }
    }

    /// Enter: the line stays on the screen as typed, and the prompt is gone until the chat
    /// waits for input again. Also at the end of input (Ctrl-D).
    func submitted() {
        state.withLock { state in
            state.typed = ""
            state.prompting = false
            guard state.drawn else { return }
            terminal.out("\n")
            state.drawn = false
            state.atLineStart = true
        }
    }

    /// Writes `bytes` on standard output (or error), clearing the input line first and drawing
    /// it again once the bytes end a line, while the chat waits for input.
    private func write(_ bytes: [UInt8], errors: Bool) {
        guard let last = bytes.last else { return }
        state.withLock { state in
            let text = String(decoding: bytes, as: UTF8.self)
            let endsLine = last == UInt8(ascii: "\n")
            let redraw = state.prompting && endsLine ? Self.prompt + state.typed : ""
            if errors && errorsOnTerminal {
                if state.drawn { terminal.out(clear(state.typed)) }
                terminal.err(text)
                if !redraw.isEmpty { terminal.out(redraw) }
            } else if errors {
                terminal.err(text)
                return
            } else {
                // One write: the clearing, the output and the redrawn line reach the terminal together.
                terminal.out((state.drawn ? clear(state.typed) : "") + text + redraw)
            }
            state.drawn = !redraw.isEmpty
            state.atLineStart = redraw.isEmpty && endsLine
        }
    }

    /// What takes the input line off the screen, the cursor left at the start of its first row.
    private func clear(_ typed: String) -> String {
        var size = winsize()
        let columns = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : Int.max
        let width = TextWidth.columns(Self.prompt + typed)
        // A row filled to its last column keeps the cursor on it.
        let rows = columns == Int.max ? 1 : max(1, (width + columns - 1) / columns)
        return rows == 1 ? "\r\u{1B}[K" : "\r\u{1B}[\(rows - 1)A\u{1B}[J"
    }
}

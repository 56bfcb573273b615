/// The last lines a dying process wrote on standard error, kept to name the crash: the Swift
/// runtime's fatal error ("File.swift:16: Fatal error: Index out of range") if there was one,
/// else the last line. The stack trace the runtime prints after it is not kept.
struct LastWords {
    private var lines: [String] = []

    /// Keeps a line; returns false for a line of a stack trace, which is dropped.
    @discardableResult
    mutating func keep(_ line: String) -> Bool {
        guard !line.isEmpty, line != "Current stack trace:", !Self.isStackFrame(line) else { return false }
        lines = Array((lines + [line]).suffix(8))
        return true
    }

    /// The line that says most about the crash.
    var detail: String? { lines.last(where: Self.isFatalError) ?? lines.last }

    /// `File.swift:16: Fatal error: …`: what the Swift runtime says as a process dies of an error.
    static func isFatalError(_ line: String) -> Bool {
        line.contains("Fatal error:") || line.contains("Precondition failed") || line.contains("Assertion failed")
    }

    /// `12   libswiftCore.so   0x00007f…`: a frame of a stack trace.
    static func isStackFrame(_ line: String) -> Bool {
        let trimmed = line.drop { $0 == " " }
        guard let first = trimmed.first, first.isNumber else { return false }
        return trimmed.contains(" 0x")
    }
}

import Foundation

/// A program started in the background and read while it runs, for tests that act at a point in
/// its life: type once the chat is shown, send a signal once it is ready. Waiting is for output
/// to appear (readiness), never for time to pass.
final class RunningProcess {
    private let process: Process
    private let input = Pipe(), output = Pipe(), errors = Pipe()
    private let drain = Drain()

    /// What it printed so far, read as it comes by a thread of its own: a program whose output
    /// nobody waits for still never blocks on a full pipe (a chat that draws its page again at
    /// every change fills one in a few messages, and then stops).
    private final class Drain: @unchecked Sendable {
        // Safe: `out`, `err` and `ended` are only touched with `condition` locked.
        let condition = NSCondition()
        var out: [UInt8] = [], err: [UInt8] = []
        var ended = false
    }

    var stdout: String { drain.condition.withLock { String(decoding: drain.out, as: UTF8.self) } }
    var stderr: String { drain.condition.withLock { String(decoding: drain.err, as: UTF8.self) } }

    init(_ executable: String, _ arguments: [String], in folder: String?, environment: [String: String] = [:]) throws {
        // A write to a program that has ended must fail, not end the tests.
        Glibc.signal(SIGPIPE, SIG_IGN)
        process = configuredProcess(executable, arguments, in: folder, environment: environment)
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The thread reads copies of the pipes' read ends, and closes them when both end (the
        // program's end, or its children's, brings it): released early, this object's handles
        // close their own, never a descriptor the thread still reads.
        let fds = [dup(output.fileHandleForReading.fileDescriptor), dup(errors.fileHandleForReading.fileDescriptor)]
        let drain = drain
        Thread.detachNewThread { Self.read(fds, into: drain) }
    }

    private static func read(_ fds: [Int32], into drain: Drain) {
        var open = Set(fds)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !open.isEmpty {
            var polls = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&polls, nfds_t(polls.count), 1000) > 0 else { continue }
            for entry in polls where entry.revents != 0 {
                let count = Glibc.read(entry.fd, &buffer, buffer.count)
                if count <= 0 {
                    if count < 0, errno == EINTR || errno == EAGAIN { continue }
                    open.remove(entry.fd)
                    continue
                }
                drain.condition.withLock {
                    if entry.fd == fds[0] { drain.out += buffer[0..<count] } else { drain.err += buffer[0..<count] }
                    drain.condition.broadcast()
                }
            }
        }
        for fd in fds { close(fd) }
        drain.condition.withLock {
            drain.ended = true
            drain.condition.broadcast()
        }
    }

    var pid: Int32 { process.processIdentifier }
    /// Whether it has not ended yet.
    var isRunning: Bool { process.isRunning }

    /// Types a line. A program that has ended takes nothing: the line is lost, as a person's
    /// typing would be, and the test goes on to check what it said.
    func send(_ line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits until `text` shows on its standard output or error (as many times as `occurrences`
    /// says), its output ends, or `timeout` seconds pass. Returns whether it showed.
    @discardableResult
    func waitFor(_ text: String, occurrences: Int = 1, timeout: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        let wanted = Array(text.utf8)
        func count(_ bytes: [UInt8]) -> Int {
            guard !wanted.isEmpty, bytes.count >= wanted.count else { return 0 }
            var found = 0, index = 0
            while index <= bytes.count - wanted.count {
                if bytes[index] == wanted[0], bytes[index..<(index + wanted.count)].elementsEqual(wanted) {
                    found += 1
                    index += wanted.count
                } else {
                    index += 1
                }
            }
            return found
        }
        drain.condition.lock()
        defer { drain.condition.unlock() }
        while true {
            if count(drain.out) + count(drain.err) >= occurrences { return true }
            if drain.ended || Date() >= deadline { return false }
            _ = drain.condition.wait(until: deadline)
        }
    }

    /// Sends a signal.
    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Closes its input, waits for the rest of what it prints, and for it to end.
    func finish() -> ProcessResult {
        try? input.fileHandleForWriting.close()
        waitFor("\u{0}never printed\u{0}")
        process.waitUntilExit()
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return ProcessResult(status: status, stdout: stdout, stderr: stderr)
    }
}

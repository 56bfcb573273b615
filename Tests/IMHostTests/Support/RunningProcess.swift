import Foundation

/// A program started in the background and read while it runs, for tests that act at a point in
/// its life: type once the chat is shown, send a signal once it is ready. Waiting is for output
/// to appear (readiness), never for time to pass.
final class RunningProcess {
    private let process: Process
    private let input = Pipe(), output = Pipe(), errors = Pipe()
    private(set) var stdout = ""
    private(set) var stderr = ""

    init(_ executable: String, _ arguments: [String], in folder: String?, environment: [String: String] = [:]) throws {
        // A write to a program that has ended must fail, not end the tests.
        Glibc.signal(SIGPIPE, SIG_IGN)
        process = configuredProcess(executable, arguments, in: folder, environment: environment)
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    /// Whether it has not ended yet.
    var isRunning: Bool { process.isRunning }

    /// Types a line. A program that has ended takes nothing: the line is lost, as a person's
    /// typing would be, and the test goes on to check what it said.
    func send(_ line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Reads what the program prints until `text` shows on its standard output or error (as
    /// many times as `occurrences` says), it exits, or `timeout` seconds pass. Returns whether
    /// it showed.
    @discardableResult
    func waitFor(_ text: String, occurrences: Int = 1, timeout: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        let fds = [output.fileHandleForReading.fileDescriptor, errors.fileHandleForReading.fileDescriptor]
        var open = Set(fds)
        func seen() -> Bool {
            stdout.components(separatedBy: text).count - 1 + stderr.components(separatedBy: text).count - 1 >= occurrences
        }
        while !seen(), !open.isEmpty, Date() < deadline {
            var polls = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&polls, nfds_t(polls.count), 200) > 0 else { continue }
            for entry in polls where entry.revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 65536)
                let count = read(entry.fd, &buffer, buffer.count)
                if count <= 0 {
                    open.remove(entry.fd)
                    continue
                }
                let text = String(decoding: buffer[0..<count], as: UTF8.self)
                if entry.fd == fds[0] { stdout += text } else { stderr += text }
            }
        }
        return seen()
    }

    /// Sends a signal.
    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Closes its input, reads the rest of what it prints, and waits for it to end.
    func finish() -> ProcessResult {
        try? input.fileHandleForWriting.close()
        waitFor("\u{0}never printed\u{0}")
        process.waitUntilExit()
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return ProcessResult(status: status, stdout: stdout, stderr: stderr)
    }
}

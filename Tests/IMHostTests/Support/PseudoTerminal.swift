import Foundation

/// A pseudo-terminal a program runs on as it would on a person's terminal: its standard input,
/// output and error are the terminal's slave side; the test types on the master side and reads
/// what the program draws there. Waiting is for what appears, never for time to pass.
final class PseudoTerminal {
    private let master: Int32
    /// The slave side, kept open: the terminal's settings are read from it.
    private let slave: Int32
    /// Everything the program wrote to the terminal so far (the terminal turns "\n" into "\r\n").
    private(set) var output = ""
    private var process: Process?

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// libc's pseudo-terminal calls, which Swift's Glibc module leaves out (its headers declare
    /// them only for _XOPEN_SOURCE). Each symbol is looked up by its name and called with its C
    /// signature, which is what makes the casts safe.
    private enum LibC {
        static func function<T>(_ name: String, as type: T.Type) -> T {
            unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), name), to: type)
        }
        static let openpt = function("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
        static let grantpt = function("grantpt", as: (@convention(c) (Int32) -> Int32).self)
        static let unlockpt = function("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
        static let ptsname = function("ptsname", as: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self)
    }

    /// A terminal of `columns` × `rows`.
    init(columns: UInt16 = 100, rows: UInt16 = 40) throws {
        master = LibC.openpt(O_RDWR | O_NOCTTY)
        guard master >= 0, LibC.grantpt(master) == 0, LibC.unlockpt(master) == 0, let name = LibC.ptsname(master) else {
            throw Failure(description: "cannot make a pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        slave = open(String(cString: name), O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw Failure(description: "cannot open \(String(cString: name)): \(String(cString: strerror(errno)))") }
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
    }

    deinit {
        if let process, process.isRunning { kill(process.processIdentifier, SIGKILL) }
        close(master)
        close(slave)
    }

    /// Starts `executable` on the terminal, as every test starts a program (``configuredProcess``).
    func run(_ executable: String, _ arguments: [String], in folder: String) throws {
        let process = configuredProcess(executable, arguments, in: folder, environment: [:])
        let handle = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        self.process = process
    }

    var pid: Int32 { process?.processIdentifier ?? -1 }

    /// Types keys, as they are: "\r" is Enter, "\u{7F}" Backspace, "\u{15}" Ctrl-U.
    func type(_ keys: String) {
        var bytes = Array(keys.utf8)
        while !bytes.isEmpty {
            let written = write(master, bytes, bytes.count)
            guard written > 0 else { return }
            bytes.removeFirst(written)
        }
    }

    /// Reads what the program draws until `done` holds for all of it so far, or `timeout`
    /// seconds pass. Returns whether it held.
    @discardableResult
    func waitUntil(timeout: Double = 60, _ done: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !done(output), Date() < deadline {
            var polls = [pollfd(fd: master, events: Int16(POLLIN), revents: 0)]
            guard poll(&polls, 1, 200) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = read(master, &buffer, buffer.count)
            guard count > 0 else { break }
            output += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        return done(output)
    }

    /// Reads until `text` appears (as many times as `occurrences` says).
    @discardableResult
    func waitFor(_ text: String, occurrences: Int = 1, timeout: Double = 60) -> Bool {
        waitUntil(timeout: timeout) { $0.components(separatedBy: text).count - 1 >= occurrences }
    }

    /// What the program drew after the last `text`, once it has drawn it.
    func after(_ text: String) -> Substring? {
        output.range(of: text, options: .backwards).map { output[$0.upperBound...] }
    }

    /// Waits for the program to end, reading what it draws meanwhile; its exit status, or
    /// 128 + the signal that ended it.
    func finish() -> Int32 {
        guard let process else { return -1 }
        waitUntil(timeout: 60) { _ in !process.isRunning }
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// The terminal's settings now.
    var settings: termios {
        var settings = termios()
        tcgetattr(slave, &settings)
        return settings
    }

    /// Whether the terminal is in its usual mode: lines edited by the terminal, keys echoed.
    var isCanonical: Bool { settings.c_lflag & tcflag_t(ICANON | ECHO) == tcflag_t(ICANON | ECHO) }
}

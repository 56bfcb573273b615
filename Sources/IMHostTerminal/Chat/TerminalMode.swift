#if canImport(Glibc)
import Glibc
#endif

/// The terminal a chat is typed on, in non-canonical mode: keys come one at a time and are not
/// echoed, so the chat draws what is typed itself (``ChatScreen``) and can draw it again after a
/// message arrives. ISIG stays on: Ctrl-C, Ctrl-\ and Ctrl-Z act as they do everywhere.
///
/// The settings found are put back by ``restore()``, which the chat calls on every way out of
/// its loop (the end of input, `/quit`, SIGINT, SIGTERM, SIGQUIT, a worker that crashed too
/// often); if the process itself dies of a fatal signal, a handler puts them back before it
/// dies. A shell that took the terminal back meanwhile (Ctrl-Z, then `fg`) is noticed by
/// ``reassert()``.
final class TerminalMode {
    private let fd: Int32
    private var saved: termios
    private var chat: termios
    private var restored = false

    /// Switches `fd` to the chat's mode; `nil` when it is not a terminal that can be switched.
    init?(fd: Int32) {
        var found = termios()
        guard tcgetattr(fd, &found) == 0 else { return nil }
        var mode = found
        mode.c_lflag &= ~tcflag_t(ICANON | ECHO)
        // A read returns as soon as one byte is there (the chat polls before it reads).
        withUnsafeMutableBytes(of: &mode.c_cc) { keys in
            keys[Int(VMIN)] = 1
            keys[Int(VTIME)] = 0
        }
        // TCSANOW, not TCSAFLUSH: what was typed ahead is kept.
        guard tcsetattr(fd, TCSANOW, &mode) == 0 else { return nil }
        self.fd = fd
        saved = found
        chat = mode
        TerminalCrashGuard.install(fd: fd, settings: found)
    }

    deinit { restore() }

    /// Puts the chat's mode back if something else changed the terminal (a shell, while the
    /// chat was stopped with Ctrl-Z); returns whether it had to, so the input line is drawn again.
    func reassert() -> Bool {
        var now = termios()
        guard !restored, tcgetattr(fd, &now) == 0, now.c_lflag & tcflag_t(ICANON | ECHO) != 0 else { return false }
        return tcsetattr(fd, TCSANOW, &chat) == 0
    }

    /// Gives the terminal back as it was found. Once; later calls do nothing.
    func restore() {
        guard !restored else { return }
        restored = true
        tcsetattr(fd, TCSANOW, &saved)
        TerminalCrashGuard.uninstall()
    }
}

/// Puts a terminal's settings back when the process dies of a fatal signal (a crash of the chat's
/// supervisor itself), then lets the signal go on to whatever handled it before (Swift's
/// backtracer, or the default).
///
/// A signal handler may not lock or allocate, so what it reads is kept in memory allocated once
/// and written only while no handler is installed: ``install(fd:settings:)`` writes it before it
/// installs the handlers, ``uninstall()`` puts the old handlers back before anything is written
/// again. That ordering is what makes the unsynchronized access below safe.
private enum TerminalCrashGuard {
    static let signals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP]
    /// The terminal's descriptor, -1 while none is guarded.
    nonisolated(unsafe) static let fd: UnsafeMutablePointer<Int32> = {
        let fd = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        fd.initialize(to: -1)
        return fd
    }()
    nonisolated(unsafe) static let settings = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    /// The handlers found, by signal number.
    nonisolated(unsafe) static let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: Int(NSIG))

    static func install(fd terminal: Int32, settings found: termios) {
        uninstall()
        fd.pointee = terminal
        settings.pointee = found
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            tcsetattr(TerminalCrashGuard.fd.pointee, TCSANOW, TerminalCrashGuard.settings)
            // Blocked while this handler runs: delivered to the old handler once it returns.
            sigaction(number, TerminalCrashGuard.previous + Int(number), nil)
            raise(number)
        }
        sigemptyset(&action.sa_mask)
        for number in signals { sigaction(number, &action, previous + Int(number)) }
    }

    static func uninstall() {
        guard fd.pointee >= 0 else { return }
        for number in signals { sigaction(number, previous + Int(number), nil) }
        fd.pointee = -1
    }
}

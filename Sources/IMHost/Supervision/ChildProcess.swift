#if canImport(Glibc)
import Glibc
#endif
import CIMHostSupport

/// A child process started with `posix_spawn`, with pipes to the streams the parent wants.
///
/// The host runs plugin code it has not vetted, and chats that may crash, in children: the
/// plugin scanner and the chat worker are this executable started again. A child starts with
/// default signal dispositions and an empty signal mask whatever the parent's, without Swift's
/// crash backtracer (which takes seconds) unless `SWIFT_BACKTRACE` says otherwise, and with only
/// the descriptors handed to it: 0 to 2, the control pipe as 3, and those it is `handing` from 4;
/// every other descriptor is closed before it runs, whatever a library opened.
package final class ChildProcess {
    /// What a child's standard stream is connected to.
    package enum Stream {
        /// The parent's own.
        case inherit
        /// `/dev/null`.
        case null
        /// A pipe to the parent.
        case pipe
    }

    /// How a child ended.
    package enum Termination: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)
        /// Killed by its parent after it closed the pipe it answers on (line code closed it).
        case lostPipe

        init(status: Int32) {
            let signal = status & 0x7F
            self = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
        }

        /// Whether it was stopped from outside (SIGINT, SIGTERM, SIGHUP) rather than dying of
        /// something it did.
        var isInterruption: Bool {
            if case .signaled(let signal) = self { return [SIGINT, SIGTERM, SIGHUP].contains(signal) }
            return false
        }

        /// `SIGSEGV`, or `exit 3`.
        package var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signaled(let signal): CrashRecord.signalName(signal)
            case .lostPipe: "closed the host's pipe"
            }
        }
    }

    package let pid: pid_t
    /// The parent's ends of the pipes asked for, or -1.
    private(set) var input: Int32 = -1
    package private(set) var output: Int32 = -1
    package private(set) var errors: Int32 = -1
    /// The parent's end of a pipe the child writes as file descriptor 3, or -1.
    private(set) var control: Int32 = -1
    private(set) var termination: Termination?
    /// Readable once the child has ended (a pidfd), or -1: waiting on it with the pipes means a
    /// child that closed its pipes and is ending is noticed at once, not at the next timeout.
    package private(set) var ending: Int32 = -1

    /// Starts `executable` with `arguments` (without the program name). `boundToParent`: the
    /// child gets SIGTERM when this process dies, however it dies (even `kill -9`), for a
    /// program that cannot ask for that itself (mosquitto). The kernel ties it to the calling
    /// thread: start such a child from a thread that lives as long as the child should.
    package init(executable: String, arguments: [String], stdin: Stream, stdout: Stream, stderr: Stream,
         control wantsControl: Bool = false, handing: [Int32] = [], environment extra: [String: String] = [:],
         boundToParent: Bool = false) throws(FileSystem.Failure) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var childEnds: [Int32] = []
        var parentEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }

        /// A pipe whose child end becomes `target` in the child; returns the parent's end.
        func pipe(for target: Int32, childReads: Bool) throws(FileSystem.Failure) -> Int32 {
            var fds: [Int32] = [-1, -1]
            // Close-on-exec from the start, so only the child's copies (made by dup2 in the child)
            // survive exec, and no other child started meanwhile gets one.
            guard imhost_pipe_cloexec(&fds) == 0 else { throw FileSystem.Failure(call: "pipe2", code: errno) }
            let (child, parent) = childReads ? (fds[0], fds[1]) : (fds[1], fds[0])
            childEnds.append(child)
            parentEnds.append(parent)
            posix_spawn_file_actions_adddup2(&actions, child, target)
            return parent
        }
        func connect(_ stream: Stream, _ target: Int32, childReads: Bool) throws(FileSystem.Failure) -> Int32 {
            switch stream {
            case .inherit: return -1
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", childReads ? O_RDONLY : O_WRONLY, 0)
                return -1
            case .pipe: return try pipe(for: target, childReads: childReads)
            }
        }
        do {
            input = try connect(stdin, STDIN_FILENO, childReads: true)
            output = try connect(stdout, STDOUT_FILENO, childReads: false)
            errors = try connect(stderr, STDERR_FILENO, childReads: false)
            if wantsControl { control = try pipe(for: 3, childReads: false) }
        } catch {
            parentEnds.forEach { close($0) }
            throw error
        }
        // Handed over as 4, 5, …: a descriptor the parent holds open (a breadcrumb, a lock).
        // Held above 100 first, so a dup2 onto 4 never closes one still to be handed.
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for fd in handing {
            let high = imhost_move_high(fd, 100)
            guard high >= 0 else {
                parentEnds.forEach { close($0) }
                throw FileSystem.Failure(call: "fcntl", code: errno)
            }
            held.append(high)
        }
        for (index, fd) in held.enumerated() { posix_spawn_file_actions_adddup2(&actions, fd, Int32(4 + index)) }
        _ = imhost_spawn_close_from(&actions, !wantsControl && held.isEmpty ? 3 : Int32(4 + held.count))

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var environment = ChildProcess.environment(adding: extra)
        if environment["SWIFT_BACKTRACE"] == nil { environment["SWIFT_BACKTRACE"] = "enable=no" }
        // Bound, the child is this executable first (/proc/self/exe names it, even if its file
        // was replaced since), whose C support asks for the parent-death signal and then runs
        // `executable` in the same process (see IMHOST_BOUND_EXEC).
        let program = boundToParent ? "/proc/self/exe" : executable
        let words = (boundToParent ? [program, IMHOST_BOUND_EXEC, "\(getpid())"] : []) + [executable] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        guard result == 0 else {
            parentEnds.forEach { close($0) }
            throw FileSystem.Failure(call: "posix_spawn \(executable)", code: result)
        }
        self.pid = pid
        ending = imhost_pidfd_open(pid)
    }

    /// The descriptors to wait on for this child: `pipes` (those not at their end, or -1) and,
    /// while it has not been waited for, its end.
    package func waitable(_ pipes: [Int32]) -> [Int32] {
        (pipes + [termination == nil ? ending : -1]).filter { $0 >= 0 }
    }

    deinit {
        for fd in [input, output, errors, control, ending] where fd >= 0 { close(fd) }
        if termination == nil {
            kill(pid, SIGKILL)
            _ = wait()
        }
    }

    /// This process's environment with `extra` set.
    package static func environment(adding extra: [String: String]) -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        for (key, value) in extra { result[key] = value }
        return result
    }

    /// Waits for the child to end.
    @discardableResult
    package func wait() -> Termination {
        if let termination { return termination }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else {
                termination = .exited(-1)
                return .exited(-1)
            }
        }
        let ended = Termination(status: status)
        termination = ended
        return ended
    }

    /// How the child ended, waiting up to `milliseconds` for it on its pidfd (so an end is seen
    /// at once, not at the next turn of a polling loop); `nil` if it has not ended by then.
    package func wait(milliseconds: Int64) -> Termination? {
        let deadline = Clock.monotonic() + UInt64(max(0, milliseconds)) * 1_000_000
        while poll() == nil {
            let now = Clock.monotonic()
            guard now < deadline else { return nil }
            let left = Int32(min(Int64(Int32.max), Int64((deadline - now) / 1_000_000) + 1))
            // Without a pidfd (an old kernel), a short sleep between looks.
            _ = waitReadable(ending >= 0 ? [ending] : [], milliseconds: ending >= 0 ? left : min(left, 10))
        }
        return termination
    }

    /// How the child ended, if it has; never blocks.
    package func poll() -> Termination? {
        if let termination { return termination }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        termination = Termination(status: status)
        return termination
    }

    /// Whether the child is stopped (SIGSTOP, SIGTSTP, or traced), as `/proc` says.
    package var isStopped: Bool {
        guard termination == nil, let stat = try? FileSystem.readText("/proc/\(pid)/stat"),
              let close = stat.utf8.lastIndex(of: UInt8(ascii: ")")),
              let state = stat.utf8.index(close, offsetBy: 2, limitedBy: stat.utf8.endIndex).map({ stat.utf8[$0] }) else { return false }
        return state == UInt8(ascii: "T") || state == UInt8(ascii: "t")
    }

    /// Sends a signal, unless the child has been waited for already.
    package func signal(_ signal: Int32) {
        if termination == nil { kill(pid, signal) }
    }

    /// Closes the child's standard input: it reads end of file.
    package func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    /// Writes a whole line to the child's standard input; false when the child is gone.
    @discardableResult
    package func send(_ line: String) -> Bool {
        guard input >= 0 else { return false }
        do {
            try FileSystem.writeAll(input, Array(line.utf8) + [UInt8(ascii: "\n")])
            return true
        } catch {
            return false
        }
    }
}

/// Waits until one of `fds` is readable or `milliseconds` pass; returns the readable ones
/// (a closed pipe counts as readable: reading it says end of file).
package func waitReadable(_ fds: [Int32], milliseconds: Int32) -> [Int32] {
    var polls = fds.filter { $0 >= 0 }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    guard !polls.isEmpty else {
        if milliseconds > 0 { usleep(UInt32(milliseconds) * 1000) }
        return []
    }
    let ready = Glibc.poll(&polls, nfds_t(polls.count), milliseconds)
    guard ready > 0 else { return [] }
    return polls.filter { $0.revents != 0 }.map(\.fd)
}

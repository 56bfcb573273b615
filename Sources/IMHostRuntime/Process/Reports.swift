import IMHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Exit codes of every imhost process: 0 ok, 1 failure, 2 usage or configuration error.
public enum ExitCode {
    public static let ok: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 2
}

/// This executable, run again as a chat's worker, a plugin scanner or a photo decoder.
package enum Executable {
    /// What to start: `/proc/self/exe` where it can be run (the very file this process runs,
    /// even if the path was replaced since), else the path it was started by.
    package static let path: String = access("/proc/self/exe", X_OK) == 0 ? "/proc/self/exe" : personPath
    /// Its path, for a person to run.
    package static let personPath: String = (try? FileSystem.realPath("/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// What every process says, a line each on standard error, the same way from every command.
package enum Reports {
    /// What the host noticed since it was last asked (a line that failed to open), and what its
    /// store said.
    package static func notices(_ host: ChatHost, output: Output) {
        for notice in host.takeNotices() { output.diagnostic("imhost: \(notice)") }
        notes(host.store, output: output)
    }

    /// What the store said since it was last asked (a damaged database moved aside and what was
    /// read out of it, a read-only copy): every command that opens a store says it, whenever it
    /// happened.
    package static func notes(_ store: MessageStore?, output: Output) {
        for note in store?.takeNotes() ?? [] { output.diagnostic("imhost: \(note)") }
    }

    /// A command's exit code, or 1 when what it printed did not all reach standard output (a
    /// full disk, a reader that went away): a result that is not whole is a failure, said once.
    package static func finished(_ code: Int32, output: Output) -> Int32 {
        guard let lost = Output.lostOutput else { return code }
        if lostOutputSaid.exchange(true, ordering: .relaxed) == false {
            output.diagnostic("imhost: cannot write to standard output (\(lost)); what was printed is incomplete")
        }
        return code == ExitCode.ok ? ExitCode.failure : code
    }

    /// Whether the lost output was said already (a worker says it before its supervisor would).
    private static let lostOutputSaid = Atomic<Bool>(false)

    /// Whether standard output is gone (a closed pipe, a full disk), said once as `command`
    /// stopping: a chat nobody can read takes no more input, so nothing more is sent.
    package static func outputLost(_ output: Output, command: String) -> Bool {
        guard let lost = Output.lostOutput else { return false }
        if lostOutputSaid.exchange(true, ordering: .relaxed) == false {
            output.diagnostic("imhost \(command): cannot write to standard output (\(lost)); stopping, and no more input is read")
        }
        return true
    }
}

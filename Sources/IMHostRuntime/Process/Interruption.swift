import IMHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT, SIGTERM and SIGQUIT, noted for the loop that reads input to act on: finalize and
/// leave (exit 128 + the signal). SIGQUIT (Ctrl-\\) ends a chat as SIGTERM does, without a
/// backtrace.
package enum Interruption {
    private static let received = Atomic<Int32>(0)

    /// Notes SIGINT, SIGTERM and SIGQUIT (and `also`) from now on instead of dying of them.
    package static func install(also extra: [Int32] = []) {
        var set = sigset_t()
        sigemptyset(&set)
        for number in [SIGINT, SIGTERM, SIGQUIT] + extra {
            Glibc.signal(number) { number in Interruption.received.store(number, ordering: .relaxed) }
            sigaddset(&set, number)
        }
        // A parent may start us with them blocked (the mask is inherited): unblock them.
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// The signal received, if one was.
    package static var signal: Int32? {
        let number = received.load(ordering: .relaxed)
        return number == 0 ? nil : number
    }

    /// The conventional exit code after a signal: 128 + its number.
    package static func exitCode(_ signal: Int32) -> Int32 { 128 + signal }
}

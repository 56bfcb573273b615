import IMHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM, noted for the loop that reads input to act on: finalize and leave.
enum Interruption {
    private static let received = Atomic<Int32>(0)

    /// Notes SIGINT and SIGTERM from now on instead of dying of them.
    static func install() {
        Glibc.signal(SIGINT) { number in Interruption.received.store(number, ordering: .relaxed) }
        Glibc.signal(SIGTERM) { number in Interruption.received.store(number, ordering: .relaxed) }
        // A parent may start us with them blocked (the mask is inherited): unblock them.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// The signal received, if one was.
    static var signal: Int32? {
        let number = received.load(ordering: .relaxed)
        return number == 0 ? nil : number
    }

    /// The conventional exit code after a signal: 128 + its number.
    static func exitCode(_ signal: Int32) -> Int32 { 128 + signal }
}

#if canImport(Glibc)
import Glibc
#endif

/// Reads the process environment.
enum Environment {
    static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// ANSI colour only on a terminal, and never when `NO_COLOR` is set.
    /// Whether output written to `fd` is coloured: a terminal, and no `NO_COLOR`.
    static func colors(on fd: Int32) -> Bool {
        isatty(fd) == 1 && value("NO_COLOR") == nil
    }
}

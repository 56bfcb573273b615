#if canImport(Glibc)
import Glibc
#endif

/// Reads the process environment.
enum Environment {
    static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Whether output written to `fd` is coloured: only on a terminal that can show colour,
    /// never when `NO_COLOR` is set (to anything) or `TERM` is `dumb`.
    static func colors(on fd: Int32) -> Bool {
        isatty(fd) == 1 && value("NO_COLOR") == nil && value("TERM") != "dumb"
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Reads the process environment.
enum Environment {
    static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// ANSI colour only on a terminal, and never when `NO_COLOR` is set.
    static var colorsOnStandardOutput: Bool {
        isatty(STDOUT_FILENO) == 1 && value("NO_COLOR") == nil
    }
}

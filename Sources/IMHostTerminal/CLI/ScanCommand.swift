#if canImport(Glibc)
import Glibc
#endif
import CIMHostSupport
import IMHost
import IMHostRuntime

/// `imhost __scan FILE...`: the plugin scanner (internal); see ``Scanner``.
enum ScanCommand {
    static let command = CommandLineTool.Command(
        name: "__scan",
        summary: "the plugin scanner (internal)",
        arguments: "FILE...",
        options: [.option("--parent", .text("PID"), "the host, whose death ends the scanner")],
        help: "Opens plugin files for a host and reports on file descriptor 3; not for people.",
        hidden: true,
        run: { arguments, _ in
            // Stopped from outside only through its parent, whose death kills it too: Ctrl-C in
            // a terminal reaches the whole group, and must not look like a plugin's crash.
            for number in [SIGINT, SIGHUP, SIGTERM, SIGQUIT] { signal(number, SIG_IGN) }
            if let parent = arguments.options["--parent"].flatMap(Int32.init), imhost_die_with_parent(parent) != 0 {
                return CommandLineTool.ExitCode.failure
            }
            // Reports on their own pipe, moved out of line code's way; what line code prints on
            // standard output joins standard error, which only ever counts as last words.
            guard let reports = ControlPipe() else {
                Output.standard.diagnostic("imhost __scan: no report pipe on descriptor 3; this command is for imhost itself")
                return CommandLineTool.ExitCode.usage
            }
            dup2(STDERR_FILENO, STDOUT_FILENO)
            return Scanner.childMain(arguments.positionals, reports: reports)
        })
}

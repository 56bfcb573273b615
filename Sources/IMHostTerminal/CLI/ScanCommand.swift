#if canImport(Glibc)
import Glibc
#endif
import CIMHostSupport
import IMHost
import IMHostRuntime

/// `imhost __scan FILE...`: the plugin scanner (internal); see ``Scanner``.
enum ScanCommand {
    static let command = child(name: "__scan", summary: "the plugin scanner (internal)", arguments: "FILE...",
                               help: "Opens plugin files for a host and reports on file descriptor 3; not for people.") { files, reports in
        Scanner.childMain(files, reports: reports)
    }

    /// A child the host starts to open plugin files for it, reporting on its own pipe
    /// (descriptor 3): the scanner, and the sample drawer (`imhost __samples`).
    static func child(name: String, summary: String, arguments: String, help: String,
                      body: @escaping @Sendable ([String], ControlPipe) -> Int32) -> CommandLineTool.Command {
        CommandLineTool.Command(
            name: name, summary: summary, arguments: arguments,
            options: [.option("--parent", .text("PID"), "the host, whose death ends the child")],
            help: help, hidden: true,
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
                    Output.standard.diagnostic("imhost \(name): no report pipe on descriptor 3; this command is for imhost itself")
                    return CommandLineTool.ExitCode.usage
                }
                dup2(STDERR_FILENO, STDOUT_FILENO)
                return body(arguments.positionals, reports)
            })
    }
}

/// `imhost __samples FILE`: draws a line's samples for a host (internal); see ``SampleCheck``.
enum SamplesCommand {
    static let command = ScanCommand.child(name: "__samples", summary: "draws a line's samples (internal)", arguments: "FILE [SKIP]",
                                           help: "Opens a plugin file, draws its samples after the first SKIP and reports on file descriptor 3; not for people.") { given, reports in
        guard (1...2).contains(given.count), let skip = given.count == 2 ? Int(given[1]) : 0, skip >= 0 else {
            Output.standard.diagnostic("imhost __samples: expected a file and how many samples to skip; this command is for imhost itself")
            return CommandLineTool.ExitCode.usage
        }
        return SampleCheck.childMain(given[0], skip: skip, reports: reports)
    }
}

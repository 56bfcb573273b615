import IMHost
import IMHostRuntime

/// `imhost open URL [--external]`: opens any URL through the route table, in a supervised
/// worker: a line that crashes doing it is recorded and quarantined, and the command says so.
enum OpenCommand {
    static let command = CommandLineTool.Command(
        name: "open",
        summary: "open a URL through the route table (a chat, a line's page or route)",
        arguments: "URL",
        options: [
            .flag("--external", "open as if from outside the app (a push, the web): routes a line marked internal are refused (exit 1)"),
            .json("print the page (or what opened) as JSON; a message that shows as a placeholder has \"why\", the whole reason, and a card \"card\", its parts"),
            .width, .user,
        ],
        help: """
            Opens a URL through the host's route table, as the app would:
              imhost open house://listing/L1001
              imhost open 'im://chat?rootCateID=1&cateID=12&peer=u42'   (prints the page)
            Chat jump URLs go through the converter; a line's page URL (im://chat/<line>?...)
            opens that page unless the line is unavailable, killed or quarantined. A URL no
            route matches goes to the not-found handler, which says why (exit 1); so does a
            route of a line that is killed or quarantined. If the line's code crashes or hangs,
            the crash is recorded, the line is quarantined, and the command says so (exit 1);
            it is not run again.
            """,
        run: { arguments, output in
            guard arguments.positionals.count == 1 else {
                output.diagnostic("imhost open: expected one URL, got \(arguments.positionals.count); see imhost open --help")
                return CommandLineTool.ExitCode.usage
            }
            Interruption.install()
            guard let width = CommandLineTool.widthOption(arguments, command: "open", output: output),
                  let config = CommandLineTool.loadConfig(arguments, output: output) else {
                return CommandLineTool.ExitCode.usage
            }
            var workerArguments = ["open", arguments.positionals[0], "--config", CommandLineTool.configPath(arguments),
                                   "--width", "\(width)"]
            if let user = arguments.options["--user"] { workerArguments += ["--user", user] }
            if arguments.flags.contains("--external") { workerArguments.append("--external") }
            if arguments.flags.contains("--json") { workerArguments.append("--json") }
            if arguments.flags.contains("--verbose") { workerArguments.append("--verbose") }
            let supervised = ChatRuntime(config: config, configPath: CommandLineTool.configPath(arguments), dataFolder: config.dataFolder,
                                         user: arguments.options["--user"] ?? config.user, workerArguments: workerArguments, output: output,
                                         chat: false, restarts: false)
            return supervised.start() ?? supervised.finish()
        })
}

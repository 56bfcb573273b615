/// `imhost open URL [--external]`: opens any URL through the route table.
enum OpenCommand {
    static let command = CommandLineTool.Command(
        name: "open",
        summary: "open a URL through the route table (a chat, a line's page or route)",
        usage: "URL [--external] [--width N] [--user ID]",
        help: """
            Opens a URL through the host's route table, as the app would:
              imhost open house://listing/L1001
              imhost open 'im://chat?rootCateID=1&cateID=12&peer=u42'   (prints the page)
            Chat jump URLs go through the converter; a line's page URL (im://chat/<line>?...)
            opens that page unless the line is unavailable or killed. A URL no route matches
            goes to the not-found handler, which says why (exit 1).

              --external   open as if from outside the app (a push, the web): routes a line
                           marked internal are refused (exit 1)
              --width N    page width (default 72)
              --user ID    the signed-in user
            """,
        flags: ["--external"], options: ["--width", "--user"],
        run: { arguments, output in
            guard arguments.positionals.count == 1 else {
                output.err("imhost open: expected one URL, got \(arguments.positionals.count); see imhost open --help\n")
                return CommandLineTool.ExitCode.usage
            }
            guard let width = CommandLineTool.intOption(arguments, "--width", default: 72, command: "open", output: output),
                  let host = CommandLineTool.loadHost(arguments, output: output, durable: true) else {
                return CommandLineTool.ExitCode.usage
            }
            defer { host.signOut() }
            do {
                switch try host.open(route: arguments.positionals[0], external: arguments.flags.contains("--external")) {
                case .opened(let what):
                    output.out("opened \(what)\n")
                case .page(let page):
                    output.out(try page.render(width: width))
                }
                return CommandLineTool.ExitCode.ok
            } catch {
                output.err("imhost open: \(error)\n")
                return CommandLineTool.ExitCode.failure
            }
        })
}

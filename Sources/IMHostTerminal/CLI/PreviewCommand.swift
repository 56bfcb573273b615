#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMHostRuntime
import IMHostWeb
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// `imhost preview [FOLDER]`: the line author's workbench. Serves, to a browser on this machine,
/// every sample the line's builders give, each as the chat page draws it (phone and desktop,
/// light and dark), as the terminal draws it, with its rule errors and the accessibility
/// check's findings; takes each new build of the line as `swift build` ends.
enum PreviewCommand {
    static let command = CommandLineTool.Command(
        name: "preview",
        summary: "the line author's workbench: every sample card, live, in a browser, rebuilt as you build",
        arguments: "[FOLDER]",
        options: [
            .option("--library", .text("FILE"), "the line's built library (default: the one lib*.so in FOLDER/.build/debug that is not libIMKit.so)"),
            .option("--port", .number(1024...65535, "a port", shape: "N"), "the port to listen on (default: a free one)"),
        ],
        help: """
            For a line's package folder (as imhost new-line writes it; default: the current
            folder), serves a workbench to a browser on this machine and prints its URL. For each
            sample the line's builders give (MessageBuilder.samples, IMKit 1.4), in order, it
            shows the chat page drawing that message alone at a phone's width (375 px) and a
            desktop's (1280 px), light and dark, and the terminal's drawing; the card's rule
            errors, each with its path ('buttons[2].id: "book now" has a space; ...'); and, when
            axe-core is on this machine (make axe in the imhost checkout), the accessibility
            check's findings. The frames are chat pages: their inputs fill, their buttons press,
            and what the line answers (a new revision of the card, a message) shows.

            Build the line again (swift build, in another terminal): once the new library has
            stayed as it is for a moment, the workbench takes it, draws its samples again and
            shows them in place, keeping where you were. A build that cannot be opened, or that
            is another line's, is said in one line at the top of the page and here, and the page
            keeps the build before it. A sample that throws, crashes or takes more than 5 s is
            said under that sample (a name given twice or holding a control character too), and
            the others are drawn. Samples are drawn in a child process, while the workbench goes
            on serving.

            Nothing else is needed: no broker, no peer, no host.json. The samples' chat lives in a
            scratch folder of its own (removed when the workbench stops); the library is copied
            there, so the build folder is never locked. Serves until Ctrl-C or SIGTERM. It
            listens on 127.0.0.1 only, behind a token in the URL, as imhost web does.
            """,
        run: run)

    /// The samples' chat: the line's page, the samples from this peer.
    static let peer = "samples"
    static let chat = "im://chat?rootCateID=1&peer=" + peer

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        guard arguments.positionals.count <= 1 else {
            output.diagnostic("imhost preview: takes at most one folder, got \(arguments.positionals.count) arguments; see imhost preview --help")
            return CommandLineTool.ExitCode.usage
        }
        let folder = arguments.positionals.first ?? "."
        let library: String
        switch arguments.options["--library"].map({ Result<String, Refusal>.success($0) }) ?? findLibrary(in: folder) {
        case .success(let found): library = found
        case .failure(let refusal):
            output.diagnostic("imhost preview: " + refusal.words)
            return CommandLineTool.ExitCode.usage
        }
        guard FileIdentity.of(library) != nil else {
            output.diagnostic("imhost preview: \(TerminalText.safe(library)) does not exist; build the line first (swift build in its folder), or name its library with --library")
            return CommandLineTool.ExitCode.usage
        }
        Interruption.install()
        let scratch: ScratchFolder
        do throws(FileSystem.Failure) {
            scratch = try ScratchFolder()
        } catch {
            output.diagnostic("imhost preview: cannot make a scratch folder in \(ScratchFolder.parent): \(error)")
            return CommandLineTool.ExitCode.failure
        }
        let bench = PreviewLine(library: library, folder: scratch.path!)
        if let problem = bench.takeFirst() {
            output.diagnostic("imhost preview: \(TerminalText.safe(library)) cannot be previewed: \(TerminalText.safe(problem)); build it again, then start imhost preview again")
            return CommandLineTool.ExitCode.failure
        }
        guard let (host, config) = bench.signIn(output: output) else { return CommandLineTool.ExitCode.failure }
        let server: WebServer
        do {
            var port: UInt16 = 0
            if let text = arguments.options["--port"] { port = UInt16(text) ?? 0 }
            server = try WebServer(host: host, config: config, configPath: bench.configPath, user: PreviewLine.user, port: port, verbose: false, output: output)
        } catch {
            output.diagnostic("imhost preview: \(error); choose another with --port, or leave it out for a free one")
            return CommandLineTool.ExitCode.failure
        }
        let workbench = Workbench(chat: chat, axe: axeScript()) { page, drawnBy in bench.state(page: page, drawnBy: drawnBy) }
        server.workbench = workbench
        server.stepMilliseconds = 50
        server.takeBuild(bench.build)
        bench.waitsForDrawing = { workbench.drawnBy < workbench.build }
        server.onStep = { [unowned server] in
            switch bench.look() {
            case .nothing: break
            case .refused:
                output.diagnostic("imhost preview: " + TerminalText.safe(bench.problem ?? ""))
                server.sayWorkbench()
            case .taken(let number):
                output.out("imhost preview: took build \(number) of line \(bench.line) (\(TerminalText.safe(bench.version)))\n")
                if let problem = bench.problem { output.diagnostic("imhost preview: " + TerminalText.safe(problem)) }
                server.takeBuild(number)
            }
        }
        output.out("imhost preview: the workbench of line \(bench.line) at \(server.url.replacingOccurrences(of: "/?token=", with: "/workbench?token="))\n"
                   + "  open it in a browser on this machine; build the line again and it shows the new build; Ctrl-C stops\n")
        let code = WebServer.serve([server])
        host.signOut()
        return code
    }

    struct Refusal: Error {
        var words: String
    }

    /// The line's library in `folder`'s debug build: the one `lib*.so` there that is not IMKit's.
    static func findLibrary(in folder: String) -> Result<String, Refusal> {
        guard access(folder + "/Package.swift", R_OK) == 0 else {
            return .failure(Refusal(words: "\(TerminalText.safe(folder)) has no Package.swift: give a line's package folder (imhost new-line writes one), or its library with --library"))
        }
        let build = folder + "/.build/debug"
        let found = ((try? FileSystem.entries(of: build)) ?? []).filter { $0.hasPrefix("lib") && $0.hasSuffix(".so") && $0 != "libIMKit.so" }.sorted()
        switch found.count {
        case 1: return .success(build + "/" + found[0])
        case 0: return .failure(Refusal(words: "no build of the line in \(TerminalText.safe(build)) (no lib*.so but IMKit's); run swift build in \(TerminalText.safe(folder)) first"))
        default: return .failure(Refusal(words: "\(TerminalText.safe(build)) has \(found.count) libraries (\(found.map { TerminalText.safe($0) }.joined(separator: ", "))); name the line's with --library"))
        }
    }

    /// axe-core's script, where `make axe` puts it in the checkout this imhost was built in.
    static func axeScript() -> [UInt8]? {
        let path = NewLineCommand.checkout + "/.build/axe-core/axe.min.js"
        return FileManager.default.contents(atPath: path).map(Array.init)
    }
}

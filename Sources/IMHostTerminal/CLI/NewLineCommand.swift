import IMHost
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// `imhost new-line NAME [--path DIR] [--imkit PATH]`: writes a line package that builds with
/// `swift build` and loads at once: a page, one message builder with a tap, one route, a
/// service, a scenario and a README, against this checkout's IMKit.
enum NewLineCommand {
    static let command = CommandLineTool.Command(
        name: "new-line",
        summary: "write a new business line's package, ready to build and load",
        usage: "NAME [--path DIR] [--imkit PATH] [--root-cate-id N]",
        help: """
            Writes a Swift package for a business line called NAME (its line id: lowercase
            letters, digits and '-', starting with a letter, at most 32), in DIR (default
            ./NAME), which must not exist or be empty:

              Package.swift                  a dynamic library depending on IMKit by path
              Sources/<Name>/<Name>Line.swift  the line: id, registration, a route, a service
                                             (NoteHistory) and the entry point
              Sources/<Name>/<Name>Page.swift  its carrier page
              Sources/<Name>/NoteBuilder.swift a message, '<id>.note', whose tap opens a route
              scenario.json                  a scenario for imhost play
              README.md                      how to build, install, enable and try it

            It builds with `swift build` and the host loads it as it is; imhost new-line prints
            the commands. The line is built against this checkout's IMKit and by the Swift
            compiler `imhost --version` names, as every line must be.

              --path DIR          where to write the package (default ./NAME)
              --imkit PATH        IMKit's package folder (default: this checkout's Sources/IMKit)
              --root-cate-id N    the category the README and scenario route to the line
                                  (default 100)
            """,
        flags: [], options: ["--path", "--imkit", "--root-cate-id"],
        run: run)

    /// Where this checkout's IMKit package is, from where this file was compiled.
    static let checkoutIMKit: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)  // CLI/NewLineCommand.swift, IMHostTerminal, Sources
        return parts.joined(separator: "/") + "/Sources/IMKit"
    }()

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        func refuse(_ text: String, _ code: Int32 = CommandLineTool.ExitCode.usage) -> Int32 {
            output.diagnostic("imhost new-line: \(text)")
            return code
        }
        guard arguments.positionals.count == 1 else {
            return refuse("expected one NAME, got \(arguments.positionals.count); see imhost new-line --help")
        }
        let id = arguments.positionals[0]
        guard LineID.isValid(id) else {
            return refuse("'\(id)' is not a line id: use lowercase letters, digits and '-', starting with a letter, at most \(LineID.maximumLength), and not 'im' (it is also the scheme of the line's routes)")
        }
        var cate = 100
        if let text = arguments.options["--root-cate-id"] {
            guard let number = Int(text), number > 0, number <= Int(Int32.max) else {
                return refuse("--root-cate-id takes a whole number from 1, got '\(text)'")
            }
            cate = number
        }
        // A folder whose name has controls, or bytes that are not UTF-8 (decoded to U+FFFD, so
        // another folder than the one asked for), is refused rather than made.
        // (Checked made absolute, so a working folder with such a name is refused too.)
        let folder = absolute(arguments.options["--path"] ?? id)
        let imkit = absolute(arguments.options["--imkit"] ?? checkoutIMKit)
        for (option, path) in [(arguments.options["--path"] == nil ? "the folder" : "--path", folder), ("--imkit", imkit)]
        where path.unicodeScalars.contains(where: { TerminalText.needsEscape($0, newlines: false) || $0 == "\u{FFFD}" }) {
            return refuse("\(option) '\(path)' has control characters or bytes that are not UTF-8; choose a plain path")
        }
        guard access(imkit + "/Package.swift", R_OK) == 0 else {
            return refuse("cannot find IMKit's package at \(imkit) (no Package.swift there); pass --imkit PATH to a checkout's Sources/IMKit")
        }
        var undecodable: [String] = []
        if let entries = try? FileSystem.entries(of: folder, undecodable: &undecodable), !entries.isEmpty || !undecodable.isEmpty {
            return refuse("\(folder) exists and is not empty; choose another --path, or remove it", CommandLineTool.ExitCode.failure)
        }
        let type = typeName(id)
        let files = LineTemplate(id: id, type: type, imkit: imkit, rootCateID: cate).files
        do throws(FileSystem.Failure) {
            for (path, text) in files {
                let full = folder + "/" + path
                try FileSystem.makeFolders(FileSystem.directory(of: full))
                try FileSystem.writeAtomically(Array(text.utf8), to: full, mode: 0o644)
            }
        } catch {
            return refuse("cannot write \(folder): \(error.call): \(error)", CommandLineTool.ExitCode.failure)
        }
        output.out(TerminalText.safe("""
            Created line '\(id)' in \(folder):
            \(files.map { "  " + $0.path }.joined(separator: "\n"))

            Next:
              cd \(folder) && swift build
              install -m 0644 .build/debug/lib\(type).so <your Plugins folder>/\(id).so
              in host.json: "lines": { "\(id)": { "enabled": true } }
                            "routes": [ { "rootCateID": \(cate), "cateID": "*", "line": "\(id)" } ]
              imhost play scenario.json

            """, newlines: true))
        return CommandLineTool.ExitCode.ok
    }

    /// `used-cars` → `UsedCars`: the module and type names.
    static func typeName(_ id: String) -> String {
        id.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// Joined to the working folder as given (`FileSystem.resolve` would also fold `..`).
    private static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileSystem.currentDirectory() + "/" + path
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMHostRuntime
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// `imhost new-line NAME [--path DIR] [--imkit PATH]`: writes a line package that builds with
/// `swift build` and loads at once: a page, one message builder with a tap, one route, a
/// service, a scenario, a host.json to try it with, and a README, against this checkout's IMKit.
/// `--example house|jobs|cars` writes one of the lines that ship with the host instead.
enum NewLineCommand {
    static let command = CommandLineTool.Command(
        name: "new-line",
        summary: "write a new business line's package, ready to build and load",
        arguments: "NAME | --example house|jobs|cars",
        options: [
            .option("--path", .text("DIR"), "where to write the package (default ./NAME)"),
            .option("--imkit", .text("PATH"), "IMKit's package folder (default: this checkout's Sources/IMKit)"),
            rootCateID,
            .option("--example", .choice(ExampleLine.all.map(\.id)), "write this line that ships with the host instead of a new one"),
            .json("what was written, where, and what to add to a host's host.json, as JSON"),
        ],
        help: """
            Writes a Swift package for a business line called NAME (its line id: lowercase
            letters, digits and '-', starting with a letter, at most 32), in DIR (default
            ./NAME), which must not exist or be empty:

              Package.swift                  a dynamic library depending on IMKit by path
              Sources/<Name>/<Name>Line.swift  the line: id, registration, a route, a service
                                             (NoteHistory) and the entry point
              Sources/<Name>/<Name>Page.swift  its carrier page, with a bottom-bar item of its own
              Sources/<Name>/NoteBuilder.swift a message, '<id>.note', whose tap opens a route
              scenario.json                  a scenario for imhost play
              host.json                      a host of its own (plugins in ./Plugins) that
                                             enables the line and routes to it, to try it here
              README.md                      how to build, install, enable and try it

            It builds with `swift build` and the host loads it as it is; imhost new-line prints
            the commands, which work as printed. The line is built against this checkout's
            IMKit and by the Swift compiler `imhost --version` names, as every line must be.

            With --example, writes one of the lines that ship with the host, whole: house (a
            listing card, a service, a route), jobs (a card the page answers, a bar item) or
            cars (a card whose tap crashes on purpose, to see containment), in DIR (default
            ./house, ./jobs, ./cars), with the same scenario, host.json and README.
            """,
        run: run)

    static let rootCateID = CommandLineTool.Option.option(
        "--root-cate-id", .number(1...Int(Int32.max), "a whole number", default: 100),
        "the category the host.json, README and scenario route to the line")

    /// What `--json` says was written: the package's folder and files, the library its build
    /// makes and where a host takes it, and the members a host's host.json needs for it.
    struct Created: Encodable {
        var line: String
        var folder: String
        var files: [String]
        /// In the folder, once `swift build` made it.
        var library: String
        /// Where the package's own host.json (and any host) takes the library, in its folder.
        var install: String
        var hostJSON: HostMembers
    }

    /// The "lines" and "routes" members that enable a line and route to it.
    struct HostMembers: Encodable {
        var lines: [String: [String: Bool]]
        var routes: [Route]

        struct Route: Codable {
            var rootCateID: Int
            var cateID: CateID
            var line: String
        }

        /// `"*"`, or the sub-categories.
        enum CateID: Codable {
            case every(String), some([Int])

            init(from decoder: any Decoder) throws {
                let value = try decoder.singleValueContainer()
                if let ids = try? value.decode([Int].self) {
                    self = .some(ids)
                } else {
                    self = .every(try value.decode(String.self))
                }
            }

            func encode(to encoder: any Encoder) throws {
                var value = encoder.singleValueContainer()
                switch self {
                case .every(let all): try value.encode(all)
                case .some(let ids): try value.encode(ids)
                }
            }
        }

        /// From the routes as the text output writes them, so both say the same.
        init(id: String, routing: String) {
            lines = [id: ["enabled": true]]
            routes = (try? JSONDecoder().decode([Route].self, from: Data(("[" + routing + "]").utf8))) ?? []
        }
    }

    /// The checkout this imhost was built in, as an absolute path, so a new line's Package.swift
    /// names its IMKit wherever the line is written: the checkout the running executable lies in
    /// (its build folder is `<checkout>/.build/<triple>/debug`; a link to it, as on PATH, is
    /// resolved), so a checkout moved since is still found; else where this file was compiled.
    static let checkout: String = {
        var folder = FileSystem.directory(of: CommandLineTool.executablePath)
        while folder.hasPrefix("/"), folder != "/" {
            if access(folder + "/Sources/IMKit/Package.swift", R_OK) == 0 { return folder }
            folder = FileSystem.directory(of: folder)
        }
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)  // CLI/NewLineCommand.swift, IMHostTerminal, Sources
        return parts.joined(separator: "/")
    }()

    /// Where this checkout's IMKit package is.
    static var checkoutIMKit: String { checkout + "/Sources/IMKit" }

    /// Module names a line's cannot be: Swift's own, the platform's, and the SDK's.
    static let reservedModules: Set<String> = [
        "Swift", "Foundation", "FoundationEssentials", "FoundationInternationalization", "Glibc", "Musl", "Darwin", "Dispatch",
        "XCTest", "Testing", "Observation", "Synchronization", "Distributed", "RegexBuilder", "Cxx", "CxxStdlib", "SwiftShims",
        "IMKit", "CIMKitABI", "IMHost", "IMHostTerminal", "CIMHostSupport", "PackageDescription", "PackagePlugin",
        "House", "Jobs", "Cars",
    ]

    static func run(_ arguments: Arguments, _ output: Output) -> Int32 {
        func refuse(_ text: String, _ code: Int32 = CommandLineTool.ExitCode.usage) -> Int32 {
            output.diagnostic("imhost new-line: \(text)")
            return code
        }
        let example = arguments.options["--example"]
        if let example {
            guard arguments.positionals.isEmpty else {
                return refuse("an example keeps its own line id ('\(example)'); drop NAME, and choose the folder with --path")
            }
            guard arguments.options["--root-cate-id"] == nil else {
                return refuse("an example keeps its own routes; drop --root-cate-id")
            }
        } else if arguments.positionals.count != 1 {
            return refuse("expected one NAME, got \(arguments.positionals.count); see imhost new-line --help")
        }
        let id = example ?? arguments.positionals[0]
        guard LineID.isValid(id) else {
            return refuse("'\(id)' is not a line id: use lowercase letters, digits and '-', starting with a letter, at most \(LineID.maximumLength), and not 'im' (it is also the scheme of the line's routes)")
        }
        let type = typeName(id)
        if example == nil, reservedModules.contains(type) || reservedModules.contains(where: { $0.lowercased() == type.lowercased() }) {
            return refuse("'\(id)' would make a module named \(type), which Swift, the platform, the SDK or a line that ships with the host already uses; choose another name, e.g. '\(id)-line'")
        }
        let cate = arguments.number(rootCateID)!
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
        let files: [(path: String, text: String)]
        let routes: [(Int, String)]
        do throws(FileSystem.Failure) {
            if let example = example.flatMap(ExampleLine.named) {
                files = try example.files(sources: checkout + "/Sources/Lines/" + example.type, imkit: imkit)
                routes = example.routes
            } else {
                files = LineTemplate(id: id, type: type, imkit: imkit, rootCateID: cate).files
                routes = [(cate, "\"*\"")]
            }
            for (path, text) in files {
                let full = folder + "/" + path
                // As `mkdir -p` and an editor make them: the umask decides who may read.
                try FileSystem.makeFolders(FileSystem.directory(of: full), mode: 0o777)
                try FileSystem.writeAtomically(Array(text.utf8), to: full, mode: 0o666)
            }
        } catch {
            return refuse("cannot write \(folder): \(error.call): \(error)", CommandLineTool.ExitCode.failure)
        }
        let routing = routes.map { #"{ "rootCateID": \#($0.0), "cateID": \#($0.1), "line": "\#(id)" }"# }.joined(separator: ", ")
        if arguments.flags.contains("--json") {
            output.out(JSONOutput.encode(Created(line: id, folder: folder, files: files.map(\.path), library: ".build/debug/lib\(type).so",
                                                 install: "Plugins/\(id).so", hostJSON: .init(id: id, routing: routing))))
            warnOfClash(id, arguments: arguments, output: output)
            return CommandLineTool.ExitCode.ok
        }
        output.out(TerminalText.safe("""
            Created line '\(id)' in \(folder):
            \(files.map { "  " + $0.path }.joined(separator: "\n"))

            Next, try it there (its host.json enables the line and routes to it):
              cd \(folder) && swift build
              mkdir -p Plugins && install -m 0644 .build/debug/lib\(type).so Plugins/\(id).so
              \(CommandLineTool.executablePath) play scenario.json
            Then, to add it to a host: install the library into that host's Plugins folder as
            \(id).so, and add to its host.json:
              "lines": { "\(id)": { "enabled": true } },
              "routes": [ \(routing) ]

            """, newlines: true))
        warnOfClash(id, arguments: arguments, output: output)
        return CommandLineTool.ExitCode.ok
    }

    /// Says, in one line, when the host in this folder (its host.json) already has a file for the
    /// line: two files claiming one line are both refused until host.json pins one.
    private static func warnOfClash(_ id: String, arguments: Arguments, output: Output) {
        let path = CommandLineTool.configPath(arguments)
        guard access(path, R_OK) == 0, let config = try? HostConfig.load(from: path) else { return }
        let host = CommandLineTool.makeHost(config)
        guard let taken = host.lines.rows.first(where: { $0.lineID == id && $0.file != nil }), let name = taken.fileName else { return }
        output.diagnostic("imhost new-line: note: the host at \(path) already has line '\(id)' in \(name); a second file for it gets both refused until host.json pins one (\"lines\": { \"\(id)\": { \"file\": \"\(name)\" } }), so choose another NAME unless you mean to replace \(name)")
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

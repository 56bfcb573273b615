import CIMHostSupport
import Foundation
import Testing

/// One fenced block of a Markdown file of the repository.
struct DocBlock: Sendable, CustomTestStringConvertible {
    /// The file, relative to the repository: `docs/using.md`.
    var file: String
    /// The line of its opening fence, from 1.
    var line: Int
    /// What follows the opening fence: `sh test`, `swift`, or nothing.
    var info: String
    var code: String

    var place: String { "\(file):\(line)" }
    var testDescription: String { place }
}

/// The Markdown the docs are: README.md and every file under docs/.
enum Docs {
    static let root = BuildProducts.repository

    /// The files, relative to the repository, in a fixed order.
    static let files: [String] = {
        var found = ["README.md"]
        let docs = root + "/docs"
        for case let path as String in FileManager.default.enumerator(atPath: docs) ?? NSEnumerator() where path.hasSuffix(".md") {
            found.append("docs/" + path)
        }
        return found.sorted()
    }()

    static func text(_ file: String) -> String {
        (try? String(contentsOfFile: root + "/" + file, encoding: .utf8)) ?? ""
    }

    /// Every fenced block of `file`: ``` or ~~~ fences, indented or not (a block inside a list
    /// item is indented as the item is; that indentation is not the code's).
    static func blocks(of file: String) -> [DocBlock] {
        var blocks: [DocBlock] = []
        var open: (fence: String, indent: Int, line: Int, info: String, lines: [String])?
        for (index, raw) in text(file).components(separatedBy: "\n").enumerated() {
            let indent = raw.prefix { $0 == " " }.count
            let rest = raw.dropFirst(indent)
            if var current = open {
                if rest.hasPrefix(current.fence), rest.trimmingCharacters(in: .whitespaces).allSatisfy({ $0 == current.fence.first }) {
                    blocks.append(DocBlock(file: file, line: current.line, info: current.info,
                                           code: current.lines.joined(separator: "\n") + "\n"))
                    open = nil
                } else {
                    current.lines.append(String(raw.dropFirst(min(indent, current.indent))))
                    open = current
                }
                continue
            }
            for mark in ["`", "~"] where rest.hasPrefix(String(repeating: mark, count: 3)) {
                let fence = String(rest.prefix { String($0) == mark })
                let info = rest.dropFirst(fence.count).trimmingCharacters(in: .whitespaces)
                open = (fence, indent, index + 1, info, [])
            }
        }
        return blocks
    }

    static let all: [DocBlock] = files.flatMap(blocks(of:))

    /// The blocks tagged to run: fenced as ```sh test.
    static let tagged: [DocBlock] = all.filter { $0.info == "sh test" }

    /// The guides, each for one audience, and the reference's pages.
    static let guides = ["docs/using.md", "docs/writing-a-line.md", "docs/operating.md", "docs/performance.md"]
    static let reference = ["docs/reference/README.md", "docs/reference/host-json.md", "docs/reference/wire.md",
                            "docs/reference/store.md", "docs/reference/limits.md"]
}

/// The docs run: every block tagged `sh test` in README.md and docs/ runs as a reader would run
/// it, and every link between the docs lands.
///
/// A block runs with bash (`-e -o pipefail`: a command that fails fails the block, so a block that
/// shows a failure says `|| ...`) in a scratch folder laid out as a checkout after `make plugins`:
/// host.json, Plugins/ with the house, jobs and cars lines, and .build/debug (the built products,
/// `imhost` among them, also on PATH). HOME and TMPDIR are folders of the scratch folder, so a
/// block's `mktemp -d` and `~/.local/bin` are removed with it. It has 30 s, gets no input, and
/// must stop everything it started (a broker it ran in the background): what is still running
/// when it ends fails it. A block that cannot run on one machine in 30 s is left untagged and
/// says why.
@Suite("The docs run", .heavy(.broker), .serialized)
struct DocsTests {
    static let seconds = 30.0

    @Test("a tagged block runs and passes", arguments: Docs.tagged)
    func taggedBlock(_ block: DocBlock) throws {
        let scratch = try Workspace()
        let work = scratch.root + "/work"
        for folder in [work, work + "/Plugins", work + "/.build", scratch.root + "/home", scratch.root + "/tmp"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        }
        try FileManager.default.copyItem(atPath: Docs.root + "/host.json", toPath: work + "/host.json")
        for (product, name) in [("House", "house.so"), ("Jobs", "jobs.so"), ("Cars", "cars.so")] {
            try FileManager.default.copyItem(atPath: BuildProducts.library(product), toPath: work + "/Plugins/" + name)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: work + "/Plugins/" + name)
        }
        try FileManager.default.createSymbolicLink(atPath: work + "/.build/debug", withDestinationPath: BuildProducts.folder)
        let script = scratch.root + "/block.sh"
        try block.code.write(toFile: script, atomically: true, encoding: .utf8)

        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IMHOST_") }
        environment["PATH"] = BuildProducts.folder + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["HOME"] = scratch.root + "/home"
        environment["TMPDIR"] = scratch.root + "/tmp"
        environment["NO_COLOR"] = "1"
        let result = try ShellRun(script: script, in: work, output: scratch.root + "/output", environment: environment, seconds: Self.seconds)
        let said = result.output.split(separator: "\n", omittingEmptySubsequences: false).suffix(60).joined(separator: "\n")
        let finished = !result.timedOut, passed = result.status == 0, stopped = result.leftRunning.isEmpty
        #expect(finished, "\(block.place): the block did not finish within \(Int(Self.seconds)) s; what it printed last:\n\(said)")
        #expect(!finished || passed, "\(block.place): the block failed (exit \(result.status)); what it printed last:\n\(said)")
        #expect(stopped, "\(block.place): the block left running: \(result.leftRunning.joined(separator: "; ")); stop what a block starts")
    }

    @Test("the guides and the reference are there, each with its contents, and the tags are ones the docs run knows")
    func guides() throws {
        for file in Docs.guides + Docs.reference {
            let text = Docs.text(file)
            #expect(!text.isEmpty, "\(file) is missing")
            #expect(text.contains("\n## Contents\n"), "\(file) has no table of contents (## Contents)")
        }
        #expect(Docs.tagged.count >= 12, "only \(Docs.tagged.count) tagged blocks")
        for guide in ["docs/using.md", "docs/writing-a-line.md", "docs/operating.md"] {
            #expect(Docs.tagged.contains { $0.file == guide }, "\(guide) has no tagged block")
        }
        // A tag mistyped would leave a block unrun without a word.
        for block in Docs.all where block.info.contains("test") {
            #expect(block.info == "sh test", "\(block.place): the block is fenced '\(block.info)'; a block that runs is fenced ```sh test")
        }
        let readme = Docs.text("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        #expect(lines <= 250, "README.md has \(lines) lines; at most 250")
        for guide in Docs.guides {
            #expect(readme.contains("](\(guide))"), "the README does not link \(guide)")
        }
        #expect(readme.contains("](docs/reference/)") || readme.contains("](docs/reference/README.md)"), "the README does not link the reference")
    }

    /// GitHub's anchor for a heading: lowercased, punctuation dropped (hyphens and underscores
    /// kept), spaces made hyphens; a repeated one gets -1, -2, ...
    static func anchors(of file: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors = Set<String>()
        var inFence = false
        for line in Docs.text(file).components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") { inFence.toggle(); continue }
            guard !inFence, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            var slug = ""
            for character in title.lowercased() {
                if character == " " { slug.append("-") }
                else if character.isLetter || character.isNumber || character == "-" || character == "_" { slug.append(character) }
            }
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    @Test("every link in the docs lands: a file of the repository, and a heading of it when it names one")
    func links() throws {
        // [text](target) outside code: inline links only, which is all the docs use.
        let link = /\]\(([^)\s]+)\)/
        for file in Docs.files {
            var inFence = false
            for (index, line) in Docs.text(file).components(separatedBy: "\n").enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") { inFence.toggle(); continue }
                guard !inFence else { continue }
                // Code spans hold text, not links.
                let prose = line.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
                for match in prose.matches(of: link) {
                    let target = String(match.1)
                    if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") { continue }
                    let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                    let folder = (file as NSString).deletingLastPathComponent
                    let path = parts[0].isEmpty ? file : ((folder as NSString).appendingPathComponent(parts[0]) as NSString).standardizingPath

                    var isFolder: ObjCBool = false
                    let exists = FileManager.default.fileExists(atPath: Docs.root + "/" + path, isDirectory: &isFolder)
                    #expect(exists, "\(file):\(index + 1): \(target) names \(path), which is not in the repository")
                    guard exists, parts.count == 2 else { continue }
                    let page = isFolder.boolValue ? path + "/README.md" : path
                    let lands = Self.anchors(of: page).contains(parts[1])
                    #expect(lands, "\(file):\(index + 1): \(target): \(page) has no heading #\(parts[1])")
                }
            }
        }
    }

    @Test("every Swift block of the line author's guide is code the build compiles: lines of a line in Sources/Lines or Tests/Fixtures")
    func swiftBlocksCompile() throws {
        var sources: [String: [String]] = [:]
        for folder in ["Sources/Lines", "Tests/Fixtures", "Tests/Compatibility"] {
            for case let path as String in FileManager.default.enumerator(atPath: Docs.root + "/" + folder) ?? NSEnumerator() where path.hasSuffix(".swift") {
                let text = try String(contentsOfFile: Docs.root + "/" + folder + "/" + path, encoding: .utf8)
                sources[folder + "/" + path] = text.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            }
        }
        let blocks = Docs.blocks(of: "docs/writing-a-line.md").filter { $0.info == "swift" }
        #expect(blocks.count >= 8, "\(blocks.count) Swift blocks")
        for block in blocks {
            let lines = block.code.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let found = sources.first { _, source in
                let kept = source.filter { !$0.isEmpty }
                guard kept.count >= lines.count else { return false }
                return (0...(kept.count - lines.count)).contains { start in Array(kept[start..<(start + lines.count)]) == lines }
            }
            #expect(found != nil, "\(block.place): this Swift block is in no line the build compiles (Sources/Lines, Tests/Fixtures); copy it from one, so it stays true")
        }
    }
}

/// A bash script run in a session of its own, so everything it starts can be found and stopped.
struct ShellRun {
    var status: Int32 = -1
    var timedOut = false
    var output = ""
    /// What was still running in its session when it ended: "pid command".
    var leftRunning: [String] = []

    init(script: String, in folder: String, output path: String, environment: [String: String], seconds: Double) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The signals a shell expects: the test runner ignores SIGPIPE, which a child would keep.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        // POSIX_SPAWN_SETSID (0x80 in glibc): the shell leads a session of its own.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | 0x80))
        // A first shell goes into the folder, then becomes the block's shell.
        let words = ["/bin/bash", "--noprofile", "--norc", "-c", #"cd "$0" && exec /bin/bash --noprofile --norc -e -o pipefail "$1""#, folder, script]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw Workspace.Failure("posix_spawn bash: \(String(cString: strerror(spawned)))") }

        var waited: Int32 = 0
        Self.awaitEnd(of: [pid], until: Date().addingTimeInterval(seconds))
        if waitpid(pid, &waited, WNOHANG) != pid {
            timedOut = true
            kill(-pid, SIGKILL)
            _ = waitpid(pid, &waited, 0)
        }
        if !timedOut {
            status = (waited & 0x7f) == 0 ? (waited >> 8) & 0xff : 128 + (waited & 0x7f)
        }
        // What the block started may take a moment to end after it (a broker told to stop).
        let settle = Date().addingTimeInterval(3)
        var remaining = Self.members(of: pid)
        while !remaining.isEmpty, Date() < settle, Self.awaitEnd(of: remaining.map(\.pid), until: settle) {
            remaining = Self.members(of: pid)
        }
        if !timedOut { leftRunning = remaining.map { "\($0.pid) \($0.command)" } }
        for member in remaining { kill(member.pid, SIGKILL) }
        output = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// Waits until each of `pids` has ended (its pidfd turns readable) or `deadline` passes, on
    /// the processes' own ends, not on a clock. Returns false when it could watch none of them.
    @discardableResult
    static func awaitEnd(of pids: [pid_t], until deadline: Date) -> Bool {
        let fds = pids.map { imhost_pidfd_open($0) }.filter { $0 >= 0 }
        defer { fds.forEach { close($0) } }
        var polls = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard !polls.isEmpty else { return false }
        while !polls.isEmpty {
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            guard left > 0, poll(&polls, nfds_t(polls.count), left) > 0 else { break }
            polls.removeAll { $0.revents != 0 }
        }
        return true
    }

    /// The live processes of session `session` (zombies aside): their ids and command lines.
    static func members(of session: pid_t) -> [(pid: pid_t, command: String)] {
        var found: [(pid: pid_t, command: String)] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After "(command) ": state, ppid, pgrp, session.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 3, fields[0] != "Z", pid_t(fields[3]) == session else { continue }
            let command = ((try? String(contentsOfFile: "/proc/\(name)/cmdline", encoding: .utf8)) ?? "")
                .replacingOccurrences(of: "\u{0}", with: " ").trimmingCharacters(in: .whitespaces)
            found.append((pid, command))
        }
        return found
    }
}

import Foundation
import IMHost
import IMKit
import Testing

/// Where the build put the products the tests load: the folder of the test binary.
enum BuildProducts {
    static let folder: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // swift test runs <build>/debug/<package>PackageTests.xctest
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("libIMKit.so").path), url.path != "/" {
            url = url.deletingLastPathComponent()
        }
        return url.path
    }()

    /// A plugin product built by SwiftPM, e.g. `libHouse.so`.
    static func library(_ name: String) -> String { folder + "/lib\(name).so" }

    /// The `imhost` executable.
    static var imhost: String { folder + "/imhost" }

    /// The repository's root folder.
    static let repository: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
}

/// A temporary folder with a host.json and a plugin folder, as an operator would lay them out.
/// Removed when released.
final class Workspace {
    let root: String
    var plugins: String { root + "/Plugins" }
    var configPath: String { root + "/host.json" }

    init() throws {
        var template = Array(URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("imhost-test-XXXXXX").path.utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure("mkdtemp failed") }
        root = String(cString: made)
        try FileManager.default.createDirectory(atPath: root + "/Plugins", withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o755])
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// A workspace with house and jobs installed and the standard host.json.
    static func standard() throws -> Workspace {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.writeConfig()
        return workspace
    }

    /// The usual configuration: house and jobs enabled, the routes of the checkout's host.json.
    static let standardConfig = """
        {
          "plugins": "Plugins",
          "lines": { "house": { "enabled": true }, "jobs": { "enabled": true } },
          "routes": [
            { "rootCateID": 1, "cateID": "*", "line": "house" },
            { "rootCateID": 9, "cateID": [12, 13], "line": "jobs" }
          ],
          "killSwitch": { "lines": [], "messages": [], "components": [] }
        }
        """

    @discardableResult
    func writeConfig(_ text: String = Workspace.standardConfig) throws -> String {
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
        return configPath
    }

    /// Copies a built plugin product into the plugin folder.
    func install(_ product: String, as name: String, mode: Int = 0o644) throws {
        let target = plugins + "/" + name
        try FileManager.default.copyItem(atPath: BuildProducts.library(product), toPath: target)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: target)
    }

    /// Installs the house and jobs lines.
    func installLines() throws {
        try install("House", as: "house.so")
        try install("Jobs", as: "jobs.so")
    }

    /// Compiles a C fixture from Tests/Fixtures/C into the plugin folder (or `folder`).
    func compileC(_ source: String, as name: String, defines: [String] = [], extra: [String] = [],
                  swiftVersion: String = SwiftCompiler.version, into folder: String? = nil) throws {
        let output = (folder ?? plugins) + "/" + name
        let arguments = ["-shared", "-fPIC", "-O0", "-o", output,
                         "-I", BuildProducts.repository + "/Sources/IMKit/Sources/CIMKitABI/include",
                         BuildProducts.repository + "/Tests/Fixtures/C/" + source,
                         "-DSWIFT_VERSION=\"\(swiftVersion)\""]
            + defines.map { "-D" + $0 } + extra
        let result = try run("/usr/bin/cc", arguments)
        guard result.status == 0 else { throw Failure("cc failed: \(result.stderr)") }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: output)
    }

    /// Writes a file into the plugin folder.
    func writePlugin(_ name: String, contents: String, mode: Int = 0o644) throws {
        let path = plugins + "/" + name
        try contents.write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    /// Loads the host from this workspace's host.json the way every imhost command does: the
    /// plugin cache in the data folder, the scanner (the built imhost) for new files, pins and
    /// the quarantine. Conversations are kept in memory unless `durable`.
    func host(user: String? = nil, durable: Bool = false) throws -> ChatHost {
        try ChatHost(configPath: configPath, options: ChatHost.Options(user: user, durable: durable, scanner: BuildProducts.imhost))
    }

    /// The data folder host.json names by default.
    var data: String { root + "/.imhost" }

    /// Whether this process has opened a library of this workspace's plugin folder: asked of the
    /// dynamic loader (reading /proc/self/maps can miss a line while other tests map files).
    func isMapped(_ name: String) -> Bool {
        // RTLD_NOLOAD opens nothing: it finds a library already loaded under this path. The
        // reference it adds is never dropped, as the host never unloads a plugin either.
        dlopen(plugins + "/" + name, RTLD_LAZY | RTLD_NOLOAD) != nil
    }
}

/// The result of running a program.
struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// A process for `executable` as every test starts one: in `folder`, with this environment
/// plus `environment`, and `NO_COLOR` so output compares as plain text.
func configuredProcess(_ executable: String, _ arguments: [String], in folder: String?,
                       environment: [String: String]) -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let folder { process.currentDirectoryURL = URL(fileURLWithPath: folder) }
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    for (key, value) in environment { env[key] = value }
    process.environment = env
    return process
}

/// Runs a program to completion, feeding it `input`, and collects what it printed.
func run(_ executable: String, _ arguments: [String], input: String? = nil,
         currentDirectory: String? = nil, environment: [String: String] = [:]) throws -> ProcessResult {
    let process = configuredProcess(executable, arguments, in: currentDirectory, environment: environment)
    let out = Pipe(), err = Pipe(), inp = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = inp
    try process.run()
    if let input { inp.fileHandleForWriting.write(Data(input.utf8)) }
    try inp.fileHandleForWriting.close()
    // Read both pipes to the end before waiting, so a chatty child never blocks on a full pipe.
    // Written by the reader task and read only after group.wait(), which orders the two.
    nonisolated(unsafe) var errData = Data()
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus,
                         stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
}

/// Runs the built `imhost` executable.
func imhost(_ arguments: [String], input: String? = nil, in workspace: Workspace? = nil,
            environment: [String: String] = [:]) throws -> ProcessResult {
    try run(BuildProducts.imhost, arguments, input: input, currentDirectory: workspace?.root, environment: environment)
}


/// What the first chat of a store without a transport says on standard error, once.
let noTransportNotice = "imhost: no transport in host.json: this host works alone, and what you send stays queued (said once)\n"

/// A small disk of a test's own, to fill: a tmpfs mounted on a workspace's folder, which needs
/// root (and a machine that lets root mount).
enum SmallDisk {
    /// Whether a tmpfs can be mounted here: tried once, on a folder of its own, and unmounted.
    static let canMount: Bool = {
        guard geteuid() == 0, let workspace = try? Workspace() else { return false }
        let folder = workspace.root + "/probe"
        guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil,
              (try? run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", folder]))?.status == 0 else { return false }
        _ = try? run("/bin/umount", [folder])
        return true
    }()

    static let why: Comment = "needs to mount a small tmpfs to fill, which only root can (and only where the machine allows it)"
}

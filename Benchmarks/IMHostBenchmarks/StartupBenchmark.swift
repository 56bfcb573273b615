import Foundation

/// Start-up: process start to first rendered chat page, with 2, 20 and 200 plugins installed.
/// The plugins are house, jobs, and copies of the bench line, each given a distinct id by
/// substituting the 19-byte id in its library (the same length, so nothing else moves).
enum StartupBenchmark {
    static let benchID = Array("benchline-000000000".utf8)

    static func install(count: Int, into folder: String) throws {
        let plugins = folder + "/Plugins"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try FileManager.default.copyItem(atPath: products + "/libHouse.so", toPath: plugins + "/house.so")
        try FileManager.default.copyItem(atPath: products + "/libJobs.so", toPath: plugins + "/jobs.so")
        let bench = Array(try Data(contentsOf: URL(fileURLWithPath: products + "/libBenchLine.so")))
        var lines = [#""house": {}"#, #""jobs": {}"#]
        for index in 0..<max(0, count - 2) {
            let id = String(format: "benchline-%09d", index)
            var copy = bench
            let replacement = Array(id.utf8)
            var offset = 0
            while let found = copy[offset...].firstRange(of: benchID) {
                copy.replaceSubrange(found, with: replacement)
                offset = found.upperBound
            }
            try Data(copy).write(to: URL(fileURLWithPath: plugins + "/\(id).so"))
            lines.append("\"\(id)\": {}")
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: plugins) {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: plugins + "/" + name)
        }
        let config = """
            { "lines": { \(lines.joined(separator: ", ")) },
              "routes": [ { "rootCateID": 1, "cateID": "*", "line": "house" }, { "rootCateID": 9, "cateID": "*", "line": "jobs" } ] }
            """
        try config.write(toFile: folder + "/host.json", atomically: true, encoding: .utf8)
    }

    /// One start: `imhost open` renders the first chat page and exits. Spawned with
    /// posix_spawn, output to /dev/null, so little but the host's own start is timed.
    static func start(_ folder: String) throws -> UInt64 {
        let executable = products + "/imhost"
        let arguments = [executable, "open", "im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1001", "--config", folder + "/host.json"]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let begin = now()
        guard posix_spawn(&pid, executable, &actions, nil, &argv, environ) == 0 else {
            throw BenchmarkFailure("cannot start \(executable)")
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let elapsed = now() - begin
        guard status == 0 else { throw BenchmarkFailure("imhost open failed in \(folder) (status \(status))") }
        return elapsed
    }

    static func run() throws -> [Row] {
        var warm: [Int: Double] = [:]
        var cold: [Int: Double] = [:]
        var folders: [String] = []
        defer { for folder in folders { try? FileManager.default.removeItem(atPath: folder) } }
        for count in [2, 20, 200] {
            let folder = scratchFolder("startup\(count)")
            folders.append(folder)
            try install(count: count, into: folder)
            cold[count] = Double(try start(folder)) / 1e6
        }
        // Interleave the sizes so a burst of load on the machine hits them alike.
        var samples: [Int: [Double]] = [:]
        for _ in 0..<31 {
            for (index, count) in [2, 20, 200].enumerated() {
                samples[count, default: []].append(Double(try start(folders[index])) / 1e6)
            }
        }
        for (count, values) in samples { warm[count] = values.sorted()[values.count / 2] }
        let base = warm[2]!
        return [
            Row(what: "start-up", measure: "2 plugins, start to first page", figure: "\(format(base)) ms",
                baseline: "-", ratio: "1.00x", target: "baseline", met: nil),
            Row(what: "start-up", measure: "20 plugins", figure: "\(format(warm[20]!)) ms",
                baseline: "2 plugins: \(format(base)) ms", ratio: "\(format(warm[20]! / base, 2))x", target: "-", met: nil),
            Row(what: "start-up", measure: "200 plugins", figure: "\(format(warm[200]!)) ms",
                baseline: "2 plugins: \(format(base)) ms", ratio: "\(format(warm[200]! / base, 2))x", target: "<= 1.5x",
                met: warm[200]! / base <= 1.5),
            Row(what: "start-up", measure: "200 plugins, first start (no cache)", figure: "\(format(cold[200]!)) ms",
                baseline: "2 plugins: \(format(cold[2]!)) ms", ratio: "\(format(cold[200]! / cold[2]!, 2))x", target: "report", met: nil),
        ]
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

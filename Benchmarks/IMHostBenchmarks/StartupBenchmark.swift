import Foundation

/// Start-up: `imhost route` and `imhost chat` to its first page, with 2 and 200 plugins
/// installed, warm (the plugin cache answers) and first (the scanner vets every file).
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

    /// One run of `imhost` with `arguments` in `folder`, its output thrown away and its input
    /// empty: spawned with posix_spawn, so little but imhost's own work is timed. Nanoseconds.
    static func time(_ arguments: [String], in folder: String) throws -> UInt64 {
        let executable = products + "/imhost"
        let argv0 = [executable] + arguments + ["--config", folder + "/host.json"]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var argv: [UnsafeMutablePointer<CChar>?] = argv0.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let begin = now()
        guard posix_spawn(&pid, executable, &actions, nil, &argv, environ) == 0 else {
            throw BenchmarkFailure("cannot start \(executable)")
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let elapsed = now() - begin
        guard status == 0 else { throw BenchmarkFailure("imhost \(arguments.joined(separator: " ")) failed in \(folder) (status \(status))") }
        return elapsed
    }

    static let houseURL = "im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1001"

    static func run() throws -> [Row] {
        var folders: [Int: String] = [:]
        defer { for folder in folders.values { try? FileManager.default.removeItem(atPath: folder) } }
        let sizes = [2, 200]
        var first: [Int: [Double]] = [:]
        for count in sizes {
            let folder = scratchFolder("startup\(count)")
            folders[count] = folder
            try install(count: count, into: folder)
        }
        // First starts: no plugin cache, so every file goes through the scanner.
        for _ in 0..<5 {
            for count in sizes {
                try? FileManager.default.removeItem(atPath: folders[count]! + "/.imhost/plugins.cache")
                first[count, default: []].append(Double(try time(["route", houseURL], in: folders[count]!)) / 1e6)
            }
        }
        // Warm starts, interleaved so a burst of load on the machine hits every size alike.
        var route: [Int: [Double]] = [:], chat: [Int: [Double]] = [:]
        for _ in 0..<31 {
            for count in sizes {
                route[count, default: []].append(Double(try time(["route", houseURL], in: folders[count]!)) / 1e6)
                chat[count, default: []].append(Double(try time(["chat", houseURL], in: folders[count]!)) / 1e6)
            }
        }
        let route2 = median(route[2]!), route200 = median(route[200]!)
        let chat2 = median(chat[2]!), chat200 = median(chat[200]!)
        let first2 = median(first[2]!), first200 = median(first[200]!)
        return [
            Row(what: "start-up", measure: "imhost route, 2 plugins (warm)", figure: "\(format(route2)) ms",
                baseline: "-", ratio: "1.00x", target: "baseline", met: nil),
            Row(what: "start-up", measure: "imhost route, 200 plugins (warm)", figure: "\(format(route200)) ms",
                baseline: "2 plugins: \(format(route2)) ms", ratio: "\(format(route200 / route2, 2))x", target: "<= 1.2x",
                met: route200 / route2 <= 1.2),
            Row(what: "start-up", measure: "chat to first page, 2 plugins (warm)", figure: "\(format(chat2)) ms",
                baseline: "-", ratio: "1.00x", target: "baseline", met: nil),
            Row(what: "start-up", measure: "chat to first page, 200 plugins (warm)", figure: "\(format(chat200)) ms",
                baseline: "2 plugins: \(format(chat2)) ms", ratio: "\(format(chat200 / chat2, 2))x", target: "<= 1.5x",
                met: chat200 / chat2 <= 1.5),
            Row(what: "start-up", measure: "first start, 200 new files (scanner)", figure: "\(format(first200)) ms",
                baseline: "2 new files: \(format(first2)) ms", ratio: "\(format(first200 / first2, 2))x", target: "report", met: nil),
        ]
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

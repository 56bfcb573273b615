import Foundation

/// Crash to reopened chat: a line's tap handler aborts in a running `imhost chat`; the figure is
/// the time from handing over the tap to the chat shown again on the legacy page: the
/// supervisor records the crash, quarantines the line, starts a new worker, and it reopens the
/// conversation with its history.
enum ContainmentBenchmark {
    static func run(folder: String) throws -> [Row] {
        try StartupBenchmark.install(count: 2, into: folder)
        try FileManager.default.copyItem(atPath: products + "/libFixtureCrashy.so", toPath: folder + "/Plugins/crashy.so")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder + "/Plugins/crashy.so")
        try """
            { "lines": { "house": {}, "jobs": {}, "crashy": {} },
              "routes": [ { "rootCateID": 1, "cateID": "*", "line": "house" }, { "rootCateID": 66, "cateID": "*", "line": "crashy" } ] }
            """.write(toFile: folder + "/host.json", atomically: true, encoding: .utf8)
        var times: [Double] = []
        for round in 0..<9 {
            try? FileManager.default.removeItem(atPath: folder + "/.imhost/quarantine.json")
            times.append(try crashOnce(folder: folder, peer: "p\(round)"))
        }
        let middle = median(times)
        return [Row(what: "containment", measure: "crash to reopened chat (tap handler aborts)", figure: "\(format(middle)) ms",
                    baseline: "-", ratio: "-", target: "< 1000 ms", met: middle < 1000)]
    }

    /// One crash, in milliseconds from handing over the tap to the reopened page.
    static func crashOnce(folder: String, peer: String) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: products + "/imhost")
        process.arguments = ["chat", "im://chat?rootCateID=66&peer=\(peer)", "--config", folder + "/host.json"]
        var environment = ProcessInfo.processInfo.environment
        environment["IMHOST_CRASHY"] = "tap:abort"
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var seen = ""
        func wait(for text: String) throws {
            let fd = output.fileHandleForReading.fileDescriptor
            while !seen.contains(text) {
                var buffer = [UInt8](repeating: 0, count: 65536)
                let count = read(fd, &buffer, buffer.count)
                guard count > 0 else { throw BenchmarkFailure("imhost chat ended before it printed \"\(text)\"") }
                seen += String(decoding: buffer[0..<count], as: UTF8.self)
            }
        }
        input.fileHandleForWriting.write(Data(#"/recv crashy.note {"text":"hi"}"#.utf8 + [10]))
        try wait(for: "📝 hi")
        seen = ""
        let begin = now()
        input.fileHandleForWriting.write(Data("/tap 1\n".utf8))
        try wait(for: "[legacy page]")
        let elapsed = Double(now() - begin) / 1e6
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        return elapsed
    }
}

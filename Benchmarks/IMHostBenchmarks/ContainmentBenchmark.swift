import Foundation

/// The chat surviving what happens to its lines' code:
///
/// - crash to reopened chat: a line's tap handler aborts in a running `imhost chat`; the figure
///   is the time from handing over the tap to the chat shown again on the legacy page: the
///   supervisor records the crash, quarantines the line, starts a new worker, and it reopens
///   the conversation with its history.
/// - new build to its notice: the two prebuilt builds of the rent fixture line are installed in
///   turn (copied beside, renamed over) under an open chat; the figure is the time from the
///   rename to "line rent reloaded: …": the supervisor notices the file, waits until it stays
///   the same, has a scanner vet it, and moves the chat to a new worker. The baseline is opening
///   the same chat (start to page shown), in the same run.
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
                    baseline: "-", ratio: "-", target: "< 1000 ms", met: middle < 1000),
                try reload(folder: folder + "/reload")]
    }

    /// One crash, in milliseconds from handing over the tap to the reopened page.
    static func crashOnce(folder: String, peer: String) throws -> Double {
        let chat = try BenchChat(folder: folder, url: "im://chat?rootCateID=66&peer=\(peer)", environment: ["IMHOST_CRASHY": "tap:abort"])
        chat.send(#"/recv crashy.note {"text":"hi"}"#)
        try chat.wait(for: "📝 hi")
        let begin = now()
        chat.send("/tap 1")
        try chat.wait(for: "[legacy page]")
        let elapsed = Double(now() - begin) / 1e6
        chat.close()
        return elapsed
    }

    /// New build to its notice, against opening the chat, in milliseconds.
    static func reload(folder: String) throws -> Row {
        let plugins = folder + "/Plugins"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        func install(_ product: String, as name: String) throws {
            try? FileManager.default.removeItem(atPath: plugins + "/" + name)
            try FileManager.default.copyItem(atPath: products + "/lib\(product).so", toPath: plugins + "/" + name)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: plugins + "/" + name)
        }
        try install("FixtureRentOld", as: "rent.so")
        try """
            { "lines": { "rent": {} }, "routes": [ { "rootCateID": 7, "cateID": "*", "line": "rent" } ] }
            """.write(toFile: folder + "/host.json", atomically: true, encoding: .utf8)
        var opens: [Double] = []
        for round in 0..<9 {
            let begin = now()
            let chat = try BenchChat(folder: folder, url: "im://chat?rootCateID=7&peer=p\(round)")
            try chat.wait(for: "Rent 0.2.0 with")
            opens.append(Double(now() - begin) / 1e6)
            chat.close()
        }
        let chat = try BenchChat(folder: folder, url: "im://chat?rootCateID=7&peer=reload")
        try chat.wait(for: "Rent 0.2.0 with")
        var reloads: [Double] = []
        let builds = [("FixtureRentNew", "0.2.0 → 0.3.0"), ("FixtureRentOld", "0.3.0 → 0.2.0")]
        for round in 0..<10 {
            let (product, notice) = builds[round % 2]
            try install(product, as: ".rent.so.new")
            let begin = now()
            guard rename(plugins + "/.rent.so.new", plugins + "/rent.so") == 0 else { throw BenchmarkFailure("rename failed") }
            try chat.wait(for: "line rent reloaded: \(notice)")
            reloads.append(Double(now() - begin) / 1e6)
        }
        chat.close()
        let figure = median(reloads), baseline = median(opens)
        return Row(what: "containment", measure: "new build installed under a chat to its notice", figure: "\(format(figure)) ms",
                   baseline: "chat open: \(format(baseline)) ms", ratio: format(figure / baseline, 2) + "x", target: "< 1000 ms", met: figure < 1000)
    }
}

/// `imhost chat` run in a benchmark's folder, typed to through a pipe, and read until it prints
/// what is waited for.
final class BenchChat {
    private let process = Process()
    private let input = Pipe(), output = Pipe()
    private var seen = ""

    init(folder: String, url: String, environment extra: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: products + "/imhost")
        process.arguments = ["chat", url, "--config", folder + "/host.json"]
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func send(_ line: String) { input.fileHandleForWriting.write(Data(line.utf8 + [10])) }

    /// Reads until `text` is printed; what was read is then forgotten, so the next wait looks
    /// only at what comes after.
    func wait(for text: String) throws {
        let fd = output.fileHandleForReading.fileDescriptor
        while !seen.contains(text) {
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { throw BenchmarkFailure("imhost chat ended before it printed \"\(text)\"") }
            seen += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        seen = ""
    }

    /// Ends its input and waits for it to exit.
    func close() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

import Foundation

/// The line author's workbench (`imhost preview`), measured from outside as its page sees it: a
/// new build of the line's library put in place as a linker does (written beside, renamed over),
/// to the workbench's stream saying the samples' page was drawn by that build.
enum PreviewBenchmark {
    static func rebuild(folder: String, builds: Int = 10) throws -> Row {
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
        let imhost = products + "/imhost", built = products + "/libHouse.so"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let library = folder + "/libHouse.so"
        try? FileManager.default.removeItem(atPath: library)
        try FileManager.default.copyItem(atPath: built, toPath: library)
        let preview = try Watched(imhost, ["preview", "--library", library], in: folder)
        defer { preview.stop() }
        let printed = try preview.waitFor("/workbench?token=")
        guard let start = printed.range(of: "http://127.0.0.1:"), let token = printed.range(of: "/workbench?token=") else {
            throw WebBenchmark.Failure(description: "imhost preview printed no URL: \(printed)")
        }
        let port = UInt16(printed[start.upperBound..<token.lowerBound].prefix { $0.isNumber })!
        let client = try WebClient(port: port, token: String(printed[token.upperBound...].prefix { $0.isHexDigit }))
        // The samples' page open, as the workbench's frames open it: its worker draws it.
        let page = try client.events(page: try client.openPage("im://chat?rootCateID=1&peer=samples"))
        defer { page.close() }
        _ = try page.next(event: "page")
        let workbench = try client.stream("/events?workbench=1")
        defer { workbench.close() }
        var times: [Double] = []
        for build in 2...(builds + 1) {
            let part = library + ".part"
            try? FileManager.default.removeItem(atPath: part)
            try FileManager.default.copyItem(atPath: built, toPath: part)
            let begin = now()
            guard rename(part, library) == 0 else { throw WebBenchmark.Failure(description: "cannot rename \(part): errno \(errno)") }
            while true {
                guard now() - begin < 30_000_000_000 else { throw WebBenchmark.Failure(description: "build \(build) was not drawn within 30 s: \(preview.said.suffix(300))") }
                let said = try workbench.next(event: "workbench")
                let state = try JSONSerialization.jsonObject(with: Data(said.utf8)) as? [String: Any]
                if state?["drawnBy"] as? Int == build { break }
            }
            times.append(Double(now() - begin))
        }
        let median = WebBenchmark.percentile(times, 0.5)
        progress("preview: a new build to its samples drawn, each of \(builds): " + times.map { format($0 / 1e6, 0) }.joined(separator: ", ") + " ms")
        return Row(what: "a rebuild → the workbench showing its cards (imhost preview)", measure: "median of \(builds), the library renamed in to the samples' page drawn by it",
                   figure: "\(format(median / 1e6, 0)) ms", baseline: "-", ratio: "-", target: "<= 1 s", met: median <= 1e9)
    }
}

import Foundation
import IMHost
import IMHostTerminal

/// Hostile sizes cost linear time: a long input line, a payload with many keys, a long host.json.
enum LimitsBenchmark {
    static func run(folder: String) throws -> [Row] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)

        // One input line, read by the chat's line reader (as from a pipe or a file).
        func readLine(bytes: Int) throws -> Double {
            let path = folder + "/line-\(bytes)"
            try Data(repeating: UInt8(ascii: "x"), count: bytes).followed(by: [0x0A]).write(to: URL(fileURLWithPath: path))
            return median(runs: 9) {
                let fd = open(path, O_RDONLY)
                defer { close(fd) }
                let reader = LineReader(fd: fd, limit: 4 << 20)
                // A chunk a call: the chat's loop asks again until the line is whole.
                var event = reader.next(timeout: 1000)
                while event == .timeout { event = reader.next(timeout: 1000) }
                blackHole(event)
            }
        }
        let small = try readLine(bytes: 100_000), large = try readLine(bytes: 1_000_000)

        // A payload with many keys, validated as /send validates it.
        func payload(keys: Int) -> String {
            "{" + (0..<keys).map { "\"key\($0)\":\($0)" }.joined(separator: ",") + "}"
        }
        let thousand = payload(keys: 1_000), tenThousand = payload(keys: 10_000)
        let keys1k = median(runs: 9) { blackHole(try? JSONParser.parse(thousand)) }
        let keys10k = median(runs: 9) { blackHole(try? JSONParser.parse(tenThousand)) }

        // host.json with many lines and routes.
        func config(lines: Int) -> String {
            let ids = (0..<lines).map { String(format: "line-%06d", $0) }
            let entries = ids.map { "    \"\($0)\": { \"enabled\": true }" }.joined(separator: ",\n")
            let routes = ids.enumerated().map { "    { \"rootCateID\": \($0.offset), \"cateID\": \"*\", \"line\": \"\($0.element)\" }" }
                .joined(separator: ",\n")
            return "{\n  \"lines\": {\n\(entries)\n  },\n  \"routes\": [\n\(routes)\n  ],\n  \"killSwitch\": { \"lines\": [\"\(ids[0])\"] }\n}\n"
        }
        let shortConfig = config(lines: 400), longConfig = config(lines: 4_000)
        let configShort = median(runs: 7) { blackHole(try? HostConfig.parse(shortConfig, file: "host.json")) }
        let configLong = median(runs: 7) { blackHole(try? HostConfig.parse(longConfig, file: "host.json")) }

        return [
            Row(what: "limits", measure: "read a 1 MB input line", figure: "\(format(large / 1e6, 2)) ms",
                baseline: "100 KB line: \(format(small / 1e6, 2)) ms", ratio: "\(format(large / small, 1))x", target: "<= 25x",
                met: large / small <= 25),
            Row(what: "limits", measure: "validate a payload with 10,000 keys", figure: "\(format(keys10k / 1e6, 2)) ms",
                baseline: "1,000 keys: \(format(keys1k / 1e6, 2)) ms", ratio: "\(format(keys10k / keys1k, 1))x", target: "<= 25x",
                met: keys10k / keys1k <= 25),
            Row(what: "limits", measure: "load a host.json of 8,000 lines (4,000 lines and routes)", figure: "\(format(configLong / 1e6, 1)) ms",
                baseline: "800 lines: \(format(configShort / 1e6, 1)) ms", ratio: "\(format(configLong / configShort, 1))x",
                target: "<= 15x (linear)", met: configLong / configShort <= 15),
        ]
    }
}

extension Data {
    fileprivate func followed(by bytes: [UInt8]) -> Data { self + Data(bytes) }
}

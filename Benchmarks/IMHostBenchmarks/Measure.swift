import CHeapStats
import Foundation

/// Monotonic time in nanoseconds.
func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Keeps a value alive so the optimizer cannot drop the work that made it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// The median of a few timed runs of `body`, in nanoseconds: the machines are shared and noisy,
/// so every figure is a median, and every target is a ratio to a baseline run alongside.
func median(runs: Int, _ body: () throws -> Void) rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<runs {
        let start = now()
        try body()
        times.append(Double(now() - start))
    }
    return median(times)
}

/// The middle value (the upper of the two middle ones for an even count).
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Resident memory of this process, in KiB.
func residentKiB() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
}

/// Bytes the C heap has handed out and not taken back (Swift objects live there).
func heapInUse() -> Int {
    Int(heap_bytes_in_use())
}

/// One row of the results table.
struct Row {
    var what: String
    var measure: String
    var figure: String
    var baseline: String
    var ratio: String
    var target: String
    var met: Bool?
}

/// Prints the results as a Markdown table (it reads the same in a terminal and in docs/performance.md).
func printTable(_ rows: [Row]) {
    let header = ["what", "measure", "figure", "baseline (same run)", "ratio", "target", "met"]
    let cells = rows.map { [$0.what, $0.measure, $0.figure, $0.baseline, $0.ratio, $0.target, $0.met.map { $0 ? "yes" : "NO" } ?? "-"] }
    var widths = header.map(\.count)
    for row in cells {
        for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
    }
    func line(_ values: [String]) -> String {
        "| " + values.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: " | ") + " |"
    }
    print(line(header))
    print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
    for row in cells { print(line(row)) }
}

func format(_ value: Double, _ digits: Int = 1) -> String {
    String(format: "%.\(digits)f", value)
}

/// A scratch folder, removed at exit by the caller.
func scratchFolder(_ name: String) -> String {
    var template = Array("/tmp/imhost-bench-\(name)-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("cannot make a scratch folder in /tmp") }
    return String(cString: made)
}

/// Where this benchmark's sibling products are: the build folder it was built into.
let products = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path

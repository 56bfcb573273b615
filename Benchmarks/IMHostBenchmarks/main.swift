import Foundation

// imhost-bench: one table of figures, each against a baseline measured in the same run.
// Build and run with `make bench` (release). Not part of the tests: timings on shared machines
// are noisy, so every target is a ratio to a baseline, never an absolute time in a test.

// A child that ended (a swarm that failed) makes the next write to its pipe fail, not end the run.
signal(SIGPIPE, SIG_IGN)
// A child of the growth benchmark, holding sessions (see Swarm).
if CommandLine.arguments.dropFirst().first == "__swarm" { Swarm.main(Array(CommandLine.arguments.dropFirst(2))) }

func progress(_ text: String) { FileHandle.standardError.write(Data("imhost-bench: \(text)\n".utf8)) }
let scratch = scratchFolder("run")
defer { try? FileManager.default.removeItem(atPath: scratch) }
let sections: [(name: String, run: () throws -> [Row])] = [
    ("startup", { try StartupBenchmark.run() }),
    ("converter", { try InProcessBenchmarks.converter(folder: scratch + "/converter") }),
    ("bus", { InProcessBenchmarks.sessionBus() }),
    ("messages", { try InProcessBenchmarks.messages(folder: scratch + "/messages") }),
    ("draw", { try DrawBenchmark.run(folder: scratch + "/draw") }),
    ("store", { try StoreBenchmark.run(folder: scratch + "/store") }),
    ("late", { try StoreBenchmark.lateArrivals(folder: scratch + "/late") }),
    ("photos", { try PhotoBenchmark.run(folder: scratch + "/photos") + PhotoDecodeBenchmark.run() }),
    ("import", { try StoreBenchmark.importing(folder: scratch + "/import") }),
    ("memory", { try InProcessBenchmarks.memory(folder: scratch + "/memory") }),
    ("crash", { try ContainmentBenchmark.run(folder: scratch + "/crash") }),
    ("limits", { try LimitsBenchmark.run(folder: scratch + "/limits") }),
    ("transport", { try TransportBenchmark.run(folder: scratch + "/transport") }),
    ("devices", { try DeviceBenchmark.run(folder: scratch + "/devices") }),
    ("cluster", { try ClusterBenchmark.run(folder: scratch + "/cluster") }),
    ("scale", { try ScaleBenchmark.run(folder: scratch + "/scale") + GrowthBenchmark.run(folder: scratch + "/growth", sizes: [1_000]) }),
    ("fleet", { try FleetBenchmark.run(folder: scratch + "/fleet") }),
    ("web", { try WebBenchmark.run(folder: scratch + "/web") }),
    ("preview", { [try PreviewBenchmark.rebuild(folder: scratch + "/preview")] }),
    // Not run without arguments: half an hour on two cores (make bench-scale).
    ("scale-large", { try GrowthBenchmark.run(folder: scratch + "/growth", sizes: [1_000, 5_000, 10_000]) }),
]
let byDefault = Set(sections.map(\.name)).subtracting(["scale-large"])
// `imhost-bench converter bus` runs only those sections; no arguments runs them all.
let chosen = Set(CommandLine.arguments.dropFirst())
if let unknown = chosen.first(where: { name in !sections.contains { $0.name == name } }) {
    FileHandle.standardError.write(Data("imhost-bench: unknown section '\(unknown)'; sections: \(sections.map(\.name).joined(separator: ", "))\n".utf8))
    exit(2)
}
var rows: [Row] = []
do {
    for section in sections where chosen.isEmpty ? byDefault.contains(section.name) : chosen.contains(section.name) {
        progress("\(section.name)...")
        rows += try section.run()
    }
} catch {
    FileHandle.standardError.write(Data("imhost-bench: \(error)\n".utf8))
    try? FileManager.default.removeItem(atPath: scratch)
    exit(1)
}
print("")
printTable(rows)
let missed = rows.filter { $0.met == false }
print(missed.isEmpty ? "\nEvery target met." : "\n\(missed.count) target(s) missed: " + missed.map { "\($0.what) (\($0.measure))" }.joined(separator: "; "))
try? FileManager.default.removeItem(atPath: scratch)

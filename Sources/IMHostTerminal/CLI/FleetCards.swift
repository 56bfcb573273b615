import IMHost
import IMHostRuntime
import IMKit

/// `imhost fleet cards`: how the hosts that reported drew each line's messages, summed.
extension FleetCommand {
    private struct ShownCards: Encodable {
        /// Hosts whose status the broker holds, and how many of them said how they drew.
        var hosts: Int
        var reporting: Int
        var lines: [Line]
        struct Line: Encodable {
            var line: String
            /// Drawn by the line, in all, and by version ("" for a version the host did not know).
            var drawn: Int
            var versions: [String: Int]
            /// Shown as placeholders, in all, and by why.
            var placeholders: Int
            var reasons: [String: Int]
            /// How many hosts reported the line.
            var reportedBy: Int
        }
    }

    /// Sums the counts every host's status carries, line by line, the most shown first. Each
    /// count is its host's word (a user writes its own status): they tell, and steer nothing.
    static func cards(_ standing: FleetOperator.Standing, json: Bool, output: Output) {
        var sums: [String: DrawnCounts] = [:], reporters: [String: Int] = [:]
        for host in standing.hosts {
            for (line, counts) in host.report.drawn {
                sums[line, default: DrawnCounts()].add(counts)
                reporters[line, default: 0] += 1
            }
        }
        let reporting = standing.hosts.count { !$0.report.drawn.isEmpty }
        let lines = sums.sorted { $0.value.total != $1.value.total ? $0.value.total > $1.value.total : $0.key < $1.key }.map { line, counts in
            ShownCards.Line(line: line, drawn: counts.drawn, versions: counts.versions, placeholders: counts.shownAsPlaceholders,
                            reasons: counts.placeholders, reportedBy: reporters[line] ?? 0)
        }
        if json {
            output.out(JSONOutput.encode(ShownCards(hosts: standing.hosts.count, reporting: reporting, lines: lines)))
            return
        }
        guard !lines.isEmpty else {
            output.out(standing.hosts.isEmpty ? "no host has reported yet\n"
                       : "none of the \(standing.hosts.count) hosts that reported has shown a line's message from another host (or their imhost does not count them)\n")
            return
        }
        /// "1.3.0 ×40, 1.2.0 ×2", the largest first.
        func list(_ counts: [String: Int], unnamed: String) -> String {
            counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .map { "\($0.key.isEmpty ? unnamed : $0.key) ×\($0.value)" }.joined(separator: ", ")
        }
        var said = ["how lines' messages were drawn, as \(reporting) of \(standing.hosts.count) host\(standing.hosts.count == 1 ? "" : "s") report:"]
        let width = lines.map(\.line.count).max() ?? 0
        for line in lines {
            var parts: [String] = []
            if line.drawn > 0 { parts.append("drawn \(line.drawn) (\(list(line.versions, unnamed: "version unknown")))") }
            if line.placeholders > 0 { parts.append("placeholders \(line.placeholders) (\(list(line.reasons, unnamed: "?")))") }
            said.append("  \(line.line.padding(toLength: width, withPad: " ", startingAt: 0))  " + parts.joined(separator: "; "))
        }
        output.out(said.map { TerminalText.safe($0, newlines: false) + "\n" }.joined())
    }
}

import IMKit

/// How a host drew one line's messages from other hosts that its chats showed, in counts: by
/// the line's version, and as placeholders by why (``Drawn``'s words). A host reports them with
/// its fleet status (`"drawn"`); `imhost fleet cards` sums them across the hosts that reported.
public struct DrawnCounts: Sendable, Equatable, Codable {
    /// Drawn by the line, by its version ("" when the host did not know it).
    public var versions: [String: Int]
    /// Shown as placeholders, by why (`not-installed`, `turned-off`, …).
    public var placeholders: [String: Int]

    public init(versions: [String: Int] = [:], placeholders: [String: Int] = [:]) {
        self.versions = versions
        self.placeholders = placeholders
    }

    /// How many were drawn by the line, whatever its version.
    public var drawn: Int { versions.values.reduce(0, +) }
    /// How many were placeholders, whatever why.
    public var shownAsPlaceholders: Int { placeholders.values.reduce(0, +) }
    public var total: Int { drawn + shownAsPlaceholders }

    /// Adds `other`'s counts to these.
    public mutating func add(_ other: DrawnCounts) {
        versions.merge(other.versions, uniquingKeysWith: +)
        placeholders.merge(other.placeholders, uniquingKeysWith: +)
    }

    /// The most lines a status carries, and the most names one line's counts carry of each kind.
    public static let linesLimit = 32
    public static let namesLimit = 8
    /// The largest count read.
    static let countLimit = 1e12

    /// The status's `drawn` member: `{"house":{"versions":{"1.3.0":4},"placeholders":{"turned-off":1}}}`,
    /// lines in order, each with at most ``namesLimit`` names of a kind, the largest counts first.
    static func json(_ lines: [(line: String, counts: DrawnCounts)]) -> String {
        func names(_ counts: [String: Int]) -> String {
            let kept = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(namesLimit)
            return "{" + kept.map { JSONNode.quoted($0.key) + ":" + String($0.value) }.joined(separator: ",") + "}"
        }
        return "{" + lines.map { line, counts in
            JSONNode.quoted(line) + #":{"versions":"# + names(counts.versions) + #","placeholders":"# + names(counts.placeholders) + "}"
        }.joined(separator: ",") + "}"
    }

    /// The lines of `counts`, the most shown first, then by name.
    static func ordered(_ counts: [String: DrawnCounts]) -> [(line: String, counts: DrawnCounts)] {
        counts.sorted { $0.value.total != $1.value.total ? $0.value.total > $1.value.total : $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// A status's `drawn` member, leniently (any user writes its own status): at most
    /// ``linesLimit`` lines that are line ids, at most ``namesLimit`` names a kind that are
    /// versions or words, counts that are whole numbers from 0; anything else is left out.
    static func read(_ node: JSONNode?) -> [String: DrawnCounts] {
        guard case .object(let lines)? = node?.value else { return [:] }
        func counts(_ node: JSONNode?, valid: (String) -> Bool) -> [String: Int] {
            guard case .object(let entries)? = node?.value else { return [:] }
            var found: [String: Int] = [:]
            for entry in entries where found.count < namesLimit && found[entry.key] == nil && valid(entry.key) {
                guard case .number(let count, _) = entry.value.value, count >= 0, count < countLimit, count == count.rounded() else { continue }
                found[entry.key] = Int(count)
            }
            return found
        }
        var read: [String: DrawnCounts] = [:]
        for line in lines where read.count < linesLimit && read[line.key] == nil && LineID.isValid(line.key) {
            guard case .object(let kinds) = line.value.value else { continue }
            let entry = DrawnCounts(versions: counts(kinds.member("versions"), valid: { $0.isEmpty || Drawn.isVersion($0) }),
                                    placeholders: counts(kinds.member("placeholders"), valid: Envelope.RefusalCode.isValid))
            if entry.total > 0 { read[line.key] = entry }
        }
        return read
    }
}

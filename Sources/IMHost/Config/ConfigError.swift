/// A refused configuration: where it is wrong, what is wrong, and what to do.
public struct ConfigError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The configuration file.
    public var file: String
    /// Line and column in the file, when the problem has a place.
    public var line: Int?
    /// Column, counted in characters from 1.
    public var column: Int?
    /// Where in the document, e.g. `routes[1].cateID`; empty for the whole file.
    public var path: String
    /// What is wrong and what to do, e.g. `unknown key "enabeld"; did you mean "enabled"?`.
    public var message: String

    package init(file: String, position: SourcePosition?, path: String, message: String) {
        self.file = file
        self.line = position?.line
        self.column = position?.column
        self.path = path
        self.message = message
    }

    /// `host.json:4:15: routes[1].cateID: expected ...`: one line, quoting whatever came from
    /// the file (a key, a value) as it is: whoever draws it escapes it.
    public var description: String {
        var text = file
        if let line, let column { text += ":\(line):\(column)" }
        text += ": "
        if !path.isEmpty { text += path + ": " }
        return text + message
    }
}

/// The closest of `candidates` to `word` by edit distance, if it is close enough to be a typo:
/// at most a third of the candidate changed (two edits for a short one), and fewer edits than
/// `word` has letters, its leading dashes and slash aside. A typo keeps some of what was meant:
/// `--verison` is `--version` mistyped, but `-c` is not `-h` (nothing of it is kept).
package func closestMatch(to word: String, among candidates: some Sequence<String>) -> String? {
    let letters = word.drop { $0 == "-" || $0 == "/" }.count
    let word = Array(word.lowercased())
    var best: (candidate: String, distance: Int)?
    for candidate in candidates {
        let distance = editDistance(word, Array(candidate.lowercased()))
        if distance < best?.distance ?? Int.max { best = (candidate, distance) }
    }
    guard let best, best.distance <= max(2, best.candidate.count / 3), best.distance < letters else { return nil }
    return best.candidate
}

/// Levenshtein distance.
private func editDistance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    var previous = Array(0...b.count)
    var current = previous
    for i in 1...a.count {
        current[0] = i
        for j in stride(from: 1, through: b.count, by: 1) {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}

import IMHost

/// What `imhost web` keeps for the next one it starts, so a restart loses no tab: the port it
/// served on, its token, and the sessions it gave browsers (an open tab's cookie), in the user's
/// data folder, readable by the user alone (`<data>/web/<user>`, 0600, in a 0700 folder).
///
/// One line each, `port N`, `token HEX`, `session HEX`; anything else makes the file as good as
/// absent (a new token, a free port), never an error: it is a convenience, not a record.
struct WebKept: Equatable {
    var port: UInt16
    var token: String
    var sessions: [String]

    /// The most sessions kept: one a browser the user signed in, the newest last.
    static let sessionLimit = 16

    static func path(dataFolder: String, user: String) -> String { dataFolder + "/web/" + user }

    /// What the file at `path` holds, when it is whole.
    static func read(_ path: String) -> WebKept? {
        guard let text = try? FileSystem.readText(path) else { return nil }
        var port: UInt16?, token: String?, sessions: [String] = []
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return nil }
            switch parts[0] {
            case "port": port = UInt16(parts[1])
            case "token" where isSecret(parts[1]): token = parts[1]
            case "session" where isSecret(parts[1]): sessions.append(parts[1])
            default: return nil
            }
        }
        guard let port, port >= 1024, let token else { return nil }
        return WebKept(port: port, token: token, sessions: Array(sessions.suffix(sessionLimit)))
    }

    /// Writes it whole (atomically, 0600); a failure is said by the caller in one line.
    func write(_ path: String) throws(FileSystem.Failure) {
        try FileSystem.makeFolders(FileSystem.directory(of: path), mode: 0o700)
        let lines = ["port \(port)", "token \(token)"] + sessions.suffix(Self.sessionLimit).map { "session \($0)" }
        try FileSystem.writeAtomically(Array((lines.joined(separator: "\n") + "\n").utf8), to: path, mode: 0o600)
    }

    /// A secret as ``WebGate/randomSecret()`` makes them: hex, long enough.
    private static func isSecret(_ text: String) -> Bool {
        text.utf8.count >= 32 && text.utf8.count <= 128 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}

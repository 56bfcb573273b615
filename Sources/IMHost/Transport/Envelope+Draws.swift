import IMKit

/// What lines a host draws: said on its `delivered` and `read` receipts (`draws`, an addition),
/// kept by the peer's host per peer, so a page knows before a card is sent whether the peer's
/// host will show it as a placeholder.
extension Envelope {
    /// The lines a host draws now, by its own clock's time of saying:
    /// `{"at":MS,"lines":{"house":"1.3.0","jobs":""}}` (a version `""`: the host does not know it).
    /// A line drawn is one that serves there: not killed, quarantined, disabled, failed or outside
    /// its rollout. A host with more than ``most`` lines says none, so a peer never takes a cut
    /// list for the whole.
    public struct Draws: Sendable, Equatable {
        /// When the host said it, in ms since 1970 (its clock): the newest a peer has wins. A
        /// receiver takes no time later than its own now.
        public var at: Int64
        /// Each line the host draws, by id, with its version (`""`: not known).
        public var lines: [String: String]

        /// The most lines one says.
        public static let most = 32

        /// What a host says at `at` (ms since 1970) it draws: `lines`, by id with their versions.
        public init(at: Int64, lines: [String: String]) {
            self.at = at
            self.lines = lines
        }

        /// What a host whose serving lines are `builds` says (``LineTable/builds``): a version
        /// that is not one as ``Drawn/isVersion(_:)`` reads it is said as `""`; `nil` past
        /// ``most`` lines.
        public static func lines(of builds: [LineBuild]) -> [String: String]? {
            var lines: [String: String] = [:]
            for build in builds where LineID.isValid(build.line) {
                lines[build.line] = Drawn.isVersion(build.version) ? build.version : ""
            }
            return lines.count <= most ? lines : nil
        }

        /// The `lines` object, in the order of the ids: `{"house":"1.3.0"}`.
        public var linesJSON: String {
            "{" + lines.sorted { $0.key < $1.key }.map { JSONNode.quoted($0.key) + ":" + JSONNode.quoted($0.value) }.joined(separator: ",") + "}"
        }

        /// As the receipt's `draws` member holds it.
        var json: String { #"{"at":\#(at),"lines":\#(linesJSON)}"# }

        /// A receipt's `draws` member, leniently: `nil` for anything that is not an object with a
        /// time and a `lines` object of at most ``most`` entries. Entries that are not a line id
        /// with a version (or `""`) are dropped.
        static func read(_ node: JSONNode?) -> Draws? {
            guard case .object(let members)? = node?.value, let at = Envelope.milliseconds(members.member("at")),
                  let lines = lines(members.member("lines")) else { return nil }
            return Draws(at: at, lines: lines)
        }

        /// A `lines` object, leniently (``read(_:)``); `nil` when it is not one, or too long.
        static func lines(_ node: JSONNode?) -> [String: String]? {
            guard case .object(let entries)? = node?.value, entries.count <= most else { return nil }
            var lines: [String: String] = [:]
            for entry in entries where LineID.isValid(entry.key) {
                guard case .string(let version) = entry.value.value, version.isEmpty || Drawn.isVersion(version) else { continue }
                lines[entry.key] = version
            }
            return lines
        }
    }
}

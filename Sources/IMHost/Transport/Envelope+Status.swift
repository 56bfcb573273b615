import IMKit

extension Envelope {
    /// A status's members, leniently (see ``Status``).
    static func status(_ member: (String) -> JSONNode?) -> Status {
        func names(_ key: String, valid: (String) -> Bool) -> [String]? {
            guard case .array(let items)? = member(key)?.value else { return nil }
            return items.compactMap { if case .string(let name) = $0.value, valid(name) { name } else { nil } }
        }
        var status = Status(state: nil, at: nil, report: FleetReport(), inventory: .none)
        if case .string(let state)? = member("state")?.value { status.state = Status.State(rawValue: state) }
        if case .number(let at, _)? = member("at")?.value, at >= 0, at < 1e15 { status.at = Int64(at) }
        if case .number(let version, _)? = member("version")?.value, version >= 1, version < 1e15 {
            var digest = ""
            if case .string(let text)? = member("digest")?.value { digest = text }
            status.report.applied = FleetConfig.Applied(version: Int64(version), digest: digest)
        }
        if let lines = names("lines", valid: LineID.isValid), let keys = names("keys", valid: LineID.isValidMessageKey) {
            status.report.lines = lines
            status.report.keys = keys
            status.inventory = member("partial").map { _ in .partial } ?? .complete
        }
        status.report.drawn = DrawnCounts.read(member("drawn"))
        return status
    }
}

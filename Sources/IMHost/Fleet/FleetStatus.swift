import IMKit

/// What a host says about itself on its status topic (``Topic/fleetStatus(user:)``): the
/// fleet configuration it applies, and the lines and message keys it has, so the operator can
/// judge a change the way hosts will (``FleetConfig/verdict(on:applied:now:)``) and refuse a name
/// no host has (a typo would otherwise turn nothing off on every host).
public struct FleetReport: Sendable, Equatable {
    /// The fleet configuration applied; `nil` when none is.
    public var applied: FleetConfig.Applied?
    /// Lines installed or configured in host.json, sorted.
    public var lines: [String]
    /// The message keys those lines register (their manifests), sorted.
    public var keys: [String]
    /// How the host drew the line messages from other hosts its chats showed, by line (its
    /// store's ``MessageStore/drawnCounts()``); a status carries the most shown lines that fit.
    public var drawn: [String: DrawnCounts]

    public init(applied: FleetConfig.Applied? = nil, lines: [String] = [], keys: [String] = [], drawn: [String: DrawnCounts] = [:]) {
        self.applied = applied
        self.lines = lines
        self.keys = keys
        self.drawn = drawn
    }

    /// The status document, a status ``Envelope`` of at most ``FleetStatus/byteLimit`` bytes:
    /// names that do not fit are left out (lines first in, then keys) and `"partial": true` says so.
    ///
    ///     {"v":1,"kind":"status","state":"running","version":N,"digest":"…","at":ms,"lines":["house"],"keys":["house.listing"]}
    public func document(state: Envelope.Status.State, at: Int64) -> [UInt8] {
        var status = Envelope.Status(state: state, at: at, report: FleetReport(applied: applied), inventory: .partial)
        // Room for the names: what the document takes without them, flag and all.
        var room = FleetStatus.byteLimit - Envelope.status(status).bytes.count
        func fit(_ names: [String]) -> (taken: [String], cut: Bool) {
            var taken: [String] = []
            for name in names {
                let cost = JSONNode.quoted(name).utf8.count + (taken.isEmpty ? 0 : 1)
                guard cost <= room else { return (taken, true) }
                room -= cost
                taken.append(name)
            }
            return (taken, false)
        }
        let (lines, linesCut) = fit(self.lines)
        let (keys, keysCut) = fit(self.keys)
        status.report.lines = lines
        status.report.keys = keys
        status.inventory = linesCut || keysCut ? .partial : .complete
        // Then how it drew lines' messages: the most shown lines first, as many as fit (at most
        // DrawnCounts.linesLimit); counts are not names, so leaving some out is not partial.
        for (line, counts) in DrawnCounts.ordered(drawn).prefix(DrawnCounts.linesLimit) {
            status.report.drawn[line] = counts
            if Envelope.status(status).bytes.count > FleetStatus.byteLimit {
                status.report.drawn[line] = nil
                break
            }
        }
        return Envelope.status(status).bytes
    }
}

/// One host's status as the operator reads it from the broker.
public struct FleetStatus: Sendable, Equatable {
    /// The largest status document a host writes and the operator reads.
    public static let byteLimit = 8 * 1024

    /// The user whose topic it is (the ACL lets a user write only its own).
    public var user: String
    /// Where it stands, as its status says.
    public var state: State
    /// When it reported, in ms since 1970.
    public var at: Int64?
    /// What it applies and what it has.
    public var report: FleetReport
    /// Whether it said what it has: hosts before fleet status carried lines report only their
    /// version, and a report that did not fit says `"partial"`.
    public var inventory: Inventory

    public typealias Inventory = Envelope.Status.Inventory

    /// Where a host stands: what its status says, or that it says nothing a host writes.
    public enum State: String, Sendable, Codable {
        /// It runs.
        case running
        /// It left, or its will said it vanished.
        case gone
        /// What its user wrote there is not a host's status, or says neither.
        case unreadable

        init(_ said: Envelope.Status.State?) {
            switch said {
            case .running?: self = .running
            case .gone?: self = .gone
            case nil: self = .unreadable
            }
        }
    }

    /// The fleet version it applies.
    public var version: Int64? { report.applied?.version }

    /// Reads a status as `user`'s, through ``Envelope/readStatus(_:limit:sender:)``: a status
    /// envelope, or the document hosts wrote before it was one. Whatever a user wrote there is
    /// checked: a member that is not what a host writes is left out, names that are not line ids
    /// or message keys are dropped, and anything not a JSON object of at most ``byteLimit``
    /// bytes is ``State/unreadable``.
    public static func read(user: String, _ payload: [UInt8]) -> FleetStatus {
        guard let status = Envelope.readStatus(payload, limit: byteLimit, sender: user) else {
            return FleetStatus(user: user, state: .unreadable, at: nil, report: FleetReport(), inventory: .none)
        }
        return FleetStatus(user: user, state: State(status.state), at: status.at, report: status.report, inventory: status.inventory)
    }
}

extension FleetOperator.Standing {
    /// How many hosts must report a name, or a configuration, before the operator believes it
    /// without vouching for it itself: any user writes its own report as it likes, so one
    /// report alone steers nothing.
    public static let corroboration = 2

    /// Why turning `line` off would reach nothing, or may be a typo: no host reports having it,
    /// or only one does and the operator's own host does not have it (one line, with the
    /// nearest known line); `nil` when it is known.
    public func unreported(line: String) -> String? {
        unknown("a line", line, reported: \.lines, own: own?.lines ?? [])
    }

    /// The same for a message key: the host's built-in keys are known without a report.
    public func unreported(key: String) -> String? {
        unknown("a message key", key, reported: \.keys, own: (own?.keys ?? []) + MessageRegistry.builtIn.allKeys)
    }

    /// The names known: the operator's own, and those at least ``corroboration`` hosts whose
    /// reports are vouched for report.
    private func known(_ names: KeyPath<FleetReport, [String]>, own: [String]) -> Set<String> {
        var reporters: [String: Set<String>] = [:]
        for host in hosts where !unvouched.contains(where: { $0.user == host.user }) {
            for name in host.report[keyPath: names] { reporters[name, default: []].insert(host.user) }
        }
        return Set(own).union(reporters.filter { $0.value.count >= Self.corroboration }.keys)
    }

    private func unknown(_ what: String, _ name: String, reported names: KeyPath<FleetReport, [String]>, own: [String]) -> String? {
        let known = known(names, own: own)
        guard !known.contains(name) else { return nil }
        let hint = closestMatch(to: name, among: known.sorted()).map { "did you mean '\($0)'? " } ?? ""
        let reporters = hosts.filter { $0.report[keyPath: names].contains(name) }.map(\.user)
        if !reporters.isEmpty {
            let who = reporters.prefix(3).joined(separator: ", ")
            return "only \(who) report\(reporters.count == 1 ? "s" : "") \(what) '\(name)', and a report is its user's to write: a name is known when this operator's own host.json or plugins have it, or \(Self.corroboration) hosts whose versions it can vouch for report it; \(hint)--force publishes it anyway"
        }
        let cut = hosts.count { $0.inventory == .partial }
        var why = ""
        if !hosts.contains(where: { $0.inventory != .none }) {
            why = " (no host has said what it has: a host says so each time it connects)"
        } else if cut > 0 {
            why = " (\(cut) host\(cut == 1 ? "'s report was" : "s' reports were") cut to \(FleetStatus.byteLimit) bytes and may leave it out)"
        }
        return "no host reports \(what) '\(name)'\(why); \(hint)--force publishes it anyway"
    }
}

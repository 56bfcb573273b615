/// Every topic imhost publishes to, built and read in one place, and the filters its
/// subscriptions and the broker's rules name:
///
///     imhost/u/<to>/from/<from>             a message, a receipt or an answer from <from> to <to>
///     imhost/u/<user>/from/<user>           the user's own: what its devices say to all of them, and
///                                           its first device's presence record (retained)
///     imhost/u/<user>/from/<user>/<device>  what its devices say to one of them (`~`: the first),
///                                           and that device's presence record (retained)
///     imhost/fleet/config                   the fleet configuration (retained; operator writes it)
///     imhost/fleet/status/<user>            a host's status report (retained)
///     imhost/fleet/report/<user>/<slot>     a person's report of a peer (retained, in one of
///                                           ``reportSlots`` slots a user, reused in turn; only operator
///                                           reads it, and clears it once handled)
///
/// The sender of what comes on an inbox is the topic's `<from>`, which the broker's rules vouch
/// for (a user writes only `imhost/u/+/from/<user>`): nothing in a message says who sent it. An
/// id is one level, so it cannot hold MQTT's separator or wildcards; a NATS cluster turns levels
/// into tokens of a subject, so there it cannot hold NATS's separator either
/// (``problem(level:natsToken:)``). The retain rule, a broker plugin in C
/// (`Sources/CIMHostRetainRule`), spells the retained ones again for itself.
package enum Topic: Hashable, Sendable, CustomStringConvertible {
    /// From `from` to `to`.
    case inbox(to: String, from: String)
    /// Below the user's own topic: device `device` of `user` (`nil`: its first device).
    case device(user: String, device: String?)
    case fleetConfig
    case fleetStatus(user: String)
    /// A report `user` made of someone (``UserReport``), in slot `slot` (0 to
    /// ``reportSlots`` - 1): what the broker retains of one user's reports is bounded.
    case report(user: String, slot: Int)

    /// How many reports of one user the broker may hold at once: the 33rd takes the first's slot.
    package static let reportSlots = 32

    /// The level that names a user's first device below its own topic: no device name holds it.
    static let firstDevice = "~"

    /// The topic as MQTT names it.
    package var name: String {
        switch self {
        case .inbox(let to, let from): "imhost/u/\(to)/from/\(from)"
        case .device(let user, let device): Topic.inbox(to: user, from: user).name + "/" + (device ?? Self.firstDevice)
        case .fleetConfig: "imhost/fleet/config"
        case .fleetStatus(let user): "imhost/fleet/status/\(user)"
        case .report(let user, let slot): "imhost/fleet/report/\(user)/\(slot)"
        }
    }

    package var description: String { name }

    /// Reads a topic's name: `nil` when it is none of imhost's, or a level that names an id is
    /// not one.
    package init?(_ name: String) {
        let levels = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let read: Topic? = switch levels.count {
        case 3 where levels == ["imhost", "fleet", "config"]: .fleetConfig
        case 4 where levels[0] == "imhost" && levels[1] == "fleet" && levels[2] == "status": .fleetStatus(user: levels[3])
        case 5 where levels[0] == "imhost" && levels[1] == "fleet" && levels[2] == "report":
            // A slot as the host writes it: digits, no sign or leading zero.
            Int(levels[4]).flatMap { slot in (0..<Self.reportSlots).contains(slot) && String(slot) == levels[4] ? .report(user: levels[3], slot: slot) : nil }
        case 5 where levels[0] == "imhost" && levels[1] == "u" && levels[3] == "from": .inbox(to: levels[2], from: levels[4])
        case 6 where levels[0] == "imhost" && levels[1] == "u" && levels[3] == "from" && levels[2] == levels[4]:
            .device(user: levels[2], device: levels[5] == Self.firstDevice ? nil : levels[5])
        default: nil
        }
        guard let read, read.problem == nil else { return nil }
        self = read
    }

    /// The first of its ids that cannot be a level, and why; `nil` when each can.
    package var problem: (id: String, LevelProblem)? {
        let ids: [String] = switch self {
        case .inbox(let to, let from): [to, from]
        case .device(let user, let device): [user] + (device.map { [$0] } ?? [])
        case .fleetConfig: []
        case .fleetStatus(let user): [user]
        case .report(let user, _): [user]
        }
        for id in ids {
            if let problem = Self.problem(level: id) { return (id, problem) }
        }
        return nil
    }

    /// Why an id cannot be one level of a topic.
    package enum LevelProblem: Sendable, Equatable {
        /// It is empty.
        case empty
        /// It holds a character that ends a level or stands for others: MQTT's `/`, `+`, `#`
        /// (and NUL), or, as a NATS token, `.`, `*` or `>`.
        case holds(Character)
    }

    /// Why `id` cannot be one level of a topic, `nil` when it can; `natsToken`: nor one token of
    /// a NATS subject (what a NATS cluster turns a level into, `.` separating them).
    package static func problem(level id: String, natsToken: Bool = false) -> LevelProblem? {
        guard !id.isEmpty else { return .empty }
        let refused: Set<Character> = natsToken ? ["/", "+", "#", "\0", ".", "*", ">"] : ["/", "+", "#", "\0"]
        return id.first(where: refused.contains).map(LevelProblem.holds)
    }
}

extension Topic {
    /// What a subscription, or a rule of the broker's, names: one topic, or many at once (`+`
    /// one level, `#` every level below).
    package enum Filter: Hashable, Sendable, CustomStringConvertible {
        /// `imhost/u/<user>/from/+`: the user's inbox, every sender (its own devices among them).
        case inbox(of: String)
        /// `imhost/u/<user>/#`: everything to the user: its inbox, its devices' topics, their
        /// presence records.
        case toUser(String)
        /// `imhost/u/+/from/<user>`: what the user sends anyone.
        case fromUser(String)
        /// `imhost/u/<user>/from/<user>/+`: the topics of the user's devices, one each.
        case devices(of: String)
        /// `imhost/fleet/status/+`: every host's status.
        case statuses
        /// `imhost/fleet/report/<user>/+`: the reports the user makes.
        case reportsBy(String)
        /// `imhost/fleet/report/+/+`: every report.
        case reports
        /// `imhost/fleet/#`: the fleet configuration, every status and every report.
        case fleet
        /// `imhost/#`: everything imhost publishes.
        case everything
        /// One topic.
        case topic(Topic)

        package var name: String {
            switch self {
            case .inbox(let user): Topic.inbox(to: user, from: "+").name
            case .toUser(let user): "imhost/u/\(user)/#"
            case .fromUser(let user): Topic.inbox(to: "+", from: user).name
            case .devices(let user): Topic.inbox(to: user, from: user).name + "/+"
            case .statuses: Topic.fleetStatus(user: "+").name
            case .reportsBy(let user): "imhost/fleet/report/\(user)/+"
            case .reports: "imhost/fleet/report/+/+"
            case .fleet: "imhost/fleet/#"
            case .everything: "imhost/#"
            case .topic(let topic): topic.name
            }
        }

        package var description: String { name }
    }
}

extension Topic {
    /// A subscription a host's session holds.
    package struct Subscription: Sendable, Equatable {
        package enum Kind: Sendable { case inbox, presence, device, fleet }
        package var kind: Kind
        package var filter: String
        /// 1: what comes while the host is away waits for it in its session (on a NATS cluster,
        /// a JetStream consumer kept on as many nodes as `consumer_replicas`); 0: only what comes
        /// while it is connected (no consumer).
        package var qos: Int32
        /// Whether what the broker retains there comes as the subscription is made.
        package var retained: Bool
    }

    /// What a host's session of `user` (its device `device`, `nil` for the first) subscribes, in
    /// order. QoS 1 where what comes while the host is away must wait for it: the inbox
    /// (messages, receipts, its other devices' copies and catch-up questions) and the device's
    /// own topic (their answers to its catch-up: devices that are never connected at once still
    /// catch up, each answer waiting for the next connect). QoS 0, which keeps nothing for an
    /// absent host (on a NATS cluster, no JetStream consumer), where what matters is retained and
    /// comes again at every connect:
    /// - the first device's presence record (another device's record is its own topic, which
    ///   is QoS 1 for the answers), before the probe, whose SUBACK comes later (the inbox's
    ///   subscription takes no retained message);
    /// - the fleet configuration, subscribed after the inbox so the probe (sent when the inbox is
    ///   subscribed) comes back after it.
    package static func subscriptions(user: String, device: String?) -> [Subscription] {
        var list = [Subscription(kind: .inbox, filter: Topic.Filter.inbox(of: user).name, qos: 1, retained: false)]
        if let device {
            list.append(Subscription(kind: .presence, filter: Topic.device(user: user, device: device).name, qos: 1, retained: true))
        } else {
            list.append(Subscription(kind: .presence, filter: Topic.inbox(to: user, from: user).name, qos: 0, retained: true))
            list.append(Subscription(kind: .device, filter: Topic.device(user: user, device: nil).name, qos: 1, retained: false))
        }
        list.append(Subscription(kind: .fleet, filter: Topic.fleetConfig.name, qos: 0, retained: true))
        return list
    }
}

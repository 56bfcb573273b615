import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// The operator's workspace: a host.json whose user is `operator`, on `broker`. With `lines`, the
/// fleet's lines (house and jobs) are installed and named there too, as on the platform team's
/// machine: the names the operator's own host has are known to `imhost fleet` whatever hosts
/// report.
func operatorWorkspace(_ broker: TestBroker, lines: Bool = true) throws -> Workspace {
    let workspace = try Workspace()
    if lines { try workspace.installLines() }
    try workspace.writeConfig(#"{ "user": "operator", "lines": {\#(lines ? #" "house": {}, "jobs": {} "# : "")}, "transport": \#(broker.transport(for: "operator")) }"#)
    return workspace
}

/// `imhost fleet ARGUMENTS` as the operator.
func fleet(_ arguments: [String], _ workspace: Workspace) throws -> ProcessResult {
    try imhost(["fleet"] + arguments, in: workspace)
}

/// The version a `published fleet configuration version N` line names.
func publishedVersion(_ result: ProcessResult) -> Int64? {
    guard let range = result.stdout.range(of: "published fleet configuration version ") else { return nil }
    return Int64(result.stdout[range.upperBound...].prefix { $0.isNumber })
}

@Suite("Fleet control: the operator's configuration reaches every host", .heavy(.broker))
struct FleetTests {
    /// A broker with alice, whose host has reported its lines; the operator kills house (the
    /// first configuration); alice synced it. The first workspace holds the broker's folder: keep
    /// it as long as the broker.
    static func aliceWithHouseKilled() throws -> (Workspace, TestBroker, Workspace, Workspace, Int64) {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice"])
        let op = try operatorWorkspace(broker)
        let alice = try broker.workspace(for: "alice")
        #expect(try broker.sync(alice, timeout: 1).status == 0)
        let version = try #require(publishedVersion(try fleet(["kill", "house", "--init"], op)))
        #expect(try broker.sync(alice, timeout: 1).status == 0)
        return (root, broker, op, alice, version)
    }

    @Test("a kill published once reaches every connected host: open chats switch to the legacy page with their history, and come back when it lifts", arguments: BrokerKind.allCases)
    func killReachesEveryHost(_ kind: BrokerKind) throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob", "carol"], kind: kind)
        let op = try operatorWorkspace(broker)
        let people = try ["alice", "bob", "carol"].map { try broker.workspace(for: $0) }
        // Each has a message in its history with the next.
        for (index, person) in people.enumerated() {
            _ = try transcript(person, with: ["alice", "bob", "carol"][(index + 1) % 3], ["before the switch"])
        }
        let chats = try people.enumerated().map { index, person in
            try broker.chat(person, with: ["alice", "bob", "carol"][(index + 1) % 3])
        }
        for chat in chats { try #require(chat.waitFor("[house page]")) }
        // A second chat of alice's: the first holds her connection, this one follows its cache.
        let second = try broker.chat(people[0], with: "carol")
        try #require(second.waitFor("holds alice's connection") && second.waitFor("[house page]"))
        // Every host reported running before the kill: it applies what comes next live.
        var status = ""
        try #require(waitUntil {
            status = (try? fleet(["status"], op))?.stdout ?? ""
            return status.contains("3 hosts: 3 running")
        }, "\(status)")

        let killed = try fleet(["kill", "house", "--init"], op)
        #expect(killed.status == 0, "\(killed.stderr)")
        let version = try #require(publishedVersion(killed))
        for chat in chats {
            #expect(chat.waitFor("fleet configuration version \(version) applied (line house off): fleet-killed"), "\(chat.stdout)\(chat.stderr)")
            #expect(chat.waitFor("[legacy page]"))
            #expect(chat.stdout.components(separatedBy: "│ before the switch │").count - 1 >= 2, "the history shows on the legacy page")
        }
        #expect(second.waitFor("fleet configuration version \(version) applied (line house off): fleet-killed"), "\(second.stdout)\(second.stderr)")
        #expect(second.waitFor("[legacy page]"))
        second.send("/quit")
        _ = second.finish()
        // Every host says it applied that version.
        #expect(waitUntil { (try? fleet(["status"], op).stdout.contains("3 running, all running ones caught up")) == true })
        let after = try fleet(["status"], op)
        #expect(after.stdout.components(separatedBy: "version \(version)").count - 1 == 4, "\(after.stdout)")

        let lifted = try fleet(["lift", "house"], op)
        let next = try #require(publishedVersion(lifted))
        #expect(next > version)
        for chat in chats {
            #expect(chat.waitFor("fleet configuration version \(next) applied (line house on): routed"))
            #expect(chat.waitFor("[house page]", occurrences: 2))
            chat.send("/quit")
            #expect(chat.finish().status == 0)
        }
    }

    @Test("a host offline when the kill was published, and one started with the broker down, apply it before their first page")
    func lateAndCachedHosts() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let op = try operatorWorkspace(broker)
        let alice = try broker.workspace(for: "alice"), bob = try broker.workspace(for: "bob")
        // No fleet configuration anywhere: the host opens on host.json alone, and says so.
        let first = try transcript(bob, with: "alice")
        #expect(first.stdout.contains("[house page]"))
        #expect(first.stderr.contains("no fleet configuration from the broker and none cached: this host opens on host.json alone"), "\(first.stderr)")
        #expect(try transcript(bob, with: "alice").stderr.components(separatedBy: "no fleet configuration").count - 1 == 1, "one line a start")

        // Alice is offline (never connected) when the operator kills house.
        let version = try #require(publishedVersion(try fleet(["kill", "house", "--init"], op)))
        // Her first chat: the retained configuration comes before the first page.
        let late = try transcript(alice, with: "bob")
        #expect(!late.stdout.contains("[house page]") && late.stdout.contains("[legacy page]"), "\(late.stdout)")
        // route, plugins and open use the cached one without connecting.
        let route = try imhost(["route", houseChat(with: "bob"), "--json"], in: alice)
        #expect(route.stdout.contains(#""reason" : "fleet-killed""#) && route.stdout.contains(#""source" : "fleet""#)
                && route.stdout.contains(#""fleetVersion" : \#(version)"#), "\(route.stdout)")
        let plugins = try imhost(["plugins"], in: alice)
        #expect(plugins.stdout.contains("turned off fleet-wide (fleet version \(version))"), "\(plugins.stdout)")
        let pluginsJSON = try imhost(["plugins", "--json"], in: alice).stdout
        #expect(pluginsJSON.contains(#""source" : "fleet""#) && pluginsJSON.contains(#""fleetVersion" : \#(version)"#), "\(pluginsJSON)")
        let opened = try imhost(["open", houseChat(with: "bob"), "--json"], in: alice)
        #expect(opened.stdout.contains(#""source" : "fleet""#) && opened.stdout.contains(#""legacy" : true"#), "\(opened.stdout)")
        #expect(FleetCache(dataFolder: alice.root + "/.imhost").load().config?.version == version)
        // Three sources, one mechanism: host.json's kill switch too, and it is the one named.
        _ = try alice.writeConfig(try String(contentsOfFile: alice.root + "/host.json", encoding: .utf8)
            .replacingOccurrences(of: #""routes""#, with: #""killSwitch": { "lines": ["house"] }, "routes""#))
        let both = try imhost(["route", houseChat(with: "bob"), "--json"], in: alice).stdout
        #expect(both.contains(#""reason" : "killed""#) && both.contains(#""source" : "host.json""#), "\(both)")

        // Bob synced before (cache empty); he gets it now, then the broker goes down.
        #expect(try broker.sync(bob, timeout: 1).status == 0)
        #expect(FleetCache(dataFolder: bob.root + "/.imhost").load().config?.version == version)
        broker.stop()
        let down = try transcript(bob, with: "alice")
        #expect(down.stdout.contains("[legacy page]") && !down.stdout.contains("[house page]"), "the cached configuration applies: \(down.stdout)")
        #expect(down.stdout.contains("cannot reach the broker"), "\(down.stdout)")
    }

    @Test("an older version never wins, an equal one wins by its digest, an invalid one is refused in one line and the last good stays")
    func versions() throws {
        let (root, broker, _, alice, version) = try Self.aliceWithHouseKilled()
        defer { withExtendedLifetime(root) {} }
        let chat = try broker.chat(alice, with: "bob")
        try #require(chat.waitFor("[legacy page]"))

        // A late retained message with a lower version (as mosquitto_pub, the operator).
        let older = FleetConfig(version: version - 1, madeAt: version - 1)
        try broker.publish(as: "operator", topic: FleetConfig.topic, [String(decoding: older.bytes, as: UTF8.self)], retain: true)
        // Junk: refused, and the last good stays.
        try broker.publish(as: "operator", topic: FleetConfig.topic, [#"{ "v": 1, "version": 99999999999999, "madeAt": 1, "rollouts": { "house": 140 } }"#], retain: true)
        #expect(chat.waitFor("refused a fleet configuration: rollouts.house: a rollout is a percentage from 0 to 100 with at most two decimals; version \(version) stays"), "\(chat.stderr)\(chat.stdout)")
        // The same version as the one applied, with another digest: the larger digest wins.
        let rival = FleetConfig(version: version, madeAt: 1, killSwitch: .init(lines: ["house"], messages: ["jobs.offer"]))
        let applied = try #require(FleetCache(dataFolder: alice.root + "/.imhost").load().config)
        try broker.publish(as: "operator", topic: FleetConfig.topic, [String(decoding: rival.bytes, as: UTF8.self)], retain: true)
        if rival.digest > applied.digest {
            #expect(chat.waitFor("fleet configuration version \(version) applied (key jobs.offer off)"))
        }
        chat.send("/quit")
        let ended = chat.finish()
        #expect(!ended.stdout.contains("version \(version - 1) applied"), "an older version never applies")
        #expect(ended.stdout.contains("ignored fleet configuration version \(version - 1): this host applies version \(version), which is newer"), "\(ended.stdout)")
        let cached = try #require(FleetCache(dataFolder: alice.root + "/.imhost").load().config)
        #expect(cached.version == version && cached.digest == max(rival.digest, applied.digest))
    }

    @Test("two operators changing at once: both changes are kept")
    func concurrentOperators() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice"])
        let op = try operatorWorkspace(broker), other = try operatorWorkspace(broker)
        // Alice's host reports house and jobs: the names the changes turn off.
        #expect(try broker.sync(try broker.workspace(for: "alice"), timeout: 1).status == 0)
        #expect(try fleet(["kill-component", "quickReplies", "--init"], op).status == 0)
        let one = try RunningProcess(BuildProducts.imhost, ["fleet", "kill", "house"], in: op.root)
        let two = try RunningProcess(BuildProducts.imhost, ["fleet", "kill-message", "jobs.interview"], in: other.root)
        let (first, second) = (one.finish(), two.finish())
        #expect(first.status == 0 && second.status == 0, "\(first.stderr)\(second.stderr)")
        let shown = try fleet(["show", "--json"], op)
        #expect(shown.stdout.contains(#""house""#) && shown.stdout.contains(#""jobs.interview""#) && shown.stdout.contains(#""quickReplies""#), "\(shown.stdout)")
    }

    @Test("only operator changes the fleet: another user's host.json is refused, and a publish the broker refuses exits 1 in one line")
    func onlyOperator() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice"])
        let alice = try broker.workspace(for: "alice")
        let refused = try imhost(["fleet", "kill", "house", "--init"], in: alice)
        #expect(refused.status == 2 && refused.stderr.contains(#"user is "alice"; fleet commands run as operator"#), "\(refused.stderr)")
        // A broker whose roles do not let operator write the configuration.
        try broker.removeACL("publishClientSend", "imhost/fleet/#", from: "operator")
        try broker.killAndRestart()
        let op = try operatorWorkspace(broker)
        var result = try fleet(["kill-component", "quickReplies", "--init"], op)
        // The reload is the broker's own time: go again until it took it (a line of the log).
        _ = waitUntil {
            result = (try? fleet(["kill-component", "quickReplies", "--init"], op)) ?? result
            return result.status == 1
        }
        #expect(result.status == 1 && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("the broker refused the fleet configuration (Not authorized)"), "\(result.stderr)")
        #expect(try fleet(["kill", "--init"], op).status == 2)
        #expect(try fleet(["rollout", "house", "101"], op).stderr.contains("not a percentage from 0 to 100"))
        #expect(try fleet(["frobnicate"], op).stderr.contains("unknown subcommand"))
    }

    @Test("a rollout serves the users the hash says, the same on every host, and a user in stays in as it grows", arguments: [30])
    func rollout(_ percent: Int) throws {
        let root = try Workspace()
        let users = (1...12).map { "u\($0)" }
        let broker = try TestBroker(in: root.root, users: users)
        let op = try operatorWorkspace(broker)
        // No host has connected yet, so none reports house: --force.
        #expect(try fleet(["rollout", "house", "\(percent)", "--init", "--force"], op).status == 0)
        var inside: Set<String> = []
        for user in users {
            let workspace = try broker.workspace(for: user)
            #expect(try broker.sync(workspace, timeout: 1).status == 0)
            let route = try imhost(["route", houseChat(with: "x")], in: workspace).stdout
            // SHA-256 as coreutils computes it, independent of the host's.
            let digest = try run("/usr/bin/env", ["sha256sum"], input: "house/\(user)").stdout
            let bucket = Int(UInt32(digest.prefix(8), radix: 16)! % 10_000)
            if bucket < percent * 100 {
                inside.insert(user)
                #expect(route.contains("routed"), "\(user) (bucket \(bucket)) is in: \(route)")
            } else {
                #expect(route.contains("outside-rollout") && route.contains("serves \(percent)% of users"), "\(user) (bucket \(bucket)): \(route)")
            }
        }
        #expect(!inside.isEmpty && inside.count < users.count, "12 users split at \(percent)%")
        // Grown to 60%: everyone who was in is still in.
        #expect(try fleet(["rollout", "house", "60"], op).status == 0)
        for user in inside {
            let workspace = try broker.workspace(for: user)
            #expect(try broker.sync(workspace, timeout: 1).status == 0)
            #expect(try imhost(["route", houseChat(with: "x")], in: workspace).stdout.contains("routed"))
        }
    }

    @Test("an operator whose clock is behind builds on the highest version it saw, not on a lower one the broker was left holding")
    func skewedOperator() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice"])
        let op = try operatorWorkspace(broker)
        let first = try #require(publishedVersion(try fleet(["kill", "house", "--init", "--force"], op)))
        // A second operator, in this process, whose clock is an hour behind (within the day a
        // host allows: further behind, it judges every version as dated ahead, as hosts with
        // its clock would); it has seen the first's.
        let skewed = FleetOperator(transport: try #require(try HostConfig.load(from: op.configPath).transport), user: "operator",
                                   clock: { Clock.now() - 3_600_000 })
        #expect(try skewed.standing().config?.version == first)
        // Meanwhile a lower version replaced it on the broker (a late publish).
        let lower = FleetConfig(version: first - 5, madeAt: 1)
        try broker.publish(as: "operator", topic: FleetConfig.topic, [String(decoding: lower.bytes, as: UTF8.self)], retain: true)
        let outcome = try skewed.change(initialize: false) { (config: inout FleetConfig) throws(FleetOperator.Failure) in
            config.killSwitch.messages.append("jobs.offer")
        }
        guard case .published(let made, _) = outcome else { Issue.record("nothing published: \(outcome)"); return }
        #expect(made.version > first && made.killSwitch.lines == ["house"] && made.killSwitch.messages == ["jobs.offer"])
        let shown = try fleet(["show", "--json"], op).stdout
        #expect(shown.contains(#""version" : \#(made.version)"#) && shown.contains(#""house""#) && shown.contains(#""jobs.offer""#), "\(shown)")
    }

    @Test("an invalid configuration on the broker: show says so in one line, hosts keep theirs, --init replaces it")
    func invalidOnBroker() throws {
        let (root, broker, op, alice, version) = try Self.aliceWithHouseKilled()
        defer { withExtendedLifetime(root) {} }
        try broker.publish(as: "operator", topic: FleetConfig.topic, ["\u{1B}[2J not json"], retain: true)
        let shown = try fleet(["show"], op)
        #expect(shown.status == 1 && shown.stderr.contains("hosts refuse the fleet configuration the broker holds (JSON syntax")
                && shown.stderr.contains("imhost fleet replace") && shown.stderr.split(separator: "\n").count == 1
                && !shown.stderr.contains("\u{1B}"), "\(shown.stderr)")
        let synced = try broker.sync(alice, timeout: 1)
        #expect(synced.stdout.contains("refused a fleet configuration: JSON syntax") || synced.stderr.contains("refused a fleet configuration: JSON syntax"), "\(synced.stdout)\(synced.stderr)")
        #expect(FleetCache(dataFolder: alice.root + "/.imhost").load().config?.version == version, "the last good stays")
        #expect(try fleet(["lift", "house"], op).status == 1, "a change on top of an invalid one needs --init")
        let replaced = try fleet(["lift", "house", "--init"], op)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try broker.sync(alice, timeout: 1).status == 0)
        #expect(try imhost(["route", houseChat(with: "bob")], in: alice).stdout.contains("routed"))
    }

    @Test("rollout percentages are read from their digits", arguments: [("25", 2_500), ("0.29", 29), ("1.1", 110), ("0.57", 57), ("100", 10_000),
                                                                        ("100.01", nil), ("1e2", nil), ("-1", nil), (".5", nil), ("5.", nil), ("0.125", nil), ("NaN", nil), ("", nil)] as [(String, Int?)])
    func percentages(_ text: String, _ share: Int?) throws {
        #expect(FleetConfig.basisPoints(percent: text) == share)
        // The same through the document a host reads.
        let document = #"{ "v": 1, "version": 5, "madeAt": 5, "rollouts": { "cars": \#(text.isEmpty ? "\"\"" : text) } }"#
        let read = try? FleetConfig.read(Array(document.utf8))
        #expect(read?.rollouts["cars"] == share)
    }

    @Test("a version dated in the future, a removed configuration, hosts ahead of the broker, and a change too large: each said in one line, nothing fails open")
    func hostileVersions() throws {
        let (root, broker, op, alice, version) = try Self.aliceWithHouseKilled()
        defer { withExtendedLifetime(root) {} }
        let chat = try broker.chat(alice, with: "bob")
        try #require(chat.waitFor("[legacy page]"))
        // Two days ahead of every clock here: refused, so it cannot shut out later changes.
        let future = FleetConfig(version: Clock.now() + 2 * 24 * 3600 * 1000, madeAt: 1)
        try broker.publish(as: "operator", topic: FleetConfig.topic, [String(decoding: future.bytes, as: UTF8.self)], retain: true)
        #expect(chat.waitFor("refused a fleet configuration: its version \(future.version) is dated 47 hours ahead of this machine's clock"), "\(chat.stdout)")
        // An hour ahead (a clock that runs fast) is taken.
        let ahead = FleetConfig(version: Clock.now() + 3600 * 1000, madeAt: 1, killSwitch: .init(lines: ["house", "jobs"]))
        try broker.publish(as: "operator", topic: FleetConfig.topic, [String(decoding: ahead.bytes, as: UTF8.self)], retain: true)
        #expect(chat.waitFor("fleet configuration version \(ahead.version) applied (line jobs off)"))
        // The operator sees it on the broker: once it is gone, a host reporting it is believed
        // (published by hand here, it is in no operator's ledger otherwise).
        #expect(try fleet(["show"], op).status == 0)
        // Removed from the broker: the host keeps what it applied, and says so.
        _ = try IMHostTests.run(BrokerFolder.tool("mosquitto_pub"), ["--unix", broker.socket, "-u", "operator", "-P", broker.password("operator"),
                                                                      "-t", FleetConfig.topic, "-r", "-n", "-q", "1", "-V", "mqttv5"])
        #expect(chat.waitFor("the fleet configuration was removed from the broker; version \(ahead.version) stays"), "\(chat.stdout)")
        // The operator starts again with --init: above the version the host reports, so it applies.
        #expect(waitUntil { (try? fleet(["status"], op).stdout.contains("version \(ahead.version)")) == true })
        let again = try fleet(["lift", "house", "--init"], op)
        let next = try #require(publishedVersion(again), "\(again.stdout)\(again.stderr)")
        #expect(next > ahead.version)
        #expect(chat.waitFor("fleet configuration version \(next) applied (line house on; line jobs on)"), "\(chat.stdout)")
        chat.send("/quit")
        _ = chat.finish()
        // A change that would make the document larger than a host reads is refused before it
        // goes: lines fill the document to within one line of the limit, a component goes over.
        func filled(_ count: Int) -> FleetConfig {
            FleetConfig(version: next + 1, madeAt: 1, killSwitch: .init(lines: (0..<count).map { String(format: "l-%05d", $0) }))
        }
        var count = (FleetConfig.byteLimit - filled(0).bytes.count) / 11 - 3
        while filled(count + 1).bytes.count <= FleetConfig.byteLimit { count += 1 }
        let big = filled(count)
        try broker.publish(as: "operator", topic: FleetConfig.topic, [String(decoding: big.bytes, as: UTF8.self)], retain: true)
        let tooBig = try fleet(["kill-component", "quickReplies"], op)
        #expect(tooBig.status == 1 && tooBig.stderr.contains("not published: hosts would refuse it (it is")
                && tooBig.stderr.contains("over the \(FleetConfig.byteLimit)-byte limit); lift some of what it turns off first"), "\(tooBig.stderr)")
        // A cache dated in the future is not used.
        try FileSystem.writeAtomically(future.bytes, to: alice.root + "/.imhost/fleet.json")
        let route = try imhost(["route", houseChat(with: "bob")], in: alice)
        #expect(route.stderr.contains("is not valid (its version \(future.version) is dated 47 hours ahead"), "\(route.stderr)")
        #expect(version < ahead.version)
    }
}

import Foundation
import Testing
@testable import IMHost

/// The operator's way out of a configuration hosts do not apply, and its guard against typos:
/// `imhost fleet ...` against a private broker, with real hosts (`imhost chat`, `imhost sync`).
@Suite("Fleet control: a stuck configuration is replaced, a typo is not published, applied means reported", .heavy(.broker))
struct FleetRecoveryTests {
    /// Alice's chat, open on the legacy page of a fleet where house is off (version returned),
    /// and connected: it reports what it applies. Keep the workspaces as long as the chat.
    static func aliceChatting() throws -> (Workspace, TestBroker, Workspace, Workspace, RunningProcess, Int64) {
        let (root, broker, op, alice, version) = try FleetTests.aliceWithHouseKilled()
        let chat = try broker.chat(alice, with: "bob")
        try #require(chat.waitFor("[legacy page]"))
        var status = ""
        try #require(waitUntil {
            status = (try? fleet(["status"], op))?.stdout ?? ""
            return status.contains("1 host: 1 running")
        }, "\(status)")
        return (root, broker, op, alice, chat, version)
    }

    @Test("a configuration dated ahead of every clock: show says hosts refuse it, a change is not built on it, replace publishes one above what hosts report, and the host applies the next change")
    func farFuture() throws {
        let (root, broker, op, alice, chat, version) = try Self.aliceChatting()
        defer { withExtendedLifetime((root, alice)) {} }
        // As the operator with mosquitto's own client: a version no clock reaches.
        try broker.publish(as: "operator", topic: FleetConfig.topic,
                           [#"{ "v": 1, "version": 999999999999999, "madeAt": 1, "killSwitch": { "lines": ["house", "jobs"] } }"#], retain: true)
        #expect(chat.waitFor("refused a fleet configuration: its version 999999999999999 is dated"), "\(chat.stdout)")

        let shown = try fleet(["show"], op)
        #expect(shown.status == 1 && shown.stdout.contains("fleet configuration version 999999999999999"), "\(shown.stdout)")
        #expect(shown.stderr.split(separator: "\n").count == 1
                && shown.stderr.contains("hosts refuse the fleet configuration the broker holds (its version 999999999999999 is dated")
                && shown.stderr.contains("(version \(version) is the highest they report); imhost fleet replace publishes one they apply"), "\(shown.stderr)")
        let status = try fleet(["status"], op)
        #expect(status.stdout.contains("the broker holds a fleet configuration hosts refuse") && status.stderr.contains("hosts refuse"), "\(status.stdout)\(status.stderr)")

        // A change built on it would be refused by every host: nothing goes.
        let killed = try fleet(["kill", "jobs"], op)
        #expect(killed.status == 1 && killed.stderr.split(separator: "\n").count == 1
                && killed.stderr.contains("nothing published: hosts refuse the fleet configuration the broker holds (its version 999999999999999")
                && killed.stderr.contains("imhost fleet replace"), "\(killed.stderr)")
        #expect(try fleet(["show", "--json"], op).stdout.contains(#""version" : 999999999999999"#), "still the one the broker holds")

        // Replaced: what it turned off, above the version the host reports; the host moves to it.
        #expect(try imhost(["fleet", "--help"]).stdout.contains("replace               replace a configuration on the broker that hosts refuse"))
        let replaced = try fleet(["replace"], op)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        let made = try #require(publishedVersion(replaced), "\(replaced.stdout)")
        #expect(made > version && made <= Clock.now() + FleetConfig.futureSkew)
        #expect(replaced.stdout.contains("in place of the one hosts did not apply; lines off: house, jobs"), "\(replaced.stdout)")
        #expect(replaced.stdout.contains("Applied by 1 of 1 running host (as they report)."), "\(replaced.stdout)")
        #expect(chat.waitFor("fleet configuration version \(made) applied (line jobs off)"), "\(chat.stdout)")
        #expect(try fleet(["show"], op).status == 0)
        #expect(try fleet(["replace"], op).stdout.contains("hosts apply the fleet configuration the broker holds (version \(made)): nothing to replace"))

        // The next change reaches the host.
        let lifted = try fleet(["lift", "house"], op)
        let next = try #require(publishedVersion(lifted), "\(lifted.stdout)\(lifted.stderr)")
        #expect(lifted.stdout.contains("Applied by 1 of 1 running host (as they report)."), "\(lifted.stdout)")
        #expect(chat.waitFor("fleet configuration version \(next) applied (line house on)"), "\(chat.stdout)")
        #expect(chat.waitFor("[house page]"), "\(chat.stdout)")
        chat.send("/quit")
        #expect(chat.finish().status == 0)
    }

    @Test("an older configuration retained again (a broker restored from a backup): show names the hosts ahead of it, and lift still lifts on them")
    func restoredOlder() throws {
        let (root, broker, op, alice, chat, version) = try Self.aliceChatting()
        defer { withExtendedLifetime((root, alice)) {} }
        // What the backup held: an earlier configuration, with house on.
        let older = FleetConfig(version: version - 60_000, madeAt: version - 60_000)
        try broker.publish(as: "operator", topic: FleetConfig.topic, [String(decoding: older.bytes, as: UTF8.self)], retain: true)
        #expect(chat.waitFor("ignored fleet configuration version \(older.version): this host applies version \(version), which is newer"), "\(chat.stdout)")

        let shown = try fleet(["show"], op)
        #expect(shown.status == 1 && shown.stderr.contains("alice applies version \(version), newer than the broker's version \(older.version)")
                && shown.stderr.contains("and ignores it"), "\(shown.stderr)")
        #expect(try fleet(["status"], op).stdout.contains("version \(version)  ahead of the broker"))

        // The broker's says house is on already; the host has it off: lift goes above the host.
        let lifted = try fleet(["lift", "house"], op)
        #expect(lifted.status == 0, "\(lifted.stderr)")
        #expect(lifted.stdout.contains("note: alice applies version \(version)"), "\(lifted.stdout)")
        let next = try #require(publishedVersion(lifted), "\(lifted.stdout)")
        #expect(next > version)
        #expect(lifted.stdout.contains("Applied by 1 of 1 running host (as they report)."), "\(lifted.stdout)")
        #expect(chat.waitFor("fleet configuration version \(next) applied (line house on)"), "\(chat.stdout)")
        #expect(chat.waitFor("[house page]"), "\(chat.stdout)")
        chat.send("/quit")
        #expect(chat.finish().status == 0)
        #expect(try fleet(["show"], op).status == 0)
    }

    @Test("a change waits for the running hosts' reports and says how many applied it; --wait 0 does not wait")
    func appliedMeansReported() throws {
        let (root, broker, op, alice, chat, _) = try Self.aliceChatting()
        defer { withExtendedLifetime((root, broker, alice)) {} }
        let quick = try fleet(["kill-message", "jobs.interview", "--wait", "0"], op)
        #expect(quick.stdout.contains("Not waited for (--wait 0): imhost fleet status shows which of the 1 running host apply it."), "\(quick.stdout)")
        #expect(try fleet(["kill", "house", "--wait", "x"], op).status == 2)
        chat.send("/quit")
        #expect(chat.finish().status == 0)
        // Nobody running: nothing to wait for, and it says so.
        let alone = try fleet(["lift-message", "jobs.interview"], op)
        #expect(alone.stdout.contains("No host is running: each applies it when it connects"), "\(alone.stdout)")
    }

    @Test("a line or message key no host reports, or only one host does, is refused with the nearest known name, and nothing is published; --force publishes it")
    func typos() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        // An operator with no lines of its own (README's op.json): names are known from hosts.
        let op = try operatorWorkspace(broker, lines: false)
        let alice = try broker.workspace(for: "alice"), bob = try broker.workspace(for: "bob")
        // Before any host has said what it has, nothing is known but built-in keys.
        let early = try fleet(["kill", "house", "--init"], op)
        #expect(early.status == 2 && early.stderr.contains("no host reports a line 'house' (no host has said what it has"), "\(early.stderr)")

        let chat = try broker.chat(alice, with: "bob")
        try #require(chat.waitFor("[house page]"))
        // Alice's host reports its lines and their keys.
        var reported = ""
        try #require(waitUntil {
            reported = (try? fleet(["status", "--json"], op))?.stdout ?? ""
            return reported.contains(#""house.listing""#)
        }, "\(reported)")
        #expect(reported.contains(#""house""#) && reported.contains(#""jobs""#) && reported.contains(#""jobs.interview""#), "\(reported)")
        // One host's report is its user's word alone: not enough to make a name known.
        let alone = try fleet(["kill", "house", "--init"], op)
        #expect(alone.status == 2 && alone.stderr.contains("only alice reports a line 'house', and a report is its user's to write"), "\(alone.stderr)")

        // A second host reports the same lines: they are known.
        let bobChat = try broker.chat(bob, with: "alice")
        try #require(bobChat.waitFor("[house page]"))
        try #require(waitUntil {
            reported = (try? fleet(["status", "--json"], op))?.stdout ?? ""
            return reported.components(separatedBy: #""house.listing""#).count - 1 == 2
        }, "\(reported)")
        let line = try fleet(["kill", "hosue", "--init"], op)
        #expect(line.status == 2 && line.stderr.split(separator: "\n").count == 1
                && line.stderr.contains("no host reports a line 'hosue'; did you mean 'house'? --force publishes it anyway"), "\(line.stderr)")
        let key = try fleet(["kill-message", "house.listng", "--init"], op)
        #expect(key.status == 2 && key.stderr.contains("no host reports a message key 'house.listng'; did you mean 'house.listing'? --force publishes it anyway"), "\(key.stderr)")
        let rollout = try fleet(["rollout", "jbos", "50", "--init"], op)
        #expect(rollout.status == 2 && rollout.stderr.contains("did you mean 'jobs'?"), "\(rollout.stderr)")
        // Nothing was published: the broker holds none.
        #expect(try fleet(["show"], op).stdout.contains("The broker holds no fleet configuration"))
        // A built-in key is known without a report.
        let builtIn = try fleet(["kill-message", "image", "--init"], op)
        #expect(builtIn.status == 0, "\(builtIn.stderr)")

        let forced = try fleet(["kill", "hosue", "--force"], op)
        #expect(forced.status == 0, "\(forced.stderr)")
        let forcedKey = try fleet(["kill-message", "house.listng", "--force"], op)
        #expect(forcedKey.status == 0, "\(forcedKey.stderr)")
        let shown = try fleet(["show", "--json"], op).stdout
        #expect(shown.contains(#""hosue""#) && shown.contains(#""house.listng""#), "\(shown)")
        // Lifting is never checked: it turns nothing off.
        #expect(try fleet(["lift", "hosue"], op).status == 0)
        for running in [chat, bobChat] {
            running.send("/quit")
            _ = running.finish()
        }
    }

    @Test("a status a user writes by hand steers nothing: its names do not pass the typo guard, and its version is not built on")
    func forgedStatus() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "mallory"])
        let op = try operatorWorkspace(broker)
        let alice = try broker.workspace(for: "alice")
        let chat = try broker.chat(alice, with: "bob")
        defer { chat.signal(SIGKILL); _ = chat.finish() }
        try #require(chat.waitFor("[house page]"))
        // Mallory needs no host: her status topic is hers to write. A version a day ahead,
        // which no operator published, and the names of typos an operator might make.
        let forged = Clock.now() + FleetConfig.futureSkew - 3_600_000
        try broker.publish(as: "mallory", topic: Topic.fleetStatus(user: "mallory").name,
                           [#"{"v":1,"state":"running","version":\#(forged),"digest":"\#(String(repeating: "ab", count: 32))","at":1,"lines":["hosue","house","jobs"],"keys":["house.listng","house.listing"]}"#],
                           retain: true)
        var status = ""
        try #require(waitUntil {
            status = (try? fleet(["status"], op))?.stdout ?? ""
            return status.contains("mallory") && status.contains("alice")
        }, "\(status)")
        #expect(status.contains("version \(forged)  a version no configuration this operator knows has (not built on)"), "\(status)")

        let typo = try fleet(["kill", "hosue", "--init"], op)
        #expect(typo.status == 2 && typo.stderr.contains("only mallory reports a line 'hosue'") && typo.stderr.contains("did you mean 'house'?"), "\(typo.stderr)")
        let key = try fleet(["kill-message", "house.listng", "--init"], op)
        #expect(key.status == 2 && key.stderr.contains("only mallory reports a message key 'house.listng'"), "\(key.stderr)")
        #expect(try fleet(["show"], op).stdout.contains("The broker holds no fleet configuration"), "nothing was published")

        // A real change goes at this machine's time, not above the forged version, and is not
        // told it is behind a host that "applies" a newer one.
        let killed = try fleet(["kill", "house", "--init"], op)
        let version = try #require(publishedVersion(killed), "\(killed.stdout)\(killed.stderr)")
        #expect(version < Clock.now() + 60_000, "version \(version), forged \(forged)")
        // Applied means alice reported it: mallory's claim of a higher version counts for nothing.
        #expect(!killed.stdout.contains("mallory") && killed.stdout.contains("Applied by 1 of 1 running host (as they report)."), "\(killed.stdout)")
        #expect(chat.waitFor("fleet configuration version \(version) applied (line house off)"), "\(chat.stdout)")
        #expect(try fleet(["show"], op).status == 0, "nobody is taken to be ahead of the broker")
    }

    @Test("a host's status stays within its size limit: names that do not fit are left out and the report says so")
    func boundedReport() throws {
        let lines = (0..<2_000).map { String(format: "line-%05d", $0) }
        let report = FleetReport(applied: .init(version: 5, digest: "d"), lines: lines, keys: ["line-00000.card"])
        let document = report.document(state: .running, at: 1)
        #expect(document.count <= FleetStatus.byteLimit && document.count > FleetStatus.byteLimit - 32)
        let read = FleetStatus.read(user: "alice", document)
        #expect(read.inventory == .partial && read.version == 5 && read.state == .running)
        #expect(!read.report.lines.isEmpty && read.report.lines == Array(lines.prefix(read.report.lines.count)))
        let small = FleetStatus.read(user: "alice", FleetReport(lines: ["house"], keys: ["house.listing"]).document(state: .gone, at: 1))
        #expect(small.inventory == .complete && small.report.lines == ["house"] && small.report.keys == ["house.listing"] && small.version == nil)
    }
}

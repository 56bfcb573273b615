import Testing
@testable import IMHost
@testable import IMHostBroker

/// The one grammar of imhost's topics: what the hosts publish to, what they read back, what the
/// broker's rules grant (mosquitto's dynamic-security rows, a NATS cluster's subjects).
@Suite("Topics: built, read, granted")
struct TopicTests {
    @Test("each topic is built as the wire says, and read back to what it was built from")
    func buildAndParse() {
        let built: [(Topic, String)] = [
            (.inbox(to: "bob", from: "alice"), "imhost/u/bob/from/alice"),
            (.inbox(to: "alice", from: "alice"), "imhost/u/alice/from/alice"),
            (.device(user: "alice", device: "phone"), "imhost/u/alice/from/alice/phone"),
            (.device(user: "alice", device: nil), "imhost/u/alice/from/alice/~"),
            (.fleetConfig, "imhost/fleet/config"),
            (.fleetStatus(user: "carol"), "imhost/fleet/status/carol"),
            (.report(user: "carol", slot: 0), "imhost/fleet/report/carol/0"),
            (.report(user: "carol", slot: 31), "imhost/fleet/report/carol/31"),
        ]
        for (topic, name) in built {
            #expect(topic.name == name)
            #expect(Topic(name) == topic, "\(name)")
        }
    }

    @Test("what is not one of imhost's topics reads as none: another prefix, a level too many or too few, a device below another's topic, a filter")
    func notTopics() {
        for name in ["", "imhost", "imhost/u/bob/from", "imhost/u/bob/to/alice", "imhost/u/bob/from/alice/phone", "imhost/u/bob/from/alice/x/y",
                     "imhost/fleet/config/x", "imhost/fleet/status", "other/u/bob/from/alice", "imhost/u/bob/from/+", "imhost/u/#",
                     "imhost/u//from/alice", "imhost/fleet/status/", "imhost/fleet/report/carol", "imhost/fleet/report/carol/",
                     "imhost/fleet/report/+/+", "imhost/fleet/report/carol/32", "imhost/fleet/report/carol/07", "imhost/fleet/report/carol/x", "$CONTROL/dynamic-security/v1"] {
            #expect(Topic(name) == nil, "\(name)")
        }
    }

    @Test("an id that cannot be one level is refused: MQTT's separator and wildcards always; as a NATS cluster's token, its separator and wildcards too")
    func refusedIDs() {
        for (id, character) in [("a/b", "/"), ("a+b", "+"), ("a#", "#"), ("+", "+")] as [(String, Character)] {
            #expect(Topic.problem(level: id) == .holds(character), "\(id)")
            #expect(Topic.inbox(to: "bob", from: id).problem?.id == id, "\(id)")
            #expect(Topic.fleetStatus(user: id).problem?.1 == .holds(character), "\(id)")
        }
        #expect(Topic.problem(level: "") == .empty)
        #expect(Topic.problem(level: "a.b") == nil, "a '.' is fine on mosquitto")
        #expect(Topic.problem(level: "a.b", natsToken: true) == .holds("."))
        #expect(Topic.problem(level: "a*", natsToken: true) == .holds("*") && Topic.problem(level: "a>", natsToken: true) == .holds(">"))
        #expect(Topic.problem(level: "alice-1_x", natsToken: true) == nil)
        #expect(Topic.device(user: "alice", device: "my/phone").problem?.id == "my/phone")
        #expect(Topic.inbox(to: "bob", from: "alice").problem == nil && Topic.fleetConfig.problem == nil)
        // A cluster refuses such an id when it is made.
        #expect(BrokerCluster.idProblem("a.b") == .dotInID(id: "a.b", device: false))
    }

    @Test("the filters subscriptions and the broker's rules name")
    func filters() {
        let names: [(Topic.Filter, String)] = [
            (.inbox(of: "bob"), "imhost/u/bob/from/+"),
            (.toUser("bob"), "imhost/u/bob/#"),
            (.fromUser("bob"), "imhost/u/+/from/bob"),
            (.devices(of: "bob"), "imhost/u/bob/from/bob/+"),
            (.statuses, "imhost/fleet/status/+"),
            (.fleet, "imhost/fleet/#"),
            (.everything, "imhost/#"),
            (.topic(.fleetStatus(user: "bob")), "imhost/fleet/status/bob"),
            (.reportsBy("bob"), "imhost/fleet/report/bob/+"),
            (.reports, "imhost/fleet/report/+/+"),
        ]
        for (filter, name) in names { #expect(filter.name == name) }
    }

    @Test("a user's rules: mosquitto's dynamic-security rows, and the same as a NATS cluster's subjects")
    func rules() {
        let rows = DynamicSecurity.userACLs("bob").map { "\($0.acltype) \($0.topic)" }
        #expect(rows == [
            "publishClientSend imhost/u/+/from/bob",
            "publishClientSend imhost/u/bob/from/bob/+",
            "publishClientSend imhost/fleet/status/bob",
            "publishClientSend imhost/fleet/report/bob/+",
            "subscribePattern imhost/u/bob/#",
            "publishClientReceive imhost/u/bob/#",
            "subscribePattern imhost/fleet/config",
            "publishClientReceive imhost/fleet/config",
        ])
        let bob = BrokerCluster.permissions(of: "bob")
        #expect(bob.publish == ["imhost.u.*.from.bob", "imhost.u.bob.from.bob.*", "imhost.fleet.status.bob", "imhost.fleet.report.bob.*"])
        #expect(bob.subscribe == ["imhost.u.bob", "imhost.u.bob.>", "imhost.fleet.config", "$MQTT.sub.>"])
        let operatorRules = BrokerCluster.permissions(of: "operator")
        #expect(operatorRules.publish.contains("imhost.fleet.>") && operatorRules.subscribe.contains("imhost.fleet.>"))
    }
}

import Foundation
import IMKit
import Testing
@testable import IMHost
@testable import IMHostBroker

/// One connection, one policy: the operator's fleet commands and `imhost broker`'s control of a
/// running broker connect, wait and fail over as a host's courier does, because they are the
/// same connection (``BrokerLink``). In process, against brokers of the test's own that behave
/// as mosquitto does (``FakeBroker``), on a clock the test moves (a wait moves it on).
@Suite("One connection, one policy: the operator and broker control fail over as the courier does")
struct ConnectionPolicyTests {
    let workspace: Workspace
    let clock = TestClock()

    init() throws { workspace = try Workspace() }

    /// A password file for `user`, and host.json's transport listing `addresses`.
    func transport(_ user: String, _ addresses: [HostConfig.Transport.Address]) throws -> HostConfig.Transport {
        let file = workspace.root + "/password-" + user
        try #require(FileManager.default.createFile(atPath: file, contents: Data("secret\n".utf8), attributes: [.posixPermissions: 0o600]))
        var transport = HostConfig.Transport(address: addresses[0], passwordFile: file)
        transport.addresses = addresses
        return transport
    }

    /// Four nodes: the first cannot be reached, the second answers nothing (frozen), the third
    /// refuses subscriptions (its JetStream waiting for the others), the fourth serves, and holds
    /// `config`.
    func troubledNodes(holding config: FleetConfig) -> FakeNodes {
        let nodes = FakeNodes(4, clock: clock)
        nodes.brokers[0].down = true
        nodes.brokers[1].frozen = true
        nodes.brokers[2].refusesSubscriptions = 1000
        let publisher = FakeBrokerClient(broker: nodes.brokers[3], settings: BrokerClientSettings(address: nodes.addresses[3], user: "operator", password: "", maximumPacket: 70_000))
        publisher.connect()
        _ = publisher.publish(topic: Topic.fleetConfig.name, payload: config.bytes, retain: true)
        publisher.disconnect()
        return nodes
    }

    @Test("a host and the operator move along the same list the same way: past a node that cannot be reached, one that answers nothing for 5 s, one that refuses the inbox, to the one that serves")
    func sameWayAlongAList() throws {
        let config = FleetConfig(version: 7, madeAt: clock.now)
        // The operator.
        let forOperator = troubledNodes(holding: config)
        let fleet = FleetOperator(transport: try transport("operator", forOperator.addresses), user: "operator", clock: { clock.now }, ledger: nil,
                                  runtime: forOperator.runtime)
        let began = clock.now
        let standing = try fleet.standing()
        #expect(standing.config?.version == 7, "read from the fourth node")
        #expect(forOperator.tried.map(\.address) == forOperator.addresses, "\(forOperator.tried)")
        // The frozen node had 5 s to answer its CONNECT, no more than a few more went by.
        #expect(clock.now - began > BrokerLink.answerWait && clock.now - began < 3 * BrokerLink.answerWait, "\(clock.now - began) ms")
        // A host with the same list.
        let forHost = troubledNodes(holding: config)
        let host = try FakeSide("alice", broker: forHost.brokers[0], in: workspace, clock: clock, addresses: forHost.addresses, makeClient: forHost.makeClient)
        #expect(exchange([host], clock: clock, step: 100, rounds: 300) { host.courier.inboxConfirmed }, "\(host.notices)")
        #expect(forHost.tried.map(\.address) == forHost.addresses, "\(forHost.tried)")
        // The host says what the operator keeps to itself: the refused inbox, once.
        #expect(host.notices.filter { $0 == .acl(.inboxRefused("Not authorized")) }.count == 1, "\(host.notices)")
    }

    @Test("every node down: the operator's command tries them round after round, on the same backoff as a host, until one comes back; down for two minutes, it ends with the last node's reason")
    func roundsOnABackoff() throws {
        let nodes = FakeNodes(2, clock: clock)
        for broker in nodes.brokers { broker.down = true }
        let fleet = FleetOperator(transport: try transport("operator", nodes.addresses), user: "operator", clock: { clock.now }, ledger: nil, runtime: nodes.runtime)
        let began = clock.now
        do {
            _ = try fleet.standing()
            Issue.record("read from nodes that are all down")
        } catch {
            #expect(error.code == .connection(.notConnected(.unreachable(address: nodes.addresses[1], .network("Connection refused"), retrying: false))), "\(error)")
        }
        #expect(clock.now - began >= FleetOperator.clusterPatience && clock.now - began < FleetOperator.clusterPatience + 10_000, "\(clock.now - began) ms")
        // Rounds: both nodes 200 ms apart, then a backoff that doubles up to 4 s.
        let rounds = stride(from: 0, to: nodes.tried.count, by: 2).map { nodes.tried[$0].at }
        let gaps = zip(rounds.dropFirst(), rounds).map { $0 - $1 }
        #expect(gaps.count > 20 && gaps.prefix(3).enumerated().allSatisfy { index, gap in gap >= Int64(1000 << index) + 200 }, "\(gaps)")
        #expect(gaps.allSatisfy { $0 <= Failover.listCap + Failover.listCap / 4 + 400 }, "\(gaps)")

        // The same, with the second node back after 3 s: the command is served.
        let back = FakeNodes(2, clock: clock)
        for broker in back.brokers { broker.down = true }
        let comes = clock.now + 3000
        let later = FleetOperator(transport: try transport("operator", back.addresses), user: "operator", clock: { clock.now }, ledger: nil,
                                  runtime: ConnectionRuntime(clock: { clock.now }, makeClient: back.makeClient, wait: { _, milliseconds in
                                      clock.now += Int64(max(1, milliseconds))
                                      if clock.now >= comes { back.brokers[1].down = false }
                                  }))
        #expect(try later.standing().config == nil)
        #expect(clock.now - comes < 5000, "served on the next round after it came back")
    }

    @Test("one broker down: the operator's command tries it once and ends at once, as sync does")
    func oneBrokerOnce() throws {
        let nodes = FakeNodes(1, clock: clock)
        nodes.brokers[0].down = true
        let fleet = FleetOperator(transport: try transport("operator", nodes.addresses), user: "operator", clock: { clock.now }, ledger: nil, runtime: nodes.runtime)
        let began = clock.now
        #expect(throws: FleetOperator.Failure(.connection(.notConnected(.unreachable(address: nodes.addresses[0], .network("Connection refused"), retrying: false))))) {
            try fleet.standing()
        }
        #expect(nodes.tried.count == 1 && clock.now - began < 1000)
    }

    @Test("a node that answers a read with nothing is left after 5 s for the next, and the command goes on there")
    func stalledRead() throws {
        let config = FleetConfig(version: 3, madeAt: clock.now)
        let nodes = FakeNodes(2, clock: clock)
        for broker in nodes.brokers {
            let publisher = FakeBrokerClient(broker: broker, settings: BrokerClientSettings(address: .unix(path: "/fake"), user: "operator", password: "", maximumPacket: 70_000))
            publisher.connect()
            _ = publisher.publish(topic: Topic.fleetConfig.name, payload: config.bytes, retain: true)
        }
        let fleet = FleetOperator(transport: try transport("operator", nodes.addresses), user: "operator", clock: { clock.now }, ledger: nil, runtime: nodes.runtime)
        try fleet.ready()
        // Connected to the first: it freezes before the read.
        nodes.brokers[0].frozen = true
        let began = clock.now
        #expect(try fleet.standing().config?.version == 3)
        #expect(nodes.tried.map(\.address) == nodes.addresses && clock.now - began > BrokerLink.answerWait, "\(nodes.tried), \(clock.now - began) ms")
    }

    /// A control for `broker`, its lock in the workspace, its waits moving the test's clock.
    func control(_ nodes: FakeNodes) throws -> BrokerControl {
        nodes.brokers[0].control = { _ in Array(#"{"responses":[{"command":"listClients","data":{"clients":["alice","alice~phone"]}}]}"#.utf8) }
        return try BrokerControl(address: nodes.addresses[0], password: "admin", lockPath: workspace.root + "/control.lock", runtime: nodes.runtime)
    }

    @Test("broker control: a broker that refuses its answers' topic (its inbox) is tried again on the backoff, and the command goes through")
    func controlRefusedInbox() throws {
        let nodes = FakeNodes(1, clock: clock)
        nodes.brokers[0].refusesSubscriptions = 2
        let answers = try control(nodes).apply([BrokerControl.listClients])
        #expect(answers.first?.data?.clients == ["alice", "alice~phone"])
        #expect(nodes.brokers[0].connections == 3, "refused twice, then granted")
    }

    @Test("broker control: a broker that answers nothing is left after 5 s, and the command fails with its address; one that refuses its inbox within the wait says so")
    func controlNoAnswer() throws {
        let frozen = FakeNodes(1, clock: clock)
        frozen.brokers[0].frozen = true
        let began = clock.now
        let unanswered = #expect(throws: BrokerFolder.Failure.self) { try control(frozen).apply([BrokerControl.listClients]) }
        let silence = Unreachable.network("no answer within \(BrokerLink.answerWait / 1000) s")
        #expect(unanswered?.code == .control(.notConnected(.unreachable(address: frozen.addresses[0], silence, retrying: false))), "\(String(describing: unanswered))")
        #expect(clock.now - began > BrokerLink.answerWait && clock.now - began <= 2 * BrokerLink.answerWait + 1000, "\(clock.now - began) ms")
        let refusing = FakeNodes(1, clock: clock)
        refusing.brokers[0].refusesSubscriptions = 1000
        let refused = #expect(throws: BrokerFolder.Failure.self) { try control(refusing).apply([BrokerControl.listClients]) }
        #expect(refused?.code == .control(.inboxRefused(filter: BrokerControl.responseTopic, reason: "Not authorized")), "\(String(describing: refused))")
    }
}

import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// `imhost broker init --cluster N` and `run` on a NATS cluster: real nats-server nodes, driven
/// through the real commands, with mosquitto's own clients speaking MQTT 3.1.1 as other users
/// (or an attacker) would. Each test that runs a cluster has its own (it starts in about 3 s);
/// what a test waits for is a line, a message or a file, never time.
@Suite("imhost broker: a NATS cluster", .heavy(.cluster))
struct ClusterTests {
    @Test("init --cluster writes each node's configuration, the accounts and a private password file a login; no monitoring port; a 2-node cluster, mosquitto's options and ids with a '.' are refused in one line")
    func initFolder() throws {
        let workspace = try Workspace()
        let folder = workspace.root + "/c"
        let made = try imhost(["broker", "init", "--cluster", "3", folder, "--users", "alice,bob"])
        #expect(made.status == 0, "\(made.stderr)")
        let description = try BrokerCluster(path: folder).description()
        let urls = description.nodes.map { "\"mqtt://127.0.0.1:\($0.mqttPort)\"" }.joined(separator: ", ")
        #expect(made.stdout.contains(#""transport": { "url": [\#(urls)], "protocol": "3.1.1", "passwordFile": "\#(folder)/passwords/alice" }"#), "\(made.stdout)")
        #expect(description.logins == ["alice", "bob", "operator"] && description.replicas == 3 && description.maxPayload == 14_051_672)
        let ports = description.nodes.flatMap { [$0.clientPort, $0.clusterPort, $0.mqttPort] }
        #expect(Set(ports).count == 9, "every port its own: \(ports)")
        for login in ["alice", "bob", "operator", "~system"] {
            var info = stat()
            #expect(stat(folder + "/passwords/" + login, &info) == 0 && info.st_mode & 0o777 == 0o600, "\(login)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/passwords/~admin"), "no $CONTROL on a cluster, so no ~admin")
        let accounts = try String(contentsOfFile: folder + "/nodes/accounts.conf", encoding: .utf8)
        for line in [#"{ user: "bob", password: "\#(try password(folder, "bob"))", allowed_connection_types: ["MQTT"], permissions: {"#,
                     #"publish: { allow: ["imhost.u.*.from.bob", "imhost.u.bob.from.bob.*", "imhost.fleet.status.bob", "imhost.fleet.report.bob.*"] }"#,
                     #"subscribe: { allow: ["imhost.u.bob", "imhost.u.bob.>", "imhost.fleet.config", "$MQTT.sub.>"] } } }"#,
                     #"publish: { allow: ["imhost.u.*.from.operator", "imhost.u.operator.from.operator.*", "imhost.fleet.status.operator", "imhost.fleet.report.operator.*", "imhost.fleet", "imhost.fleet.>"] }"#] {
            #expect(accounts.contains(line), "\(line)")
        }
        for node in description.nodes {
            let path = folder + "/nodes/\(node.name).conf"
            let config = try String(contentsOfFile: path, encoding: .utf8)
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600, "it holds the routes' password")
            for line in ["port: \(node.mqttPort)", "stream_replicas: 3", "consumer_replicas: 3", "max_payload: 14051672", #"store_dir: "\#(folder)/data/\#(node.name)""#,
                         #"include "accounts.conf""#, #"host: "127.0.0.1""#] {
                #expect(config.contains(line), "\(node.name): \(line)")
            }
            // Never a consumer_inactive_threshold: NATS 2.9.10 deletes an away session's consumer
            // after it and does not make it again when the host comes back (measured: deaf). Nor
            // consumers in memory: under load their logs lost entries, and an away device a delivery.
            #expect(!config.split(separator: "\n").contains { !$0.hasPrefix("#") && ($0.contains("inactive") || $0.contains("memory_storage")) }, "\(config)")
            // No monitoring port: it would list every client id.
            #expect(!config.split(separator: "\n").contains { !$0.hasPrefix("#") && ($0.contains("http") || $0.contains("monitor")) }, "\(config)")
            for paragraph in config.components(separatedBy: "\n\n") where paragraph.contains(where: { $0.isLetter }) {
                #expect(paragraph.hasPrefix("#"), "no comment says why: \(paragraph)")
            }
        }
        let again = try imhost(["broker", "init", "--cluster", "3", folder, "--users", "carol"])
        #expect(again.status == 1 && again.stderr.contains("cluster.json exists: this folder has a cluster already"), "\(again.stderr)")
        let mosquitto = try imhost(["broker", "init", folder, "--users", "carol"])
        #expect(mosquitto.status == 1 && mosquitto.stderr.contains("holds a NATS cluster (cluster.json)"), "\(mosquitto.stderr)")

        let two = try imhost(["broker", "init", "--cluster", "2", workspace.root + "/two", "--users", "alice"])
        #expect(two.status == 1 && two.stderr.split(separator: "\n").count == 1
                && two.stderr.contains("a cluster of 2 nodes stops serving MQTT when either dies") && two.stderr.contains("give --cluster 3 or more"), "\(two.stderr)")
        let port = try imhost(["broker", "init", "--cluster", "3", workspace.root + "/port", "--users", "alice", "--port", "1883"])
        #expect(port.status == 2 && port.stderr.contains("--port is for a mosquitto broker, not with --cluster"), "\(port.stderr)")

        let dotted = try imhost(["broker", "init", "--cluster", "3", workspace.root + "/dot", "--users", "alice,a.b"])
        #expect(dotted.status == 1 && dotted.stderr.split(separator: "\n").count == 1
                && dotted.stderr.contains(#"the user id "a.b" holds a '.', which a NATS cluster cannot carry in a topic level (it drops the connection): choose an id without '.', or keep this user on a mosquitto broker"#),
                "\(dotted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/dot/cluster.json"))
        let user = try imhost(["broker", "add-user", folder, "c.d"])
        #expect(user.status == 1 && user.stderr.contains(#"the user id "c.d" holds a '.'"#), "\(user.stderr)")
        let device = try imhost(["broker", "add-device", folder, "alice", "my.phone"])
        #expect(device.status == 1 && device.stderr.split(separator: "\n").count == 1
                && device.stderr.contains(#"the device name "my.phone" holds a '.', which a NATS cluster cannot carry in a topic level"#), "\(device.stderr)")
        // On a mosquitto broker a '.' is fine, as before.
        #expect(try imhost(["broker", "init", workspace.root + "/m", "--users", "a.b"]).status == 0)
        let listed = try imhost(["broker", "devices", folder])
        #expect(listed.status == 0 && listed.stdout.contains("(no node of the cluster runs") && !listed.stdout.contains("c.d"), "\(listed.stdout)")
    }

    @Test("a running cluster carries alice's mail from node 1 to her session on node 2, and enforces mosquitto's rules: no forged sender, no reading another's inbox, only operator writes the fleet configuration (retained on every node), no NATS-protocol login, nothing listening beyond the configured loopback ports")
    func rules() throws {
        let workspace = try Workspace()
        let cluster = try TestCluster(in: workspace.root, users: ["alice", "bob", "carol"])
        #expect(cluster.process.stdout.contains("imhost broker: cluster of 3 accepting connections at \(cluster.urls.joined(separator: ", "))"), "\(cluster.process.stdout)")

        // Alice's persistent session, on node 2; bob writes on node 1.
        let alice = try cluster.subscribe(as: "alice", topic: "imhost/u/alice/#", node: 2, clientID: "alice-laptop", cleanSession: false)
        defer { alice.signal(SIGKILL); _ = alice.finish() }
        #expect(try cluster.waitSubscribed(alice, publisher: "bob", topic: "imhost/u/alice/from/bob", node: 1))
        #expect(try cluster.publish(as: "bob", topic: "imhost/u/alice/from/bob", ["hello from node 1"], node: 1).status == 0)
        #expect(alice.waitFor("imhost/u/alice/from/bob hello from node 1"))

        // A forged sender: acknowledged and dropped (NATS says nothing), so a later allowed
        // message arrives alone.
        let forged = try cluster.publish(as: "bob", topic: "imhost/u/alice/from/carol", ["forged by bob"], node: 1)
        #expect(forged.status == 0, "NATS acknowledges a denied publish: \(forged.stderr)")
        try cluster.publish(as: "bob", topic: "imhost/u/alice/from/bob", ["after the forgery"], node: 3)
        #expect(alice.waitFor("after the forgery"))
        #expect(!alice.stdout.contains("forged by bob"), "\(alice.stdout)")

        // Bob subscribing to alice's inbox, everything, or MQTT's own delivery subjects: 0x80.
        let spy = try cluster.subscribe(as: "bob", topics: ["imhost/u/alice/#", "#", "imhost/u/+/from/bob", "$MQTT/sub/#"], node: 2)
        #expect(spy.waitFor("All subscription requests were denied"), "\(spy.stdout)\(spy.stderr)")
        let denied = spy.finish()
        #expect(denied.stdout.contains("Subscribed (mid: 1): 128, 128, 128, 128"), "\(denied.stdout)\(denied.stderr)")

        // The fleet configuration: operator's is retained on every node; bob's is dropped.
        #expect(try cluster.publish(as: "operator", topic: "imhost/fleet/config", ["operator's config"], node: 1, retain: true).status == 0)
        try cluster.publish(as: "bob", topic: "imhost/fleet/config", ["bob's config"], node: 2, retain: true)
        for node in 1...3 {
            let reader = try cluster.subscribe(as: "carol", topic: "imhost/fleet/config", node: node)
            #expect(reader.waitFor("imhost/fleet/config "), "node \(node): \(reader.stderr)")
            reader.signal(SIGKILL)
            let read = reader.finish().stdout
            #expect(read.contains("operator's config") && !read.contains("bob's config"), "node \(node): \(read)")
        }

        // Nobody logs in without a password, nor as bob with NATS's own protocol.
        let anonymous = try IMHostTests.run("/usr/bin/timeout", ["10", BrokerFolder.tool("mosquitto_pub"), "-V", "mqttv311", "-h", "127.0.0.1",
                                                                  "-p", "\(cluster.node(1).mqttPort)", "-t", "imhost/u/alice/from/bob", "-m", "x", "-q", "1"])
        #expect(anonymous.status != 0 && anonymous.stderr.contains("not authorised"), "\(anonymous.stderr)")
        let native = try natsLogin(port: cluster.node(1).clientPort, user: "bob", password: cluster.password("bob"))
        #expect(native.contains("-ERR 'Authorization Violation'"), "\(native)")

        // Each node listens on its three ports, on 127.0.0.1, and nowhere else (no monitoring).
        for number in 1...3 {
            let node = cluster.node(number)
            guard let pid = cluster.nodePID(number) else {
                Issue.record("node \(number) does not run")
                continue
            }
            let listening = ListeningSockets.of(pid: pid)
            #expect(Set(listening.map(\.port)) == [node.clientPort, node.clusterPort, node.mqttPort], "node \(number): \(listening)")
            #expect(listening.allSatisfy { $0.address == "127.0.0.1" }, "node \(number): \(listening)")
        }

        // A closed terminal (SIGHUP) stops every node, and run ends as asked.
        let pids = (1...3).compactMap { cluster.nodePID($0) }
        let ended = cluster.stop(SIGHUP)
        #expect(ended.status == 0, "\(ended.stderr)")
        #expect(pids.count == 3 && pids.allSatisfy { kill($0, 0) != 0 }, "\(pids)")
    }

    @Test("users and devices on a running cluster: a new user connects at once, a removed device's live connection ends and its login is refused (its session stays in JetStream), a removed user likewise; devices lists them")
    func usersAndDevices() throws {
        let workspace = try Workspace()
        let cluster = try TestCluster(in: workspace.root, users: ["alice", "bob"])
        let added = try imhost(["broker", "add-user", cluster.folder, "dave"])
        #expect(added.status == 0 && added.stdout.contains("the running nodes (n1, n2, n3) took it at once")
                && added.stdout.contains(#""transport": { "url": [\#(cluster.urls.map { "\"\($0)\"" }.joined(separator: ", "))], "protocol": "3.1.1", "passwordFile": "\#(cluster.passwordFile("dave"))" }"#),
                "\(added.stdout)\(added.stderr)")
        // At once: no wait between the command and dave's first message.
        let alice = try cluster.subscribe(as: "alice", topic: "imhost/u/alice/#", node: 3)
        defer { alice.signal(SIGKILL); _ = alice.finish() }
        #expect(try cluster.waitSubscribed(alice, publisher: "bob", topic: "imhost/u/alice/from/bob"))
        let hello = try cluster.publish(as: "dave", topic: "imhost/u/alice/from/dave", ["dave is here"], node: 2)
        #expect(hello.status == 0, "\(hello.stderr)")
        #expect(alice.waitFor("imhost/u/alice/from/dave dave is here"))

        let phoneLogin = try cluster.addDevice("phone", of: "alice")
        let listed = try imhost(["broker", "devices", cluster.folder])
        let rows = listed.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows == [["alice", "(first)", "alice"], ["alice", "phone", "alice~phone"], ["bob", "(first)", "bob"], ["dave", "(first)", "dave"],
                         ["operator", "(first)", "operator"]], "\(listed.stdout)")
        let phone = try cluster.subscribe(as: phoneLogin, topic: "imhost/u/alice/#", node: 1, clientID: "alice-phone", cleanSession: false)
        defer { phone.signal(SIGKILL); _ = phone.finish() }
        #expect(try cluster.waitSubscribed(phone, publisher: "bob", topic: "imhost/u/alice/from/bob"))
        let password = cluster.password(phoneLogin)
        let removed = try imhost(["broker", "remove-device", cluster.folder, "alice", "phone"])
        #expect(removed.status == 0 && removed.stdout.contains("removed alice's device phone (alice~phone); the running nodes (n1, n2, n3) reloaded: its connection ended"),
                "\(removed.stdout)\(removed.stderr)")
        // Measured: the reload ends its connection (mosquitto_sub connects again), and the
        // connect is refused.
        #expect(phone.waitFor("Connection Refused: not authorised", timeout: 10), "\(phone.stdout)\(phone.stderr)")
        // (Its debug lines come on the other pipe, read apart: waited for, not looked at once.)
        #expect(phone.waitFor("received CONNACK (5)", timeout: 10) && phone.waitFor("sending CONNECT", occurrences: 2, timeout: 10), "\(phone.stdout)")
        let back = try cluster.publish(as: phoneLogin, password: password, topic: "imhost/u/bob/from/alice", ["back?"], node: 2)
        #expect(back.status != 0 && back.stderr.contains("not authorised"), "\(back.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cluster.passwordFile(phoneLogin)))
        // What NATS kept for the removed device's session stays, as remove-device says: added again,
        // the phone finds under its old client id a message sent while it was removed.
        #expect(removed.stdout.contains("the session it kept stays in JetStream"), "\(removed.stdout)")
        // The refused phone stops trying (its old password would not do, but its attempts under the
        // same client id are noise beside the session taken up again).
        phone.signal(SIGKILL)
        let whileRemoved = try cluster.publish(as: "bob", topic: "imhost/u/alice/from/bob", ["sent while the phone was removed"], node: 3)
        #expect(whileRemoved.status == 0, "\(whileRemoved.stderr)")
        #expect(try cluster.addDevice("phone", of: "alice") == phoneLogin)
        let again = try cluster.subscribe(as: phoneLogin, topic: "imhost/u/alice/#", node: 2, clientID: "alice-phone", cleanSession: false)
        defer { again.signal(SIGKILL); _ = again.finish() }
        // A session taken up on another node is looked up in JetStream first: slow on a busy machine.
        #expect(again.waitFor("imhost/u/alice/from/bob sent while the phone was removed", timeout: 120), "\(again.stdout)\(again.stderr)")
        #expect(try imhost(["broker", "remove-device", cluster.folder, "alice", "phone"]).status == 0)
        let unknown = try imhost(["broker", "remove-device", cluster.folder, "alice", "phone"])
        #expect(unknown.status == 1 && unknown.stderr.contains("alice has no device phone"), "\(unknown.stderr)")

        let davePassword = cluster.password("dave")
        let daveGone = try imhost(["broker", "remove-user", cluster.folder, "dave"])
        #expect(daveGone.status == 0 && daveGone.stdout.contains("removed dave and its devices; the running nodes (n1, n2, n3) reloaded"), "\(daveGone.stdout)\(daveGone.stderr)")
        let dave = try cluster.publish(as: "dave", password: davePassword, topic: "imhost/u/alice/from/dave", ["still here?"], node: 1)
        #expect(dave.status != 0 && dave.stderr.contains("not authorised"), "\(dave.stderr)")
        let bridge = try imhost(["broker", "add-user", cluster.folder, "b2", "--bridge"])
        #expect(bridge.status == 1 && bridge.stderr.contains("it has no bridge users"), "\(bridge.stderr)")
    }

    @Test("a node killed with -9 is said by run, which goes on; started again alone with run --node, it serves, and what was queued for alice while it was down reaches her there; every node runs the program init was given (a copy of nats-server by another name), and upgrade will not rewrite the nodes while they run")
    func nodeDies() throws {
        let workspace = try Workspace()
        let program = workspace.root + "/bin/my-nats"
        try FileManager.default.createDirectory(atPath: workspace.root + "/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try #require(BrokerCluster.program()), toPath: program)
        let cluster = try TestCluster(in: workspace.root, users: ["alice", "bob"], options: ["--nats-server", program])
        func runsProgram(_ node: Int) -> Bool {
            cluster.nodePID(node).map { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\($0)/exe")) == program } == true
        }
        #expect(try cluster.cluster.description().natsServer?.path == program && (1...3).allSatisfy(runsProgram))
        let newer = workspace.root + "/bin/newer"
        try "#!/bin/sh\necho 'nats-server: v2.10.0'\n".write(toFile: newer, atomically: true, encoding: .utf8)
        chmod(newer, 0o755)
        let upgrade = try imhost(["broker", "upgrade", cluster.folder, "--nats-server", newer])
        #expect(upgrade.status == 1 && upgrade.stderr.contains("node n1 of \(cluster.folder) runs (process \(cluster.nodePID(1) ?? 0)): upgrade writes the nodes' configuration for nats-server 2.10.0 only while none runs"),
                "\(upgrade.stderr)")
        // Alice's session, kept; then she goes away.
        let away = try cluster.subscribe(as: "alice", topic: "imhost/u/alice/#", node: 1, clientID: "alice-laptop", cleanSession: false)
        #expect(try cluster.waitSubscribed(away, publisher: "bob", topic: "imhost/u/alice/from/bob"))
        away.signal(SIGKILL)
        _ = away.finish()

        let before = cluster.nodePID(3)
        cluster.killNode(3)
        #expect(cluster.nodePID(3) == nil && before != nil)
        #expect(cluster.process.stderr.contains("imhost broker run: node n3 ended (SIGKILL); 2 of 3 nodes run, and the cluster serves MQTT on the others"), "\(cluster.process.stderr)")
        #expect(cluster.process.isRunning)
        // Publishes are refused for a few seconds after a node dies (JetStream elects new
        // leaders): bob sends until it is acknowledged.
        var sent = false
        for _ in 0..<30 where !sent {
            sent = try cluster.publish(as: "bob", topic: "imhost/u/alice/from/bob", ["while n3 was down"], node: 2).status == 0
        }
        #expect(sent)

        let said = try cluster.startNode(3)
        #expect(said.contains("imhost broker: node n3 of 3 accepting connections at \(cluster.urls[2])"), "\(said)")
        #expect(cluster.nodePID(3) != nil && runsProgram(3))
        let back = try cluster.subscribe(as: "alice", topic: "imhost/u/alice/#", node: 3, clientID: "alice-laptop", cleanSession: false)
        defer { back.signal(SIGKILL); _ = back.finish() }
        #expect(back.waitFor("imhost/u/alice/from/bob while n3 was down"), "\(back.stdout)\(back.stderr)\n\((1...3).map { (try? String(contentsOfFile: cluster.folder + "/nodes/n\($0).log", encoding: .utf8)) ?? "" }.joined(separator: "\n----\n"))")

        // SIGTERM (a service manager) stops run and the node started alone, and their nodes.
        let pids = (1...3).compactMap { cluster.nodePID($0) }
        #expect(cluster.stop(SIGTERM).status == 0)
        #expect(pids.count == 3 && pids.allSatisfy { kill($0, 0) != 0 }, "\(pids)")
    }

    // MARK: Helpers

    private func password(_ folder: String, _ login: String) throws -> String {
        try String(contentsOfFile: folder + "/passwords/" + login, encoding: .utf8).trimmingCharacters(in: .newlines)
    }

    /// Logs in with NATS's own protocol on `port`: reads its INFO, sends CONNECT and PING, and
    /// returns what it answers (`PONG`, or `-ERR ...`).
    private func natsLogin(port: Int, user: String, password: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard connected == 0 else { return "cannot connect: \(String(cString: strerror(errno)))" }
        func readLine() -> String {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while read(fd, &byte, 1) == 1 {
                line.append(byte)
                if byte == 10 { break }
            }
            return String(decoding: line, as: UTF8.self)
        }
        let info = readLine()
        guard info.hasPrefix("INFO ") else { return "no INFO: \(info)" }
        let request = Array(#"CONNECT {"user":"\#(user)","pass":"\#(password)","verbose":false}\#r\#nPING\#r\#n"#.utf8)
        _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        return readLine()
    }
}

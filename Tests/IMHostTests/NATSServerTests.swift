import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// Which nats-server a cluster runs: `imhost broker init --cluster N --nats-server PATH` (or the
/// first on the PATH), recorded in cluster.json, checked again by `broker run`, found again by
/// `broker upgrade`; and the table of the options only some releases take. Nothing here starts a
/// node (a program whose version a script fakes never runs one): ClusterTests runs a cluster on
/// a copy of Debian's program.
@Suite("imhost broker: any nats-server")
struct NATSServerTests {
    @Test("the version table: releases read and ordered, each option written from the release that takes it and left out (a comment saying why) before it or once it is ignored, the oldest release the MQTT settings need")
    func versionTable() throws {
        #expect(NATSVersion("2.9.10") == NATSVersion(2, 9, 10) && NATSVersion("v2.10.0-RC.1") == NATSVersion(2, 10, 0, prerelease: "RC.1"))
        for wrong in ["", "2.9", "2.9.x", "2.9.10-", "2..1", "2.9.10 extra", "٢.9.10", "-1.2.3"] { #expect(NATSVersion(wrong) == nil, "\(wrong)") }
        #expect(NATSVersion(2, 9, 10) < NATSVersion(2, 10, 0) && NATSVersion(2, 10, 0, prerelease: "RC.1") < NATSVersion(2, 10, 0))
        #expect(NATSVersion(2, 10, 0, prerelease: "RC.1") < NATSVersion(2, 10, 0, prerelease: "RC.2") && !(NATSVersion(2, 10, 0) < NATSVersion(2, 10, 0)))

        // As nats-server's server/opts.go reads them, tag by tag.
        let table: [(NATSOption, since: NATSVersion, ignored: NATSVersion?)] = [
            (.mqttMaxAckPending, NATSVersion(2, 2, 0), nil), (.mqttStreamReplicas, NATSVersion(2, 8, 3), nil),
            (.mqttConsumerReplicas, NATSVersion(2, 8, 3), NATSVersion(2, 9, 12)), (.mqttConsumerMemoryStorage, NATSVersion(2, 8, 3), nil),
            (.mqttConsumerInactiveThreshold, NATSVersion(2, 9, 0), nil), (.jetstreamSyncInterval, NATSVersion(2, 10, 0), nil),
        ]
        #expect(table.count == NATSOption.allCases.count)
        for (option, since, ignored) in table {
            let before = NATSVersion(since.major, since.minor, since.patch, prerelease: "RC.1")
            #expect(option.taken(by: since) && !option.taken(by: before) && option.taken(by: NATSVersion(since.major, since.minor, since.patch + 1)), "\(option)")
            #expect(option.line("3", for: since) == "\(option.name): 3")
            #expect(option.line("3", for: before) == "# \(option.name): 3 is not written: nats-server \(before) does not take it (\(since) and later do)")
            if let ignored {
                #expect(!option.taken(by: ignored) && !option.taken(by: NATSVersion(2, 15, 1)) && option.taken(by: NATSVersion(ignored.major, ignored.minor, ignored.patch - 1)))
                #expect(option.line("3", for: ignored) == "# \(option.name): 3 is not written: nats-server \(ignored) ignores it (every release from \(ignored) does)")
            } else {
                #expect(option.taken(by: NATSVersion(2, 15, 1)), "\(option)")
            }
        }
        #expect(NATSOption.oldestSupported == NATSVersion(2, 9, 0))
        #expect(NATSOption.allCases.filter(\.required).map(\.block).allSatisfy { $0 == "mqtt" } && !NATSOption.jetstreamSyncInterval.required)

        // The nodes' files as init writes them for Debian's 2.9.10 and for a current release.
        let workspace = try Workspace()
        let v2910 = try script(workspace, "v2910", says: "nats-server: v2.9.10")
        let v2151 = try script(workspace, "v2151", says: "nats-server: v2.15.1")
        let old = try BrokerCluster.initialize(at: workspace.root + "/old", nodes: 3, users: ["alice"], natsServer: v2910)
        let new = try BrokerCluster.initialize(at: workspace.root + "/new", nodes: 3, users: ["alice"], natsServer: v2151)
        let oldConfig = try String(contentsOfFile: old.configPath(of: old.node(1)), encoding: .utf8)
        let newConfig = try String(contentsOfFile: new.configPath(of: new.node(1)), encoding: .utf8)
        #expect(oldConfig.contains("\n  consumer_replicas: 3\n") && oldConfig.contains("\n  stream_replicas: 3\n")
                && oldConfig.contains(#"  # sync_interval: "2m" is not written: nats-server 2.9.10 does not take it (2.10.0 and later do)"#), "\(oldConfig)")
        #expect(newConfig.contains("\n  stream_replicas: 3\n") && newConfig.contains(#"  sync_interval: "2m""#)
                && newConfig.contains("  # consumer_replicas: 3 is not written: nats-server 2.15.1 ignores it (every release from 2.9.12 does)"), "\(newConfig)")

        // A too old release is refused, a pre-release of the oldest too.
        for (name, said) in [("v284", "nats-server: v2.8.4"), ("rc", "nats-server: v2.9.0-RC.3")] {
            let path = try script(workspace, name, says: said)
            let refused = #expect(throws: BrokerFolder.Failure.self) { try NATSServer.find(path) }
            #expect(refused?.code == .natsServerTooOld(path: path, version: String(said.dropFirst("nats-server: v".count)), needed: "2.9.0"))
        }
    }

    @Test("nats-server itself takes what init writes for it: Debian's checks its nodes' file (nats-server -t) and refuses one written for 2.15.1; a newer one, when make nats-newer fetched it, takes its own")
    func serversTakeTheirFiles() throws {
        let workspace = try Workspace()
        let debian = try #require(BrokerCluster.program(), "nats-server is installed (make deps)")
        let cluster = try BrokerCluster.initialize(at: workspace.root + "/c", nodes: 3, users: ["alice"])
        #expect(try cluster.description().natsServer == NATSServer(path: debian, version: try NATSServer.identify(debian).version))
        let checked = NATSServer.ask(debian, ["-t", "-c", cluster.configPath(of: try cluster.node(2))], seconds: 30)
        #expect(checked.status == 0 && checked.said.contains("is valid"), "\(checked.said)")
        let faked = try BrokerCluster.initialize(at: workspace.root + "/n", nodes: 3, users: ["alice"], natsServer: try script(workspace, "v2151", says: "nats-server: v2.15.1"))
        let refused = NATSServer.ask(debian, ["-t", "-c", faked.configPath(of: try faked.node(1))], seconds: 30)
        #expect(refused.status != 0 && refused.said.contains(#"unknown field "sync_interval""#), "\(refused.said)")

        let newer = BuildProducts.repository + "/.build/tools/nats-server-newer/nats-server"
        guard access(newer, X_OK) == 0 else { return }
        let made = try BrokerCluster.initialize(at: workspace.root + "/newer", nodes: 3, users: ["alice"], natsServer: newer)
        let taken = NATSServer.ask(newer, ["-t", "-c", made.configPath(of: try made.node(3))], seconds: 30)
        #expect(taken.status == 0 && taken.said.contains("is valid"), "\(taken.said)")
    }

    @Test("init --nats-server refuses, in one line and with no folder written, a missing file, a file it may not run, a program that does not say it is a nats-server, and an older release; takes a link to Debian's, recorded as given; --nats-server without --cluster is refused as usage")
    func refusedPrograms() throws {
        let workspace = try Workspace()
        let folder = workspace.root + "/c"
        func initialize(_ program: String) throws -> ProcessResult {
            try imhost(["broker", "init", "--cluster", "3", folder, "--users", "alice", "--nats-server", program], in: workspace)
        }
        let plain = workspace.root + "/plain"
        try "nats-server: v2.9.10\n".write(toFile: plain, atomically: true, encoding: .utf8)
        let other = try script(workspace, "other", says: "mosquitto version 2.0.11")
        let failing = try script(workspace, "failing", says: "nats-server: v2.9.10", status: 3)
        let old = try script(workspace, "old", says: "nats-server: v2.8.4")
        let cases: [(program: String, code: BrokerFolder.Failure.Code, says: [String])] = [
            (workspace.root + "/none", .natsServerMissing(path: workspace.root + "/none"),
             ["--nats-server \(workspace.root)/none: no such file: give the path of a nats-server program (2.9.0 or later)"]),
            (plain, .natsServerNotExecutable(path: plain), ["--nats-server \(plain): not a file this user may run", "chmod +x"]),
            (workspace.root, .natsServerNotExecutable(path: workspace.root), ["not a file this user may run"]),
            (other, .notNATSServer(path: other, said: "mosquitto version 2.0.11", status: 0),
             [#"\#(other) does not say it is a nats-server: asked its version (--version), it said "mosquitto version 2.0.11", not "nats-server: vX.Y.Z": give --nats-server the path of a nats-server program"#]),
            (failing, .notNATSServer(path: failing, said: "nats-server: v2.9.10", status: 3), [#"it exited 3, saying "nats-server: v2.9.10""#]),
            (old, .natsServerTooOld(path: old, version: "2.8.4", needed: "2.9.0"),
             ["\(old) is nats-server 2.8.4, older than 2.9.0, the first release that takes the MQTT settings", "consumer_inactive_threshold", "give it with --nats-server PATH"]),
        ]
        for (program, code, says) in cases {
            let refused = #expect(throws: BrokerFolder.Failure.self) { try BrokerCluster.initialize(at: folder, nodes: 3, users: ["alice"], natsServer: program) }
            #expect(refused?.code == code)
            let said = try initialize(program)
            #expect(said.status == 1 && said.stdout.isEmpty && said.stderr.hasPrefix("imhost broker init: ") && said.stderr.split(separator: "\n").count == 1, "\(said.stderr)")
            for words in says { #expect(said.stderr.contains(words), "\(words)\n\(said.stderr)") }
            #expect(!FileManager.default.fileExists(atPath: folder + "/cluster.json"))
        }
        // A relative path is the working folder's.
        let relative = try imhost(["broker", "init", "--cluster", "3", folder, "--users", "alice", "--nats-server", "other"], in: workspace)
        #expect(relative.status == 1 && relative.stderr.contains("\(other) does not say it is a nats-server"), "\(relative.stderr)")

        let debian = try #require(BrokerCluster.program(), "nats-server is installed (make deps)")
        let link = workspace.root + "/bin/nats"
        try FileManager.default.createDirectory(atPath: workspace.root + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: debian)
        let made = try imhost(["broker", "init", "--cluster", "3", folder, "--users", "alice", "--nats-server", "bin/nats", "--json"], in: workspace)
        #expect(made.status == 0, "\(made.stderr)")
        let version = try NATSServer.identify(debian).version
        let json = try #require(try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any])
        #expect(json["natsServer"] as? [String: String] == ["path": link, "version": version], "\(made.stdout)")
        #expect(try BrokerCluster(path: folder).description().natsServer == NATSServer(path: link, version: version))
        #expect(try String(contentsOfFile: folder + "/cluster.json", encoding: .utf8).contains(#""path" : "\#(link)""#))

        let mosquitto = try imhost(["broker", "init", workspace.root + "/m", "--users", "alice", "--nats-server", link])
        #expect(mosquitto.status == 2 && mosquitto.stderr.contains("--nats-server is for a NATS cluster"), "\(mosquitto.stderr)")
    }

    @Test("run refuses a recorded program whose release changed, or that is gone, in one line naming upgrade; upgrade writes the nodes for the release found (ports, routes' password kept; a file edited by hand kept beside), records it, and a folder from before the record runs what it finds and gets one")
    func recordedProgram() throws {
        let workspace = try Workspace()
        let program = try script(workspace, "nats", says: "nats-server: v2.9.10")
        let folder = workspace.root + "/c"
        #expect(try imhost(["broker", "init", "--cluster", "3", folder, "--users", "alice", "--nats-server", program]).status == 0)
        let cluster = BrokerCluster(path: folder)
        let before = try cluster.description()
        #expect(before.natsServer == NATSServer(path: program, version: "2.9.10"))
        let files = try (1...3).map { try String(contentsOfFile: cluster.configPath(of: cluster.node($0)), encoding: .utf8) }
        let routes = try cluster.routePassword(before)

        _ = try script(workspace, "nats", says: "nats-server: v2.10.0")
        let changed = try imhost(["broker", "run", folder])
        #expect(changed.status == 1 && changed.stderr.split(separator: "\n").count == 1 && changed.stderr.hasPrefix("imhost broker run: "), "\(changed.stderr)")
        #expect(changed.stderr.contains("\(program) is nats-server 2.10.0 now, but the nodes of \(folder) were written for nats-server 2.9.10 (its cluster.json): write them for what it is now with imhost broker upgrade \(folder)"),
                "\(changed.stderr)")
        #expect(files == (try (1...3).map { try String(contentsOfFile: cluster.configPath(of: cluster.node($0)), encoding: .utf8) }), "run wrote nothing")

        // n2's file edited by hand: kept beside the new one.
        let edited = files[1] + "# an operator's note\n"
        try edited.write(toFile: cluster.configPath(of: cluster.node(2)), atomically: true, encoding: .utf8)
        let upgraded = try imhost(["broker", "upgrade", folder, "--json"])
        #expect(upgraded.status == 0, "\(upgraded.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(upgraded.stdout.utf8)) as? [String: Any])
        #expect(json["nodesWritten"] as? [String] == ["n1", "n2", "n3"] && json["keptBeforeUpgrade"] as? [String] == ["n2"], "\(upgraded.stdout)")
        #expect(json["natsServer"] as? [String: String] == ["path": program, "version": "2.10.0"] && json["natsServerBefore"] as? [String: String] == ["path": program, "version": "2.9.10"])
        let after = try cluster.description()
        #expect(after.natsServer == NATSServer(path: program, version: "2.10.0") && after.nodes == before.nodes && after.logins == before.logins)
        #expect(try cluster.routePassword(after) == routes)
        for number in 1...3 {
            let text = try String(contentsOfFile: cluster.configPath(of: cluster.node(number)), encoding: .utf8)
            // What 2.10.0 takes that 2.9.10 does not, and consumer_replicas, which it ignores.
            let expected = files[number - 1]
                .replacingOccurrences(of: #"# sync_interval: "2m" is not written: nats-server 2.9.10 does not take it (2.10.0 and later do)"#, with: #"sync_interval: "2m""#)
                .replacingOccurrences(of: "\n  consumer_replicas: 3\n", with: "\n  # consumer_replicas: 3 is not written: nats-server 2.10.0 ignores it (every release from 2.9.12 does)\n")
            #expect(text == expected, "only the lines of options 2.10.0 takes otherwise changed: \(text)")
        }
        #expect(try String(contentsOfFile: cluster.keptPath(of: cluster.node(2)), encoding: .utf8) == edited)
        #expect(!FileManager.default.fileExists(atPath: cluster.keptPath(of: try cluster.node(1))))
        let again = try imhost(["broker", "upgrade", folder])
        #expect(again.status == 0 && again.stdout.hasPrefix("the nodes' configuration is written for nats-server 2.10.0, \(program); "), "\(again.stdout)")

        try FileManager.default.removeItem(atPath: program)
        let gone = try imhost(["broker", "run", folder, "--node", "2"])
        #expect(gone.status == 1 && gone.stderr.split(separator: "\n").count == 1
                && gone.stderr.contains("the nodes of \(folder) run \(program) (nats-server 2.10.0, as its cluster.json records), which is gone (or may no longer be run): put it back, or write the nodes' configuration for the nats-server there is now with imhost broker upgrade \(folder)"),
                "\(gone.stderr)")

        // Upgrade with no program recorded there: the first on the PATH, Debian's.
        let debian = try #require(BrokerCluster.program(), "nats-server is installed (make deps)")
        let found = try imhost(["broker", "upgrade", folder])
        #expect(found.status == 0 && found.stdout.hasPrefix("wrote n1, n2, n3 again for nats-server 2.9.10, \(debian) (before: nats-server 2.10.0, \(program)); ports, passwords and data kept;"), "\(found.stdout)")

        // A folder from before imhost recorded the program: it decodes, runs what is found, and
        // upgrade records it without changing a file this imhost's init would write the same.
        let text = try String(contentsOfFile: cluster.descriptionPath, encoding: .utf8)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        object["natsServer"] = nil
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: cluster.descriptionPath))
        #expect(try cluster.description().natsServer == nil && (try cluster.program(for: cluster.description())) == debian)
        let recorded = try cluster.upgradeServer(nil)
        #expect(recorded.before == nil && recorded.after.path == debian && recorded.rewritten.isEmpty, "\(recorded)")
        #expect(try cluster.description().natsServer == recorded.after)

        // Without the routes' password in any node's file, upgrade cannot write them.
        for number in 1...3 {
            let path = cluster.configPath(of: try cluster.node(number))
            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("authorization {") }
            try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        }
        let noPassword = #expect(throws: BrokerFolder.Failure.self) { try cluster.upgradeServer(debian) }
        #expect(noPassword?.code == .routePasswordUnread(file: cluster.configPath(of: try cluster.node(1))))
    }

    /// A script in the workspace that says `says` and exits `status`, whatever it is asked: a
    /// program's `--version` faked.
    private func script(_ workspace: Workspace, _ name: String, says: String, status: Int = 0) throws -> String {
        let path = workspace.root + "/" + name
        try "#!/bin/sh\necho '\(says)'\nexit \(status)\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }
}

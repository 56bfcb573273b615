import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// What a broker's folder refuses is a code with its data, decided below the front ends: here
/// in process, through the calls `imhost broker` makes (no broker runs). `imhost broker` says
/// each in one line, safe for a terminal whatever the folder's name holds.
@Suite("imhost broker: refusals are codes, said in one line")
struct BrokerFailureTests {
    let workspace: Workspace

    init() throws { workspace = try Workspace() }

    /// A mosquitto folder for alice at `path`, made as `imhost broker init` makes it.
    func make(_ path: String, users: [String] = ["alice"]) throws(BrokerFolder.Failure) -> BrokerFolder {
        try BrokerFolder.initialize(at: path, users: users, listener: .socket(path + "/mosquitto.sock"))
    }

    @Test("init refuses an id a topic level or a password file cannot hold, and operator; nothing is written",
          arguments: ["a/b", "a+b", "#", "a:b", "", "operator", String(repeating: "x", count: 65)])
    func refusedUser(_ id: String) throws {
        let problem = try #require(TransportID.problem(id))
        let refused = #expect(throws: BrokerFolder.Failure.self) { try make(workspace.root + "/b", users: ["alice", id]) }
        #expect(refused?.code == .userRefused(id: id, problem: problem))
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/b"))
    }

    @Test("init refuses a user named twice, a folder mosquitto.conf cannot name, and a folder that has a broker")
    func refusedFolder() throws {
        let twice = #expect(throws: BrokerFolder.Failure.self) { try make(workspace.root + "/b", users: ["alice", "alice"]) }
        #expect(twice?.code == .userTwice)
        let spaced = workspace.root + "/b sp"
        let unquotable = #expect(throws: BrokerFolder.Failure.self) { try make(spaced) }
        #expect(unquotable?.code == .unquotablePath(spaced))
        let folder = try make(workspace.root + "/b")
        let again = #expect(throws: BrokerFolder.Failure.self) { try make(folder.path, users: ["carol"]) }
        #expect(again?.code == .exists(config: folder.configPath))
        let cluster = #expect(throws: BrokerFolder.Failure.self) { try BrokerCluster.initialize(at: folder.path, nodes: 3, users: ["alice"]) }
        #expect(cluster?.code == .holdsMosquitto(folder: folder.path))
    }

    @Test("users and devices: operator stays, a device needs its user, one already there is refused, and changing the running broker needs it running")
    func refusedChanges() throws {
        let folder = try make(workspace.root + "/b")
        #expect(#expect(throws: BrokerFolder.Failure.self) { try folder.removeUser(TransportID.operatorID) }?.code == .operatorStays)
        #expect(#expect(throws: BrokerFolder.Failure.self) { try folder.addUser("alice") }?.code == .userExists(user: "alice", in: folder.path))
        #expect(#expect(throws: BrokerFolder.Failure.self) { try folder.removeUser("carol") }?.code == .noUser(user: "carol", in: folder.path))
        #expect(#expect(throws: BrokerFolder.Failure.self) { try folder.addDevice("phone", of: "carol") }?.code == .noUserForDevice(user: "carol", folder: folder.path))
        let problem = try #require(DynamicSecurity.deviceProblem("a/b"))
        #expect(#expect(throws: BrokerFolder.Failure.self) { try folder.addDevice("a/b", of: "alice") }?.code == .deviceRefused(name: "a/b", problem: problem))
        #expect(#expect(throws: BrokerFolder.Failure.self) { try folder.addDevice("phone", of: "alice") }?.code == .notRunning(folder: folder.path, command: "add-device"))
        let none = BrokerFolder(path: workspace.root + "/none")
        #expect(#expect(throws: BrokerFolder.Failure.self) { try none.addUser("carol") }?.code == .notABrokerFolder(none.path))
    }

    @Test("a cluster: fewer than 3 nodes or more than one machine runs are refused, and so is an id holding a '.', a NATS token's separator")
    func refusedCluster() throws {
        let folder = workspace.root + "/c"
        for nodes in [1, 2] {
            let few = #expect(throws: BrokerFolder.Failure.self) { try BrokerCluster.initialize(at: folder, nodes: nodes, users: ["alice"]) }
            #expect(few?.code == .tooFewNodes(nodes))
        }
        let many = BrokerCluster.maximumNodes + 1
        #expect(#expect(throws: BrokerFolder.Failure.self) { try BrokerCluster.initialize(at: folder, nodes: many, users: ["alice"]) }?.code == .tooManyNodes(many))
        let dotted = #expect(throws: BrokerFolder.Failure.self) { try BrokerCluster.initialize(at: folder, nodes: 3, users: ["alice", "a.b"]) }
        #expect(dotted?.code == .dotInID(id: "a.b", device: false))
        #expect(BrokerCluster.idProblem("my.phone", device: true) == .dotInID(id: "my.phone", device: true))
        #expect(!FileManager.default.fileExists(atPath: folder))
        let unread = #expect(throws: BrokerFolder.Failure.self) { try BrokerCluster(path: folder).description() }
        guard case .descriptionUnreadable(let file, let error, folder)? = unread?.code else {
            Issue.record("\(String(describing: unread))")
            return
        }
        #expect(file == folder + "/cluster.json" && error.code == ENOENT)
    }

    @Test("imhost broker says a refusal in one line, a folder's name made safe: escapes shown, not acted on")
    func oneSafeLine() throws {
        let hostile = workspace.root + "/b\u{1B}]0;owned\u{07} sp"
        let spaced = try imhost(["broker", "init", hostile, "--users", "alice"])
        #expect(spaced.status == 1 && spaced.stderr.split(separator: "\n").count == 1, "\(spaced.stderr)")
        #expect(spaced.stderr.hasPrefix("imhost broker init: ") && spaced.stderr.contains(#"\x1b]0;owned\x07 sp"#), "\(spaced.stderr)")
        #expect(!spaced.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        let none = try imhost(["broker", "add-user", workspace.root + "/none\u{9B}2J", "carol"])
        #expect(none.status == 1 && none.stderr.split(separator: "\n").count == 1 && none.stderr.contains(#"none\u{9b}2J"#), "\(none.stderr)")
        #expect(!none.stderr.unicodeScalars.contains { $0.value == 0x9B })
    }
}

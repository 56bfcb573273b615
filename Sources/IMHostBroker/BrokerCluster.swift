import IMHost
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A folder holding a NATS cluster set up for imhost: N nodes (N ≥ 3) of `nats-server` on this
/// machine, each with JetStream (which keeps MQTT sessions, queued and retained messages,
/// replicated to 3 nodes, or 5 from five nodes up) and an MQTT 3.1.1 listener, joined by
/// password-protected routes; every login in one account with the same rules mosquitto's
/// dynamic-security roles enforce (``DynamicSecurity/userACLs(_:)``), translated to NATS
/// subjects. Made by `imhost broker init --cluster N`, run by `imhost broker run`; the users and
/// device commands change ``accountsPath`` and reload every running node.
///
/// ```
/// DIR/cluster.json        what the folder is: its nodes and their ports, its logins, its limits
/// DIR/nodes/nN.conf       node nN's configuration, each line saying why (mode 0600: the routes' password)
/// DIR/nodes/accounts.conf the logins, their passwords and permissions, included by every node (mode 0600)
/// DIR/nodes/nN.log        node nN's log
/// DIR/nodes/nN.pid        the running node's process id
/// DIR/data/nN/            node nN's JetStream store
/// DIR/passwords/<login>   each login's password, mode 0600, for host.json's passwordFile
///                         (alice, alice~phone, operator; ~system: the system account's)
/// DIR/control.lock        held by the imhost broker command changing the folder
/// ```
public struct BrokerCluster: Sendable {
    /// The folder, absolute.
    public let path: String

    public typealias Failure = BrokerFolder.Failure

    public init(path: String) { self.path = path }

    /// One node: its name (`n1`), the address it listens on, and its three ports.
    public struct Node: Codable, Sendable, Equatable {
        public var name: String
        /// Where it listens, and where hosts reach it (127.0.0.1 as made).
        public var host: String
        /// NATS's own protocol: only the system account's user may connect there.
        public var clientPort: Int
        /// The routes between nodes.
        public var clusterPort: Int
        /// The MQTT listener hosts connect to.
        public var mqttPort: Int

        /// The URL a host.json lists for this node.
        public var url: String { "mqtt://\(host.contains(":") ? "[\(host)]" : host):\(mqttPort)" }
    }

    /// `DIR/cluster.json`: what the folder is, read by every `imhost broker` command that takes it.
    public struct Description: Codable, Sendable, Equatable {
        /// ``BrokerCluster/kind``: by which a cluster folder is told from a mosquitto one.
        public var kind: String
        /// The cluster's name, in every node's `cluster { name }`.
        public var name: String
        public var nodes: [Node]
        /// How many nodes keep each MQTT stream and consumer.
        public var replicas: Int
        /// Every login: users (a user's first device), `user~device`, and operator; sorted.
        public var logins: [String]
        /// The hosts' limits the nodes are sized from, and those sizes.
        public var payloadBytes: Int
        public var photoBytes: Int
        public var maxPayload: Int
        /// JetStream's bounds on each node: memory, and disk (sessions and queued messages).
        public var memoryStoreBytes: Int
        public var fileStoreBytes: Int
        /// The nats-server the nodes run, and the release their configuration was written for;
        /// `nil` in a folder made before imhost recorded it, whose nodes run the first
        /// nats-server found (``BrokerCluster/program()``) with the oldest release's options.
        public var natsServer: NATSServer?
    }

    /// What ``Description/kind`` says.
    public static let kind = "imhost NATS cluster"
    /// The fewest nodes: with two, JetStream loses its majority when one dies, and MQTT stops.
    public static let minimumNodes = 3
    /// The most nodes one folder runs on one machine.
    public static let maximumNodes = 9
    /// The login of the system account's user, its password in `DIR/passwords/~system`.
    public static let systemLogin = "~system"

    public var descriptionPath: String { path + "/cluster.json" }
    public var nodesFolder: String { path + "/nodes" }
    public var accountsPath: String { nodesFolder + "/accounts.conf" }
    public func configPath(of node: Node) -> String { nodesFolder + "/\(node.name).conf" }
    public func logPath(of node: Node) -> String { nodesFolder + "/\(node.name).log" }
    public func pidPath(of node: Node) -> String { nodesFolder + "/\(node.name).pid" }
    public func dataPath(of node: Node) -> String { path + "/data/" + node.name }
    public func passwordFile(of login: String) -> String { path + "/passwords/" + login }
    var lockPath: String { path + "/control.lock" }
    /// The shared helpers of broker folders (writing a file with its mode, new passwords).
    var files: BrokerFolder { BrokerFolder(path: path) }

    /// Whether `folder` holds a cluster (its cluster.json), not a mosquitto broker.
    public static func isCluster(_ folder: String) -> Bool {
        access(folder + "/cluster.json", F_OK) == 0
    }

    /// How many replicas a cluster of `nodes` keeps: 3, or 5 (the most NATS allows) from five
    /// nodes up. An even number would survive no more deaths than the odd one below it.
    public static func replicas(nodes: Int) -> Int { nodes >= 5 ? 5 : 3 }

    /// Why `id` cannot name a user (or, `device`, a device) of a cluster; `nil` when it can.
    /// Besides what every broker refuses (``TransportID/problem(_:allowingOperator:)``), a `.`:
    /// NATS turns topic levels into subject tokens (``Topic/problem(level:natsToken:)``), and
    /// drops a connection that publishes to a level holding one.
    public static func idProblem(_ id: String, device: Bool = false) -> Failure.Code? {
        if device, let problem = DynamicSecurity.deviceProblem(id) { return .deviceRefused(name: id, problem: problem) }
        if !device, let problem = TransportID.problem(id) { return .userRefused(id: id, problem: problem) }
        guard Topic.problem(level: id, natsToken: true) != nil else { return nil }
        return .dotInID(id: id, device: device)
    }

    // MARK: Making it

    /// Makes the folder: `nodes` nodes on free loopback ports, a password file per user and for
    /// operator, each node's configuration and the shared accounts. An existing cluster is never
    /// written over unless `force`, and not while any of its nodes runs. The nodes run
    /// `natsServer` (absolute), or the first nats-server on the PATH: the program and its
    /// release are recorded, and the configuration written for that release
    /// (``NATSServer/find(_:)`` says what is refused).
    public static func initialize(at folder: String, nodes count: Int, users: [String], payloadLimit: Int = HostConfig.Limits().payloadBytes,
                                  photoLimit: Int = HostConfig.Limits().photoBytes, fileLimit: Int = HostConfig.Limits().fileBytes,
                                  force: Bool = false, natsServer: String? = nil) throws(Failure) -> BrokerCluster {
        guard count >= minimumNodes else {
            throw Failure(.tooFewNodes(count))
        }
        guard count <= maximumNodes else { throw Failure(.tooManyNodes(count)) }
        for user in users {
            if let problem = idProblem(user) { throw Failure(problem) }
        }
        guard Set(users).count == users.count else { throw Failure(.userTwice) }
        // The paths stand in quoted strings of the nodes' configuration, which has no escape for these.
        if folder.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || "\"\\$".unicodeScalars.contains($0) }) {
            throw Failure(.unquotableClusterPath(folder))
        }
        let cluster = BrokerCluster(path: folder)
        if access(folder + "/mosquitto.conf", F_OK) == 0 {
            throw Failure(.holdsMosquitto(folder: folder))
        }
        if access(cluster.descriptionPath, F_OK) == 0 {
            guard force else {
                throw Failure(.clusterExists(description: cluster.descriptionPath))
            }
            if let running = try? cluster.runningNodes(), let first = running.first {
                throw Failure(.nodeRunningWhileWriting(node: first.node.name, folder: folder, pid: first.pid))
            }
        }
        let server = try NATSServer.find(natsServer)
        do throws(FileSystem.Failure) {
            for sub in ["/passwords", "/nodes", "/data"] { try FileSystem.makeFolders(folder + sub) }
        } catch {
            throw Failure(.cannotMake(folder: folder, error))
        }
        chmod(folder + "/passwords", 0o700)
        chmod(cluster.nodesFolder, 0o700)
        // Every port on loopback, free now (the kernel's choice), none twice.
        var taken = Set<Int>()
        func port() -> Int {
            while true {
                let port = BrokerFolder.freeLoopbackPort()
                if port > 0, taken.insert(port).inserted { return port }
            }
        }
        let nodes = (1...count).map { Node(name: "n\($0)", host: "127.0.0.1", clientPort: port(), clusterPort: port(), mqttPort: port()) }
        let packet = Envelope.packetLimit(payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit)
        // JetStream's disk on each node: 1 GiB, or 64 of the largest messages if that is more (a site whose files are larger).
        let description = Description(kind: kind, name: "imhost", nodes: nodes, replicas: replicas(nodes: count),
                                      logins: (users + [TransportID.operatorID]).sorted(), payloadBytes: payloadLimit, photoBytes: photoLimit,
                                      maxPayload: packet, memoryStoreBytes: 64 << 20, fileStoreBytes: max(1 << 30, 64 * packet), natsServer: server)
        for login in description.logins + [systemLogin] {
            try cluster.files.write(BrokerFolder.newPassword() + "\n", to: cluster.passwordFile(of: login), mode: 0o600)
        }
        let routePassword = BrokerFolder.newPassword()
        for node in nodes {
            try cluster.files.write(cluster.nodeConfiguration(node, in: description, routePassword: routePassword), to: cluster.configPath(of: node), mode: 0o600)
        }
        try cluster.write(description)
        try cluster.writeAccounts(description)
        return cluster
    }

    // MARK: Reading it

    /// What cluster.json says.
    public func description() throws(Failure) -> Description {
        let text: String
        do throws(FileSystem.Failure) { text = try FileSystem.readText(descriptionPath) } catch {
            throw Failure(.descriptionUnreadable(file: descriptionPath, error, folder: path))
        }
        guard let description = try? JSONDecoder().decode(Description.self, from: Data(text.utf8)), description.kind == Self.kind else {
            throw Failure(.descriptionInvalid(file: descriptionPath))
        }
        return description
    }

    func write(_ description: Description) throws(Failure) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(description) else { throw Failure(.descriptionNotEncoded(file: descriptionPath)) }
        try files.write(String(decoding: data, as: UTF8.self) + "\n", to: descriptionPath, mode: 0o644)
    }

    /// The MQTT URLs of every node, for host.json's `transport.url` (a list).
    public func urls() throws(Failure) -> [String] { try description().nodes.map(\.url) }

    /// Node `number` (1 is the first), or one line saying which there are.
    public func node(_ number: Int) throws(Failure) -> Node {
        let nodes = try description().nodes
        guard (1...nodes.count).contains(number) else { throw Failure(.noSuchNode(folder: path, count: nodes.count, number: number)) }
        return nodes[number - 1]
    }

    /// The process id of `node` when it runs (its pid file names a live nats-server: a process
    /// named so, or as the program cluster.json records).
    public func runningPID(of node: Node) -> Int32? {
        BrokerFolder.livePID(in: pidPath(of: node), program: "nats-server", alsoNamed: (try? description())?.natsServer?.commandName)
    }

    /// The nodes that run now, with their process ids.
    public func runningNodes() throws(Failure) -> [(node: Node, pid: Int32)] {
        try description().nodes.compactMap { node in runningPID(of: node).map { (node, $0) } }
    }

    /// The nats-server program: on the PATH, or in /usr/sbin or /usr/bin; `nil` when missing.
    public static func program() -> String? {
        let found = BrokerFolder.tool("nats-server")
        return access(found, X_OK) == 0 ? found : nil
    }

    /// The program `description`'s nodes run: the one it records, when it is still there and
    /// says the same release (else why not, in one code); in a folder made before imhost
    /// recorded it, the first found (``program()``), or `nil`.
    public func program(for description: Description) throws(Failure) -> String? {
        guard let recorded = description.natsServer else { return Self.program() }
        return try recorded.check(folder: path)
    }

    /// What `file` holds from byte `offset` on (a log read since a moment), at most 1 MiB.
    static func text(of file: String, from offset: Int) -> String {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var at = off_t(offset)
        while bytes.count < 1 << 20 {
            let count = pread(fd, &buffer, buffer.count, at)
            guard count > 0 else { break }
            bytes += buffer[0..<count]
            at += off_t(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// How many bytes `file` has now (0 when missing).
    static func size(of file: String) -> Int {
        var info = stat()
        return stat(file, &info) == 0 ? Int(info.st_size) : 0
    }

    /// Holds `DIR/control.lock` while `body` changes the folder: two commands at once would
    /// each write cluster.json and the accounts from what they read, and one's change be lost.
    func locked<T>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lock >= 0 else { throw Failure(.lockNotOpened(path: lockPath, why: String(cString: strerror(errno)))) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw Failure(.lockNotTaken(path: lockPath, why: String(cString: strerror(errno)))) }
        }
        return try body()
    }
}

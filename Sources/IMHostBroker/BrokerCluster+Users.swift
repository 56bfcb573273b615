import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// Users and their devices on a cluster: a login each in cluster.json and the accounts every
/// node includes, changed in the files (whether the nodes run or not) and then taken by every
/// running node at once (SIGHUP: nats-server reads its configuration again).
///
/// Measured (nats-server 2.9.10): a reload that removes a login ends that login's live MQTT
/// connections at once, and refuses it from then on (CONNACK 5). What the cluster keeps for a
/// removed login's persistent session (its subscriptions, and the messages queued for them)
/// stays in JetStream: NATS ties a session to its client id, not to a login, and forgets it
/// only when a client connects with that id and a clean session.
extension BrokerCluster {
    /// What the running nodes did with a change: those that reloaded, those that do not run.
    public struct Reload: Sendable, Equatable {
        public var reloaded: [String] = []
        public var stopped: [String] = []
    }

    /// Adds a user (its first device logs in as the user): a password file and a login with
    /// the user's permissions; every running node takes it at once.
    public func addUser(_ user: String) throws(Failure) -> Reload {
        if let problem = Self.idProblem(user) { throw Failure(problem) }
        return try change { (description) throws(Failure) in
            guard !description.logins.contains(user) else { throw Failure(.userExists(user: user, in: path)) }
            try files.write(BrokerFolder.newPassword() + "\n", to: passwordFile(of: user), mode: 0o600)
            description.logins.append(user)
        }
    }

    /// Removes a user and every device of it: their logins and password files. Every running
    /// node ends their connections at once.
    public func removeUser(_ user: String) throws(Failure) -> Reload {
        guard user != TransportID.operatorID else { throw Failure(.operatorStays) }
        var gone: [String] = []
        let reload = try change { (description) throws(Failure) in
            gone = description.logins.filter { DynamicSecurity.parse(login: $0)?.user == user }
            guard TransportID.problem(user) == nil, description.logins.contains(user) else { throw Failure(.noUser(user: user, in: path)) }
            description.logins.removeAll { gone.contains($0) }
        }
        for login in gone { unlink(passwordFile(of: login)) }
        return reload
    }

    /// Adds `device` to `user`: a login of its own (`user~device`) with the user's permissions,
    /// and its password file. Every running node takes it at once.
    public func addDevice(_ device: String, of user: String) throws(Failure) -> (device: BrokerFolder.Device, reload: Reload) {
        if let problem = Self.idProblem(user) { throw Failure(problem) }
        if let problem = Self.idProblem(device, device: true) { throw Failure(problem) }
        let login = DynamicSecurity.login(user: user, device: device)
        let reload = try change { (description) throws(Failure) in
            guard description.logins.contains(user) else { throw Failure(.noUserForDevice(user: user, folder: path)) }
            guard !description.logins.contains(login) else {
                throw Failure(.deviceExists(user: user, device: device, passwordFile: passwordFile(of: login)))
            }
            try files.write(BrokerFolder.newPassword() + "\n", to: passwordFile(of: login), mode: 0o600)
            description.logins.append(login)
        }
        return (BrokerFolder.Device(user: user, device: device, login: login), reload)
    }

    /// Removes `device` of `user`: its login and password file. Every running node ends its
    /// connection at once and refuses it from then on.
    public func removeDevice(_ device: String, of user: String) throws(Failure) -> (device: BrokerFolder.Device, reload: Reload) {
        if let problem = TransportID.problem(user) { throw Failure(.userRefused(id: user, problem: problem)) }
        if let problem = DynamicSecurity.deviceProblem(device) { throw Failure(.deviceRefused(name: device, problem: problem)) }
        let login = DynamicSecurity.login(user: user, device: device)
        let reload = try change { (description) throws(Failure) in
            guard description.logins.contains(login) else {
                throw Failure(.noDevice(user: user, device: device, folder: path))
            }
            description.logins.removeAll { $0 == login }
        }
        unlink(passwordFile(of: login))
        return (BrokerFolder.Device(user: user, device: device, login: login), reload)
    }

    /// The logins of `user` (`nil`: of every user), first devices first, as cluster.json says.
    public func devices(of user: String? = nil) throws(Failure) -> [BrokerFolder.Device] {
        BrokerFolder.devices(of: user, among: try description().logins)
    }

    /// Writes the accounts again with this version's permissions (a cluster made before reports:
    /// its users could not write their own) and reloads every running node. Returns whether the
    /// accounts changed, and the reload.
    public func upgradePermissions() throws(Failure) -> (changed: Bool, Reload) {
        try locked { () throws(Failure) -> (changed: Bool, Reload) in
            let description = try description()
            let before = (try? FileSystem.readText(accountsPath)) ?? ""
            try writeAccounts(description)
            let after = (try? FileSystem.readText(accountsPath)) ?? ""
            guard before != after else { return (false, Reload()) }
            return (true, try reload(description))
        }
    }

    /// Changes cluster.json's logins under the folder's lock, writes the accounts again, and
    /// reloads every running node.
    private func change(_ body: (inout Description) throws(Failure) -> Void) throws(Failure) -> Reload {
        try locked { () throws(Failure) -> Reload in
            var description = try description()
            try body(&description)
            description.logins.sort()
            try writeAccounts(description)
            try write(description)
            return try reload(description)
        }
    }

    /// Tells every running node to read its configuration again (SIGHUP), and waits until each
    /// says in its log that it did (at most 5 s). A node that says it could not is one line.
    public func reload(_ description: Description) throws(Failure) -> Reload {
        var result = Reload()
        var waiting: [(node: Node, offset: Int)] = []
        for node in description.nodes {
            guard let pid = runningPID(of: node) else {
                result.stopped.append(node.name)
                continue
            }
            waiting.append((node, Self.size(of: logPath(of: node))))
            kill(pid, SIGHUP)
        }
        let deadline = Clock.monotonic() + 5_000_000_000
        while let (node, offset) = waiting.first {
            let said = Self.text(of: logPath(of: node), from: offset)
            if said.contains("Reloaded server configuration") {
                result.reloaded.append(node.name)
                waiting.removeFirst()
                continue
            }
            if let line = said.split(separator: "\n").first(where: { $0.contains("Failed to reload") }) {
                throw Failure(.reloadRefused(node: node.name, said: String(line), log: logPath(of: node)))
            }
            guard Clock.monotonic() < deadline else {
                throw Failure(.reloadUnsaid(node: node.name, log: logPath(of: node)))
            }
            _ = poll(nil, 0, 10)
        }
        return result
    }
}

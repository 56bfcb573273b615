import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// Users and their devices: a login each in the dynamic-security plugin's file, changed through
/// `$CONTROL/dynamic-security/v1` while the broker runs (the plugin reads its file at start only,
/// and writes it at each change), in the file while it is stopped.
extension BrokerFolder {
    /// The password of ``DynamicSecurity/adminLogin``, by which `imhost broker` changes a running broker.
    public var adminPasswordFile: String { passwordFile(of: DynamicSecurity.adminLogin) }

    /// A login the broker knows: a user's first device (`device` nil: the login is the user) or
    /// another of its devices.
    public struct Device: Sendable, Equatable {
        public var user: String
        public var device: String?
        public var login: String
    }

    /// The folder is set up for the plugin (made by init since devices, or upgraded).
    func requireDynamicSecurity() throws(Failure) {
        try requireInitialized()
        guard access(securityPath, F_OK) == 0 else {
            throw Failure(.madeBeforeDevices(folder: path))
        }
    }

    /// The running broker's control, or `nil` when it does not run.
    func control() throws(Failure) -> BrokerControl? {
        guard runningPID() != nil else { return nil }
        let password = (try? HostConfig.Transport.password(in: adminPasswordFile)) ?? ""
        guard !password.isEmpty else {
            throw Failure(.adminPasswordMissing(file: adminPasswordFile))
        }
        let heard = try listener()
        let address: HostConfig.Transport.Address = switch heard {
        case .socket(let socket): .unix(path: socket)
        case .port(let port): .tcp(host: "127.0.0.1", port: port)
        }
        return try BrokerControl(address: address, password: password, lockPath: path + "/control.lock")
    }

    /// The running broker's control; it not running is one line saying what to do.
    func runningControl(_ doing: String) throws(Failure) -> BrokerControl {
        guard let control = try control() else {
            throw Failure(.notRunning(folder: path, command: doing))
        }
        return control
    }

    // MARK: Users

    /// Adds a user (its first device logs in as the user): a password file, a role granting its
    /// topics and a login; on a running broker at once. Returns whether a running broker was told.
    @discardableResult
    public func addUser(_ user: String, bridge: Bool = false) throws(Failure) -> Bool {
        try requireDynamicSecurity()
        if let problem = TransportID.problem(user) { throw Failure(.userRefused(id: user, problem: problem)) }
        guard access(passwordFile(of: user), F_OK) != 0 else { throw Failure(.userExists(user: user, in: path)) }
        let password = Self.newPassword()
        let roles = DynamicSecurity.roleReferences(user: user, bridge: bridge)
        if let control = try control() {
            var commands: [BrokerControl.Command] = []
            if !bridge { commands.append(BrokerControl.createRole(DynamicSecurity.userRole(user))) }
            commands.append(BrokerControl.createClient(user, password: password, roles: roles))
            try control.apply(commands, tolerating: ["Role already exists"])
            try write(password + "\n", to: passwordFile(of: user), mode: 0o600)
            return true
        }
        var document = try readSecurity()
        guard !document.clients.contains(where: { $0.username == user }) else { throw Failure(.userExists(user: user, in: securityPath)) }
        let hash = try hashes([(user, password)])[user]
        if !bridge, !document.roles.contains(where: { $0.rolename == DynamicSecurity.roleName(of: user) }) { document.roles.append(DynamicSecurity.userRole(user)) }
        document.clients.append(.init(username: user, password: hash?.hash, salt: hash?.salt, iterations: hash?.iterations, roles: roles))
        try writeSecurity(document)
        try write(password + "\n", to: passwordFile(of: user), mode: 0o600)
        return false
    }

    /// Removes a user and every device of it: their logins, password files and role. A running
    /// broker ends their connections at once. Returns whether a running broker was told.
    @discardableResult
    public func removeUser(_ user: String) throws(Failure) -> Bool {
        try requireDynamicSecurity()
        guard user != TransportID.operatorID else { throw Failure(.operatorStays) }
        guard TransportID.problem(user) == nil, access(passwordFile(of: user), F_OK) == 0 else { throw Failure(.noUser(user: user, in: path)) }
        let logins = try devices(of: user).map(\.login)
        if let control = try control() {
            for login in logins { try control.endSession(of: login) }
            try control.apply(logins.map(BrokerControl.deleteClient) + [BrokerControl.deleteRole(DynamicSecurity.roleName(of: user))],
                              tolerating: ["not found"])
        } else {
            var document = try readSecurity()
            document.clients.removeAll { logins.contains($0.username) }
            document.roles.removeAll { $0.rolename == DynamicSecurity.roleName(of: user) }
            try writeSecurity(document)
        }
        for login in logins + [user] { unlink(passwordFile(of: login)) }
        return runningPID() != nil
    }

    // MARK: Devices

    /// Adds `device` to `user` on the running broker: a login of its own (`user~device`), granted
    /// the user's topics, and its password file. Returns the login.
    public func addDevice(_ device: String, of user: String) throws(Failure) -> Device {
        try requireDynamicSecurity()
        if let problem = TransportID.problem(user) { throw Failure(.userRefused(id: user, problem: problem)) }
        if let problem = DynamicSecurity.deviceProblem(device) { throw Failure(.deviceRefused(name: device, problem: problem)) }
        guard access(passwordFile(of: user), F_OK) == 0 else { throw Failure(.noUserForDevice(user: user, folder: path)) }
        let login = DynamicSecurity.login(user: user, device: device)
        guard access(passwordFile(of: login), F_OK) != 0 else {
            throw Failure(.deviceExists(user: user, device: device, passwordFile: passwordFile(of: login)))
        }
        let control = try runningControl("add-device")
        let password = Self.newPassword()
        try control.apply([BrokerControl.createClient(login, password: password, roles: DynamicSecurity.roleReferences(user: user))])
        try write(password + "\n", to: passwordFile(of: login), mode: 0o600)
        return Device(user: user, device: device, login: login)
    }

    /// Removes `device` of `user` from the running broker: its session and what was queued for it
    /// go, its connection ends at once, and its login and password file go.
    public func removeDevice(_ device: String, of user: String) throws(Failure) -> Device {
        try requireDynamicSecurity()
        if let problem = TransportID.problem(user) { throw Failure(.userRefused(id: user, problem: problem)) }
        if let problem = DynamicSecurity.deviceProblem(device) { throw Failure(.deviceRefused(name: device, problem: problem)) }
        let login = DynamicSecurity.login(user: user, device: device)
        let control = try runningControl("remove-device")
        guard try devices(of: user, through: control).contains(where: { $0.login == login }) else {
            throw Failure(.noDevice(user: user, device: device, folder: path))
        }
        try control.endSession(of: login)
        try control.apply([BrokerControl.deleteClient(login)])
        unlink(passwordFile(of: login))
        return Device(user: user, device: device, login: login)
    }

    /// The logins of `user` (`nil`: of every user), first devices first: from the running broker,
    /// else from the plugin's file.
    public func devices(of user: String? = nil) throws(Failure) -> [Device] {
        try requireDynamicSecurity()
        if let control = try control() { return try devices(of: user, through: control) }
        return Self.devices(of: user, among: try readSecurity().clients.map(\.username))
    }

    private func devices(of user: String?, through control: BrokerControl) throws(Failure) -> [Device] {
        let answer = try control.apply([BrokerControl.listClients])
        return Self.devices(of: user, among: answer.first?.data?.clients ?? [])
    }

    static func devices(of user: String?, among logins: [String]) -> [Device] {
        logins.compactMap { login -> Device? in
            guard login != DynamicSecurity.adminLogin, let parsed = DynamicSecurity.parse(login: login), user == nil || parsed.user == user else { return nil }
            return Device(user: parsed.user, device: parsed.device, login: login)
        }.sorted { ($0.user, $0.device ?? "") < ($1.user, $1.device ?? "") }
    }

    // MARK: Upgrading a folder made before devices

    /// Turns a folder made before devices (a password file and an ACL, a listener each) into the
    /// plugin's layout: every login keeps its password (its hash moves over as it is) and so its
    /// session (its client id is its login still), each user gets its role, a bridge's user its
    /// own, and `imhost broker` a login of its own. Returns whether it changed anything.
    func upgradeAuthentication() throws(Failure) -> Bool {
        let text: String
        do throws(FileSystem.Failure) { text = try FileSystem.readText(configPath) } catch { throw Failure(.cannotRead(file: configPath, error)) }
        if text.contains(Self.authenticationStart), access(securityPath, F_OK) == 0 { return false }
        guard let plugin = DynamicSecurity.pluginPath() else { throw Failure(.pluginMissing) }
        var lines = text.components(separatedBy: "\n")
        // The old paragraph: per_listener_settings true and the comment above it.
        guard let setting = lines.firstIndex(of: "per_listener_settings true") else {
            throw Failure(.noPerListenerSettings(config: configPath))
        }
        var start = setting
        while start > 0, lines[start - 1].hasPrefix("#"), !lines[start - 1].hasPrefix("# Written by") { start -= 1 }
        lines.replaceSubrange(start...setting, with: authentication(plugin: plugin).components(separatedBy: "\n"))
        // Each listener's own password file and ACL: its client id setting only, now.
        while var first = lines.firstIndex(where: { $0.hasPrefix("# Nobody connects without a user name and password") }) {
            guard let last = lines[first...].firstIndex(of: "use_username_as_clientid true") else {
                throw Failure(.authenticationUnended(config: configPath))
            }
            if first > 0, lines[first - 1].hasPrefix("# This listener's own authentication") { first -= 1 }
            lines.replaceSubrange(first...last, with: Self.clientIDParagraph.components(separatedBy: "\n"))
        }
        if let stray = lines.first(where: { $0.hasPrefix("password_file ") || $0.hasPrefix("acl_file ") }) {
            throw Failure(.strayLine(config: configPath, line: stray))
        }
        // The logins and their hashes, and which are bridges' (their ACL reads and writes all).
        let hashed: String
        do throws(FileSystem.Failure) { hashed = try FileSystem.readText(legacyPasswordHashes) } catch { throw Failure(.cannotRead(file: legacyPasswordHashes, error)) }
        var hashes = try Self.readHashes(hashed, from: legacyPasswordHashes)
        let acl = (try? FileSystem.readText(legacyACLPath)) ?? ""
        var bridges: [String] = []
        let aclLines = acl.components(separatedBy: "\n")
        for (index, line) in aclLines.enumerated() where line.hasPrefix("user ") && index + 1 < aclLines.count && aclLines[index + 1] == "topic readwrite imhost/#" {
            bridges.append(String(line.dropFirst(5)))
        }
        let users = hashes.keys.filter { !bridges.contains($0) && $0 != TransportID.operatorID && TransportID.problem($0) == nil }.sorted() + [TransportID.operatorID]
        let admin = Self.newPassword()
        hashes.merge(try self.hashes([(DynamicSecurity.adminLogin, admin)])) { $1 }
        try write(admin + "\n", to: adminPasswordFile, mode: 0o600)
        try writeSecurity(DynamicSecurity.document(users: users, bridges: bridges.sorted(), hashes: hashes))
        var info = stat()
        let mode = stat(configPath, &info) == 0 ? info.st_mode & 0o777 : 0o644
        try write(lines.joined(separator: "\n"), to: configPath, mode: mode)
        unlink(legacyPasswordHashes)
        unlink(legacyACLPath)
        return true
    }
}

// MARK: Upgrading the users' roles

extension BrokerFolder {
    /// Gives each user's role the rules added since folders were first made with roles that it
    /// lacks (``DynamicSecurity/laterRules(_:)``: a folder made before reports, whose users could
    /// not write ``Topic/report(user:slot:)``): on a running broker through its control (a rule
    /// it has already is tolerated), in the plugin's file while it is stopped. A rule the
    /// operator added stays, and one of the others it took out stays out. Returns whether it
    /// added any.
    func upgradeRoles() throws(Failure) -> Bool {
        guard access(securityPath, F_OK) == 0 else { return false }
        var document = try readSecurity()
        let users = Set(Self.devices(of: nil, among: document.clients.map(\.username)).filter { $0.device == nil }.map(\.user))
        var lacking: [(role: String, acl: DynamicSecurity.Document.ACL)] = []
        for index in document.roles.indices {
            guard let user = users.first(where: { DynamicSecurity.roleName(of: $0) == document.roles[index].rolename }) else { continue }
            for acl in DynamicSecurity.laterRules(user) where !document.roles[index].acls.contains(where: { $0.acltype == acl.acltype && $0.topic == acl.topic }) {
                lacking.append((document.roles[index].rolename, acl))
                document.roles[index].acls.append(acl)
            }
        }
        guard !lacking.isEmpty else { return false }
        if let control = try control() {
            try control.apply(lacking.map { BrokerControl.addRoleACL($0.role, $0.acl) }, tolerating: ["already exists"])
        } else {
            try writeSecurity(document)
        }
        return true
    }
}

import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// A folder holding a private Mosquitto broker set up for imhost: its configuration, the
/// dynamic-security plugin's file (logins, their password hashes, and what each may do), and one
/// password file per login for host.json's `passwordFile`. Made by
/// `imhost broker init`, run by `imhost broker run`; the tests, `imhost play` and the benchmarks
/// make theirs the same way.
///
/// ```
/// DIR/mosquitto.conf      the broker's configuration, each line saying why
/// DIR/dynamic-security.json  the plugin's logins (a device each), roles (a user each), hashes
/// DIR/imhost-retain-rule.so  imhost's plugin refusing retained messages it does not retain
/// DIR/passwords/<login>   each login's password, mode 0600, for host.json's passwordFile
///                         (alice, alice~phone; ~admin: imhost broker's own)
/// DIR/data/               the broker's persistence (sessions and queued messages)
/// DIR/mosquitto.sock      the default listener: a unix socket
/// DIR/mosquitto.log       the broker's log
/// DIR/mosquitto.pid       the running broker's process id
/// DIR/control.lock        held by the imhost broker command changing the running broker
/// ```
public struct BrokerFolder: Sendable {
    /// The folder, absolute.
    public let path: String

    /// Where the broker listens.
    public enum Listener: Sendable, Equatable {
        /// A unix socket at this path.
        case socket(String)
        /// A TCP port on loopback (127.0.0.1) only.
        case port(Int)
    }

    /// A TLS listener beside the first one, for hosts beyond this machine: where it listens,
    /// and the broker's certificate and key (PEM), copied into the folder.
    public struct TLSListener: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var certificate: String
        public var key: String
        public init(host: String, port: Int, certificate: String, key: String) {
            self.host = host
            self.port = port
            self.certificate = certificate
            self.key = key
        }
    }

    /// A bridge to another broker for `imhost/#`: its address, and the bridge user there (made
    /// with `imhost broker add-user DIR NAME --bridge` on that broker) with its password.
    public struct Bridge: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var user: String
        public var password: String
        public init(host: String, port: Int, user: String, password: String) {
            self.host = host
            self.port = port
            self.user = user
            self.password = password
        }
    }

    /// Where the TLS listener's certificate and key are kept.
    public var tlsCertificate: String { path + "/tls/broker.crt" }
    public var tlsKey: String { path + "/tls/broker.key" }

    public init(path: String) { self.path = path }

    public var configPath: String { path + "/mosquitto.conf" }
    /// The dynamic-security plugin's file: its clients (a login each, with its password's hash),
    /// roles and default access. The plugin writes it at each change of a running broker.
    public var securityPath: String { path + "/dynamic-security.json" }
    /// As an imhost before devices made the folder: the password hashes and the ACL, which
    /// ``upgradeAuthentication()`` turns into ``securityPath``.
    var legacyACLPath: String { path + "/acl" }
    var legacyPasswordHashes: String { path + "/passwd" }
    public var logPath: String { path + "/mosquitto.log" }
    public var pidPath: String { path + "/mosquitto.pid" }
    public func passwordFile(of user: String) -> String { path + "/passwords/" + user }

    /// Said under each listener (mosquitto keeps it a listener's).
    static let clientIDParagraph = """
        # The client id is the login: one session a device, so nobody takes over another
        # device's session (and its queued messages) by connecting with its client id.
        use_username_as_clientid true
        """

    /// The first words of the authentication paragraph, by which ``upgrade(payloadLimit:photoLimit:fileLimit:)``
    /// knows a folder has it.
    package static let authenticationStart = "# Every listener shares one authentication"

    /// How every listener authenticates and authorises: mosquitto's dynamic-security plugin,
    /// one for the whole broker, reading and writing ``securityPath``.
    func authentication(plugin: String) -> String {
        """
        \(Self.authenticationStart): mosquitto's dynamic-security plugin, one for
        # the whole broker (with per_listener_settings true each listener had a plugin of its own:
        # every client was listed twice, and a client made through one listener connected on another).
        per_listener_settings false
        # Nobody connects without a login and password, on any listener (listeners share one topic
        # tree: one anonymous listener would let anyone write into anyone's inbox) ...
        allow_anonymous false
        # ... checked by the plugin against \(securityPath): a client a device (its username the
        # device's login: alice, alice~phone), a role a user granting that user's topics (a device
        # publishes only under its user's name and reads only its user's inbox; only operator writes
        # the fleet configuration, and each user only its own fleet status); nothing is published,
        # read or subscribed that no role grants. imhost broker add-user and add-device change it on
        # the running broker, through $CONTROL/dynamic-security/v1, as \(DynamicSecurity.adminLogin).
        plugin \(plugin)
        plugin_opt_config_file \(securityPath)
        """
    }

    /// The broker's configuration for this folder.
    public func configuration(listener: Listener, payloadLimit: Int, photoLimit: Int = HostConfig.Limits().photoBytes,
                              fileLimit: Int = HostConfig.Limits().fileBytes, runAs owner: String,
                              tls: TLSListener? = nil, bridge: Bridge? = nil, plugin: String) -> String {
        var listen: String, nodelay: String
        switch listener {
        case .socket(let socket):
            listen = """
                # One listener, a unix socket: only processes that may open this file connect.
                listener 0 \(socket)
                """
            nodelay = """
                # set_tcp_nodelay is for TCP listeners (it takes Nagle's algorithm's 40 ms off a
                # message); a unix socket has no such delay, and the broker would warn at every
                # connection. imhost broker init --port sets it.
                """
        case .port(let port):
            listen = """
                # One listener, on loopback only: nothing beyond this machine connects.
                listener \(port) 127.0.0.1
                """
            nodelay = """
                # Messages leave at once: without this, Nagle's algorithm meeting delayed ACKs adds
                # up to 40 ms to a message.
                set_tcp_nodelay true
                """
        }
        let clientID = Self.clientIDParagraph
        var tlsBlock = ""
        if let tls {
            tlsBlock = "\n\n" + """
                # A TLS listener for hosts beyond this machine: passwords and messages are encrypted
                # on the way, and each host checks this certificate against its caFile and the
                # name it connects to (mqtts://\(tls.host.contains(":") ? "[\(tls.host)]" : tls.host):\(tls.port)).
                listener \(tls.port) \(tls.host)
                certfile \(tlsCertificate)
                keyfile \(tlsKey)
                \(clientID)
                """
            nodelay = """
                # Messages leave at once: without this, Nagle's algorithm meeting delayed ACKs adds
                # up to 40 ms to a message on the TCP listener.
                set_tcp_nodelay true
                """
        }
        var bridgeBlock = ""
        if let bridge {
            bridgeBlock = "\n\n" + """
                # A bridge to the broker at \(bridge.host):\(bridge.port): what either broker's users publish
                # under imhost/ reaches the other's, so a user here chats with a user there. What
                # comes in over a bridge bypasses this broker's ACL: bridge only brokers that trust
                # each other (this file holds the bridge's password: it is readable by its owner only).
                connection imhost-bridge
                address \(bridge.host):\(bridge.port)
                remote_username \(bridge.user)
                remote_password \(bridge.password)
                remote_clientid \(bridge.user)
                # MQTT 5 both ways, QoS 1, and a session the other broker keeps while the bridge is
                # down, so nothing queued for the other side is lost to a restart.
                bridge_protocol_version mqttv50
                cleansession false
                topic imhost/# both 1
                """
        }
        return """
            # Written by imhost broker init. Each line says why it is here.

            \(retainRuleParagraph)

            \(authentication(plugin: plugin))

            \(listen)
            \(clientID)\(tlsBlock)

            # Sessions and queued messages survive a restart of the broker ...
            persistence true
            persistence_location \(path)/data/
            # ... and a kill of it, saved every second (the default, 30 minutes, loses them).
            autosave_interval 1
            # A session nobody returns to is forgotten after two weeks.
            persistent_client_expiration 14d

            \(Self.sizing(payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit))

            \(nodelay)

            # The broker's log, and the file the running broker's process id is written to (by
            # which imhost broker knows whether it runs).
            log_dest file \(logPath)
            log_type error
            log_type warning
            log_type notice
            connection_messages true
            pid_file \(pidPath)

            # Started as root, the broker runs as the owner of this folder, so it can read its own
            # files and write its socket and data here.
            user \(owner)\(bridgeBlock)

            """
    }

    // MARK: Making it

    /// Makes the folder: configuration, imhost's retain rule, ACL, password hashes and one password file per user
    /// (and `operator`). An existing configuration is never overwritten unless `force`, and not
    /// while its broker runs unless `whileRunning` too: every password would be new, and every
    /// host connected now refused at its next connect.
    public static func initialize(at folder: String, users: [String], listener: Listener, payloadLimit: Int = 64 * 1024,
                                  photoLimit: Int = HostConfig.Limits().photoBytes, fileLimit: Int = HostConfig.Limits().fileBytes,
                                  tls: TLSListener? = nil, bridge: Bridge? = nil, force: Bool = false,
                                  whileRunning: Bool = false) throws(Failure) -> BrokerFolder {
        for user in users {
            if let problem = TransportID.problem(user) { throw Failure(.userRefused(id: user, problem: problem)) }
        }
        guard Set(users).count == users.count else { throw Failure(.userTwice) }
        // mosquitto.conf has no quoting: a path with a space or a control character would be cut.
        var paths = [folder]
        if case .socket(let socket) = listener { paths.append(socket) }
        for path in paths where path.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) {
            throw Failure(.unquotablePath(path))
        }
        guard let plugin = DynamicSecurity.pluginPath() else { throw Failure(.pluginMissing) }
        guard let retainRule = retainRuleBuild() else { throw Failure(.retainRuleMissing(beside: ownFolder)) }
        let broker = BrokerFolder(path: folder)
        if !force, access(broker.configPath, F_OK) == 0 {
            throw Failure(.exists(config: broker.configPath))
        }
        if force, !whileRunning, let pid = broker.runningPID() {
            throw Failure(.runningWhileWriting(folder: folder, pid: pid))
        }
        do throws(FileSystem.Failure) {
            try FileSystem.makeFolders(folder + "/passwords")
            try FileSystem.makeFolders(folder + "/data")
        } catch {
            throw Failure(.cannotMake(folder: folder, error))
        }
        chmod(folder + "/passwords", 0o700)
        let owner = ownerName(of: folder)
        try broker.installRetainRule(from: retainRule)
        if case .socket(let socket) = listener, socket.utf8.count > 107 {
            throw Failure(.socketTooLong(socket))
        }
        var plain: [(String, String)] = []
        for user in users + [TransportID.operatorID, DynamicSecurity.adminLogin] {
            let password = Self.newPassword()
            try broker.write(password + "\n", to: broker.passwordFile(of: user), mode: 0o600)
            plain.append((user, password))
        }
        let hashes = try broker.hashes(plain)
        try broker.writeSecurity(DynamicSecurity.document(users: users + [TransportID.operatorID], bridges: [], hashes: hashes))
        unlink(broker.legacyACLPath)
        unlink(broker.legacyPasswordHashes)
        if let tls {
            // Copied in, so the broker (running as the folder's owner) can read them, and the
            // folder holds all it needs.
            let certificate: String, key: String
            do throws(FileSystem.Failure) {
                try FileSystem.makeFolders(folder + "/tls")
                chmod(folder + "/tls", 0o700)
                certificate = try FileSystem.readText(tls.certificate)
                key = try FileSystem.readText(tls.key)
            } catch {
                throw Failure(.tlsNotCopied(folder: folder, error))
            }
            try broker.write(certificate, to: broker.tlsCertificate, mode: 0o644)
            try broker.write(key, to: broker.tlsKey, mode: 0o600)
        }
        // With a bridge the configuration holds a password: its owner's only.
        try broker.write(broker.configuration(listener: listener, payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit, runAs: owner, tls: tls, bridge: bridge, plugin: plugin),
                         to: broker.configPath, mode: bridge == nil ? 0o644 : 0o600)
        return broker
    }

    /// The listener the configuration names.
    public func listener() throws(Failure) -> Listener {
        let text: String
        do throws(FileSystem.Failure) {
            text = try FileSystem.readText(configPath)
        } catch {
            throw Failure(.configUnreadable(config: configPath, error, folder: path))
        }
        for line in text.split(separator: "\n") where line.hasPrefix("listener ") {
            let parts = line.split(separator: " ")
            guard parts.count >= 2, let port = Int(parts[1]) else { continue }
            if port == 0, parts.count >= 3 { return .socket(parts[2...].joined(separator: " ")) }
            if port > 0 { return .port(port) }
        }
        throw Failure(.noListener(config: configPath))
    }

    /// The URL host.json's `transport.url` takes for this broker.
    public func url() throws(Failure) -> String {
        switch try listener() {
        case .socket(let socket): "unix:" + socket
        case .port(let port): "mqtt://127.0.0.1:\(port)"
        }
    }

    /// The running broker's process id, when its pid file names a live mosquitto.
    public func runningPID() -> Int32? { Self.livePID(in: pidPath, program: "mosquitto") }

    /// The process id `pidFile` names, when it is a live `program` (its /proc/PID/comm says so:
    /// a pid file left by a broker that died may name another process by now), or one whose
    /// comm is `other` exactly (a program of another name, `--nats-server PATH`).
    static func livePID(in pidFile: String, program: String, alsoNamed other: String? = nil) -> Int32? {
        guard let text = try? FileSystem.readText(pidFile), let pid = text.split(whereSeparator: \.isWhitespace).first.flatMap({ Int32($0) }), pid > 0,
              let name = try? FileSystem.readText("/proc/\(pid)/comm"), name.hasPrefix(program) || (other != nil && name.split(separator: "\n").first.map(String.init) == other)
        else { return nil }
        // A broker killed outright stays a zombie until reaped: not running.
        if let stat = try? FileSystem.readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")"),
           stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z") {
            return nil
        }
        return pid
    }

    // MARK: Helpers

    func requireInitialized() throws(Failure) {
        guard access(configPath, F_OK) == 0 else {
            throw Failure(.notABrokerFolder(path))
        }
    }

    func write(_ text: String, to file: String, mode: mode_t) throws(Failure) {
        do throws(FileSystem.Failure) {
            unlink(file)
            try FileSystem.writeAtomically(Array(text.utf8), to: file)
            chmod(file, mode)
        } catch {
            throw Failure(.cannotWrite(file: file, error))
        }
    }

    /// Hashes `logins`' passwords with mosquitto_passwd (its `-U` turns a plain `login:password`
    /// file into hashes, so no password ever appears on a command line): PBKDF2-SHA512, as the
    /// dynamic-security plugin keeps them.
    func hashes(_ logins: [(String, String)]) throws(Failure) -> [String: DynamicSecurity.Hash] {
        let plain = path + "/passwd.new"
        try write(logins.map { "\($0.0):\($0.1)\n" }.joined(), to: plain, mode: 0o600)
        defer { unlink(plain) }
        let result = run(Self.tool("mosquitto_passwd"), ["-U", plain])
        guard result.status == 0 else { throw Failure(.passwdFailed(output: result.output)) }
        let hashed: String
        do throws(FileSystem.Failure) { hashed = try FileSystem.readText(plain) } catch { throw Failure(.cannotRead(file: plain, error)) }
        return try Self.readHashes(hashed, from: plain)
    }

    /// `login:$7$...` lines as mosquitto_passwd writes them.
    static func readHashes(_ text: String, from file: String) throws(Failure) -> [String: DynamicSecurity.Hash] {
        var found: [String: DynamicSecurity.Hash] = [:]
        for line in text.split(separator: "\n") where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let login = String(line[..<colon])
            guard let hash = DynamicSecurity.Hash(passwd: String(line[line.index(after: colon)...])) else {
                throw Failure(.oldHash(file: file, login: login))
            }
            found[login] = hash
        }
        return found
    }

    /// Writes the plugin's file, readable by its owner only (it holds every login's hash).
    func writeSecurity(_ document: DynamicSecurity.Document) throws(Failure) {
        try write(DynamicSecurity.encode(document), to: securityPath, mode: 0o600)
    }

    /// Reads the plugin's file.
    func readSecurity() throws(Failure) -> DynamicSecurity.Document {
        let text: String
        do throws(FileSystem.Failure) { text = try FileSystem.readText(securityPath) } catch {
            throw Failure(.securityUnreadable(file: securityPath, error, folder: path))
        }
        guard let document = DynamicSecurity.decode(text) else { throw Failure(.securityNotJSON(file: securityPath)) }
        return document
    }

    /// 24 letters and digits from the system's random source.
    static func newPassword() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789".utf8)
        var generator = SystemRandomNumberGenerator()
        return String(decoding: (0..<24).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] }, as: UTF8.self)
    }

    /// The user name owning `folder` (the broker runs as it when started as root).
    static func ownerName(of folder: String) -> String {
        var info = stat()
        guard stat(folder, &info) == 0, let entry = getpwuid(info.st_uid) else { return "nobody" }
        return String(cString: entry.pointee.pw_name)
    }

    /// A Mosquitto program: on the PATH, or in /usr/sbin or /usr/bin.
    public static func tool(_ name: String) -> String {
        let path = getenv("PATH").map { String(cString: $0) } ?? ""
        for folder in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"] {
            let candidate = folder + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return name
    }

    /// Runs a program to its end; its status and what it printed (standard output and error),
    /// as it printed it.
    func run(_ program: String, _ arguments: [String]) -> (status: Int32, output: String) {
        do throws(FileSystem.Failure) {
            let child = try ChildProcess(executable: program, arguments: arguments, stdin: .null, stdout: .pipe, stderr: .pipe)
            var output: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            for fd in [child.output, child.errors] where fd >= 0 {
                while true {
                    let count = read(fd, &buffer, buffer.count)
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { break }
                    output += buffer[0..<count]
                }
            }
            let ended = child.wait()
            let status: Int32 = if case .exited(let code) = ended { code } else { 1 }
            return (status, String(decoding: output, as: UTF8.self))
        } catch {
            return (127, "cannot run \(program) (\(error))")
        }
    }

    /// A loopback TCP port nothing listens on now (the kernel's choice), for a private broker
    /// of a test or benchmark. Another process may take it before the broker does; mosquitto
    /// then fails to start and says so.
    package static func freeLoopbackPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

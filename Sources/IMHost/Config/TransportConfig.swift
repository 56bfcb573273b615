#if canImport(Glibc)
import Glibc
#endif

extension HostConfig {
    /// host.json's `transport`: the broker this host chats through, and how.
    public struct Transport: Sendable, Equatable {
        /// Where the broker listens.
        public enum Address: Sendable, Equatable, CustomStringConvertible {
            /// A TCP host and port (`mqtt://host:port`).
            case tcp(host: String, port: Int)
            /// A unix socket (`unix:/path`), absolute.
            case unix(path: String)
            /// A TCP host and port with TLS (`mqtts://host:port`): the broker's certificate is
            /// checked against `caFile` and the host name.
            case tls(host: String, port: Int)

            /// As a URL, the way host.json writes it.
            public var description: String {
                switch self {
                case .tcp(let host, let port): "mqtt://\(host.contains(":") ? "[\(host)]" : host):\(port)"
                case .unix(let path): "unix:\(path)"
                case .tls(let host, let port): "mqtts://\(host.contains(":") ? "[\(host)]" : host):\(port)"
                }
            }
        }

        /// The broker's addresses: one for a single broker, a cluster's nodes (host.json's `url` as a
        /// list) for a host that moves to the next when one fails. Never empty.
        public var addresses: [Address]
        /// The first address: where the host connects first.
        public var address: Address {
            get { addresses[0] }
            set { addresses[0] = newValue }
        }
        /// Which MQTT the host speaks (host.json's `protocol`): 5, 3.1.1, or whichever the broker
        /// takes (5 first; a broker that answers "unsupported protocol version" gets 3.1.1).
        public var protocolChoice = ProtocolChoice.auto

        /// host.json's `protocol`.
        public enum ProtocolChoice: String, Sendable, Equatable {
            case auto, v5 = "5", v311 = "3.1.1"
        }

        /// This device's login at the broker, when it is not the user (its first device):
        /// `alice~phone`, made by `imhost broker add-device`. Its own session; the user's topics.
        public var login: String?
        /// The file whose first line is the login's password at the broker, absolute.
        public var passwordFile: String
        /// Hours after which a message nobody confirmed is marked failed (default 72).
        public var giveUpHours: Double = 72
        /// Whether the receiver says when a message was shown (default true).
        public var readReceipts = true
        /// With `mqtts://`: the certificate authority that signed the broker's certificate
        /// (PEM), absolute.
        public var caFile: String?
        /// With `mqtts://`, when the broker asks for one: this host's client certificate and its
        /// private key (PEM), absolute.
        public var certFile: String?
        public var keyFile: String?

        public init(address: Address, passwordFile: String, giveUpHours: Double = 72, readReceipts: Bool = true) {
            self.addresses = [address]
            self.passwordFile = passwordFile
            self.giveUpHours = giveUpHours
            self.readReceipts = readReceipts
        }

        /// The most broker addresses host.json's `url` lists.
        public static let addressLimit = 16

        /// The keys `transport` may have.
        static let keys = ["url", "protocol", "login", "passwordFile", "giveUpHours", "readReceipts", "caFile", "certFile", "keyFile"]

        /// Reads a broker URL: `mqtt://host[:port]` (1883 by default), `mqtts://host[:port]`
        /// (TLS, 8883 by default) or `unix:PATH` (relative to `folder`). Returns why not, for a
        /// person, when it is not one.
        public static func address(_ url: String, relativeTo folder: String) -> Result<Address, TransportURLError> {
            if url.hasPrefix("unix:") {
                let path = String(url.dropFirst(5))
                guard !path.isEmpty, !path.utf8.contains(0) else { return .failure(TransportURLError("a unix socket URL needs a path: unix:/run/imhost/mosquitto.sock")) }
                let absolute = FileSystem.resolve(path, against: folder)
                // sockaddr_un holds 107 bytes of path and its terminating zero.
                guard absolute.utf8.count <= 107 else {
                    return .failure(TransportURLError("the socket path is \(absolute.utf8.count) bytes; a unix socket path holds at most 107: move the broker's folder somewhere shorter"))
                }
                return .success(.unix(path: absolute))
            }
            let secure = url.hasPrefix("mqtts://")
            guard secure || url.hasPrefix("mqtt://") else {
                return .failure(TransportURLError("expected mqtt://host:port, mqtts://host:port or unix:/path/to/socket, found \"\(url)\""))
            }
            var rest = Substring(url.dropFirst(secure ? 8 : 7))
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            var host: Substring
            var portText: Substring?
            if rest.hasPrefix("[") {
                guard let close = rest.firstIndex(of: "]") else { return .failure(TransportURLError("an IPv6 address goes in brackets: mqtt://[::1]:1883")) }
                host = rest[rest.index(after: rest.startIndex)..<close]
                let after = rest[rest.index(after: close)...]
                if !after.isEmpty {
                    guard after.first == ":" else { return .failure(TransportURLError("expected :PORT after the address, found \"\(after)\"")) }
                    portText = after.dropFirst()
                }
            } else if let colon = rest.lastIndex(of: ":") {
                host = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
            } else {
                host = rest
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:_".contains($0)) }) else {
                return .failure(TransportURLError("expected a host name or address after \(secure ? "mqtts" : "mqtt")://, found \"\(host)\""))
            }
            var port = secure ? 8883 : 1883
            if let portText {
                guard let number = Int(portText), (1...65535).contains(number) else {
                    return .failure(TransportURLError("expected a port from 1 to 65535, found \"\(portText)\""))
                }
                port = number
            }
            return .success(secure ? .tls(host: String(host), port: port) : .tcp(host: String(host), port: port))
        }

        /// Why a certificate or CA file cannot be used: not there, not a regular file, or not
        /// readable. `nil` when it can.
        public static func certificateFileProblem(_ path: String) -> String? {
            var info = stat()
            guard stat(path, &info) == 0 else { return "cannot read \(path) (\(String(cString: strerror(errno))))" }
            guard info.st_mode & S_IFMT == S_IFREG else { return "\(path) is \(FileSystem.kind(info.st_mode)), not a regular file" }
            guard access(path, R_OK) == 0 else { return "cannot read \(path) (\(String(cString: strerror(errno))))" }
            return nil
        }

        /// Why a password file cannot be used: not there, not a regular file, not the host's
        /// user's, or readable by others. `nil` when it can.
        public static func passwordFileProblem(_ path: String) -> String? {
            var info = stat()
            guard lstat(path, &info) == 0 else { return "cannot read \(path) (\(String(cString: strerror(errno))))" }
            guard info.st_mode & S_IFMT == S_IFREG else { return "\(path) is \(FileSystem.kind(info.st_mode)), not a regular file" }
            guard info.st_uid == geteuid() else {
                return "\(path) is owned by \(PluginFolderTrust.describe(user: info.st_uid)), not by the user imhost runs as; chown it to that user"
            }
            guard info.st_mode & (S_IRWXG | S_IRWXO) == 0 else {
                return "\(path) may be read by others (mode \(PluginFolderTrust.octal(info.st_mode))); run chmod 600 \(path)"
            }
            return nil
        }

        /// Why a password file holds no password (its first line is empty), if so.
        static func emptyPasswordProblem(_ path: String) -> String? {
            guard let password = try? Self.password(in: path) else { return nil }
            return password.isEmpty ? "\(path) holds no password on its first line; imhost broker init writes one per user in DIR/passwords" : nil
        }

        /// The password: the password file's first line.
        public func password() throws(FileSystem.Failure) -> String { try Self.password(in: passwordFile) }

        /// The first line of a password file (imhost broker init writes one per user).
        public static func password(in path: String) throws(FileSystem.Failure) -> String {
            let bytes = try FileSystem.readBytes(path, limit: 4096)
            let line = bytes.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
            var text = String(decoding: line, as: UTF8.self)
            if text.hasSuffix("\r") { text.removeLast() }
            return text
        }
    }

    /// Why a broker URL was refused.
    public struct TransportURLError: Error, CustomStringConvertible, Sendable {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}

/// Ids that reach the broker: the user's and their peers'. They become topic levels and
/// password-file entries, so they keep to a safe alphabet: 1 to 64 of `A-Z a-z 0-9 . _ -`.
/// `operator` is the fleet's publisher, never a person.
public enum TransportID {
    /// The reserved id of whoever publishes the fleet configuration.
    public static let operatorID = "operator"

    /// Why `id` cannot be used with a transport, for a person; `nil` when it can.
    /// `allowingOperator`: ``operatorID`` is taken (as the user of `imhost fleet`'s host.json).
    public static func problem(_ id: String, allowingOperator: Bool = false) -> String? {
        let bytes = id.utf8
        guard (1...64).contains(bytes.count), bytes.allSatisfy({ byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }) else {
            return "cannot reach the broker: with a transport, ids are 1 to 64 of A-Z a-z 0-9 . _ - (they become topic levels)"
        }
        if id == operatorID, !allowingOperator { return "is reserved: \"operator\" publishes the fleet configuration, and is nobody's chat id" }
        if id.allSatisfy({ $0 == "." }) { return "cannot be only dots: it names a file of the broker's folder" }
        return nil
    }
}

extension DocumentReader {
    /// host.json's `transport` object; paths in it are relative to host.json's folder.
    func transport(_ node: JSONNode, folder: String) throws(ConfigError) -> HostConfig.Transport {
        let fields = try members(node, "transport", allowed: HostConfig.Transport.keys)
        func field(_ key: String) -> JSONNode? { fields.member(key) }
        guard let urlNode = field("url") else {
            throw fail(node, "transport", "missing \"url\"; the transport is { \"url\": \"unix:broker/mosquitto.sock\", \"passwordFile\": \"broker/passwords/me\" }")
        }
        // One URL, or a cluster's: a list the host moves along when a node fails.
        var urls: [(node: JSONNode, text: String)] = []
        if case .array(let items) = urlNode.value {
            guard !items.isEmpty, items.count <= HostConfig.Transport.addressLimit else {
                throw fail(urlNode, "transport.url", "expected 1 to \(HostConfig.Transport.addressLimit) broker URLs, found \(items.count)")
            }
            for item in items { urls.append((item, try string(item, "transport.url"))) }
        } else {
            urls.append((urlNode, try string(urlNode, "transport.url")))
        }
        var addresses: [HostConfig.Transport.Address] = []
        for (node, text) in urls {
            switch HostConfig.Transport.address(text, relativeTo: folder) {
            case .success(let found):
                guard !addresses.contains(found) else { throw fail(node, "transport.url", "\(found) is listed twice") }
                addresses.append(found)
            case .failure(let why): throw fail(node, "transport.url", why.description)
            }
        }
        let address = addresses[0]
        let secure = addresses.filter { if case .tls = $0 { true } else { false } }.count
        guard secure == 0 || secure == addresses.count else {
            throw fail(urlNode, "transport.url", "mixes mqtts:// with other URLs: a cluster's nodes are reached all with TLS or all without")
        }
        guard let passwordNode = field("passwordFile") else {
            throw fail(node, "transport", "missing \"passwordFile\": the file holding this user's password at the broker (imhost broker init writes one per user)")
        }
        let passwordPath = try string(passwordNode, "transport.passwordFile")
        guard !passwordPath.isEmpty else { throw fail(passwordNode, "transport.passwordFile", "expected a file name") }
        let passwordFile = FileSystem.resolve(passwordPath, against: folder)
        if let problem = HostConfig.Transport.passwordFileProblem(passwordFile) ?? HostConfig.Transport.emptyPasswordProblem(passwordFile) {
            throw fail(passwordNode, "transport.passwordFile", problem)
        }
        var transport = HostConfig.Transport(address: address, passwordFile: passwordFile)
        transport.addresses = addresses
        if let protocolNode = field("protocol") {
            let text = try string(protocolNode, "transport.protocol")
            guard let choice = HostConfig.Transport.ProtocolChoice(rawValue: text) else {
                throw fail(protocolNode, "transport.protocol", "expected \"5\", \"3.1.1\" or \"auto\" (the MQTT the broker speaks; auto: 5, or 3.1.1 when the broker takes only that), found \"\(text)\"")
            }
            transport.protocolChoice = choice
        }
        if let loginNode = field("login") {
            let login = try string(loginNode, "transport.login")
            guard DynamicSecurity.parse(login: login) != nil else {
                throw fail(loginNode, "transport.login", "expected a device's login, USER\(DynamicSecurity.separator)DEVICE (each 1 to 64 of A-Z a-z 0-9 . _ -), found \"\(login)\"")
            }
            transport.login = login
        }
        if let hours = field("giveUpHours") {
            guard case .number(let value, let text) = hours.value else {
                throw fail(hours, "transport.giveUpHours", "expected a number of hours, found \(hours.kindName)")
            }
            guard value > 0, value <= 24 * 365 else {
                throw fail(hours, "transport.giveUpHours", "expected hours above 0, at most \(24 * 365), found \(text)")
            }
            transport.giveUpHours = value
        }
        if let receipts = field("readReceipts") { transport.readReceipts = try bool(receipts, "transport.readReceipts") }
        // TLS files: a CA with mqtts:// (required), a client certificate and key (both or neither).
        func file(_ key: String) throws(ConfigError) -> (node: JSONNode, path: String)? {
            guard let node = field(key) else { return nil }
            let text = try string(node, "transport." + key)
            guard !text.isEmpty else { throw fail(node, "transport." + key, "expected a file name") }
            return (node, FileSystem.resolve(text, against: folder))
        }
        let ca = try file("caFile"), cert = try file("certFile"), key = try file("keyFile")
        guard case .tls = address else {
            if let given = ca ?? cert ?? key {
                throw fail(given.node, "transport", "caFile, certFile and keyFile go with an mqtts:// url (TLS); this url is \(address)")
            }
            return transport
        }
        guard let ca else {
            throw fail(urlNode, "transport", "mqtts:// needs \"caFile\": the certificate authority (PEM) that signed the broker's certificate")
        }
        if let problem = HostConfig.Transport.certificateFileProblem(ca.path) { throw fail(ca.node, "transport.caFile", problem) }
        transport.caFile = ca.path
        switch (cert, key) {
        case (nil, nil): break
        case let (cert?, key?):
            if let problem = HostConfig.Transport.certificateFileProblem(cert.path) { throw fail(cert.node, "transport.certFile", problem) }
            if let problem = HostConfig.Transport.passwordFileProblem(key.path) { throw fail(key.node, "transport.keyFile", problem) }
            transport.certFile = cert.path
            transport.keyFile = key.path
        case let (cert?, nil): throw fail(cert.node, "transport", "certFile needs keyFile: the client certificate's private key")
        case let (nil, key?): throw fail(key.node, "transport", "keyFile needs certFile: the client certificate it is the key of")
        }
        return transport
    }
}

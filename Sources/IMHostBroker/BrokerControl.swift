import IMHost
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Changes a running broker's dynamic-security plugin: logs in as ``DynamicSecurity/adminLogin``
/// (its password in the broker folder, mode 0600), publishes JSON commands to
/// `$CONTROL/dynamic-security/v1` and reads their answers on `…/response`, as mosquitto_ctrl
/// does, but with no password on a command line. Its connection is a ``CommandConnection``, so it
/// connects and waits as a host's does (the response topic its inbox, refused or unanswered for
/// 5 s: tried again on the backoff, within 10 s). One at a time a folder: every command logs in
/// as the same login, so a second one at once would take the first one's session over between
/// its steps (measured: of twelve add-device at once, two were made); each holds
/// `DIR/control.lock` (`flock`) while it works.
final class BrokerControl {
    static let topic = "$CONTROL/dynamic-security/v1"
    static let responseTopic = topic + "/response"

    let address: HostConfig.Transport.Address
    let password: String
    private let lock: Int32
    private let runtime: ConnectionRuntime

    /// Waits for the folder's other commands to finish (a few milliseconds each).
    init(address: HostConfig.Transport.Address, password: String, lockPath: String, runtime: ConnectionRuntime = .system) throws(BrokerFolder.Failure) {
        self.address = address
        self.password = password
        self.runtime = runtime
        lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lock >= 0 else { throw BrokerFolder.Failure(.lockNotOpened(path: lockPath, why: String(cString: strerror(errno)))) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let why = String(cString: strerror(errno))
                close(lock)
                throw BrokerFolder.Failure(.lockNotTaken(path: lockPath, why: why))
            }
        }
    }

    deinit { close(lock) }

    /// One command: its name and members (strings, numbers, booleans, lists and objects of them).
    struct Command: Encodable, Sendable {
        var members: [String: Value]
        init(_ name: String, _ members: [String: Value] = [:]) {
            self.members = members
            self.members["command"] = .text(name)
        }
        func encode(to encoder: any Encoder) throws { try members.encode(to: encoder) }
    }

    indirect enum Value: Encodable, Sendable {
        case text(String), number(Int), bool(Bool), list([Value]), object([String: Value])
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            case .bool(let bool): try container.encode(bool)
            case .list(let list): try container.encode(list)
            case .object(let object): try container.encode(object)
            }
        }
    }

    /// A command's answer: its error, or its data.
    struct Response: Decodable, Sendable {
        var command: String
        var error: String?
        var data: ResponseData?
    }

    /// What `listClients` and `getClient` answer with (the members imhost reads).
    struct ResponseData: Decodable, Sendable {
        var clients: [String]?
        var client: ClientData?
        struct ClientData: Decodable, Sendable { var username: String; var disabled: Bool? }
    }

    private struct Commands: Encodable { var commands: [Command] }
    private struct Responses: Decodable { var responses: [Response] }

    /// Does `body` on a connection as `login` (`endingSession`: a device's, whose session is
    /// being ended); a failure of it is this command's.
    private func run<Value>(_ login: String, endingSession: Bool = false, _ body: () throws(ConnectionFailure) -> Value) throws(BrokerFolder.Failure) -> Value {
        do throws(ConnectionFailure) {
            return try body()
        } catch {
            switch error {
            case .notConnected(.refused(let address, _, let refusal, _)):
                throw BrokerFolder.Failure(.controlRefused(address: address, login: login, reason: refusal.reason, endingSession: endingSession))
            case .notConnected(.unreachable), .notConnected(.clientNotMade), .inboxRefused, .noAnswer:
                throw BrokerFolder.Failure(.control(error))
            case .notConnected, .went:
                throw BrokerFolder.Failure(.controlEnded(address: address))
            }
        }
    }

    /// Ends `login`'s session and forgets it with what the broker queued for it (else a removed
    /// login's queue would sit on the broker until its sessions expire): gives it a password only
    /// this command knows, connects as it with no session expiry (taking the session over, which
    /// ends a connection of it open now, and its reconnect is refused), and leaves.
    func endSession(of login: String) throws(BrokerFolder.Failure) {
        let ending = BrokerFolder.newPassword()
        try apply([Self.setClientPassword(login, ending)])
        let connection = CommandConnection(address: address, login: login, password: ending, maximumPacket: 1 << 20, inbox: nil, runtime: runtime)
        try run(login, endingSession: true) { () throws(ConnectionFailure) in try connection.ready() }
        connection.leave()
    }

    /// Sends `commands` in one message and returns their answers, in order.
    func send(_ commands: [Command]) throws(BrokerFolder.Failure) -> [Response] {
        let login = DynamicSecurity.adminLogin
        let connection = CommandConnection(address: address, login: login, password: password, maximumPacket: 1 << 20, inbox: Self.responseTopic, runtime: runtime)
        defer { connection.leave() }
        try run(login) { () throws(ConnectionFailure) in try connection.ready() }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let payload: [UInt8]
        do { payload = Array(try encoder.encode(Commands(commands: commands))) } catch { throw BrokerFolder.Failure(.commandsNotEncoded("\(error)")) }
        let bytes = try run(login) { () throws(ConnectionFailure) in
            try connection.publish(topic: Self.topic, payload: payload)
            return try connection.await { event in
                if case .message(Self.responseTopic, let bytes, _) = event { bytes } else { nil }
            }
        }
        guard let read = try? JSONDecoder().decode(Responses.self, from: Data(bytes)) else {
            throw BrokerFolder.Failure(.answerUnreadable(topic: Self.responseTopic, bytes: String(decoding: bytes.prefix(200), as: UTF8.self)))
        }
        return read.responses
    }

    /// Sends `commands` and fails on the first answer with an error (`tolerating` errors that
    /// say the change was there already).
    @discardableResult
    func apply(_ commands: [Command], tolerating: [String] = []) throws(BrokerFolder.Failure) -> [Response] {
        let responses = try send(commands)
        for response in responses {
            if let error = response.error, !tolerating.contains(where: { error.contains($0) }) {
                throw BrokerFolder.Failure(.commandRefused(command: response.command, error: error))
            }
        }
        return responses
    }

    // MARK: The commands imhost sends

    static func createRole(_ role: DynamicSecurity.Document.Role) -> Command {
        Command("createRole", ["rolename": .text(role.rolename), "textname": .text(role.textname ?? ""),
                               "acls": .list(role.acls.map { .object(["acltype": .text($0.acltype), "topic": .text($0.topic), "allow": .bool($0.allow)]) })])
    }

    static func createClient(_ login: String, password: String, roles: [DynamicSecurity.Document.RoleReference]) -> Command {
        Command("createClient", ["username": .text(login), "password": .text(password),
                                 "roles": .list(roles.map { .object(["rolename": .text($0.rolename)]) })])
    }

    static func deleteClient(_ login: String) -> Command { Command("deleteClient", ["username": .text(login)]) }
    static func setClientPassword(_ login: String, _ password: String) -> Command {
        Command("setClientPassword", ["username": .text(login), "password": .text(password)])
    }
    static func addRoleACL(_ role: String, _ acl: DynamicSecurity.Document.ACL) -> Command {
        Command("addRoleACL", ["rolename": .text(role), "acltype": .text(acl.acltype), "topic": .text(acl.topic), "allow": .bool(acl.allow)])
    }
    static func deleteRole(_ role: String) -> Command { Command("deleteRole", ["rolename": .text(role)]) }
    static let listClients = Command("listClients", ["verbose": .bool(false), "count": .number(-1), "offset": .number(0)])
}

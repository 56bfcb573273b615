import IMHost
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// mosquitto's dynamic-security plugin, as imhost sets it up: one plugin client a device (its
/// username the device's login, ``DynamicSecurity/login(user:device:)``), one role a user granting
/// that user's topics, receiving and subscribing denied unless a role grants them.
/// ``BrokerFolder`` writes its file (`DIR/dynamic-security.json`) while the broker is stopped;
/// ``BrokerControl`` changes a running broker through `$CONTROL/dynamic-security/v1`.
extension DynamicSecurity {
    /// The login `imhost broker` changes a running broker as (its password in
    /// `DIR/passwords/~admin`): the separator first, so it is no user's and no device's.
    public static let adminLogin = "~admin"

    /// The role granting `user`'s topics to each of its devices.
    public static func roleName(of user: String) -> String { "user:" + user }
    static let operatorRole = "operator"
    static let bridgeRole = "bridge"
    static let adminRole = "admin"

    /// Where the plugin is: Debian's path first, then any architecture's and the usual others.
    /// `nil`: not installed (``BrokerFolder/Failure/Code/pluginMissing``).
    public static func pluginPath() -> String? {
        var candidates = ["/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so"]
        if let folders = try? FileSystem.entries(of: "/usr/lib") {
            candidates += folders.sorted().filter { $0.hasSuffix("-linux-gnu") }.map { "/usr/lib/\($0)/mosquitto_dynamic_security.so" }
        }
        candidates += ["/usr/lib/mosquitto_dynamic_security.so", "/usr/local/lib/mosquitto_dynamic_security.so",
                       "/usr/lib64/mosquitto_dynamic_security.so", "/usr/local/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so"]
        return candidates.first { access($0, R_OK) == 0 }
    }


    // MARK: The plugin's file

    /// `DIR/dynamic-security.json`, as the plugin reads and writes it (the members imhost uses;
    /// the plugin ignores none of them and adds its own, which a rewrite keeps where listed).
    struct Document: Codable, Sendable {
        var defaultACLAccess: DefaultAccess
        var clients: [Client]
        var groups: [Group]?
        var roles: [Role]

        struct DefaultAccess: Codable, Sendable {
            var publishClientSend: Bool
            var publishClientReceive: Bool
            var subscribe: Bool
            var unsubscribe: Bool
        }

        struct Client: Codable, Sendable {
            var username: String
            var textname: String?
            var password: String?
            var salt: String?
            var iterations: Int?
            var disabled: Bool?
            var roles: [RoleReference]?
        }

        struct RoleReference: Codable, Sendable {
            var rolename: String
            var priority: Int?
        }

        struct Group: Codable, Sendable {
            var groupname: String
            var roles: [RoleReference]?
            var clients: [ClientReference]?
            struct ClientReference: Codable, Sendable { var username: String; var priority: Int? }
        }

        struct Role: Codable, Sendable {
            var rolename: String
            var textname: String?
            var acls: [ACL]
        }

        struct ACL: Codable, Sendable, Equatable {
            var acltype: String
            var topic: String
            var priority: Int?
            var allow: Bool = true
        }
    }

    /// A password hash as mosquitto_passwd writes it (`$7$101$SALT$HASH`: PBKDF2-SHA512), which
    /// is what the plugin keeps too, in three members.
    struct Hash: Sendable, Equatable {
        var hash: String, salt: String, iterations: Int

        init?(passwd entry: String) {
            let parts = entry.split(separator: "$", omittingEmptySubsequences: false)
            guard parts.count == 5, parts[0].isEmpty, parts[1] == "7", let iterations = Int(parts[2]), !parts[3].isEmpty, !parts[4].isEmpty else { return nil }
            self.hash = String(parts[4])
            self.salt = String(parts[3])
            self.iterations = iterations
        }
    }

    /// What a user's devices may do: publish only under the user's name (and each device's
    /// presence record on the user's own inbox), report the user's fleet status, report people
    /// (the operator alone reads reports), read only the user's inbox, and read the fleet
    /// configuration.
    static func userACLs(_ user: String) -> [Document.ACL] {
        let rows: [(String, Topic.Filter)] = [
            ("publishClientSend", .fromUser(user)),
            ("publishClientSend", .devices(of: user)),
            ("publishClientSend", .topic(.fleetStatus(user: user))),
            ("publishClientSend", .reportsBy(user)),
            ("subscribePattern", .toUser(user)),
            ("publishClientReceive", .toUser(user)),
            ("subscribePattern", .topic(.fleetConfig)),
            ("publishClientReceive", .topic(.fleetConfig)),
        ]
        return rows.map { .init(acltype: $0.0, topic: $0.1.name) }
    }

    /// The rules a user's role gained after folders were first made with roles (writing the
    /// user's reports): what ``BrokerFolder/upgradeRoles()`` adds to an older folder's roles,
    /// and nothing else (a rule an operator took out on purpose stays out).
    static func laterRules(_ user: String) -> [Document.ACL] {
        [.init(acltype: "publishClientSend", topic: Topic.Filter.reportsBy(user).name)]
    }

    static func userRole(_ user: String) -> Document.Role {
        .init(rolename: roleName(of: user), textname: "what \(user)'s devices may publish and read", acls: userACLs(user))
    }

    /// Everything under `topic` (a `/#` filter): to publish, read and subscribe.
    static func everything(_ filter: String) -> [Document.ACL] {
        ["publishClientSend", "publishClientReceive", "subscribePattern"].map { .init(acltype: $0, topic: filter) }
    }

    static let roles: [Document.Role] = [
        .init(rolename: operatorRole, textname: "operator writes the fleet configuration and reads the hosts' reports", acls: everything(Topic.Filter.fleet.name)),
        .init(rolename: bridgeRole, textname: "another broker's bridge carries every user's messages", acls: everything(Topic.Filter.everything.name)),
        .init(rolename: adminRole, textname: "imhost broker changes the clients and roles", acls: everything("$CONTROL/dynamic-security/#")),
    ]

    /// The roles a login of `user` has (operator's fleet role besides its own).
    static func roleReferences(user: String, bridge: Bool = false) -> [Document.RoleReference] {
        if bridge { return [.init(rolename: bridgeRole)] }
        var references = [Document.RoleReference(rolename: roleName(of: user))]
        if user == TransportID.operatorID { references.append(.init(rolename: operatorRole)) }
        return references
    }

    /// A plugin file for these logins: each user's role, the fixed roles, and a client each.
    static func document(users: [String], bridges: [String], hashes: [String: Hash]) -> Document {
        var clients: [Document.Client] = []
        for (login, bridge) in users.map({ ($0, false) }) + bridges.map({ ($0, true) }) + [(adminLogin, false)] {
            let hash = hashes[login]
            let roles = login == adminLogin ? [Document.RoleReference(rolename: adminRole)] : roleReferences(user: login, bridge: bridge)
            clients.append(.init(username: login, textname: nil, password: hash?.hash, salt: hash?.salt, iterations: hash?.iterations, disabled: nil, roles: roles))
        }
        return Document(defaultACLAccess: .init(publishClientSend: false, publishClientReceive: false, subscribe: false, unsubscribe: true),
                        clients: clients, groups: [], roles: users.map(userRole) + roles)
    }

    static func encode(_ document: Document) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return (try? encoder.encode(document)).map { String(decoding: $0, as: UTF8.self) + "\n" } ?? ""
    }

    static func decode(_ text: String) -> Document? {
        try? JSONDecoder().decode(Document.self, from: Data(text.utf8))
    }
}

import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// The nodes' configuration: one file a node (its listeners, JetStream, routes), written by
/// init, and the accounts every node includes (logins, passwords, permissions), written again
/// at each change of the logins.
extension BrokerCluster {
    /// Node `node`'s configuration, for the nats-server release `description` records (the
    /// options some releases lack written through ``NATSOption/line(_:for:)``). It holds the
    /// routes' password: write it mode 0600.
    func nodeConfiguration(_ node: Node, in description: Description, routePassword: String) -> String {
        let release = description.natsServer?.release ?? NATSOption.oldestSupported
        let others = description.nodes.filter { $0 != node }
        let routes = others.map { "    \"nats-route://route:\(routePassword)@\($0.host.contains(":") ? "[\($0.host)]" : $0.host):\($0.clusterPort)\"" }
        let pending = description.maxPayload > 64 << 20 ? "\n# A client's pending bytes must hold the largest message (NATS refuses max_payload above it).\nmax_pending: \(description.maxPayload)" : ""
        return """
            # Written by imhost broker init --cluster: node \(node.name) of the \(description.nodes.count)-node NATS cluster in
            # \(path). Each line says why it is here. It holds the password the nodes' routes log in with, so it
            # is readable by its owner only.

            # The node's name, in the cluster and in JetStream's placement of replicas.
            server_name: "\(node.name)"

            # NATS's own protocol, on loopback only. No user connects here: every user may connect only
            # over MQTT (allowed_connection_types in accounts.conf); the system account's user may, for
            # NATS's own tools.
            host: "\(node.host)"
            port: \(node.clientPort)

            # No http or https monitoring port: its pages list every connection's MQTT client id.

            # The largest message: the largest the hosts send (limits.payloadBytes \(description.payloadBytes), limits.photoBytes
            # \(description.photoBytes) as base64) with its envelope and topic, as mosquitto's max_packet_size. NATS 2.9.10
            # does not apply it to MQTT publishes (measured: a 10 MB publish to an absent user was stored and
            # delivered under max_payload 2 MB); it bounds NATS-protocol messages, and the hosts refuse a
            # larger message at the sender.
            max_payload: \(description.maxPayload)\(pending)

            # JetStream keeps MQTT sessions, queued and retained messages, each in \(description.replicas) nodes' stores, so
            # they survive the death of a node. This node's store, and its bounds in memory and on disk
            # (all the queued messages of absent users share the disk's).
            jetstream {
              store_dir: "\(dataPath(of: node))"
              max_memory_store: \(description.memoryStoreBytes)
              max_file_store: \(description.fileStoreBytes)
              # How often the store is flushed to disk, nats-server's default from 2.10.0 (2.9 flushes every minute and takes
              # no setting): what every node losing power at once may lose; one node's loses nothing the others hold.
              \(NATSOption.jetstreamSyncInterval.line("\"2m\"", for: release))
            }

            # The cluster: the other nodes, reached on their route ports. Every route logs in as the
            # cluster's own user, so no other process joins the cluster (a route bypasses every
            # account's permissions and would read everyone's messages).
            cluster {
              name: "\(description.name)"
              host: "\(node.host)"
              port: \(node.clusterPort)
              authorization { user: "route", password: "\(routePassword)" }
              routes: [
            \(routes.joined(separator: "\n"))
              ]
            }

            # The MQTT listener hosts connect to (NATS speaks MQTT 3.1.1 only). Sessions, queued and
            # retained messages go to JetStream with \(description.replicas) replicas of each stream and consumer: a node's
            # death stops no session (a consumer on one node only would stop its session's delivery until
            # that node came back).
            # The consumers (what each session has been sent and has acknowledged) are kept on disk.
            # In memory (consumer_memory_storage) a session cost half the CPU to make, but on a loaded
            # machine the memory-kept consumers' logs lost entries ("could not load entry from WAL")
            # and a device away lost a delivery in two of three full test runs: not set.
            # Not set: consumer_inactive_threshold. With it, a session away longer loses its consumer and
            # NATS 2.9.10 does not make it again when the host comes back: that host would receive nothing.
            mqtt {
              host: "\(node.host)"
              port: \(node.mqttPort)
              \(NATSOption.mqttStreamReplicas.line("\(description.replicas)", for: release))
              \(NATSOption.mqttConsumerReplicas.line("\(description.replicas)", for: release))
            }

            # The logins, their passwords and what each may publish and subscribe: one file for every
            # node, written again by imhost broker add-user, remove-user, add-device and remove-device,
            # which then reload every running node.
            include "accounts.conf"

            # The node's log, and the file its process id is written to (by which imhost broker knows
            # it runs, and tells it to reload).
            log_file: "\(logPath(of: node))"
            pid_file: "\(pidPath(of: node))"

            """
    }

    /// The accounts every node includes: every login with its password and permissions, and
    /// the system account. It holds the passwords: written mode 0600.
    func accountsConfiguration(_ description: Description, passwords: [String: String], systemPassword: String) -> String {
        /// A filter as the subjects NATS makes of it, for the comments (`below`: only the
        /// levels below, `x.>`).
        func nats(_ filter: Topic.Filter, below: Bool = false) -> String {
            let subjects = Self.subjects(filter.name)
            return below ? subjects.last ?? "" : subjects.joined(separator: " and ")
        }
        var users: [String] = []
        for login in description.logins {
            guard let parsed = DynamicSecurity.parse(login: login) else { continue }
            let rules = Self.permissions(of: parsed.user)
            func list(_ subjects: [String]) -> String { subjects.map { "\"\($0)\"" }.joined(separator: ", ") }
            users.append("""
                      # \(parsed.device.map { "\(parsed.user)'s device \($0)" } ?? "\(parsed.user)\(parsed.user == TransportID.operatorID ? "" : "'s first device")")
                      { user: "\(login)", password: "\(passwords[login] ?? "")", allowed_connection_types: ["MQTT"], permissions: {
                          publish: { allow: [\(list(rules.publish))] }
                          subscribe: { allow: [\(list(rules.subscribe))] } } }
                """)
        }
        return """
            # Written by imhost broker (init --cluster, add-user, remove-user, add-device, remove-device) for the
            # cluster in \(path); every node's configuration includes it, and imhost broker reloads every
            # running node when it changes. Each line says why it is here.
            #
            # It holds every login's password in plain text, as DIR/passwords/ does: nats-server makes no
            # bcrypt hash itself, and imhost does not carry an implementation of its own. So it is
            # readable by its owner only.

            accounts {
              # Every user and device in one account, so they reach each other's inboxes; JetStream on,
              # for MQTT's sessions, queued and retained messages. A login publishes and subscribes only
              # what its permissions allow, as mosquitto's dynamic-security roles (the same rules): a
              # device publishes only under its user's name (\(nats(.fromUser("USER"))), its presence records
              # \(nats(.devices(of: "USER")))), its user's fleet status and reports (imhost.fleet.report.USER.*, read by operator only), reads only its user's inbox
              # (MQTT's \(Topic.Filter.toUser("USER")) is NATS's \(nats(.toUser("USER")))) and the fleet
              # configuration; only operator writes \(nats(.fleet, below: true)). A subscription at QoS 1 is a
              # JetStream consumer delivering to $MQTT.sub.<id>, so every login may subscribe there
              # (an MQTT client cannot name that topic: NATS refuses topics under $MQTT). A denied
              # publish is acknowledged and dropped; a denied subscription is answered 0x80.
              # allowed_connection_types ["MQTT"]: none of them connects with NATS's own protocol
              # (measured: a user doing so subscribed to $MQTT.sub.> and read everyone's mail).
              CHAT {
                jetstream: enabled
                users: [
            \(users.joined(separator: "\n"))
                ]
              }
              # The system account NATS reports on itself in. Its user connects with NATS's own protocol
              # only (for NATS's tools, on the loopback client port), never over MQTT; it reads no chat.
              SYS {
                users: [ { user: "system", password: "\(systemPassword)", allowed_connection_types: ["STANDARD"] } ]
              }
            }
            system_account: SYS

            """
    }

    /// Writes the accounts for `description`'s logins, their passwords read from their files.
    func writeAccounts(_ description: Description) throws(Failure) {
        var passwords: [String: String] = [:]
        for login in description.logins + [Self.systemLogin] {
            let password = (try? HostConfig.Transport.password(in: passwordFile(of: login))) ?? ""
            guard !password.isEmpty else {
                throw Failure(.passwordMissing(file: passwordFile(of: login)))
            }
            passwords[login] = password
        }
        try files.write(accountsConfiguration(description, passwords: passwords, systemPassword: passwords[Self.systemLogin] ?? ""),
                        to: accountsPath, mode: 0o600)
    }

    // MARK: Permissions

    /// What `user`'s logins may publish and subscribe to, as NATS subjects: mosquitto's rules
    /// for the user (``DynamicSecurity/userACLs(_:)``; operator's fleet role besides), and
    /// `$MQTT.sub.>`, where QoS 1 subscriptions are delivered.
    static func permissions(of user: String) -> (publish: [String], subscribe: [String]) {
        var acls = DynamicSecurity.userACLs(user)
        if user == TransportID.operatorID { acls += DynamicSecurity.everything(Topic.Filter.fleet.name) }
        var publish: [String] = [], subscribe: [String] = []
        for acl in acls {
            switch acl.acltype {
            case "publishClientSend": publish += subjects(acl.topic)
            case "subscribePattern": subscribe += subjects(acl.topic)
            // NATS has no rule for what a client receives: it receives what it may subscribe to.
            default: break
            }
        }
        func unique(_ list: [String]) -> [String] {
            var seen = Set<String>()
            return list.filter { seen.insert($0).inserted }
        }
        return (unique(publish), unique(subscribe + ["$MQTT.sub.>"]))
    }

    /// An MQTT topic filter as NATS subjects: levels become tokens (`/` → `.`), `+` is `*`, and
    /// `#` is `>` and also the level above it (MQTT's `a/#` matches `a`; NATS's `a.>` does not,
    /// and NATS subscribes an MQTT `a/#` as both).
    static func subjects(_ filter: String) -> [String] {
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let tokens = levels.map { $0 == "+" ? "*" : $0 == "#" ? ">" : $0 }
        guard levels.last == "#" else { return [tokens.joined(separator: ".")] }
        let above = tokens.dropLast()
        return above.isEmpty ? [">"] : [above.joined(separator: "."), tokens.joined(separator: ".")]
    }
}

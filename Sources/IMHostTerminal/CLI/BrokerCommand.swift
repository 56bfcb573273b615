#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMHostBroker
import IMHostRuntime
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// `imhost broker init|add-user|remove-user|run`: a private Mosquitto broker set up right for
/// imhost (see ``BrokerFolder``), in one command each.
enum BrokerCommand {
    typealias Option = CommandLineTool.Option

    static let users = Option.option("--users", .text("IDS", takes: "ids separated by commas (alice,bob)", accepts: { !$0.split(separator: ",", omittingEmptySubsequences: false).contains(where: \.isEmpty) }),
                                     "the users, comma-separated: 1 to 64 of A-Z a-z 0-9 . _ -")
    static let port = Option.option("--port", .number(1...65535, "a port"), "listen on 127.0.0.1:N instead")
    static let listen = Option.option("--listen", .text("HOST:PORT", takes: "HOST:PORT, e.g. 0.0.0.0:8883", accepts: { listenAddress($0) != nil }),
                                      "also listen with TLS on HOST:PORT (e.g. 0.0.0.0:8883), for hosts beyond this machine: needs --tls-cert and --tls-key (PEM; copied into DIR/tls). A listener beyond loopback without TLS is refused.")
    static let bridgeTo = Option.option("--bridge-to", .text("URL", takes: "mqtt://HOST:PORT (the other broker's TCP listener)", accepts: { bridgeTarget($0) != nil }),
                                        "bridge this broker to another (mqtt://HOST:PORT) for imhost/#: users of either chat with users of the other. Needs --bridge-user and --bridge-password-file: a user made on the other broker with add-user --bridge, and its password file. A bridge bypasses the receiving broker's ACL: bridge only brokers that trust each other.")
    static let payloadBytes = Option.option("--payload-bytes", .number(1024...(64 << 20), "a number of bytes", default: HostConfig.Limits().payloadBytes),
                                            "the largest payload the hosts allow: the broker's max_packet_size is sized from it")
    static let photoBytes = Option.option("--photo-bytes", .number(0...(16 << 20), "a number of bytes", default: HostConfig.Limits().photoBytes),
                                          "the most bytes of photos one message carries (the hosts' limits.photoBytes; 0, with --file-bytes 0: a broker for text only): they travel base64 in the envelope, so max_packet_size is sized from it too")
    static let fileBytes = Option.option("--file-bytes", .number(0...(64 << 20), "a number of bytes", default: HostConfig.Limits().fileBytes),
                                         "the most bytes of a file one message carries (the hosts' limits.fileBytes): it travels base64 in the envelope, so max_packet_size is sized from the larger of it and --photo-bytes")
    /// `upgrade`'s: no default of its own, the folder's.
    static let upgradePayloadBytes = Option.option("--payload-bytes", .number(1024...(64 << 20), "a number of bytes"),
                                                   "the largest payload the hosts allow (default: the one the folder was made for, as its mosquitto.conf says)")
    static let json = Option.json("the folder, the URL, and each user's password file and host.json members, as JSON")

    static let command = CommandLineTool.Command(
        name: "broker",
        summary: "set up and run a private MQTT broker for chats between users",
        subcommands: [
            .init(name: "init", arguments: "DIR --users IDS",
                  summary: "write a Mosquitto broker's folder for these users, and print each one's host.json members",
                  options: [
                      users, cluster,
                      .option("--socket", .text("PATH"), "listen on this unix socket (at most 107 bytes)"),
                      port, listen,
                      .option("--tls-cert", .text("FILE"), "the TLS listener's certificate (PEM)"),
                      .option("--tls-key", .text("FILE"), "the TLS listener's private key (PEM)"),
                      bridgeTo,
                      .option("--bridge-user", .text("ID"), "the user the bridge logs in as on the other broker"),
                      .option("--bridge-password-file", .text("FILE"), "that user's password file"),
                      natsServer, payloadBytes, photoBytes, fileBytes,
                      .flag("--force", "write over an existing folder's configuration (every password new); refused while its broker runs"),
                      .flag("--while-running", "with --force, write it while its broker runs: the running broker keeps the old passwords until it is restarted"),
                      json,
                  ]),
            .init(name: "add-user", arguments: "DIR ID",
                  summary: "add a user and print its host.json members (a running broker takes it at once)",
                  options: [.flag("--bridge", "a user another broker's bridge logs in as (it reads and writes all of imhost/), with no host.json"), json]),
            .init(name: "remove-user", arguments: "DIR ID", summary: "remove a user and all its devices (a running broker ends their connections at once)"),
            .init(name: "add-device", arguments: "DIR USER DEVICE",
                  summary: "give USER another device on the running broker: a login of its own (USER~DEVICE) with its own session, granted only USER's topics; print that device's host.json members",
                  options: [.json("the device's login, password file and host.json members, as JSON")]),
            .init(name: "remove-device", arguments: "DIR USER DEVICE",
                  summary: "remove a device of USER from the running broker: its connection ends at once and its login is refused from then on"),
            .init(name: "devices", arguments: "DIR [USER]",
                  summary: "list the users' devices (of USER only, when given) and their logins",
                  options: [.json("each device's user, name and login, as JSON")]),
            .init(name: "upgrade", arguments: "DIR",
                  summary: "bring a folder made by an older imhost to what init writes now: a folder made before devices moves to the dynamic-security plugin (every password and session kept), one made before the retain rule gets it, one made before photos (or for other limits) is sized anew, users' roles get the rules they lack (writing their own reports); a cluster's accounts are written again with this version's permissions, and its nodes' configuration for the nats-server found (--nats-server PATH, else the one recorded, else the first on the PATH); says whether the running broker must be restarted",
                  options: [upgradePayloadBytes, photoBytes, fileBytes, natsServer,
                            .json("what changed: the sizes before and after, and whether the running broker must be restarted, as JSON")]),
            .init(name: "run", arguments: "DIR",
                  summary: "run the broker (a cluster's every node) in the foreground (logging to DIR/mosquitto.log, or DIR/nodes/*.log) and say its URLs once it accepts connections",
                  options: [node]),
        ],
        help: """
            imhost broker init writes DIR/mosquitto.conf (every line says why), the file of
            mosquitto's dynamic-security plugin, DIR/dynamic-security.json (a login a device, a
            role a user: a device publishes only under its user's name and reads only its user's
            inbox; only operator writes the fleet configuration), and one password file per login
            and for operator: DIR/passwords/<login> (mode 0600), for host.json's
            "transport": { "url": ..., "passwordFile": ... }. A user's first device logs in as the
            user; add-device gives it another, logging in as USER~DEVICE (no user id holds a ~)
            with a session of its own, and says what that device's host.json takes. add-device,
            remove-device, and add-user or remove-user on a running broker change it at once
            through $CONTROL/dynamic-security/v1, logged in as ~admin (its password in
            DIR/passwords/~admin, never on a command line). It listens on a unix socket,
            DIR/mosquitto.sock, unless --socket PATH or --port N (loopback only) says otherwise.
            init copies imhost's retain rule, a mosquitto plugin built with imhost, into
            DIR/imhost-retain-rule.so: the broker keeps a retained message only on the topics imhost
            retains by design (the fleet configuration, each host's status, each device's own
            session record) and refuses every other. An existing DIR is written again only with
            --force. max_packet_size is sized from
            --payload-bytes and --photo-bytes (the hosts' limits), and hosts refuse at the sender
            a message larger than the broker takes.

            imhost broker upgrade DIR moves a folder made before devices (a password file and an
            ACL) to the plugin: every login keeps its password hash, so every host connects as
            before and finds its session and queued messages. It adds the retain rule to a folder
            made before it (and copies the plugin again when imhost's build of it changed). It sizes a folder made before
            photos (or for other limits) as init would now, rewriting only its sizing paragraph
            (listeners, TLS and bridge stay); run again, it says the folder is up to date. mosquitto reads the sizes at
            start only (a reload keeps the old ones): a running broker must be restarted, and
            upgrade says so. It gives every user's role the rules of this version it lacks (a
            folder made before reports: a user may write imhost/fleet/report/USER/+, which only
            operator reads), through the running broker's control at once, or in the plugin's file.
            On a NATS cluster, upgrade writes DIR/nodes/accounts.conf again with this version's
            permissions and reloads the running nodes; it finds nats-server again (--nats-server
            PATH, else the program cluster.json records while it is there, else the first on the
            PATH) and writes every node's DIR/nodes/nN.conf for its release, keeping the ports, the
            routes' password, the passwords and the data (a file that differed from what init
            writes is kept as nN.conf.before-upgrade), refused while a node runs if a file changes.

            imhost broker run stops on Ctrl-C, SIGTERM or SIGHUP, and the broker never outlives
            it (not even kill -9).

            imhost broker init --cluster N DIR --users IDS writes a NATS cluster instead (N from 3:
            with 2, the death of either stops MQTT): DIR/cluster.json (its nodes, ports and
            logins), DIR/nodes/nN.conf (each node's JetStream, MQTT listener and routes, all on
            127.0.0.1, every line saying why), DIR/nodes/accounts.conf (every login with the same
            rules as above, only over MQTT) and DIR/passwords/<login>. Hosts list every node's URL
            ("url": [...]) and speak MQTT 3.1.1 ("protocol": "3.1.1"); ids with a '.' are refused
            (NATS drops a connection publishing to a topic level holding one). run starts every
            node and says so once each serves MQTT; a node that dies is said and the others go
            on, nothing restarts it: run DIR --node N starts that node alone. The nodes run
            --nats-server PATH, or the first nats-server on the PATH (then /usr/sbin, /usr/bin):
            init refuses a program whose --version does not say nats-server X.Y.Z, or says a
            release older than \(NATSOption.oldestSupported) (the first with every MQTT setting
            the nodes are written with), records its path and release in cluster.json, and writes
            the options only some releases take for that release (docs/operating.md says which);
            run refuses, in one line, a recorded program that is gone or says another release
            now: imhost broker upgrade DIR writes the nodes for it. add-user,
            remove-user, add-device and remove-device rewrite accounts.conf and reload every
            running node (a removed login's connections end at once). For several machines, edit
            the generated files as docs/operating.md says (A NATS cluster): real addresses in
            cluster.json and the nodes' files, and tls {} in their mqtt and cluster blocks.
            """,
        run: { arguments, output in
            let positionals = arguments.positionals
            func usage(_ why: String) -> Int32 {
                output.diagnostic("imhost broker: \(why); see imhost broker --help")
                return CommandLineTool.ExitCode.usage
            }
            // The subcommand, chosen and checked as declared.
            let verb = positionals.first ?? ""
            let (counts, shape): (ClosedRange<Int>, String) = switch verb {
            case "add-user", "remove-user": (3...3, "DIR ID")
            case "add-device", "remove-device": (4...4, "DIR USER DEVICE")
            case "devices": (2...3, "DIR [USER]")
            default: (2...2, "DIR")
            }
            guard counts.contains(positionals.count) else {
                return usage("\(verb) takes \(shape), got \(positionals.count - 1) argument\(positionals.count == 2 ? "" : "s")")
            }
            let folder = BrokerFolder(path: FileSystem.resolve(positionals[1], against: FileSystem.currentDirectory()))
            do throws(BrokerFolder.Failure) {
                if verb == "init", arguments[Self.cluster] != nil { return try initializeCluster(folder.path, arguments, output, usage: usage) }
                if verb != "init", BrokerCluster.isCluster(folder.path) { return try onCluster(verb, BrokerCluster(path: folder.path), arguments, output) }
                if verb == "init", BrokerCluster.isCluster(folder.path) {
                    output.diagnostic("imhost broker init: \(TerminalText.safe(folder.path)) holds a NATS cluster (cluster.json): write it again with init --cluster N --force, or make the mosquitto broker in another folder")
                    return CommandLineTool.ExitCode.failure
                }
                if arguments[Self.node] != nil { return usage("--node is for a cluster's folder (made by init --cluster N); \(folder.path) has no cluster.json") }
                if arguments[Self.natsServer] != nil {
                    return usage("--nats-server is for a NATS cluster (init --cluster N, or upgrade of a cluster's folder); \(folder.path) has no cluster.json")
                }
                switch verb {
                case "init": return try initialize(folder, arguments, output, usage: usage)
                case "add-user":
                    let user = positionals[2], bridge = arguments.flags.contains("--bridge")
                    let told = try folder.addUser(user, bridge: bridge)
                    if arguments.has(json) {
                        let member = Made.User(user, passwordFile: folder.passwordFile(of: user), url: bridge ? nil : try folder.url())
                        output.out(JSONOutput.encode(Made(folder: folder.path, url: try folder.url(), users: [member], reloaded: told)))
                        return CommandLineTool.ExitCode.ok
                    }
                    var text = "added \(user): its password is in \(folder.passwordFile(of: user))\(told ? "; the running broker took it at once" : "")\n"
                    // A bridge user is another broker's, not a host's: it has no host.json.
                    if !bridge { text += "In \(user)'s host.json:\n" + hostMembers(user, url: try folder.url(), passwordFile: folder.passwordFile(of: user)) }
                    output.out(TerminalText.safe(text, newlines: true))
                case "upgrade":
                    return try upgrade(folder, arguments, output)
                case "remove-user":
                    let told = try folder.removeUser(positionals[2])
                    output.out(TerminalText.safe("removed \(positionals[2]) and its devices\(told ? "; the running broker ended their connections" : "")") + "\n")
                case "add-device":
                    let added = try folder.addDevice(positionals[3], of: positionals[2])
                    let file = folder.passwordFile(of: added.login)
                    if arguments.has(json) {
                        output.out(JSONOutput.encode(Made.User(added.user, login: added.login, passwordFile: file, url: try folder.url())))
                        return CommandLineTool.ExitCode.ok
                    }
                    let text = "added \(added.user)'s device \(positionals[3]): it logs in as \(added.login), its password is in \(file)\n"
                        + "In that device's host.json:\n" + hostMembers(added.user, login: added.login, url: try folder.url(), passwordFile: file)
                    output.out(TerminalText.safe(text, newlines: true))
                case "remove-device":
                    let removed = try folder.removeDevice(positionals[3], of: positionals[2])
                    output.out(TerminalText.safe("removed \(removed.user)'s device \(positionals[3]) (\(removed.login)): its connection ended, and its login is refused from now on") + "\n")
                case "devices":
                    return try devices(folder, user: positionals.count == 3 ? positionals[2] : nil, arguments, output)
                default:
                    return run(folder, output)
                }
                return CommandLineTool.ExitCode.ok
            } catch {
                output.diagnostic(diagnostic(error, verb: verb))
                return CommandLineTool.ExitCode.failure
            }
        })

    private static func initialize(_ folder: BrokerFolder, _ arguments: Arguments, _ output: Output, usage: (String) -> Int32) throws(BrokerFolder.Failure) -> Int32 {
        guard let list = arguments[Self.users] else { return usage("init needs --users alice,bob") }
        let users = list.split(separator: ",").map(String.init)
        if arguments.options["--socket"] != nil && arguments.options["--port"] != nil { return usage("give --socket or --port, not both") }
        var listener = BrokerFolder.Listener.socket(folder.path + "/mosquitto.sock")
        if let socket = arguments.options["--socket"] { listener = .socket(FileSystem.resolve(socket, against: FileSystem.currentDirectory())) }
        if let port = arguments.number(Self.port) { listener = .port(port) }
        var tls: BrokerFolder.TLSListener?
        let tlsFiles = (arguments.options["--tls-cert"], arguments.options["--tls-key"])
        if case let (host, port)? = arguments[Self.listen].flatMap(listenAddress) {
            guard case let (cert?, key?) = tlsFiles else {
                return usage("--listen needs --tls-cert and --tls-key: a listener beyond loopback without TLS would carry passwords and messages in clear")
            }
            let here = FileSystem.currentDirectory()
            tls = BrokerFolder.TLSListener(host: host, port: port, certificate: FileSystem.resolve(cert, against: here),
                                           key: FileSystem.resolve(key, against: here))
        } else if tlsFiles.0 != nil || tlsFiles.1 != nil {
            return usage("--tls-cert and --tls-key go with --listen HOST:PORT (the TLS listener)")
        }
        var bridge: BrokerFolder.Bridge?
        if case let (host, port)? = arguments[Self.bridgeTo].flatMap(bridgeTarget) {
            guard let user = arguments.options["--bridge-user"], let file = arguments.options["--bridge-password-file"] else {
                return usage("--bridge-to needs --bridge-user and --bridge-password-file: a user made on the other broker with imhost broker add-user DIR NAME --bridge")
            }
            if let problem = TransportID.problem(user) { return usage("--bridge-user: the id \"\(TerminalText.safe(user))\" \(problem)") }
            let passwordFile = FileSystem.resolve(file, against: FileSystem.currentDirectory())
            let password = (try? HostConfig.Transport.password(in: passwordFile)) ?? ""
            guard !password.isEmpty else { return usage("--bridge-password-file: cannot read a password from \(TerminalText.safe(passwordFile))") }
            bridge = BrokerFolder.Bridge(host: host, port: port, user: user, password: password)
        }
        let running = folder.runningPID()
        let made = try BrokerFolder.initialize(at: folder.path, users: users, listener: listener, payloadLimit: arguments.number(Self.payloadBytes)!,
                                               photoLimit: arguments.number(Self.photoBytes)!, fileLimit: arguments.number(Self.fileBytes)!, tls: tls, bridge: bridge, force: arguments.flags.contains("--force"),
                                               whileRunning: arguments.flags.contains("--while-running"))
        let url = try made.url()
        let remote = tls.map { "mqtts://\($0.host == "0.0.0.0" || $0.host == "::" ? "BROKER-NAME" : $0.host):\($0.port)" }
        if arguments.has(json) {
            output.out(JSONOutput.encode(Made(folder: made.path, url: url, tlsURL: remote,
                                              users: users.map { Made.User($0, passwordFile: made.passwordFile(of: $0), url: url) })))
            return CommandLineTool.ExitCode.ok
        }
        var text = """
            Wrote a broker for \(users.joined(separator: ", ")) (and operator) in \(made.path).
            Run it:  imhost broker run \(made.path)
            Then, in each user's host.json:

            """
        if let running {
            text = """
                Wrote a broker for \(users.joined(separator: ", ")) (and operator) in \(made.path), with new passwords for all of them.
                Its broker is running (pid \(running)) and keeps the old passwords and settings until it is restarted: stop it and run imhost broker run \(made.path) again.
                Then every host needs its new password file; in each user's host.json:

                """
        }
        text += users.map { hostMembers($0, url: url, passwordFile: made.passwordFile(of: $0)) }.joined(separator: "\n")
        if let remote {
            text += """

                or, from another machine (BROKER-NAME: a name in the broker's certificate; the CA
                that signed it in caFile; the password file copied there, mode 0600):

                """
            text += users.map { #"  "transport": { "url": "\#(remote)", "caFile": "ca.pem", "passwordFile": "passwords/\#($0)" }"# + "\n" }.joined()
        }
        output.out(TerminalText.safe(text, newlines: true))
        return CommandLineTool.ExitCode.ok
    }

    /// `upgrade`: rewrites the folder's sizing, and says in one line what changed and what the
    /// running broker needs.
    private static func upgrade(_ folder: BrokerFolder, _ arguments: Arguments, _ output: Output) throws(BrokerFolder.Failure) -> Int32 {
        let done = try folder.upgrade(payloadLimit: arguments.number(Self.upgradePayloadBytes), photoLimit: arguments.number(Self.photoBytes)!,
                                      fileLimit: arguments.number(Self.fileBytes)!)
        if arguments.has(json) {
            output.out(JSONOutput.encode(Upgraded(folder: folder.path, changed: done.changed, payloadBytes: done.payloadLimit, photoBytes: done.photoLimit,
                                                  maxPacketSize: .init(before: done.packetBefore, after: done.packet),
                                                  maxQueuedBytes: .init(before: done.queuedBefore, after: done.queued),
                                                  devices: done.devices, retainRule: done.retainRule, roles: done.roles, restartNeeded: done.restartNeeded != nil, pid: done.restartNeeded)))
            return CommandLineTool.ExitCode.ok
        }
        let limits = "payloads of \(done.payloadLimit) bytes, photos of \(done.photoLimit) bytes, files of \(done.fileLimit) bytes"
        let changes = [("max_packet_size", done.packetBefore, done.packet), ("max_queued_bytes", done.queuedBefore, done.queued)]
            .filter { $0.1 != $0.2 }.map { "\($0.0) \($0.1.map(String.init) ?? "unset") → \($0.2)" }
        var text = !done.changed
            ? "\(folder.configPath) is up to date: max_packet_size \(done.packet), max_queued_bytes \(done.queued) (\(limits))"
            : changes.isEmpty ? done.devices || done.retainRule || done.roles ? "its sizes were right (\(limits))" : "rewrote the sizing comments of \(folder.configPath); its sizes were right (\(limits))"
            : "upgraded \(folder.configPath): \(changes.joined(separator: ", ")) (\(limits))"
        if done.retainRule {
            text = "put imhost's retain rule in \(folder.retainRulePath) (the broker keeps only the retained messages imhost retains by design); " + text
        }
        if done.roles {
            text = "gave every user's role the rules it lacked (writing its own reports, which only operator reads)\(folder.runningPID() != nil ? ", in the running broker at once" : ""); " + text
        }
        if done.devices {
            text = "moved \(folder.path) to mosquitto's dynamic-security plugin (\(folder.securityPath)): every login keeps its password and session, and a user may have several devices (imhost broker add-device); " + text
        }
        if let pid = done.restartNeeded, done.devices {
            text += "; its broker (pid \(pid)) runs as before until it is restarted (mosquitto reads its plugin and logins at start): stop imhost broker run \(folder.path) and start it again"
        } else if let pid = done.restartNeeded {
            let old = !done.retainRule ? "with the old sizes" : changes.isEmpty ? "without the retain rule" : "with the old sizes and without the retain rule"
            text += "; its broker (pid \(pid)) runs \(old) until it is restarted (mosquitto reads neither sizes nor plugins again on a reload): stop imhost broker run \(folder.path) and start it again"
        } else if done.changed, folder.runningPID() == nil {
            text += "; the broker takes them when it starts (imhost broker run \(folder.path))"
        }
        output.out(TerminalText.safe(text) + "\n")
        return CommandLineTool.ExitCode.ok
    }

    /// What `upgrade --json` says.
    struct Upgraded: Encodable {
        var folder: String
        var changed: Bool
        var payloadBytes: Int
        var photoBytes: Int
        var maxPacketSize: Change
        var maxQueuedBytes: Change
        /// Whether a folder made before devices moved to the dynamic-security plugin.
        var devices: Bool
        /// Whether imhost's retain rule was put in the folder (added, or its copy replaced).
        var retainRule: Bool
        /// Whether users' roles were given rules they lacked (their reports).
        var roles: Bool
        /// Whether the running broker must be restarted to take the sizes, and its pid.
        var restartNeeded: Bool
        var pid: Int32?
        struct Change: Encodable { var before: Int?; var after: Int }
    }

    /// `--listen`'s host and port: `0.0.0.0:8883`, `[::1]:8883`.
    static func listenAddress(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else { return nil }
        let host = String(text[..<colon].filter { $0 != "[" && $0 != "]" })
        return host.isEmpty ? nil : (host, port)
    }

    /// `--bridge-to`'s host and port: the other broker's TCP listener, `mqtt://HOST:PORT`.
    static func bridgeTarget(_ text: String) -> (String, Int)? {
        guard case .success(.tcp(let host, let port)) = HostConfig.Transport.address(text, relativeTo: "/") else { return nil }
        return (host, port)
    }

    /// What `--json` says a broker folder has: where it is, the URL hosts connect to (and, with
    /// `--listen`, the one from other machines), and each user's password file and host.json
    /// members; for `add-user`, whether the running broker reloaded.
    struct Made: Encodable {
        var folder: String
        var url: String
        var tlsURL: String?
        var users: [User]
        var reloaded: Bool?

        struct User: Encodable {
            var user: String
            /// A device's login, when it is not the user's first device's (the user).
            var login: String?
            var passwordFile: String
            /// The "user" and "transport" members of its host.json; none for a bridge's user.
            var hostJSON: HostMembers?

            init(_ user: String, login: String? = nil, passwordFile: String, url: String?) {
                self.user = user
                self.login = login
                self.passwordFile = passwordFile
                hostJSON = url.map { HostMembers(user: user, transport: .init(url: $0, login: login, passwordFile: passwordFile)) }
            }
        }

        struct HostMembers: Encodable {
            var user: String
            var transport: Transport
            struct Transport: Encodable { var url: String; var login: String?; var passwordFile: String }
        }
    }

    /// What `user`'s host.json needs to reach this broker: its "user" and "transport" members
    /// (with a device's `login` when it is not the user's first device).
    private static func hostMembers(_ user: String, login: String? = nil, url: String, passwordFile: String) -> String {
        """
          "user": "\(user)",
          "transport": { "url": "\(url)", \(login.map { "\"login\": \"\($0)\", " } ?? "")"passwordFile": "\(passwordFile)" }

        """
    }

    /// `devices`: a line a device, `USER  DEVICE  LOGIN` (a first device's name is "(first)").
    private static func devices(_ folder: BrokerFolder, user: String?, _ arguments: Arguments, _ output: Output) throws(BrokerFolder.Failure) -> Int32 {
        if let user, let problem = TransportID.problem(user) { throw BrokerFolder.Failure(.userRefused(id: user, problem: problem)) }
        let running = folder.runningPID() != nil
        return listDevices(try folder.devices(of: user), folder: folder.path, user: user, running: running,
                           notRunning: "(its broker is not running: as \(folder.securityPath) says)", passwordFile: folder.passwordFile(of:), arguments, output)
    }

    /// The devices found, as `devices` lists them (`notRunning`: the line said first when the
    /// broker does not run).
    static func listDevices(_ found: [BrokerFolder.Device], folder: String, user: String?, running: Bool, notRunning: String,
                            passwordFile: (String) -> String, _ arguments: Arguments, _ output: Output) -> Int32 {
        if arguments.has(json) {
            output.out(JSONOutput.encode(Listed(folder: folder, running: running,
                                                devices: found.map { .init(user: $0.user, device: $0.device, login: $0.login, passwordFile: passwordFile($0.login)) })))
            return CommandLineTool.ExitCode.ok
        }
        guard !found.isEmpty else {
            output.out(TerminalText.safe(user.map { "\(folder) has no user \($0)" } ?? "\(folder) has no users") + "\n")
            return user == nil ? CommandLineTool.ExitCode.ok : CommandLineTool.ExitCode.failure
        }
        let width = found.map { $0.user.count }.max() ?? 0, deviceWidth = max(8, found.map { ($0.device ?? "").count }.max() ?? 0)
        var text = running ? "" : notRunning + "\n"
        for device in found {
            let name = device.device ?? "(first)"
            text += device.user.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + name.padding(toLength: deviceWidth, withPad: " ", startingAt: 0) + "  " + device.login + "\n"
        }
        output.out(TerminalText.safe(text, newlines: true))
        return CommandLineTool.ExitCode.ok
    }

    /// What `devices --json` says.
    struct Listed: Encodable {
        var folder: String
        var running: Bool
        var devices: [Device]
        struct Device: Encodable { var user: String; var device: String?; var login: String; var passwordFile: String }
    }

    /// Runs the broker in the foreground until it ends or a signal ends this command. SIGINT,
    /// SIGTERM, SIGQUIT and SIGHUP (the terminal closed) stop the broker first, noted from
    /// before it starts; whatever else ends this process (`kill -9`) stops it too, by the
    /// parent-death signal ``BrokerProcess`` asks for.
    private static func run(_ folder: BrokerFolder, _ output: Output) -> Int32 {
        Interruption.install(also: [SIGHUP])
        if let running = folder.runningPID() {
            output.diagnostic("imhost broker run: a broker already runs for \(TerminalText.safe(folder.path)) (mosquitto, process \(running)); stop it first (kill \(running)), or use it as it is")
            return CommandLineTool.ExitCode.failure
        }
        let broker: BrokerProcess
        do throws(BrokerProcess.Failure) {
            broker = try BrokerProcess(folder: folder, stopping: { Interruption.signal != nil })
        } catch {
            if Interruption.signal != nil { return CommandLineTool.ExitCode.ok }
            output.diagnostic("imhost broker run: \(TerminalText.safe(line(error)))")
            return CommandLineTool.ExitCode.failure
        }
        let url = (try? folder.url()) ?? "?"
        output.out(TerminalText.safe("imhost broker: accepting connections at \(url) (log: \(folder.logPath)); Ctrl-C stops it") + "\n")
        while broker.poll() == nil {
            if Interruption.signal != nil {
                broker.stop()
                return CommandLineTool.ExitCode.ok
            }
            _ = poll(nil, 0, 100)
        }
        let status = broker.wait()
        output.diagnostic("imhost broker run: mosquitto ended (status \(status)); see \(TerminalText.safe(folder.logPath))")
        return CommandLineTool.ExitCode.failure
    }
}

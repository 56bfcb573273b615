import IMHost
import IMHostBroker
import IMHostRuntime
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// `imhost broker` on a NATS cluster's folder (``BrokerCluster``): made by `init --cluster N`,
/// told from a mosquitto folder by its cluster.json, and changed by the same subcommands.
extension BrokerCommand {
    static let cluster = Option.option("--cluster", .text("N", takes: "a number of nodes from 3 to \(BrokerCluster.maximumNodes)", accepts: { Int($0).map { (1...BrokerCluster.maximumNodes).contains($0) } == true }),
                                       "write a NATS cluster of N nodes (3 to \(BrokerCluster.maximumNodes)) on this machine's loopback instead of one mosquitto: it survives the death of a node; hosts list every node's URL and speak MQTT 3.1.1")
    static let node = Option.option("--node", .number(1...BrokerCluster.maximumNodes, "a node number"),
                                    "on a cluster's folder: run node N alone (a node that was killed, started again while the others run)")

    static let natsServer = Option.option("--nats-server", .text("PATH"),
                                          "a NATS cluster's (init --cluster N, or upgrade of a cluster's folder): the nats-server program the nodes run (its --version must say nats-server \(NATSOption.oldestSupported) or later); default: the first nats-server on the PATH, then in /usr/sbin and /usr/bin. Its path and release are kept in cluster.json, and the nodes' configuration is written for that release")

    /// `--nats-server PATH`, absolute, when given.
    static func natsServerPath(_ arguments: Arguments) -> String? {
        arguments[natsServer].map { FileSystem.resolve($0, against: FileSystem.currentDirectory()) }
    }

    /// What the mosquitto options of init are not, with a cluster.
    static let mosquittoOnly = ["--socket", "--port", "--listen", "--tls-cert", "--tls-key", "--bridge-to", "--bridge-user", "--bridge-password-file", "--while-running"]

    /// `init --cluster N`: writes the cluster and prints each user's host.json members.
    static func initializeCluster(_ path: String, _ arguments: Arguments, _ output: Output, usage: (String) -> Int32) throws(BrokerFolder.Failure) -> Int32 {
        guard let list = arguments[Self.users] else { return usage("init --cluster needs --users alice,bob") }
        if let other = mosquittoOnly.first(where: { arguments.given.contains($0) }) {
            return usage("\(other) is for a mosquitto broker, not with --cluster: a cluster's nodes listen on loopback; for several machines, edit the nodes' files as docs/operating.md says (A NATS cluster)")
        }
        let users = list.split(separator: ",").map(String.init)
        let made = try BrokerCluster.initialize(at: path, nodes: Int(arguments[Self.cluster] ?? "") ?? 0, users: users,
                                                payloadLimit: arguments.number(Self.payloadBytes)!, photoLimit: arguments.number(Self.photoBytes)!, fileLimit: arguments.number(Self.fileBytes)!,
                                                force: arguments.flags.contains("--force"), natsServer: natsServerPath(arguments))
        let urls = try made.urls(), server = try made.description().natsServer
        if arguments.has(json) {
            output.out(JSONOutput.encode(ClusterMade(folder: made.path, urls: urls, users: users.map { ClusterMade.User($0, passwordFile: made.passwordFile(of: $0), urls: urls) },
                                                     natsServer: server)))
            return CommandLineTool.ExitCode.ok
        }
        var text = """
            Wrote a NATS cluster of \(urls.count) nodes for \(users.joined(separator: ", ")) (and operator) in \(made.path)\(server.map { ", run by \($0.path) (nats-server \($0.version))" } ?? "").
            Run it:  imhost broker run \(made.path)
            Then, in each user's host.json:

            """
        text += users.map { clusterMembers($0, urls: urls, passwordFile: made.passwordFile(of: $0)) }.joined(separator: "\n")
        output.out(TerminalText.safe(text, newlines: true))
        return CommandLineTool.ExitCode.ok
    }

    /// Every subcommand but init on a cluster's folder.
    static func onCluster(_ verb: String, _ cluster: BrokerCluster, _ arguments: Arguments, _ output: Output) throws(BrokerFolder.Failure) -> Int32 {
        let positionals = arguments.positionals
        switch verb {
        case "run":
            return runCluster(cluster, node: arguments.number(Self.node), output)
        case "add-user":
            guard !arguments.flags.contains("--bridge") else {
                output.diagnostic("imhost broker add-user: \(TerminalText.safe(cluster.path)) is a NATS cluster, whose nodes join by routes: it has no bridge users; bridge mosquitto brokers to each other, or give every user a login on the cluster")
                return CommandLineTool.ExitCode.failure
            }
            let user = positionals[2]
            let reload = try cluster.addUser(user)
            let urls = try cluster.urls()
            if arguments.has(json) {
                output.out(JSONOutput.encode(ClusterMade(folder: cluster.path, urls: urls, users: [ClusterMade.User(user, passwordFile: cluster.passwordFile(of: user), urls: urls)],
                                                         reloaded: reload.reloaded)))
                return CommandLineTool.ExitCode.ok
            }
            let text = "added \(user): its password is in \(cluster.passwordFile(of: user))\(taken(reload, cluster))\n"
                + "In \(user)'s host.json:\n" + clusterMembers(user, urls: urls, passwordFile: cluster.passwordFile(of: user))
            output.out(TerminalText.safe(text, newlines: true))
        case "remove-user":
            let reload = try cluster.removeUser(positionals[2])
            output.out(TerminalText.safe("removed \(positionals[2]) and its devices\(ended(reload, live: "their connections ended and their logins are refused from now on", stopped: "their logins are refused", kept: "the sessions they kept stay in JetStream with what is queued for them"))") + "\n")
        case "add-device":
            let (added, reload) = try cluster.addDevice(positionals[3], of: positionals[2])
            let file = cluster.passwordFile(of: added.login), urls = try cluster.urls()
            if arguments.has(json) {
                output.out(JSONOutput.encode(ClusterMade.User(added.user, login: added.login, passwordFile: file, urls: urls)))
                return CommandLineTool.ExitCode.ok
            }
            let text = "added \(added.user)'s device \(positionals[3]): it logs in as \(added.login), its password is in \(file)\(taken(reload, cluster))\n"
                + "In that device's host.json:\n" + clusterMembers(added.user, login: added.login, urls: urls, passwordFile: file)
            output.out(TerminalText.safe(text, newlines: true))
        case "remove-device":
            let (removed, reload) = try cluster.removeDevice(positionals[3], of: positionals[2])
            output.out(TerminalText.safe("removed \(removed.user)'s device \(positionals[3]) (\(removed.login))\(ended(reload, live: "its connection ended, and its login is refused from now on", stopped: "its login is refused", kept: "the session it kept stays in JetStream with what is queued for it"))") + "\n")
        case "devices":
            let user = positionals.count == 3 ? positionals[2] : nil
            if let user, let problem = TransportID.problem(user) { throw BrokerFolder.Failure(.userRefused(id: user, problem: problem)) }
            let running = !(try cluster.runningNodes()).isEmpty
            return listDevices(try cluster.devices(of: user), folder: cluster.path, user: user, running: running, notRunning: "(no node of the cluster runs: as \(cluster.descriptionPath) says)",
                               passwordFile: cluster.passwordFile(of:), arguments, output)
        case "upgrade":
            // A cluster's sizes are init --cluster's; what upgrade changes is the users'
            // permissions (taken by running nodes at once) and the program's release the nodes
            // are written for (only while none runs: refused after the permissions, then).
            let (changed, reload) = try cluster.upgradePermissions()
            let server = try cluster.upgradeServer(natsServerPath(arguments))
            if arguments.has(json) {
                output.out(JSONOutput.encode(ClusterUpgraded(folder: cluster.path, changed: changed, reloaded: reload.reloaded, stopped: reload.stopped,
                                                             natsServer: server.after, natsServerBefore: server.before, nodesWritten: server.rewritten, keptBeforeUpgrade: server.kept)))
                return CommandLineTool.ExitCode.ok
            }
            let nodes = reload.reloaded.isEmpty ? "; the nodes take them when they start (imhost broker run \(cluster.path))"
                : "; the running nodes (\(reload.reloaded.joined(separator: ", "))) took them at once"
            output.out(TerminalText.safe(serverUpgraded(server, cluster) + "; " + (changed
                ? "wrote \(cluster.accountsPath) again: every user may write its own reports, which only operator reads\(nodes)"
                : "\(cluster.accountsPath) is up to date (a cluster's sizes are init --cluster's: write it again with --force, or change max_payload in its nodes/*.conf)")) + "\n")
        default:
            output.diagnostic("imhost broker \(verb): \(TerminalText.safe(cluster.path)) is a NATS cluster: \(verb) is not for it")
            return CommandLineTool.ExitCode.failure
        }
        return CommandLineTool.ExitCode.ok
    }

    /// What a change's reload means for a new login: taken at once by the running nodes, or when
    /// the stopped ones start.
    private static func taken(_ reload: BrokerCluster.Reload, _ cluster: BrokerCluster) -> String {
        if reload.reloaded.isEmpty { return "; no node runs: the cluster takes it when it starts (imhost broker run \(cluster.path))" }
        let later = reload.stopped.isEmpty ? "" : ", and \(reload.stopped.joined(separator: ", ")) when \(reload.stopped.count == 1 ? "it starts" : "they start")"
        return "; the running nodes (\(reload.reloaded.joined(separator: ", "))) took it at once\(later)"
    }

    /// What a removal's reload did, honestly: NATS ends a removed login's connections on reload
    /// (measured), and keeps what its sessions held (measured: a device removed and added again
    /// got, under its old client id, a message sent while it was removed).
    private static func ended(_ reload: BrokerCluster.Reload, live: String, stopped: String, kept: String) -> String {
        let sessions = " (\(kept): NATS ties a session to a client id, not to a login, and forgets it only when that id connects with a clean session)"
        if reload.reloaded.isEmpty { return "; no node runs: \(stopped) when the cluster starts" + sessions }
        return "; the running nodes (\(reload.reloaded.joined(separator: ", "))) reloaded: \(live)" + sessions
    }

    /// What `upgrade --json` says of a cluster: whether its accounts were written again, and
    /// which nodes took them at once; the nats-server it runs now (and before), the nodes
    /// whose configuration was written for it, and those whose replaced file was kept.
    struct ClusterUpgraded: Encodable {
        var folder: String
        var changed: Bool
        var reloaded: [String]
        var stopped: [String]
        var natsServer: NATSServer
        var natsServerBefore: NATSServer?
        var nodesWritten: [String]
        var keptBeforeUpgrade: [String]
    }

    /// What upgrade did to the nodes' configuration, in words (the first part of its line).
    private static func serverUpgraded(_ done: BrokerCluster.ServerUpgrade, _ cluster: BrokerCluster) -> String {
        func said(_ server: NATSServer) -> String { "nats-server \(server.version), \(server.path)" }
        let was = done.before.map { $0 == done.after ? "" : " (before: \(said($0)))" } ?? " (the folder recorded none before)"
        guard !done.rewritten.isEmpty else {
            return done.before == done.after ? "the nodes' configuration is written for \(said(done.after))"
                : "the nodes run \(said(done.after))\(was), for which their configuration was right already"
        }
        var text = "wrote \(done.rewritten.joined(separator: ", ")) again for \(said(done.after))\(was); ports, passwords and data kept"
        if !done.kept.isEmpty {
            text += " (the file\(done.kept.count == 1 ? "" : "s") of \(done.kept.joined(separator: ", ")) differed from what init writes, edited by hand or by another imhost: each kept in \(cluster.nodesFolder) as NODE.conf.before-upgrade; carry over what was changed by hand)"
        }
        return text
    }

    /// `run` on a cluster: every node (or `node` alone) in the foreground until a signal ends
    /// this command. A node that dies on its own is said in one line and the others go on (a
    /// cluster serves MQTT while a majority of its nodes runs); nothing restarts it: `run
    /// --node N` does, in another process. It ends when none of its nodes runs.
    private static func runCluster(_ cluster: BrokerCluster, node: Int?, _ output: Output) -> Int32 {
        Interruption.install(also: [SIGHUP])
        let process: ClusterProcess
        do throws(ClusterProcess.Failure) {
            process = try ClusterProcess(cluster: cluster, only: node, stopping: { Interruption.signal != nil })
        } catch {
            if Interruption.signal != nil { return CommandLineTool.ExitCode.ok }
            output.diagnostic("imhost broker run: \(TerminalText.safe(line(error)))")
            return CommandLineTool.ExitCode.failure
        }
        let nodes = process.running.map(\.node)
        let total = (try? cluster.description().nodes.count) ?? nodes.count
        let said = node == nil
            ? "imhost broker: cluster of \(nodes.count) accepting connections at \(nodes.map(\.url).joined(separator: ", ")) (logs: \(cluster.nodesFolder)/*.log); Ctrl-C stops it"
            : "imhost broker: node \(nodes.first?.name ?? "?") of \(total) accepting connections at \(nodes.first?.url ?? "?") (log: \(nodes.first.map(cluster.logPath(of:)) ?? "?")); Ctrl-C stops it"
        output.out(TerminalText.safe(said) + "\n")
        while true {
            if Interruption.signal != nil {
                process.stop()
                return CommandLineTool.ExitCode.ok
            }
            for (dead, how) in process.ended() {
                let left = (try? cluster.runningNodes().count) ?? process.running.count
                let serving = left > total / 2 ? "the cluster serves MQTT on the others" : "fewer than a majority run, so the cluster serves no MQTT until more start"
                output.diagnostic("imhost broker run: node \(dead.name) ended (\(how)); \(left) of \(total) nodes run, and \(serving); nothing restarts it: imhost broker run \(cluster.path) --node \(dead.name.dropFirst()) does (see \(cluster.logPath(of: dead)))")
            }
            if process.running.isEmpty { return CommandLineTool.ExitCode.failure }
            process.wait(milliseconds: 200)
        }
    }

    /// What a cluster user's (or device's) host.json needs: its "user" and "transport" members,
    /// the transport listing every node's URL and MQTT 3.1.1 (all NATS speaks).
    private static func clusterMembers(_ user: String, login: String? = nil, urls: [String], passwordFile: String) -> String {
        """
          "user": "\(user)",
          "transport": { "url": [\(urls.map { "\"\($0)\"" }.joined(separator: ", "))], "protocol": "3.1.1", \(login.map { "\"login\": \"\($0)\", " } ?? "")"passwordFile": "\(passwordFile)" }

        """
    }

    /// What `--json` says of a cluster: its folder, its nodes' URLs, and each user's password
    /// file and host.json members; after add-user, the nodes that reloaded.
    struct ClusterMade: Encodable {
        var folder: String
        var urls: [String]
        var users: [User]
        var reloaded: [String]?
        /// After init: the nats-server the nodes run.
        var natsServer: NATSServer?

        struct User: Encodable {
            var user: String
            var login: String?
            var passwordFile: String
            var hostJSON: HostMembers

            init(_ user: String, login: String? = nil, passwordFile: String, urls: [String]) {
                self.user = user
                self.login = login
                self.passwordFile = passwordFile
                hostJSON = HostMembers(user: user, transport: .init(url: urls, protocol: "3.1.1", login: login, passwordFile: passwordFile))
            }
        }

        struct HostMembers: Encodable {
            var user: String
            var transport: Transport
            struct Transport: Encodable { var url: [String]; var `protocol`: String; var login: String?; var passwordFile: String }
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// `imhost broker init|add-user|remove-user|run`: a private Mosquitto broker set up right for
/// imhost (see ``BrokerFolder``), in one command each.
enum BrokerCommand {
    static let command = CommandLineTool.Command(
        name: "broker",
        summary: "set up and run a private MQTT broker for chats between users",
        usage: "init DIR --users ID[,ID...] [--socket PATH | --port N] [--listen HOST:PORT --tls-cert FILE --tls-key FILE] [--bridge-to mqtt://HOST:PORT --bridge-user ID --bridge-password-file FILE] [--payload-bytes N] [--force [--while-running]] | add-user DIR ID [--bridge] | remove-user DIR ID | run DIR",
        help: """
            imhost broker init DIR --users alice,bob
                writes a Mosquitto broker's folder: DIR/mosquitto.conf (every line says why),
                the ACL (a user publishes only under its own name and reads only its own inbox;
                only operator writes the fleet configuration), the password hashes, and one
                password file per user and for operator: DIR/passwords/<user> (mode 0600), for
                host.json's "transport": { "url": ..., "passwordFile": ... }. It listens on a
                unix socket, DIR/mosquitto.sock, unless --socket PATH or --port N (loopback
                only) says otherwise. An existing DIR is written again only with --force.
            imhost broker add-user DIR ID      adds a user and prints its host.json members
                                               (a running broker reloads); with
                                               --bridge, a user another broker's bridge logs in as
                                               (it reads and writes all of imhost/)
            imhost broker remove-user DIR ID   removes one (a running broker reloads)
            imhost broker run DIR              runs the broker in the foreground (logging to
                                               DIR/mosquitto.log) and says its URL once it
                                               accepts connections; Ctrl-C, SIGTERM or
                                               SIGHUP stops it, and it never outlives
                                               this command (not even kill -9)

              --users IDS          the users, comma-separated: 1 to 64 of A-Z a-z 0-9 . _ -
              --socket PATH        listen on this unix socket (at most 107 bytes)
              --port N             listen on 127.0.0.1:N instead
              --listen HOST:PORT   also listen with TLS on HOST:PORT (e.g. 0.0.0.0:8883), for
                                   hosts beyond this machine: needs --tls-cert and --tls-key
                                   (PEM; copied into DIR/tls). A listener beyond loopback
                                   without TLS is refused.
              --bridge-to URL      bridge this broker to another (mqtt://HOST:PORT) for imhost/#:
                                   users of either chat with users of the other. Needs
                                   --bridge-user and --bridge-password-file: a user made on the
                                   other broker with add-user --bridge, and its password file.
                                   A bridge bypasses the receiving broker's ACL: bridge only
                                   brokers that trust each other.
              --payload-bytes N    the largest payload the hosts allow (default 65536): the
                                   broker's max_packet_size is sized from it
              --force              write over an existing folder's configuration (every
                                   password new); refused while its broker runs, unless
              --while-running      too: then the running broker keeps the old passwords until
                                   it is restarted
            """,
        flags: ["--force", "--bridge", "--while-running"], options: ["--users", "--socket", "--port", "--payload-bytes", "--listen", "--tls-cert", "--tls-key",
                                                 "--bridge-to", "--bridge-user", "--bridge-password-file"],
        run: { arguments, output in
            let positionals = arguments.positionals
            func usage(_ why: String) -> Int32 {
                output.diagnostic("imhost broker: \(why); see imhost broker --help")
                return CommandLineTool.ExitCode.usage
            }
            guard let verb = positionals.first else { return usage("expected init, add-user, remove-user or run") }
            let expected = ["init": 2, "add-user": 3, "remove-user": 3, "run": 2]
            guard let count = expected[verb] else { return usage("unknown subcommand '\(TerminalText.safe(verb))'; expected init, add-user, remove-user or run") }
            guard positionals.count == count else {
                return usage("\(verb) takes \(count == 2 ? "DIR" : "DIR ID"), got \(positionals.count - 1) argument\(positionals.count == 2 ? "" : "s")")
            }
            let folder = BrokerFolder(path: FileSystem.resolve(positionals[1], against: FileSystem.currentDirectory()))
            do throws(BrokerFolder.Failure) {
                switch verb {
                case "init": return try initialize(folder, arguments, output, usage: usage)
                case "add-user":
                    let user = positionals[2], bridge = arguments.flags.contains("--bridge")
                    let told = try folder.addUser(user, bridge: bridge)
                    var text = "added \(user): its password is in \(folder.passwordFile(of: user))\(told ? "; the running broker reloaded" : "")\n"
                    // A bridge user is another broker's, not a host's: it has no host.json.
                    if !bridge { text += "In \(user)'s host.json:\n" + hostMembers(user, url: try folder.url(), passwordFile: folder.passwordFile(of: user)) }
                    output.out(TerminalText.safe(text, newlines: true))
                case "remove-user":
                    let told = try folder.removeUser(positionals[2])
                    output.out(TerminalText.safe("removed \(positionals[2])\(told ? "; the running broker reloaded (a connection open now stays until it ends)" : "")") + "\n")
                default:
                    return run(folder, output)
                }
                return CommandLineTool.ExitCode.ok
            } catch {
                output.diagnostic("imhost broker \(verb): \(TerminalText.safe(error.description))")
                return CommandLineTool.ExitCode.failure
            }
        })

    private static func initialize(_ folder: BrokerFolder, _ arguments: Arguments, _ output: Output, usage: (String) -> Int32) throws(BrokerFolder.Failure) -> Int32 {
        guard let list = arguments.options["--users"] else { return usage("init needs --users alice,bob") }
        let users = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !users.isEmpty, !users.contains(where: \.isEmpty) else { return usage("--users takes ids separated by commas, e.g. --users alice,bob") }
        if arguments.options["--socket"] != nil && arguments.options["--port"] != nil { return usage("give --socket or --port, not both") }
        var listener = BrokerFolder.Listener.socket(folder.path + "/mosquitto.sock")
        if let socket = arguments.options["--socket"] { listener = .socket(FileSystem.resolve(socket, against: FileSystem.currentDirectory())) }
        if let text = arguments.options["--port"] {
            guard let port = Int(text), (1...65535).contains(port) else { return usage("--port takes a port from 1 to 65535, got '\(TerminalText.safe(text))'") }
            listener = .port(port)
        }
        var tls: BrokerFolder.TLSListener?
        let tlsFiles = (arguments.options["--tls-cert"], arguments.options["--tls-key"])
        if let listen = arguments.options["--listen"] {
            guard case let (cert?, key?) = tlsFiles else {
                return usage("--listen needs --tls-cert and --tls-key: a listener beyond loopback without TLS would carry passwords and messages in clear")
            }
            guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (1...65535).contains(port),
                  case let host = String(listen[..<colon].filter { $0 != "[" && $0 != "]" }), !host.isEmpty else {
                return usage("--listen takes HOST:PORT, e.g. 0.0.0.0:8883, got '\(TerminalText.safe(listen))'")
            }
            let here = FileSystem.currentDirectory()
            tls = BrokerFolder.TLSListener(host: host, port: port, certificate: FileSystem.resolve(cert, against: here),
                                           key: FileSystem.resolve(key, against: here))
        } else if tlsFiles.0 != nil || tlsFiles.1 != nil {
            return usage("--tls-cert and --tls-key go with --listen HOST:PORT (the TLS listener)")
        }
        var bridge: BrokerFolder.Bridge?
        if let target = arguments.options["--bridge-to"] {
            guard case .success(.tcp(let host, let port)) = HostConfig.Transport.address(target, relativeTo: "/") else {
                return usage("--bridge-to takes mqtt://HOST:PORT (the other broker's TCP listener), got '\(TerminalText.safe(target))'")
            }
            guard let user = arguments.options["--bridge-user"], let file = arguments.options["--bridge-password-file"] else {
                return usage("--bridge-to needs --bridge-user and --bridge-password-file: a user made on the other broker with imhost broker add-user DIR NAME --bridge")
            }
            if let problem = TransportID.problem(user) { return usage("--bridge-user: the id \"\(TerminalText.safe(user))\" \(problem)") }
            let passwordFile = FileSystem.resolve(file, against: FileSystem.currentDirectory())
            let password = (try? HostConfig.Transport.password(in: passwordFile)) ?? ""
            guard !password.isEmpty else { return usage("--bridge-password-file: cannot read a password from \(TerminalText.safe(passwordFile))") }
            bridge = BrokerFolder.Bridge(host: host, port: port, user: user, password: password)
        }
        var payload = HostConfig.Limits().payloadBytes
        if let text = arguments.options["--payload-bytes"] {
            guard let bytes = Int(text), (1024...(64 << 20)).contains(bytes) else {
                return usage("--payload-bytes takes a number of bytes from 1024 to \(64 << 20), got '\(TerminalText.safe(text))'")
            }
            payload = bytes
        }
        let running = folder.runningPID()
        let made = try BrokerFolder.initialize(at: folder.path, users: users, listener: listener, payloadLimit: payload,
                                               tls: tls, bridge: bridge, force: arguments.flags.contains("--force"),
                                               whileRunning: arguments.flags.contains("--while-running"))
        let url = try made.url()
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
        if let tls {
            let name = tls.host == "0.0.0.0" || tls.host == "::" ? "BROKER-NAME" : tls.host
            text += """

                or, from another machine (BROKER-NAME: a name in the broker's certificate; the CA
                that signed it in caFile; the password file copied there, mode 0600):

                """
            text += users.map { #"  "transport": { "url": "mqtts://\#(name):\#(tls.port)", "caFile": "ca.pem", "passwordFile": "passwords/\#($0)" }"# + "\n" }.joined()
        }
        output.out(TerminalText.safe(text, newlines: true))
        return CommandLineTool.ExitCode.ok
    }

    /// What `user`'s host.json needs to reach this broker: its "user" and "transport" members.
    private static func hostMembers(_ user: String, url: String, passwordFile: String) -> String {
        """
          "user": "\(user)",
          "transport": { "url": "\(url)", "passwordFile": "\(passwordFile)" }

        """
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
            output.diagnostic("imhost broker run: \(TerminalText.safe(error.description))")
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

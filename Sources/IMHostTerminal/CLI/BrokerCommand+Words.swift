import IMHost
import IMHostBroker
import IMHostRuntime
import IMKit

/// What `imhost broker` (and `imhost play`'s private broker) says when a broker's folder, its
/// control or its process fails: one line each, what was refused, why, and what to do. The
/// lines hold paths, ids and what the broker or the system said as they came: whoever prints
/// one makes it safe for the terminal (``TerminalText``), the whole line at once.
extension BrokerCommand {
    /// The line a failed subcommand ends with.
    static func diagnostic(_ failure: BrokerFolder.Failure, verb: String) -> String {
        "imhost broker \(verb): \(TerminalText.safe(line(failure)))"
    }

    /// `failure` in one line, not yet safe for a terminal.
    static func line(_ failure: BrokerFolder.Failure) -> String {
        switch failure.code {
        case .cannotMake(let folder, let error): "cannot make \(folder): \(error.call): \(error)"
        case .cannotWrite(let file, let error): "cannot write \(file): \(error.call): \(error)"
        case .cannotRead(let file, let error): "cannot read \(file): \(error)"
        case .lockNotOpened(let path, let why): "cannot open \(path): \(why)"
        case .lockNotTaken(let path, let why): "cannot lock \(path): \(why)"
        case .tlsNotCopied(let folder, let error): "cannot copy the TLS certificate and key into \(folder)/tls: \(error)"
        case .userRefused(let id, let problem): "the user id \"\(id)\" \(problem)"
        case .deviceRefused(let name, let problem): "the device name \"\(name)\" \(problem)"
        case .dotInID(let id, let device):
            "\(device ? "the device name" : "the user id") \"\(id)\" holds a '.', which a NATS cluster cannot carry in a topic level (it drops the connection): choose \(device ? "a name" : "an id") without '.'\(device ? "" : ", or keep this user on a mosquitto broker")"
        case .userTwice: "a user is named twice in --users"
        case .unquotablePath(let path):
            "\(path) holds a space or a control character, which mosquitto.conf cannot quote: choose a folder (and socket) without them"
        case .unquotableClusterPath(let path):
            "\(path) holds a quote, a backslash, a $ or a control character, which a NATS configuration cannot quote: choose a folder without them"
        case .pluginMissing:
            "mosquitto's dynamic-security plugin (mosquitto_dynamic_security.so) is not installed: install Debian's mosquitto (apt-get install mosquitto), which ships it"
        case .retainRuleMissing(let beside):
            "imhost's retain rule (\(BrokerFolder.retainRuleLibrary), the mosquitto plugin built with imhost) is neither beside imhost in \(beside) nor in /usr/local/lib/imhost or /usr/lib/imhost: build imhost with make (swift build makes it), or copy it to one of them, and try again"
        case .retainRuleUnreadable(let build, let error): "cannot read \(build), imhost's retain rule: \(error)"
        case .exists(let config):
            "\(config) exists: this folder has a broker already; add users with imhost broker add-user, or pass --force to write it again"
        case .runningWhileWriting(let folder, let pid):
            "the broker of \(folder) is running (pid \(pid)): writing it again gives every user and operator a new password, and every host connected now is refused at its next connect; stop it first, add users with imhost broker add-user, or add --while-running to write it anyway"
        case .socketTooLong(let socket):
            "the socket path \(socket) is \(socket.utf8.count) bytes; a unix socket path holds at most 107: use a shorter folder, or --port"
        case .passwdFailed(let output): "mosquitto_passwd -U failed: \(output); is mosquitto installed?"
        case .oldHash(let file, let login):
            "\(file) holds \(login)'s password hashed in a form older than mosquitto 2.0's ($7$, PBKDF2-SHA512), which the dynamic-security plugin cannot check: give \(login) a new password (imhost broker remove-user, then add-user) and try again"
        case .configUnreadable(let config, let error, let folder):
            "cannot read \(config) (\(error)); make the folder with imhost broker init \(folder) --users ..."
        case .noListener(let config): "\(config) names no listener; write it again with imhost broker init --force"
        case .notABrokerFolder(let folder): "\(folder) is not a broker folder (no mosquitto.conf); make it with imhost broker init \(folder) --users ..."
        case .securityUnreadable(let file, let error, let folder):
            "cannot read \(file) (\(error)): a folder made before devices is upgraded by imhost broker upgrade \(folder)"
        case .securityNotJSON(let file):
            "\(file) is not the dynamic-security plugin's JSON: restore it from a backup, or write the folder again with imhost broker init --force"
        case .madeBeforeDevices(let folder):
            "\(folder) was made before devices (it has no dynamic-security.json): run imhost broker upgrade \(folder), restart its broker, and try again"
        case .adminPasswordMissing(let file):
            "cannot read a password in \(file), by which imhost broker changes the running broker: restore it from a backup, or write the folder again with imhost broker init --force"
        case .notRunning(let folder, let command):
            "the broker of \(folder) is not running, and \(command) changes the running broker: start it (imhost broker run \(folder)) and try again"
        case .userExists(let user, let place): "user \(user) exists in \(place); remove-user first to give it a new password"
        case .operatorStays: "operator publishes the fleet configuration; it cannot be removed"
        case .noUser(let user, let place): "there is no user \(user) in \(place)"
        case .noUserForDevice(let user, let folder): "there is no user \(user) in \(folder): add it first (imhost broker add-user \(folder) \(user))"
        case .deviceExists(let user, let device, let file):
            "\(user) has a device \(device) already (\(file)); remove-device first to give it a new password"
        case .noDevice(let user, let device, let folder):
            "\(user) has no device \(device) in \(folder) (imhost broker devices \(folder) \(user) lists them); \(user)'s first device logs in as \(user), and goes with remove-user"
        case .noPerListenerSettings(let config):
            "\(config) has no per_listener_settings true as imhost broker init wrote it before devices: write the folder again with imhost broker init --force"
        case .authenticationUnended(let config):
            "\(config) has a listener's authentication that ends without use_username_as_clientid true: write the folder again with imhost broker init --force"
        case .strayLine(let config, let line): "\(config) still says \"\(line)\" where imhost broker init would not: remove it by hand and try again"
        case .noAuthenticationParagraph(let config):
            "\(config) has no authentication paragraph as imhost broker init writes it (\(BrokerFolder.authenticationStart)): write the folder again with imhost broker init --force"
        case .notWrittenByInit(let config, let packet):
            "\(config) was not written by imhost broker init, so imhost does not rewrite it: set max_packet_size \(packet) in it by hand"
        case .noSizingParagraph(let config, let packet):
            "\(config) has no sizing paragraph as imhost broker init writes it (\(BrokerFolder.sizingStart) ... max_queued_bytes): set max_packet_size \(packet) in it by hand"
        case .controlRefused(let address, let login, let reason, let endingSession):
            "the broker at \(address) refused \(login) (\(reason)): "
                + (endingSession ? "its session could not be ended" : "is it running with this folder's dynamic-security.json? (imhost broker upgrade makes an older folder's)")
        case .control(.notConnected(.unreachable(let address, let why, _))): "cannot reach the broker at \(address) (\(why))"
        case .control(.notConnected(.clientNotMade(let why))): "cannot make a connection: \(why)"
        case .control(let failure): ConnectionWords.failure(failure, login: DynamicSecurity.adminLogin)
        case .controlEnded(let address):
            "the broker at \(address) ended this command's connection (it stopped, or another client logged in as \(DynamicSecurity.adminLogin)): run it again"
        case .commandsNotEncoded(let why): "cannot encode the commands: \(why)"
        case .answerUnreadable(let topic, let bytes): "the broker's answer on \(topic) is not what the plugin writes: \(bytes)"
        case .commandRefused(let command, let error): "the broker refused \(command): \(error)"
        case .tooFewNodes(2):
            "a cluster of 2 nodes stops serving MQTT when either dies (JetStream needs a majority of its nodes), so it is less available than one broker: give --cluster 3 or more"
        case .tooFewNodes(let count):
            "a cluster of \(count) node\(count == 1 ? "" : "s") is no cluster: give --cluster 3 or more, or leave --cluster out for one mosquitto broker"
        case .tooManyNodes(let count):
            "a cluster of \(count) nodes on one machine is more than imhost broker runs (at most \(BrokerCluster.maximumNodes)): give --cluster \(BrokerCluster.maximumNodes) or fewer"
        case .holdsMosquitto(let folder): "\(folder) holds a mosquitto broker (mosquitto.conf): make the cluster in another folder"
        case .clusterExists(let file):
            "\(file) exists: this folder has a cluster already; add users with imhost broker add-user, or pass --force to write it again"
        case .nodeRunningWhileWriting(let node, let folder, let pid):
            "node \(node) of \(folder) is running (pid \(pid)): writing the cluster again gives every user new passwords and ports; stop imhost broker run \(folder) first, or add users with imhost broker add-user"
        case .descriptionUnreadable(let file, let error, let folder):
            "cannot read \(file) (\(error)): \(folder) is no cluster folder; make one with imhost broker init --cluster 3 \(folder) --users ..."
        case .descriptionInvalid(let file):
            "\(file) is not what imhost broker init --cluster writes: restore it from a backup, or write the folder again with imhost broker init --cluster N --force"
        case .descriptionNotEncoded(let file): "cannot encode \(file)"
        case .noSuchNode(let folder, let count, let number): "\(folder) has nodes 1 to \(count), not \(number)"
        case .passwordMissing(let file): "cannot read a password in \(file): restore it from a backup, or remove the login and add it again"
        case .reloadRefused(let node, let said, let log):
            "node \(node) did not take the new configuration (\(said)): it runs with the old one; see \(log)"
        case .reloadUnsaid(let node, let log): "node \(node) did not say it reloaded its configuration within 5 s; see \(log)"
        case .natsServerNotFound:
            "cannot find nats-server (looked on the PATH and in /usr/sbin and /usr/bin), which runs a cluster's nodes: install it (apt-get install nats-server), or give --nats-server PATH"
        case .natsServerMissing(let path):
            "--nats-server \(path): no such file: give the path of a nats-server program (\(NATSOption.oldestSupported) or later), or leave --nats-server out for the first nats-server on the PATH"
        case .natsServerNotExecutable(let path):
            "--nats-server \(path): not a file this user may run, so it cannot run the nodes: give a nats-server program, or make it executable (chmod +x)"
        case .notNATSServer(let path, let said, let status):
            "\(path) does not say it is a nats-server: asked its version (--version), it "
                + (status == 0 ? "said" : status == -1 ? "did not end within 10 s, having said" : status == -2 ? "could not be started:" : "exited \(status), saying")
                + " \(said.isEmpty ? "nothing" : "\"\(said)\""), not \"nats-server: vX.Y.Z\": give --nats-server the path of a nats-server program"
        case .natsServerTooOld(let path, let version, let needed):
            "\(path) is nats-server \(version), older than \(needed), the first release that takes the MQTT settings a cluster's nodes are written with (\(NATSOption.allCases.filter(\.required).map(\.name).joined(separator: ", "))): install nats-server \(needed) or later and give it with --nats-server PATH"
        case .recordedServerGone(let path, let version, let folder):
            "the nodes of \(folder) run \(path) (nats-server \(version), as its cluster.json records), which is gone (or may no longer be run): put it back, or write the nodes' configuration for the nats-server there is now with imhost broker upgrade \(folder) [--nats-server PATH]"
        case .recordedServerChanged(let path, let recorded, let now, let said, let folder):
            (now.map { "\(path) is nats-server \($0) now" } ?? "\(path) no longer says it is a nats-server (its --version said \(said.isEmpty ? "nothing" : "\"\(said)\""))")
                + ", but the nodes of \(folder) were written for nats-server \(recorded) (its cluster.json): write them for what it is now with imhost broker upgrade \(folder) (ports, passwords and data kept), or write the folder again with imhost broker init --cluster N \(folder) --force"
        case .nodeRunningWhileUpgrading(let node, let folder, let pid, let version):
            "node \(node) of \(folder) runs (process \(pid)): upgrade writes the nodes' configuration for nats-server \(version) only while none runs (a running node reads it again at its next reload); stop imhost broker run \(folder), run upgrade again, then start it"
        case .routePasswordUnread(let file):
            "cannot find the routes' password in \(file) (authorization { user: \"route\", password: \"...\" } as init writes it): put that line back as the other nodes' files have it, or write the folder again with imhost broker init --cluster N --force"
        }
    }

    /// What `imhost broker run` (and a scenario's private broker) says when its broker did not
    /// start, in one line not yet safe for a terminal.
    static func line(_ failure: BrokerProcess.Failure) -> String {
        switch failure.code {
        case .folder(let failure): line(failure)
        case .mosquittoMissing: "cannot find mosquitto (looked on the PATH and in /usr/sbin); install the broker: apt-get install mosquitto"
        case .natsMissing: "cannot find nats-server (looked on the PATH and in /usr/sbin and /usr/bin): install it (apt-get install nats-server)"
        case .cannotStart(let program, let node, let error): "cannot start \(program)\(node.map { " for node \($0)" } ?? ""): \(error.call): \(error)"
        case .endedEarly(let how, let said, let log):
            "mosquitto ended (\(how)) before it accepted connections: \(said ?? "it said nothing"); see \(log)"
        case .nodeEndedEarly(let node, let how, let said, let log):
            "node \(node) ended (\(how)) before it served MQTT: \(said ?? "it said nothing"); see \(log)"
        case .stopped(let cluster): cluster ? "stopped before the cluster served MQTT" : "stopped before it accepted connections"
        case .notAccepting(let seconds, let log): "mosquitto did not accept connections within \(seconds) s; see \(log)"
        case .operatorPasswordMissing(let file):
            "cannot read a password in \(file), by which imhost broker checks that each node serves MQTT: restore it from a backup, or write the folder again with imhost broker init --cluster N --force"
        case .nodeRuns(let node, let folder, let pid, let alone):
            "node \(node) of \(folder) runs already (nats-server, process \(pid)): stop it first (kill \(pid))\(alone ? "" : ", or start the others alone with imhost broker run \(folder) --node N")"
        case .clusterNotServing(let waiting, let seconds, let atMost, let alone, let logs):
            "the cluster did not serve MQTT \(atMost ? "within \(seconds * 10) s" : "(for \(seconds) s nothing changed)") on "
                + waiting.map { "\($0.node) (\($0.connect.map { "its MQTT connect: " + $0 } ?? "its log does not say it is ready and knows JetStream's leader"))" }.joined(separator: ", ")
                + (alone ? "; a node serves MQTT only while a majority of the cluster's nodes runs" : "") + "; see \(logs)"
        }
    }
}

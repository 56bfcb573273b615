import IMHost

extension BrokerFolder {
    /// Why a broker's folder (a mosquitto one, or a NATS cluster's) could not be made, read or
    /// changed, or its running broker changed: a code, with what a front end needs to say it in
    /// one line (the words are the front end's: `imhost broker` says them).
    public struct Failure: Error, Sendable, Equatable {
        public var code: Code
        public init(_ code: Code) { self.code = code }

        public enum Code: Sendable, Equatable {
            // MARK: Files

            /// A folder could not be made: the system's call and error.
            case cannotMake(folder: String, FileSystem.Failure)
            /// A file could not be written.
            case cannotWrite(file: String, FileSystem.Failure)
            /// A file the command reads could not be read.
            case cannotRead(file: String, FileSystem.Failure)
            /// The folder's lock (`DIR/control.lock`) could not be opened, or taken: the system's words.
            case lockNotOpened(path: String, why: String)
            case lockNotTaken(path: String, why: String)
            /// The TLS listener's certificate and key could not be copied into the folder.
            case tlsNotCopied(folder: String, FileSystem.Failure)

            // MARK: Making a folder

            /// An id that cannot be a user's: why, as ``TransportID/problem(_:allowingOperator:)`` says.
            case userRefused(id: String, problem: String)
            /// A name that cannot be a device's: why, as ``DynamicSecurity/deviceProblem(_:)`` says.
            case deviceRefused(name: String, problem: String)
            /// An id holding a `.`, which a cluster cannot carry in a topic level (NATS turns levels
            /// into subject tokens, ``Topic/problem(level:natsToken:)``).
            case dotInID(id: String, device: Bool)
            /// `--users` names a user twice.
            case userTwice
            /// A path mosquitto.conf cannot quote (a space or a control character).
            case unquotablePath(String)
            /// A path a NATS configuration cannot quote (a quote, a backslash, a `$`, a control character).
            case unquotableClusterPath(String)
            /// mosquitto's dynamic-security plugin is not installed.
            case pluginMissing
            /// imhost's retain rule is neither beside imhost (in `beside`) nor where it is installed.
            case retainRuleMissing(beside: String)
            /// The retain rule imhost built could not be read.
            case retainRuleUnreadable(build: String, FileSystem.Failure)
            /// The folder has a broker already (its configuration).
            case exists(config: String)
            /// The folder's broker runs, and writing it again would give everyone new passwords.
            case runningWhileWriting(folder: String, pid: Int32)
            /// The socket's path is longer than a unix socket takes.
            case socketTooLong(String)
            /// mosquitto_passwd failed: what it said.
            case passwdFailed(output: String)
            /// A password hashed in a form older than mosquitto 2.0's, in `file`, of `login`.
            case oldHash(file: String, login: String)

            // MARK: Reading a folder

            /// The configuration could not be read: the folder is none of imhost's yet.
            case configUnreadable(config: String, FileSystem.Failure, folder: String)
            /// The configuration names no listener.
            case noListener(config: String)
            /// The folder has no mosquitto.conf.
            case notABrokerFolder(String)
            /// The dynamic-security plugin's file could not be read.
            case securityUnreadable(file: String, FileSystem.Failure, folder: String)
            /// The dynamic-security plugin's file is not its JSON.
            case securityNotJSON(file: String)
            /// The folder was made before devices: it has no dynamic-security.json.
            case madeBeforeDevices(folder: String)
            /// The password by which imhost broker changes the running broker is missing.
            case adminPasswordMissing(file: String)
            /// The folder's broker does not run, and `command` changes the running broker.
            case notRunning(folder: String, command: String)

            // MARK: Users and devices

            case userExists(user: String, in: String)
            /// operator publishes the fleet configuration: it stays.
            case operatorStays
            case noUser(user: String, in: String)
            /// A device of a user that is not there: the user is added first.
            case noUserForDevice(user: String, folder: String)
            case deviceExists(user: String, device: String, passwordFile: String)
            case noDevice(user: String, device: String, folder: String)

            // MARK: Upgrading a folder

            /// The configuration lacks what init wrote before devices (`per_listener_settings true`).
            case noPerListenerSettings(config: String)
            /// A listener's authentication does not end as init wrote it.
            case authenticationUnended(config: String)
            /// A line init would not write: removed by hand first.
            case strayLine(config: String, line: String)
            /// The configuration has no authentication paragraph as init writes it.
            case noAuthenticationParagraph(config: String)
            /// The configuration was not written by imhost broker init: `packet` is what to set by hand.
            case notWrittenByInit(config: String, packet: Int)
            /// The configuration has no sizing paragraph: `packet` is what to set by hand.
            case noSizingParagraph(config: String, packet: Int)

            // MARK: The running broker's control

            /// The broker refused the login (its words); `endingSession`: the login was a device's
            /// whose session was being ended, not imhost broker's own.
            case controlRefused(address: HostConfig.Transport.Address, login: String, reason: String, endingSession: Bool)
            /// The control's connection did not bring its answer.
            case control(ConnectionFailure)
            /// The broker at `address` ended the control's connection: it stopped, or another
            /// client logged in as imhost broker's own login.
            case controlEnded(address: HostConfig.Transport.Address)
            /// The commands could not be encoded (the encoder's words).
            case commandsNotEncoded(String)
            /// The answer on `topic` is not what the plugin writes: its first bytes.
            case answerUnreadable(topic: String, bytes: String)
            /// The plugin refused a command: its name and its words.
            case commandRefused(command: String, error: String)

            // MARK: A NATS cluster

            /// Fewer nodes than a cluster needs (3).
            case tooFewNodes(Int)
            /// More nodes than one folder runs on one machine.
            case tooManyNodes(Int)
            /// The folder holds a mosquitto broker already.
            case holdsMosquitto(folder: String)
            /// The folder has a cluster already (its cluster.json).
            case clusterExists(description: String)
            /// A node of the cluster runs, and writing it again would give everyone new passwords and ports.
            case nodeRunningWhileWriting(node: String, folder: String, pid: Int32)
            /// cluster.json could not be read: the folder is no cluster's.
            case descriptionUnreadable(file: String, FileSystem.Failure, folder: String)
            /// cluster.json is not what init writes.
            case descriptionInvalid(file: String)
            case descriptionNotEncoded(file: String)
            /// There is no node `number`: the cluster has nodes 1 to `count`.
            case noSuchNode(folder: String, count: Int, number: Int)
            /// A login's password file holds no password.
            case passwordMissing(file: String)
            /// A node did not take its new configuration (what its log said).
            case reloadRefused(node: String, said: String, log: String)
            /// A node did not say within 5 s that it reloaded.
            case reloadUnsaid(node: String, log: String)

            // MARK: A NATS cluster's program

            /// No nats-server on the PATH, nor in /usr/sbin or /usr/bin.
            case natsServerNotFound
            /// `--nats-server PATH` names no file.
            case natsServerMissing(path: String)
            /// `--nats-server PATH` names a file that is not an executable one (a folder, no x bit).
            case natsServerNotExecutable(path: String)
            /// The program's `--version` did not say `nats-server: vX.Y.Z`: what it said (its first
            /// 200 characters, trimmed) and its exit status (-1: it did not end within 10 s; -2: it
            /// could not be started, `said` the system's words).
            case notNATSServer(path: String, said: String, status: Int32)
            /// The program is a release older than the oldest whose MQTT settings the nodes'
            /// configuration holds (``NATSOption/oldestSupported``).
            case natsServerTooOld(path: String, version: String, needed: String)
            /// The program cluster.json records (and the release the nodes were written for) is gone,
            /// or may no longer be run.
            case recordedServerGone(path: String, version: String, folder: String)
            /// The program cluster.json records says another release now (`now`), or none (`now`
            /// `nil`: what it said instead).
            case recordedServerChanged(path: String, recorded: String, now: String?, said: String, folder: String)
            /// A node runs while upgrade would write its configuration again for `version`.
            case nodeRunningWhileUpgrading(node: String, folder: String, pid: Int32, version: String)
            /// The routes' password is in no node's configuration as init writes it.
            case routePasswordUnread(file: String)
        }
    }
}

import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// A Mosquitto broker run from a ``BrokerFolder``, as a child of this process: started, waited
/// for until it accepts connections, and stopped. `imhost broker run` runs one in the foreground;
/// `imhost play` runs a private one for a scenario's users.
public final class BrokerProcess {
    public let folder: BrokerFolder
    public let listener: BrokerFolder.Listener
    private let child: ChildProcess

    /// Why the broker (or a cluster's nodes) did not start: a code, with what a front end needs
    /// to say it in one line.
    public struct Failure: Error, Sendable, Equatable {
        public var code: Code
        public init(_ code: Code) { self.code = code }

        public enum Code: Sendable, Equatable {
            /// Its folder could not be read.
            case folder(BrokerFolder.Failure)
            /// mosquitto is not installed.
            case mosquittoMissing
            /// nats-server is not installed.
            case natsMissing
            /// The program could not be started (for a cluster's `node`).
            case cannotStart(program: String, node: String?, FileSystem.Failure)
            /// It ended before it accepted connections: how, its last words, its log.
            case endedEarly(how: String, said: String?, log: String)
            /// A node ended before it served MQTT: how, its last words, its log.
            case nodeEndedEarly(node: String, how: String, said: String?, log: String)
            /// A signal stopped it before it accepted connections (`cluster`: before a cluster's
            /// nodes served MQTT).
            case stopped(cluster: Bool)
            /// It did not accept connections within `seconds`.
            case notAccepting(seconds: Int, log: String)
            /// The password by which imhost broker checks that each node serves MQTT is missing.
            case operatorPasswordMissing(file: String)
            /// A node of the cluster runs already; `alone`: one node was asked for.
            case nodeRuns(node: String, folder: String, pid: Int32, alone: Bool)
            /// The cluster's nodes that did not serve MQTT, and why each; `seconds`: the quiet
            /// spell it waited (ten of them at most: `atMost`); `alone`: one node was started.
            case clusterNotServing(waiting: [Waiting], seconds: Int, atMost: Bool, alone: Bool, logs: String)
        }

        /// A node waited for, and where it was: its log not ready, or its MQTT connect's answer.
        public struct Waiting: Sendable, Equatable {
            public var node: String
            /// `nil`: its log does not say it is ready and knows JetStream's leader.
            public var connect: String?
        }
    }

    /// Starts `mosquitto -c DIR/mosquitto.conf` and waits up to `seconds` until it accepts
    /// connections on its listener; when `stopping` says so meanwhile (a signal came), stops it
    /// and throws. The broker never outlives this process: it gets SIGTERM (and saves its
    /// persistence) when this process dies, however it dies. Start it from the thread that
    /// lives as long as it should (the main thread): the kernel ties that signal to the thread.
    public init(folder: BrokerFolder, seconds: Double = 10, stopping: () -> Bool = { false }) throws(Failure) {
        self.folder = folder
        do throws(BrokerFolder.Failure) {
            listener = try folder.listener()
        } catch {
            throw Failure(.folder(error))
        }
        let program = BrokerFolder.tool("mosquitto")
        guard access(program, X_OK) == 0 else {
            throw Failure(.mosquittoMissing)
        }
        // A folder made by an older imhost: its users get this version's rules (reports) before
        // the broker reads them (a host under MQTT 3.1.1 would not hear a refusal).
        _ = try? folder.upgradeRoles()
        // A socket left by a broker that was killed would refuse the new one's listener.
        if case .socket(let socket) = listener {
            var info = stat()
            if lstat(socket, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { unlink(socket) }
        }
        do throws(FileSystem.Failure) {
            child = try ChildProcess(executable: program, arguments: ["-c", folder.configPath], stdin: .null, stdout: .null, stderr: .pipe,
                                     boundToParent: true)
        } catch {
            throw Failure(.cannotStart(program: program, node: nil, error))
        }
        let deadline = Clock.monotonic() + UInt64(seconds * 1e9)
        while !Self.accepts(listener) {
            if let ended = child.poll() {
                throw Failure(.endedEarly(how: ended.description, said: Self.lastWords(of: child), log: folder.logPath))
            }
            guard !stopping() else {
                stop()
                throw Failure(.stopped(cluster: false))
            }
            guard Clock.monotonic() < deadline else {
                child.signal(SIGKILL)
                _ = child.wait()
                throw Failure(.notAccepting(seconds: Int(seconds), log: folder.logPath))
            }
            _ = child.wait(milliseconds: 10)
        }
    }

    deinit { stop() }

    /// The broker's process id.
    public var pid: Int32 { child.pid }

    /// Whether it has ended, and how.
    public func poll() -> String? { child.poll().map(\.description) }

    /// Waits for it to end; its exit status.
    public func wait() -> Int32 {
        switch child.wait() {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        case .lostPipe: 1
        }
    }

    /// Stops it (SIGTERM: it saves its persistence and exits), killing it after 5 s.
    public func stop() {
        guard child.poll() == nil else { return }
        child.signal(SIGTERM)
        if child.wait(milliseconds: 5000) == nil {
            child.signal(SIGKILL)
            _ = child.wait()
        }
    }

    /// Kills it outright, as a crash or the OOM killer would: what it had not saved is lost.
    public func kill() {
        child.signal(SIGKILL)
        _ = child.wait()
    }

    /// The last line `child` said on standard error (a pipe), as it said it (a front end makes
    /// it safe where it draws it); `nil` when it said nothing.
    static func lastWords(of child: ChildProcess) -> String? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while child.errors >= 0, !waitReadable([child.errors], milliseconds: 0).isEmpty {
            let count = read(child.errors, &buffer, buffer.count)
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").last.map(String.init)
    }

    /// Whether something accepts connections on `listener` now.
    public static func accepts(_ listener: BrokerFolder.Listener) -> Bool {
        switch listener {
        case .socket(let path):
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in bytes.enumerated() { raw[index] = byte }
            }
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
            }
        case .port(let port):
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
        }
    }
}

import IMHost
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The nats-server program a cluster's nodes run, and the release it said it was when the
/// nodes' configuration was written for it: recorded in cluster.json by `imhost broker init
/// --cluster` (and `upgrade`), checked again by `imhost broker run` before it starts a node.
public struct NATSServer: Codable, Sendable, Equatable {
    /// The program, absolute (a link is kept as given: what the operator named).
    public var path: String
    /// Its release, as `--version` said it (`2.9.10`).
    public var version: String

    public typealias Failure = BrokerFolder.Failure

    public init(path: String, version: String) {
        self.path = path
        self.version = version
    }

    /// ``version`` as a release, or the oldest a cluster runs when it cannot be read.
    public var release: NATSVersion { NATSVersion(version) ?? NATSOption.oldestSupported }

    /// The name the kernel gives the running program (`/proc/PID/comm`: its file's name, cut
    /// to 15 bytes), by which a pid file's process is told to be a node.
    var commandName: String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return String(decoding: name.utf8.prefix(15), as: UTF8.self)
    }

    /// The program a cluster runs: `given` (`--nats-server PATH`, absolute) when there is one,
    /// else the first `nats-server` on the PATH (then in /usr/sbin and /usr/bin); asked its
    /// version, which must say it is a nats-server no older than
    /// ``NATSOption/oldestSupported``. Each refusal is one code.
    public static func find(_ given: String?) throws(Failure) -> NATSServer {
        let path: String
        if let given {
            guard access(given, F_OK) == 0 else { throw Failure(.natsServerMissing(path: given)) }
            var info = stat()
            guard stat(given, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(given, X_OK) == 0 else {
                throw Failure(.natsServerNotExecutable(path: given))
            }
            path = given
        } else {
            let found = BrokerFolder.tool("nats-server")
            guard found.contains("/"), access(found, X_OK) == 0 else { throw Failure(.natsServerNotFound) }
            path = FileSystem.resolve(found, against: FileSystem.currentDirectory())
        }
        let server = try identify(path)
        guard server.release >= NATSOption.oldestSupported else {
            throw Failure(.natsServerTooOld(path: path, version: server.version, needed: NATSOption.oldestSupported.description))
        }
        return server
    }

    /// Runs `path --version` (at most 10 s) and reads `nats-server: vX.Y.Z` from what it says.
    public static func identify(_ path: String) throws(Failure) -> NATSServer {
        let (status, said) = ask(path, ["--version"], seconds: 10)
        let line = said.trimmingCharacters(in: .whitespacesAndNewlines)
        let prefix = "nats-server: v"
        guard status == 0, line.hasPrefix(prefix), !line.contains("\n"), let version = NATSVersion(line.dropFirst(prefix.count)) else {
            throw Failure(.notNATSServer(path: path, said: String(line.prefix(200)), status: status))
        }
        return NATSServer(path: path, version: version.description)
    }

    /// Whether the recorded program (of the cluster in `folder`) is still there and still says
    /// the recorded version: the program to run, or why not.
    public func check(folder: String) throws(Failure) -> String {
        guard access(path, X_OK) == 0 else { throw Failure(.recordedServerGone(path: path, version: version, folder: folder)) }
        let now: NATSServer
        do throws(Failure) { now = try Self.identify(path) } catch {
            let said = if case .notNATSServer(_, let said, _) = error.code { said } else { "" }
            throw Failure(.recordedServerChanged(path: path, recorded: version, now: nil, said: said, folder: folder))
        }
        guard now.version == version else {
            throw Failure(.recordedServerChanged(path: path, recorded: version, now: now.version, said: "", folder: folder))
        }
        return path
    }

    /// Runs `program` with `arguments`, its input empty, and returns its exit status (-1 when
    /// it did not end within `seconds`, -2 when it could not be started, with the system's
    /// words) and what it printed on both of its outputs (at most 4 KiB).
    static func ask(_ program: String, _ arguments: [String], seconds: Int) -> (status: Int32, said: String) {
        let child: ChildProcess
        do throws(FileSystem.Failure) {
            child = try ChildProcess(executable: program, arguments: arguments, stdin: .null, stdout: .pipe, stderr: .pipe)
        } catch {
            return (-2, "\(error.call): \(error)")
        }
        var said: [UInt8] = []
        var open = [child.output, child.errors].filter { $0 >= 0 }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Clock.monotonic() + UInt64(seconds) * 1_000_000_000
        while !open.isEmpty, Clock.monotonic() < deadline {
            let left = Int32(max(1, (deadline - Clock.monotonic()) / 1_000_000))
            for fd in waitReadable(open, milliseconds: left) {
                let count = read(fd, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { open.removeAll { $0 == fd } } else if said.count < 4096 { said += buffer[0..<min(count, 4096 - said.count)] }
            }
        }
        let now = Clock.monotonic()
        guard let ended = child.wait(milliseconds: now < deadline ? Int64((deadline - now) / 1_000_000) : 0) else {
            child.signal(SIGKILL)
            _ = child.wait()
            return (-1, String(decoding: said, as: UTF8.self))
        }
        let status: Int32 = if case .exited(let code) = ended { code } else { -1 }
        return (status, String(decoding: said, as: UTF8.self))
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// How a send wakes the courier at once, from any process of the user: a unix datagram socket,
/// `wake.sock` in the user's folder (made 0700 by the store, so only the user reaches it),
/// bound by the process holding the user's ``ConnectionLock``. A process that queues a message
/// sends it one byte (``poke(folder:)``, errors ignored: no courier, no matter); the courier waits
/// on it beside the connection's descriptors, so it publishes now rather than at its next
/// second. A folder whose path is too long for a socket address (108 bytes) has no wake socket:
/// its sends go within a second, as the courier then looks at the outbox every second (with the
/// socket it looks when woken, and at least once a minute).
package final class WakeSocket {
    static let fileName = "wake.sock"

    let fd: Int32
    private let path: String

    /// Binds `<folder>/wake.sock`, replacing one a process that held the lock left behind.
    /// `nil` when it cannot be made.
    init?(folder: String) {
        let path = folder + "/" + Self.fileName
        guard var address = Self.address(path) else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return nil }
        // Only the lock's holder binds it: what is there is a socket a holder before left.
        unlink(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o600) == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
        self.path = path
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Reads every datagram sent since the last call: whether one was a wake, and the peers
    /// another process of the user says the user is typing to (``typing(folder:peer:)``).
    func drain() -> (woken: Bool, typing: [String]) {
        var buffer = [UInt8](repeating: 0, count: 128), woken = false, typing: [String] = []
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count >= 0 else { break }
            if count > 1, buffer[0] == UInt8(ascii: "t"), let peer = String(validating: buffer[1..<count], as: UTF8.self),
               TransportID.problem(peer) == nil {
                typing.append(peer)
            } else {
                woken = true
            }
        }
        return (woken, typing)
    }

    /// Tells the process holding the user's connection that the user is typing to `peer`: it
    /// signals the peer (never stored: a typing signal is not worth a write).
    package static func typing(folder: String, peer: String) {
        send(Array(("t" + peer).utf8), folder: folder)
    }

    /// Wakes the courier of the store's user, if one runs (a store in memory has none).
    package static func poke(_ store: MessageStore) {
        if let folder = store.folder { poke(folder: folder) }
    }

    /// Wakes the courier of the user whose folder this is, if one runs.
    static func poke(folder: String) { send([1], folder: folder) }

    /// Sends `bytes` as one datagram to the socket in `folder`, if one is bound (errors ignored).
    private static func send(_ bytes: [UInt8], folder: String) {
        guard var address = address(folder + "/" + fileName) else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                bytes.withUnsafeBytes {
                    sendto(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), target, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
    }

    /// `path` as a unix socket address; `nil` when it does not fit.
    private static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let fits = withUnsafeMutableBytes(of: &address.sun_path) { room -> Bool in
            // Room for the terminating zero the address is read up to.
            guard bytes.count < room.count else { return false }
            room.copyBytes(from: bytes)
            return true
        }
        return fits ? address : nil
    }
}

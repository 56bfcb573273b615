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

    /// Reads every byte sent since the last call. Returns whether there was one.
    func drain() -> Bool {
        var byte: UInt8 = 0, woken = false
        while recv(fd, &byte, 1, 0) >= 0 { woken = true }
        return woken
    }

    /// Wakes the courier of the store's user, if one runs (a store in memory has none).
    package static func poke(_ store: MessageStore) {
        if let folder = store.folder { poke(folder: folder) }
    }

    /// Wakes the courier of the user whose folder this is, if one runs.
    static func poke(folder: String) {
        guard var address = address(folder + "/" + fileName) else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var byte: UInt8 = 1
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
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

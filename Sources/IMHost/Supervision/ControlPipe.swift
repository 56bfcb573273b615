#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CIMHostSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child's end of the pipe it answers its parent on: file descriptor 3 at start (see
/// ``ChildProcess``), moved at once to a high, close-on-exec descriptor out of line code's way.
/// The chat worker and the plugin scanner both answer this way, one JSON object a line.
///
/// Line code runs in the same process and could close the pipe; if the number were then reused
/// for another file, answers would go into that file. So every write first checks that the
/// descriptor is still the pipe it was. Messages may be sent from any thread (a line logs from
/// its own tasks): each is written whole, one at a time.
package final class ControlPipe: Sendable {
    private let fd: Int32
    private let identity: (dev_t, ino_t)?
    private let writing = Mutex(())

    /// Takes descriptor 3 over; `nil` when there is none (the process was not started by a host).
    package init?() {
        let moved = imhost_move_high(3, 500)
        guard moved >= 0 else { return nil }
        close(3)
        fd = moved
        var info = stat()
        identity = fstat(fd, &info) == 0 ? (info.st_dev, info.st_ino) : nil
    }

    /// Writes one message as a JSON line. Returns false when the pipe is not the one taken (line
    /// code closed it) or the parent is gone.
    @discardableResult
    package func send<Message: Encodable>(_ message: Message) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0, let identity, info.st_dev == identity.0, info.st_ino == identity.1 else { return false }
        guard let bytes = try? JSONLines.encode(message) else { return false }
        return writing.withLock { _ in
            do {
                try FileSystem.writeAll(fd, bytes + [UInt8(ascii: "\n")])
                return true
            } catch {
                return false
            }
        }
    }
}

import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// A stream of Server-Sent Events to one browser connection, written by the server's loop as
/// things happen. While it has nothing to send, libmicrohttpd holds the connection suspended
/// (no busy loop); ``send(_:data:)`` resumes it, and the server's next `service()` writes.
public final class EventStream {
    /// The connection it answers; set when it is queued.
    var connection: OpaquePointer?
    private var pending: [UInt8] = []
    private var suspended = false
    /// It ended: closed by the server, or the browser went away.
    public private(set) var isClosed = false
    /// Called once, when libmicrohttpd lets go of it (the browser left, or it was closed).
    var onEnd: (() -> Void)?

    public init() {}

    /// Queues an event: `event` names its type (the browser's listener), `data` is its text
    /// (each line of it a `data:` line, as the format wants).
    public func send(_ event: String, data: String) {
        var frame = "event: \(event)\n"
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { frame += "data: \(line)\n" }
        write(frame + "\n")
    }

    /// A comment line: nothing for the page, but a write that tells a closed connection apart.
    public func heartbeat() { write(": ♥\n\n") }

    /// Whether the browser closed its end (the tab closed, or went elsewhere): a stream's browser
    /// sends nothing after its request, so the connection's socket ending is its leaving, seen
    /// at once rather than at the next heartbeat's failed write.
    public var browserLeft: Bool {
        guard let connection, !isClosed else { return false }
        let socket = imhost_mhd_connection_fd(connection)
        guard socket >= 0 else { return false }
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    /// Ends the stream once what is queued is written.
    public func close() {
        isClosed = true
        resume()
    }

    private func write(_ text: String) {
        guard !isClosed else { return }
        pending += Array(text.utf8)
        resume()
    }

    private func resume() {
        guard suspended, let connection else { return }
        suspended = false
        MHD_resume_connection(connection)
    }

    /// What libmicrohttpd asks for: up to `max` bytes, or nothing for now (suspended until
    /// there is), or the end.
    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        if pending.isEmpty {
            if isClosed { return Int(MHD_CONTENT_READER_END_OF_STREAM) }
            if let connection {
                suspended = true
                MHD_suspend_connection(connection)
            }
            return 0
        }
        let count = min(max, pending.count)
        pending.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: count) }
        pending.removeFirst(count)
        return count
    }

    func ended() {
        isClosed = true
        suspended = false
        connection = nil
        onEnd?()
        onEnd = nil
    }
}

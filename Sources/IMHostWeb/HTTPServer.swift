import CIMHostSupport
import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP server on 127.0.0.1, from GNU libmicrohttpd, driven by its owner's loop: no thread of
/// its own. Wait on ``descriptor`` (its epoll descriptor: readable when anything is to be done)
/// for at most ``timeout()`` milliseconds, then call ``service()``. Every request comes to
/// `handler` on that same thread, whole (headers, query and body read); its reply is sent as it
/// is, or, for a ``HTTPReply/Body/stream(_:)``, as the stream is written to.
///
/// libmicrohttpd parses HTTP; this type only hands requests and replies across.
public final class HTTPServer {
    /// Why the server could not start.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The port it listens on.
    public private(set) var port: UInt16 = 0
    private var daemon: OpaquePointer?
    private let handler: (HTTPRequest) -> HTTPReply
    /// Streams that are open: kept alive here until libmicrohttpd lets go of them.
    private var streams: [ObjectIdentifier: EventStream] = [:]

    /// The largest request body taken by default, in bytes; a larger one is refused (413).
    public static let bodyLimit = 1 << 20
    /// The largest request body this server takes (a photo picked in a page may be larger than
    /// ``bodyLimit`` when host.json's `limits.photoBytes` is).
    public let bodyLimit: Int
    /// Keeps the connections for the server's user (``ConnectionKeeper``).
    let keeper: ConnectionKeeper

    /// Starts listening on 127.0.0.1:`port` (0: a free port, which ``port`` then says).
    /// `sessionHeaderSeconds` and `connectionBudget` are ``ConnectionKeeper``'s policy; the
    /// open-file limit is raised to hold libmicrohttpd's own limit, well above the budget.
    public init(port: UInt16 = 0, bodyLimit: Int = HTTPServer.bodyLimit, headerSeconds: Double = 5, connectionBudget: Int = 512,
                handler: @escaping (HTTPRequest) -> HTTPReply) throws(Failure) {
        self.handler = handler
        self.bodyLimit = bodyLimit
        var policy = ConnectionKeeper.Policy(headerSeconds: headerSeconds, budget: connectionBudget)
        // Room for every connection libmicrohttpd may hold, and the process's other files.
        let files = imhost_raise_open_files(policy.hardLimit + 256)
        if files < policy.hardLimit + 256 { policy.budget = max(16, (files - 256) / 4) }
        keeper = ConnectionKeeper(policy: policy)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        // The server is handed to the C callbacks unretained: it outlives its daemon, which
        // `stop()` (or deinit) ends before the server goes.
        let me = Unmanaged.passUnretained(self).toOpaque()
        let limit = UInt32(policy.hardLimit)
        guard let started = withUnsafePointer(to: &address, { imhost_mhd_start($0, limit, 60, admitting, me, access, me, connectionNotice, me, completed, me) }) else {
            let why = errno == EADDRINUSE ? "the port \(port) is taken" : String(cString: strerror(errno))
            throw Failure(description: "cannot listen on 127.0.0.1:\(port): \(why)")
        }
        daemon = started
        self.port = imhost_mhd_port(started)
    }

    deinit { stop() }

    /// What to wait on for reading: libmicrohttpd's epoll descriptor.
    public var descriptor: Int32 { daemon.map { imhost_mhd_epoll_fd($0) } ?? -1 }

    /// The longest the owner may wait before calling ``service()``, in milliseconds; -1 for as
    /// long as it likes.
    public func timeout() -> Int32 {
        guard let daemon else { return -1 }
        var milliseconds: UInt64 = 0
        let own = MHD_get_timeout(daemon, &milliseconds) == .YES ? Int32(min(milliseconds, 60_000)) : -1
        guard let deadline = keeper.nextDeadline() else { return own }
        return own < 0 ? deadline : min(own, deadline)
    }

    /// Reads, answers and writes what is ready, and closes the connections the keeper would not
    /// keep. Never blocks.
    public func service() {
        guard let daemon else { return }
        _ = MHD_run(daemon)
        keeper.enforce()
    }

    /// Whether a request carries this server's session (its user's browser): set by the server's
    /// owner; a connection that has shown one is kept past the header deadline and the budget.
    public var isSession: ((HTTPRequest) -> Bool)?

    /// Connections closed or refused since this was last asked, and why.
    public func takeDropped() -> ConnectionKeeper.Dropped { keeper.takeDropped() }

    /// Seconds a connection without the session has to send a whole request's headers.
    public var headerSeconds: Double { keeper.policy.headerSeconds }

    /// How many connections are open now.
    public var openConnections: Int { keeper.count }

    /// Stops listening and closes every connection; open streams end first (libmicrohttpd must
    /// not stop with a connection suspended).
    public func stop() {
        guard let daemon else { return }
        for stream in streams.values { stream.close() }
        _ = MHD_run(daemon)
        MHD_stop_daemon(daemon)
        self.daemon = nil
        streams = [:]
    }

    /// How many event streams are open.
    public var openStreams: Int { streams.count }

    // MARK: From libmicrohttpd

    /// What the server does with a request whose headers are read and whose body is not yet.
    public enum Admission {
        /// Read its body, up to this many bytes (a larger one is answered 413).
        case read(bodyLimit: Int)
        /// Answer it now, before a byte of its body is taken.
        case answer(HTTPReply)
    }

    /// Asked once a request's headers are in, before its body: who may send a body, and how
    /// large, is decided before memory is spent on it. Without it, every body up to
    /// ``bodyLimit`` is read.
    public var admit: ((HTTPRequest) -> Admission)?

    /// A request being read: its body, as it comes.
    fileprivate final class Pending {
        var body: [UInt8] = []
        var tooLarge = false
        var limit: Int
        /// Answered already (refused before its body was read): what comes of the body is dropped.
        var answered = false
        init(limit: Int) { self.limit = limit }
    }

    /// A request begins: admitted (its body to be read, up to a limit), or answered at once.
    fileprivate func begin(_ connection: OpaquePointer, method: String, path: String) -> (Pending, MHD_Result?) {
        let request = HTTPRequest(method: method, path: path, connection: connection, body: [])
        keeper.requestBegan(connection, session: isSession?(request) ?? false)
        guard let admit else { return (Pending(limit: bodyLimit), nil) }
        switch admit(request) {
        case .read(let limit):
            return (Pending(limit: limit), nil)
        case .answer(let reply):
            let pending = Pending(limit: 0)
            pending.answered = true
            return (pending, queue(reply, on: connection))
        }
    }

    fileprivate func handle(_ connection: OpaquePointer, method: String, path: String, pending: Pending) -> MHD_Result {
        let request = HTTPRequest(method: method, path: path, connection: connection, body: pending.body)
        let reply = pending.tooLarge ? HTTPReply.text(413, "refused: the request is larger than \(pending.limit) bytes (limits.photoBytes in host.json, for a photo)\n") : handler(request)
        return queue(reply, on: connection)
    }

    private func queue(_ reply: HTTPReply, on connection: OpaquePointer) -> MHD_Result {
        let response: OpaquePointer?
        switch reply.body {
        case .bytes(let bytes):
            response = bytes.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer(buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .stream(let stream):
            stream.connection = connection
            let key = ObjectIdentifier(stream)
            streams[key] = stream
            stream.onEnd = { [weak self] in self?.streams[key] = nil }
            // The stream is handed to the reader retained; released by `released` when
            // libmicrohttpd is done with the response.
            response = MHD_create_response_from_callback(UInt64.max /* MHD_SIZE_UNKNOWN */, 4096, streamRead,
                                                         Unmanaged.passRetained(stream).toOpaque(), streamReleased)
        }
        guard let response else { return .NO }
        defer { MHD_destroy_response(response) }
        for (name, value) in reply.headers { _ = MHD_add_response_header(response, name, value) }
        return MHD_queue_response(connection, UInt32(reply.status), response)
    }
}

// MARK: The C callbacks (no captures: the server comes through `cls`)

private let access: MHD_AccessHandlerCallback = { cls, connection, url, method, _, upload, uploadSize, context in
    guard let cls, let connection, let context, let uploadSize else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    // The first call only says a request began (its headers are in): admit it, or answer it
    // before its body is read, and keep a place for its body.
    guard let kept = context.pointee else {
        let (pending, answered) = server.begin(connection, method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "")
        context.pointee = Unmanaged.passRetained(pending).toOpaque()
        return answered ?? .YES
    }
    let pending = Unmanaged<HTTPServer.Pending>.fromOpaque(kept).takeUnretainedValue()
    if pending.answered {
        uploadSize.pointee = 0
        return .YES
    }
    if uploadSize.pointee > 0 {
        if let upload, !pending.tooLarge {
            if pending.body.count + uploadSize.pointee > pending.limit {
                pending.tooLarge = true
                pending.body = []
            } else {
                pending.body += UnsafeRawBufferPointer(start: upload, count: uploadSize.pointee)
            }
        }
        uploadSize.pointee = 0
        return .YES
    }
    return server.handle(connection, method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "", pending: pending)
}

private let admitting: MHD_AcceptPolicyCallback = { cls, address, length in
    guard let cls, let address else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    return server.keeper.admits(address, length: length, port: server.port) ? .YES : .NO
}

private let connectionNotice: MHD_NotifyConnectionCallback = { cls, connection, _, what in
    guard let cls, let connection else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    if what == .CONNECTION_NOTIFY_STARTED {
        server.keeper.opened(connection, socket: imhost_mhd_connection_fd(connection))
    } else {
        server.keeper.closed(connection)
    }
}

private let completed: MHD_RequestCompletedCallback = { cls, connection, context, _ in
    if let cls, let connection { Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().keeper.requestEnded(connection) }
    guard let context, let kept = context.pointee else { return }
    Unmanaged<HTTPServer.Pending>.fromOpaque(kept).release()
    context.pointee = nil
}

private let streamRead: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return MHD_CONTENT_READER_END_OF_STREAM }
    let stream = Unmanaged<EventStream>.fromOpaque(cls).takeUnretainedValue()
    return stream.read(into: buffer, max: max)
}

private let streamReleased: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let stream = Unmanaged<EventStream>.fromOpaque(cls).takeRetainedValue()
    stream.ended()
}

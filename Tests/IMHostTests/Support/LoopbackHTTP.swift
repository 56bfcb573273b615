import Foundation

/// One HTTP/1.1 request to a server on 127.0.0.1 and its response, over a connection of its own
/// that the request asks the server to close. Every header is the test's to set, the Host
/// header too (a test of a server can send a forged one).
///
/// Not URLSession: the FoundationNetworking of Swift 6.3 refuses a header line with no space
/// after its colon ("Content-Length:250", valid HTTP and what chromedriver sends), failing the
/// request with "Failed writing header" (swift-corelibs-foundation pull request 5527, later).
enum LoopbackHTTP {
    struct Response {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: Data

        /// The first header named `name`, its case ignored as HTTP does.
        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends `method` `path` to 127.0.0.1:`port` and reads the response: to its Content-Length,
    /// or to the end of the connection. `timeout` seconds bound the whole exchange.
    /// `claimedLength` says a Content-Length other than the body's (a body announced, not sent).
    static func request(port: Int, _ method: String, _ path: String, headers: [(String, String)] = [], body: Data? = nil,
                        claimedLength: Int? = nil, timeout: Double = 120) throws -> Response {
        let deadline = Date().addingTimeInterval(timeout)
        let fd = try connect(port: port)
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { head += "Host: 127.0.0.1:\(port)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Connection: close\r\nContent-Length: \(claimedLength ?? body?.count ?? 0)\r\n\r\n"
        try send(Data(head.utf8) + (body ?? Data()), to: fd)

        var received = Data()
        while true {
            if let response = parse(received), let length = response.header("Content-Length").flatMap(Int.init), response.body.count >= length {
                return Response(status: response.status, headers: response.headers, body: response.body.prefix(length))
            }
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&entry, 1, left) > 0 else { throw Failure(description: "\(method) \(path) on port \(port): no response in \(timeout) s") }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = read(fd, &buffer, buffer.count)
            // The server closed the connection: the response is what came.
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        guard let response = parse(received) else { throw Failure(description: "\(method) \(path) on port \(port): the connection ended before a response") }
        return response
    }

    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        // connect takes the generic sockaddr; a sockaddr_in is one, as the C API intends.
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "connect to 127.0.0.1:\(port): \(reason)")
        }
        return fd
    }

    static func send(_ data: Data, to fd: Int32) throws {
        var sent = 0
        while sent < data.count {
            let count = data.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, data.count - sent, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    /// The response in `data` once its status line and headers are in whole.
    private static func parse(_ data: Data) -> Response? {
        guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else { return nil }
        let lines = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        guard let status = lines.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Response(status: status, headers: headers, body: Data(data[end.upperBound...]))
    }
}

import Foundation

/// The TCP sockets of this machine that listen, as the kernel's tables say (/proc/net/tcp and
/// tcp6). The kernel writes a table a piece at a time, each read starting again where the last
/// ended: while other programs open and close sockets, a read can miss a line. So the tables are
/// read whole a few times, and a socket any read shows is one that listens (a listening socket
/// does not come and go under a test).
enum ListeningSockets {
    struct Socket: Hashable, CustomStringConvertible {
        /// `127.0.0.1`, or the hexadecimal form of an IPv6 address.
        var address: String
        var port: Int
        /// The socket's inode, as `/proc/PID/fd` names it (`socket:[INODE]`).
        var inode: String

        var description: String { "\(address):\(port)" }
    }

    /// Every listening socket `reads` whole reads of the tables showed.
    static func all(reads: Int = 5) -> Set<Socket> {
        var found = Set<Socket>()
        for _ in 0..<reads {
            for table in ["/proc/net/tcp", "/proc/net/tcp6"] { found.formUnion(parse(readWhole(table))) }
        }
        return found
    }

    /// Those process `pid` holds.
    static func of(pid: Int32, reads: Int = 5) -> Set<Socket> {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let inodes = Set(fds.compactMap { fd -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"), target.hasPrefix("socket:[") else { return nil }
            return String(target.dropFirst(8).dropLast())
        })
        return all(reads: reads).filter { inodes.contains($0.inode) }
    }

    /// A table, read to its end.
    private static func readWhole(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The lines in state LISTEN (0A): local_address is field 1 (HEX_ADDRESS:HEX_PORT), st field
    /// 3, inode field 9.
    private static func parse(_ table: String) -> [Socket] {
        table.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[3] == "0A" else { return nil }
            let local = fields[1].split(separator: ":")
            guard local.count == 2, let port = Int(local[1], radix: 16) else { return nil }
            let address: String
            if local[0].count == 8, let raw = UInt32(local[0], radix: 16) {
                // Little-endian in /proc: 0100007F is 127.0.0.1.
                address = [raw & 0xFF, raw >> 8 & 0xFF, raw >> 16 & 0xFF, raw >> 24].map(String.init).joined(separator: ".")
            } else {
                address = String(local[0])
            }
            return Socket(address: address, port: port, inode: String(fields[9]))
        }
    }
}

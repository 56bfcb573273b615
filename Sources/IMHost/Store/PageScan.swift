#if canImport(Glibc)
import Glibc
#endif

/// Reads table rows straight out of a database file's pages, without SQLite's b-trees: what
/// ``StoreRecovery`` does when a table cannot be reached from its root (its root page damaged,
/// or the file's first page, which holds the schema, so SQLite opens nothing).
///
/// Every page of the file (and of its write-ahead log, the newest committed copy of a page
/// first) that is a leaf of a table b-tree (type `0x0D`) is read cell by cell: each cell is a
/// rowid and a record (SQLite's file format, section 2.1 and 2.3), its payload followed into
/// overflow pages. Nothing here trusts the bytes: every length and offset is checked against
/// the page, a chain of overflow pages is cut at a page out of range or one seen before, and a
/// record whose header does not add up is skipped. Which table a row belongs to is for the
/// caller to tell from its shape (``StoreRecovery``): the pages do not say.
struct PageScan {
    /// One value of a record.
    enum Value: Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text([UInt8])
        case blob([UInt8])
    }

    /// A row found on a leaf page.
    struct Row {
        var rowid: Int64
        var values: [Value]
    }

    private let file: Int32
    private let pageSize: Int
    /// The bytes of a page a b-tree uses (the page less its reserved tail).
    private let usable: Int
    /// How many pages there are to look at.
    private let pageCount: Int
    /// The newest committed copy of a page in the write-ahead log: its offset in `log`.
    private var logged: [Int: Int] = [:]
    private var log: Int32 = -1

    /// Opens the file at `path` (and `path-wal`); `nil` when it cannot be read at all.
    init?(path: String) {
        file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return nil }
        var info = stat()
        guard fstat(file, &info) == 0 else {
            Glibc.close(file)
            return nil
        }
        var header = [UInt8](repeating: 0, count: 100)
        let read = pread(file, &header, 100, 0)
        // The header's page size when it makes sense; else the size this store is made with.
        let declared = read == 100 ? Int(header[16]) << 8 | Int(header[17]) : 0
        let size = declared == 1 ? 65536 : declared
        if size >= 512, size <= 65536, size & (size - 1) == 0 {
            pageSize = size
            usable = size - Int(header[20])
        } else {
            pageSize = 4096
            usable = 4096
        }
        var count = Int(info.st_size) / pageSize
        // The log's committed frames: their pages are newer than the file's.
        log = open(path + "-wal", O_RDONLY | O_CLOEXEC)
        if log >= 0 {
            var head = [UInt8](repeating: 0, count: 32)
            if pread(log, &head, 32, 0) == 32, Self.u32(head, 0) & 0xFFFF_FFFE == 0x377F_0682, Int(Self.u32(head, 8)) == pageSize {
                let salts = (Self.u32(head, 16), Self.u32(head, 20))
                var frameHead = [UInt8](repeating: 0, count: 24)
                var offset = 32, pending: [Int: Int] = [:]
                while pread(log, &frameHead, 24, off_t(offset)) == 24 {
                    guard (Self.u32(frameHead, 8), Self.u32(frameHead, 12)) == salts else { break }
                    let page = Int(Self.u32(frameHead, 0))
                    if page > 0 { pending[page] = offset + 24 }
                    // A commit frame says how many pages the database has after it.
                    let size = Int(Self.u32(frameHead, 4))
                    if size > 0 {
                        logged.merge(pending) { _, newer in newer }
                        pending = [:]
                        count = max(count, size)
                    }
                    offset += 24 + pageSize
                }
            }
        }
        pageCount = count
    }

    /// Closes the files.
    func close() {
        Glibc.close(file)
        if log >= 0 { Glibc.close(log) }
    }

    /// Hands every row found on a table leaf page to `body`, page by page.
    func rows(_ body: (Row) throws -> Void) rethrows {
        guard pageCount > 0 else { return }
        for number in 1...pageCount {
            guard let page = page(number) else { continue }
            let start = number == 1 ? 100 : 0
            guard page[start] == 0x0D, start + 8 <= usable else { continue }
            let cells = Self.u16(page, start + 3)
            guard start + 8 + 2 * cells <= usable else { continue }
            for cell in 0..<cells {
                if let row = self.row(in: page, at: Self.u16(page, start + 8 + 2 * cell)) { try body(row) }
            }
        }
    }

    /// Page `number` (from 1), its newest committed copy; `nil` when it cannot be read.
    private func page(_ number: Int) -> [UInt8]? {
        guard number >= 1, number <= pageCount else { return nil }
        var bytes = [UInt8](repeating: 0, count: pageSize)
        let (descriptor, offset) = logged[number].map { (log, $0) } ?? (file, (number - 1) * pageSize)
        guard pread(descriptor, &bytes, pageSize, off_t(offset)) == pageSize else { return nil }
        return bytes
    }

    /// The cell at `offset` of a table leaf page, read whole (its overflow pages followed).
    private func row(in page: [UInt8], at offset: Int) -> Row? {
        guard offset >= 8, offset < usable else { return nil }
        var at = offset
        guard let size = Self.varint(page, &at, end: usable), size >= 0, size <= 1 << 30,
              let rowid = Self.varint(page, &at, end: usable) else { return nil }
        let total = Int(size)
        // How much of the payload is on the page (the file format's rule for table leaves).
        let most = usable - 35
        var local = total
        if total > most {
            let least = (usable - 12) * 32 / 255 - 23
            let spill = least + (total - least) % (usable - 4)
            local = spill <= most ? spill : least
        }
        guard at + local <= usable else { return nil }
        var payload = Array(page[at..<at + local])
        if local < total {
            guard at + local + 4 <= usable else { return nil }
            var next = Int(Self.u32(page, at + local))
            var seen: Set<Int> = []
            while payload.count < total {
                guard next >= 1, next <= pageCount, seen.insert(next).inserted, let overflow = self.page(next) else { return nil }
                let take = min(usable - 4, total - payload.count)
                payload += overflow[4..<4 + take]
                next = Int(Self.u32(overflow, 0))
            }
        }
        return Self.record(payload).map { Row(rowid: rowid, values: $0) }
    }

    /// The values of a record: its header (a size, then one serial type a column), then its body.
    static func record(_ bytes: [UInt8]) -> [Value]? {
        var at = 0
        guard let headerSize = varint(bytes, &at, end: bytes.count), headerSize >= 1, Int(headerSize) <= bytes.count else { return nil }
        let headerEnd = Int(headerSize)
        var types: [Int64] = []
        while at < headerEnd {
            guard let type = varint(bytes, &at, end: headerEnd) else { return nil }
            types.append(type)
        }
        var body = headerEnd
        var values: [Value] = []
        values.reserveCapacity(types.count)
        for type in types {
            switch type {
            case 0: values.append(.null)
            case 1...6:
                let width = [1, 2, 3, 4, 6, 8][Int(type) - 1]
                guard body + width <= bytes.count else { return nil }
                var value = Int64(Int8(bitPattern: bytes[body]))
                for byte in bytes[body + 1..<body + width] { value = value << 8 | Int64(byte) }
                values.append(.integer(value))
                body += width
            case 7:
                guard body + 8 <= bytes.count else { return nil }
                values.append(.real(Double(bitPattern: bytes[body..<body + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })))
                body += 8
            case 8: values.append(.integer(0))
            case 9: values.append(.integer(1))
            case 12...:
                let length = Int((type - 12) / 2)
                guard length <= bytes.count - body else { return nil }
                let content = Array(bytes[body..<body + length])
                values.append(type % 2 == 0 ? .blob(content) : .text(content))
                body += length
            default: return nil
            }
        }
        return values
    }

    /// A varint at `at` (at most nine bytes, not past `end`), moving `at` past it.
    static func varint(_ bytes: [UInt8], _ at: inout Int, end: Int) -> Int64? {
        var value: UInt64 = 0
        for index in 0..<9 {
            guard at < end, at < bytes.count else { return nil }
            let byte = bytes[at]
            at += 1
            if index == 8 { return Int64(bitPattern: value << 8 | UInt64(byte)) }
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 { return Int64(bitPattern: value) }
        }
        return nil
    }

    static func u16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }

    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        bytes[at..<at + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}

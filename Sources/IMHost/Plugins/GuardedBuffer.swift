@_spi(Host) import IMKit
internal import CIMKitABI
#if canImport(Glibc)
import Glibc
#endif

/// A buffer for a plugin to write into, placed at the very end of a page that is followed by a
/// page nobody may touch: a plugin that writes past the capacity it was given faults at once, in
/// its own code (where the crash is attributed to it), instead of corrupting the host's memory.
struct GuardedBuffer {
    private let base: UnsafeMutableRawPointer
    private let pageSize: Int
    let start: UnsafeMutablePointer<CChar>
    let capacity: Int

    init(capacity: Int) {
        pageSize = max(4096, sysconf(Int32(_SC_PAGESIZE)))
        let mapped = mmap(nil, pageSize * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapped, mapped != MAP_FAILED else { fatalError("cannot map a page for a plugin's error text") }
        base = mapped
        mprotect(base + pageSize, pageSize, PROT_NONE)
        self.capacity = min(capacity, pageSize)
        // Safe: `capacity` bytes before the guard page lie inside the first, writable page.
        start = (base + pageSize - self.capacity).bindMemory(to: CChar.self, capacity: self.capacity)
        start.initialize(repeating: 0, count: self.capacity)
    }

    /// What was written, up to the first NUL or the capacity.
    func text() -> String {
        let length = strnlen(start, capacity)
        return String(decoding: UnsafeRawBufferPointer(start: start, count: length), as: UTF8.self)
    }

    func release() { munmap(base, pageSize * 2) }
}

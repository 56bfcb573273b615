/// The identifying fields of an ELF header: enough to tell whether a file is a shared object
/// this process can load, and to say what it is when it is not.
struct ELFHeader: Equatable {
    /// 1 for 32-bit, 2 for 64-bit.
    var elfClass: UInt8
    /// 1 for little-endian, 2 for big-endian.
    var byteOrder: UInt8
    /// 1 relocatable, 2 executable, 3 shared object, 4 core.
    var type: UInt16
    /// The instruction set, e.g. 62 for x86-64, 183 for AArch64.
    var machine: UInt16

    static let sharedObject: UInt16 = 3

    /// Reads the header from the first bytes of a file, or explains why they are not ELF.
    init(bytes: [UInt8]) throws(PluginRefusal) {
        guard bytes.count >= 20, bytes[0] == 0x7F, bytes[1] == UInt8(ascii: "E"),
              bytes[2] == UInt8(ascii: "L"), bytes[3] == UInt8(ascii: "F") else {
            let start = bytes.prefix(8).map { $0 >= 0x20 && $0 < 0x7F ? String(UnicodeScalar($0)) : "." }.joined()
            throw PluginRefusal(.notELF, "not an ELF shared object (the file starts with \"\(start)\")",
                                fix: "build the plugin as a dynamic library (.library(type: .dynamic)) or remove the file")
        }
        let bigEndian = bytes[5] == 2
        func half(_ offset: Int) -> UInt16 {
            bigEndian ? UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
                : UInt16(bytes[offset + 1]) << 8 | UInt16(bytes[offset])
        }
        elfClass = bytes[4]
        byteOrder = bytes[5]
        type = half(16)
        machine = half(18)
    }

    /// The header of this process's own executable, which every plugin must match.
    static let host: ELFHeader? = {
        guard let bytes = try? FileSystem.readBytes("/proc/self/exe", limit: 64) else { return nil }
        return try? ELFHeader(bytes: bytes)
    }()

    /// Refuses a header that is not a shared object for the same machine as `host`.
    func check(against host: ELFHeader) throws(PluginRefusal) {
        guard type == Self.sharedObject else {
            let kind = [1: "a relocatable object (.o)", 2: "an executable", 4: "a core dump"][Int(type)] ?? "ELF type \(type)"
            throw PluginRefusal(.notELF, "is \(kind), not an ELF shared object",
                                fix: "build the plugin as a dynamic library (.library(type: .dynamic))")
        }
        guard elfClass == host.elfClass, byteOrder == host.byteOrder, machine == host.machine else {
            throw PluginRefusal(.wrongMachine, "built for \(describe), this host is \(host.describe)",
                                fix: "build the plugin on or for \(host.describe)")
        }
    }

    var describe: String {
        let names: [UInt16: String] = [3: "x86 (i386)", 40: "ARM", 62: "x86-64", 183: "AArch64", 243: "RISC-V"]
        let bits = elfClass == 2 ? "64-bit" : "32-bit"
        return "\(names[machine] ?? "machine \(machine)") \(bits) \(byteOrder == 2 ? "big-endian" : "little-endian")"
    }

    /// Whether a 64-bit little-endian shared object defines (not just uses) a dynamic symbol
    /// whose name starts with `prefix`: found in its `.dynsym` section without loading it.
    /// `false` when the file does not read as such.
    static func definesSymbol(withPrefix prefix: String, inFile path: String) -> Bool {
        guard let file = try? FileSystem.readBytes(path, limit: 256 << 20), file.count >= 64,
              file[4] == 2, file[5] == 1 else { return false }
        func integer(_ offset: Int, _ size: Int) -> Int? {
            guard offset >= 0, size <= 8, offset + size <= file.count else { return nil }
            var value: UInt64 = 0
            for index in (0..<size).reversed() { value = value << 8 | UInt64(file[offset + index]) }
            return value > UInt64(Int.max) ? nil : Int(value)
        }
        // Section headers: 64 bytes each; SHT_DYNSYM is 11, its sh_link names its string table.
        guard let shoff = integer(0x28, 8), let shentsize = integer(0x3A, 2), let shnum = integer(0x3C, 2),
              shentsize >= 64 else { return false }
        func section(_ index: Int) -> (type: Int, offset: Int, size: Int, link: Int, entsize: Int)? {
            let base = shoff + index * shentsize
            guard let type = integer(base + 4, 4), let offset = integer(base + 24, 8), let size = integer(base + 32, 8),
                  let link = integer(base + 40, 4), let entsize = integer(base + 56, 8),
                  offset <= file.count, size <= file.count - offset else { return nil }
            return (type, offset, size, link, entsize)
        }
        let wanted = Array(prefix.utf8)
        for index in 0..<shnum {
            guard let symbols = section(index), symbols.type == 11, symbols.entsize >= 24,
                  let strings = section(symbols.link) else { continue }
            // Elf64_Sym: st_name (4), st_info, st_other, st_shndx (2), st_value, st_size.
            for entry in stride(from: symbols.offset, to: symbols.offset + symbols.size - 23, by: symbols.entsize) {
                guard let name = integer(entry, 4), let sectionIndex = integer(entry + 6, 2), sectionIndex != 0,
                      name < strings.size else { continue }
                let start = strings.offset + name
                guard start + wanted.count <= file.count else { continue }
                if file[start..<(start + wanted.count)].elementsEqual(wanted) { return true }
            }
        }
        return false
    }
}

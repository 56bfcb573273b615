import CIMHostSupport

/// A message's global id, made by its sender: a ULID (26 characters of Crockford's base 32, the
/// first ten the time in milliseconds, the rest 80 random bits), so ids sort by when they were
/// made and two senders, or two processes of one sender, never make the same one.
package enum GlobalID {
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// A new id for a message made at `time` (milliseconds since 1970).
    package static func make(at time: Int64) -> String {
        // 80 random bits in one call to the kernel, getrandom(2) (glibc's; a send makes one
        // id, and a second call cost as much as the rest of making it).
        var random: (UInt64, UInt16) = (0, 0)
        let drawn = withUnsafeMutableBytes(of: &random) { getrandom($0.baseAddress, 10, 0) }
        if drawn != 10 {
            var generator = SystemRandomNumberGenerator()
            random = (generator.next(), generator.next())
        }
        return String(unsafeUninitializedCapacity: 26) { bytes in
            var value = UInt64(max(0, time)) & 0xFFFF_FFFF_FFFF
            for index in stride(from: 9, through: 0, by: -1) {
                bytes[index] = alphabet[Int(value & 31)]
                value >>= 5
            }
            // 60 bits from the first word, 20 from the second.
            var first = random.0, second = random.1
            for index in 10..<22 {
                bytes[index] = alphabet[Int(first & 31)]
                first >>= 5
            }
            for index in 22..<26 {
                bytes[index] = alphabet[Int(second & 31)]
                second >>= 5
            }
            return 26
        }
    }

    /// Whether `text` is an id this store takes from a peer: 1 to 64 characters of
    /// `A-Z a-z 0-9 _ -` (a ULID, a UUID, or another client's own scheme).
    package static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == 0x2D
        }
    }
}

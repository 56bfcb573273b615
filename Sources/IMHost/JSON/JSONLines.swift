// FoundationEssentials has the JSON coders; full Foundation would load ICU into every process.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One JSON object a line: how the host keeps its records (messages, crashes, the outbox) and
/// how its child processes answer over a pipe.
package enum JSONLines {
    /// `value` as one line of JSON, without the newline: keys sorted, slashes not escaped (a
    /// line reads the same in every file, and URLs stay readable).
    package static func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// Writes `value` and a newline to `fd` in one write, if it encodes.
    package static func send(_ value: some Encodable, to fd: Int32) {
        guard let line = try? encode(value) else { return }
        try? FileSystem.writeAll(fd, line + [UInt8(ascii: "\n")])
    }

    /// Every line of the file at `path` that decodes as `T`, oldest first; a line that does not
    /// (a torn last one, say) is skipped, and a file that cannot be read has none.
    package static func read<T: Decodable>(_ type: T.Type, from path: String) -> [T] {
        guard let text = try? FileSystem.readText(path) else { return [] }
        let decoder = JSONDecoder()
        return text.split(separator: "\n").compactMap { try? decoder.decode(T.self, from: Data($0.utf8)) }
    }
}

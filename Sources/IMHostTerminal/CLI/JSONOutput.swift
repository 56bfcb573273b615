import IMHost
import IMHostRuntime
import IMKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes a command's `--json` result: pretty, with sorted keys, so output is stable.
///
/// Safe for a terminal as well as valid JSON: the encoder escapes C0 controls, and DEL, C1 and
/// bidirectional controls (which JSON allows raw) are written as `\u` escapes too. Outside
/// strings the output has none, so escaping them everywhere changes no value.
enum JSONOutput {
    static func encode<Value: Encodable>(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}\n" }
        let text = String(decoding: data, as: UTF8.self)
        guard text.unicodeScalars.contains(where: { TerminalText.needsEscape($0, newlines: true) }) else { return text + "\n" }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if TerminalText.needsEscape(scalar, newlines: true) {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\n"
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Testing
import IMKit

@Suite("Terminal widths")
struct TextWidthTests {
    @Test("Chinese and emoji take two columns, combining marks none")
    func columns() {
        #expect(TextWidth.columns("abc") == 3)
        #expect(TextWidth.columns("你好") == 4)
        #expect(TextWidth.columns("🏠 ok") == 5)
        #expect(TextWidth.columns("e\u{301}") == 1)
        #expect(TextWidth.columns("ＡＢ") == 4)
    }

    @Test("every code point takes the width the C library's wcwidth gives it")
    func agreesWithWcwidth() throws {
        // wcwidth is not in the Glibc module's headers by default: found the way a plugin is.
        typealias Wcwidth = @convention(c) (Int32) -> Int32
        let symbol = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "wcwidth"))
        let cWcwidth = unsafeBitCast(symbol, to: Wcwidth.self)
        let previous = setlocale(LC_ALL, nil).map { String(cString: $0) }
        try #require(setlocale(LC_ALL, "C.UTF-8") != nil, "the C.UTF-8 locale is needed to compare")
        defer { _ = setlocale(LC_ALL, previous ?? "C") }
        var disagreements: [String] = []
        var compared = 0
        for value in UInt32(0x20)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let expected = cWcwidth(Int32(bitPattern: value))
            // -1: a control or an unassigned code point; controls are escaped before a terminal
            // sees them, and an unassigned one is drawn as one column.
            guard expected >= 0 else { continue }
            compared += 1
            if TextWidth.columns(of: scalar) != Int(expected), disagreements.count < 20 {
                disagreements.append("U+\(String(value, radix: 16, uppercase: true)): \(TextWidth.columns(of: scalar)), wcwidth \(expected)")
            }
        }
        #expect(compared > 250_000)
        #expect(disagreements.isEmpty, "\(disagreements)")
    }

    @Test("emoji sequences take the width terminals draw them with", arguments: [
        ("🚗", 2), ("🚀", 2), ("✅", 2), ("⭐", 2), ("❤️", 2), ("🅿️", 2), ("1️⃣", 2), ("❤︎", 1),
        ("👨‍👩‍👧", 2), ("👍🏽", 2), ("🇨🇳", 2), ("🏳️‍🌈", 2), ("e\u{301}", 1), ("가", 2), ("\u{1100}\u{1161}\u{11A8}", 2),
        // VS16 widens an emoji base only: after a letter or a space the terminal draws one column.
        ("\u{263A}\u{FE0F}", 2), ("a\u{FE0F}", 1), (" \u{FE0F}", 1),
    ])
    func sequences(text: String, width: Int) {
        #expect(TextWidth.columns(text) == width)
        #expect(text.count == 1 && TextWidth.columns(of: text.first!) == width)
    }

    @Test("wrapping breaks at spaces, inside long words, and between CJK characters")
    func wrap() {
        #expect(TextWidth.wrap("the quick brown fox", width: 10) == ["the quick", "brown fox"])
        #expect(TextWidth.wrap("abcdefghij", width: 4) == ["abcd", "efgh", "ij"])
        #expect(TextWidth.wrap("你好世界再见", width: 5) == ["你好", "世界", "再见"])
        #expect(TextWidth.wrap("a\nb", width: 5) == ["a", "b"])
        for line in TextWidth.wrap("在的,欢迎周末来看房。The flat is still available.", width: 11) {
            #expect(TextWidth.columns(line) <= 11)
        }
    }

    @Test("wrapping and cutting never split a grapheme cluster", arguments: [
        "👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧 family", "🇨🇳🇯🇵🇰🇷🇺🇸", "e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}", "नमस्ते दुनिया किताब", "❤️❤️❤️❤️", "👍🏽👍🏽👍🏽",
    ])
    func clustersStayWhole(text: String) {
        for width in 2...9 {
            let lines = TextWidth.wrap(text, width: width)
            // The same clusters in the same order, but for the spaces a break dropped.
            #expect(Array(lines.joined().filter { $0 != " " }) == Array(text.filter { $0 != " " }), "width \(width): \(lines)")
            for line in lines {
                #expect(TextWidth.columns(line) <= width, "width \(width): \(line)")
                // Each line is whole clusters: re-segmenting it finds the same clusters as in the text.
                #expect(line.allSatisfy { text.contains($0) })
            }
            let cut = TextWidth.truncate(text, to: width)
            #expect(TextWidth.columns(cut) <= width)
            #expect(cut.dropLast().allSatisfy { text.contains($0) })
        }
    }

    @Test("pad and truncate count columns")
    func padAndTruncate() {
        #expect(TextWidth.pad("你", to: 4) == "你  ")
        #expect(TextWidth.truncate("你好世界", to: 5) == "你好…")
        #expect(TextWidth.truncate("short", to: 10) == "short")
        #expect(TextWidth.pad("🚗🚗", to: 3) == "🚗…")
        #expect(TextWidth.pad("abc", to: 0) == "")
    }
}

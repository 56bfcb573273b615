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

    @Test("pad and truncate count columns")
    func padAndTruncate() {
        #expect(TextWidth.pad("你", to: 4) == "你  ")
        #expect(TextWidth.truncate("你好世界", to: 5) == "你好…")
        #expect(TextWidth.truncate("short", to: 10) == "short")
    }
}

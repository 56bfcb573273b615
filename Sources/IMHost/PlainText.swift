/// Whether text from outside (an id, a file name) is plain: no control characters (C0, DEL and
/// C1: Unicode's `Cc`) and no bidirectional controls (`Bidi_Control`), which could move a
/// terminal's cursor or make one name read as another. The core refuses what must be plain by
/// this; it escapes nothing: each front end escapes what it draws (the terminal with IMKit's
/// terminal escaping, which escapes exactly these characters; the browser with `PageHTML`).
package enum PlainText {
    /// Whether `text` holds none of them.
    package static func isPlain(_ text: String) -> Bool {
        !text.unicodeScalars.contains(where: isControl)
    }

    /// Whether `scalar` is a control or a bidirectional control.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar.properties.isBidiControl
    }
}

import IMHost
import IMKit

extension String {
    /// Pads with spaces to `width` terminal columns; a longer text is cut unless `cut` is false.
    package func padding(_ width: Int, cut: Bool = true) -> String {
        !cut && TextWidth.columns(self) >= width ? self : TextWidth.pad(self, to: width)
    }
}

extension String {
    /// Without the spaces and tabs around it.
    package var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return String(text)
    }
}

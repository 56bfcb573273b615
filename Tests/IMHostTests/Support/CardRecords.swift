import Foundation
import Testing

/// What the gallery (GalleryTests.swift) keeps of a card as the browser drew it: for each element
/// of the card's bubble, in document order, its tag and classes, its box relative to the bubble's
/// own box, its colours, its font's weight and size, and its own text. Not pixels: those change
/// with every Chromium update, and a record says what moved where a picture only says it differs.
///
/// The records are committed in Tests/IMHostTests/Golden/gallery/, one JSON file a card, with
/// sorted keys so a diff reads well. A card drawn otherwise fails its test, saying which card
/// and what changed first, and its new record is written beside the old (`NAME.new.json`,
/// ignored by git) to compare; `UPDATE_GOLDENS=1` writes the records in place instead.
enum CardRecords {
    static let folder = BuildProducts.repository + "/Tests/IMHostTests/Golden/gallery/"

    /// The view every card is drawn in: a phone's (the page's narrow layout), at one device pixel
    /// a CSS pixel, light, no motion. A phone's scrollbars overlay the page and take no width
    /// (the wait checks it), so a chat of more cards than the view holds draws each as wide.
    /// Boxes are whole CSS pixels, rounded: text is measured in the fonts the machine has, which
    /// `.ci/deps` installs from Debian (DejaVu, WenQuanYi Micro Hei for Chinese, Noto Color
    /// Emoji); the records assume those, as CI has them.
    static let width = 420, height = 1200
    static let drawn = "\(width)×\(height) CSS px, 1 device px a CSS px, light"

    /// Returns, for each message number in `arguments[0]`, the record of its bubble (`#mN > .bubble`),
    /// or null where the message has none. A message's time, its sender and its state are in its
    /// meta line, outside the bubble: nothing recorded changes from one run to the next.
    static let script = """
        const sides = ['top', 'right', 'bottom', 'left'];
        function border(style) {
          const each = sides.map(side => {
            const width = style.getPropertyValue(`border-${side}-width`), kind = style.getPropertyValue(`border-${side}-style`);
            return kind === 'none' || parseFloat(width) === 0 ? null : `${width} ${kind} ${style.getPropertyValue(`border-${side}-color`)}`;
          });
          if (!each.some(Boolean)) return null;
          return each.every(side => side === each[0]) ? each[0] : sides.map((side, i) => `${side} ${each[i] ?? 'none'}`).join(', ');
        }
        function entry(element, origin) {
          const input = element.localName === 'input';
          const tag = element.localName + (input ? `[type=${element.type}]` : '') + Array.from(element.classList, name => '.' + name).join('');
          const style = getComputedStyle(element);
          if (style.display === 'none') return { tag, shown: false };
          const found = { tag, color: style.color, font: [style.fontStyle === 'normal' ? '' : style.fontStyle, style.fontWeight, style.fontSize].join(' ').trim() };
          if (style.display === 'contents') found.display = 'contents';
          else {
            const box = element.getBoundingClientRect(), px = Math.round;
            found.box = `x ${px(box.left - origin.left)}, y ${px(box.top - origin.top)}, w ${px(box.width)}, h ${px(box.height)}`;
          }
          if (style.backgroundColor !== 'rgba(0, 0, 0, 0)') found.background = style.backgroundColor;
          const edge = border(style);
          if (edge) found.border = edge;
          const text = Array.from(element.childNodes, node => node.nodeType === Node.TEXT_NODE ? node.textContent : '').join('');
          const shown = style.whiteSpace.startsWith('pre') ? text.replace(/\\s+$/, '') : text.replace(/\\s+/g, ' ').trim();
          if (shown) found.text = shown;
          if (input && element.placeholder) found.placeholder = element.placeholder;
          if (input && element.checked) found.checked = true;
          return found;
        }
        return arguments[0].map(number => {
          const bubble = document.querySelector(`#m${number} > .bubble`);
          if (!bubble) return null;
          const origin = bubble.getBoundingClientRect();
          return [bubble, ...bubble.querySelectorAll('*')].map(element => entry(element, origin));
        });
        """

    /// A card's record as its file holds it.
    static func json(_ name: String, _ elements: [[String: Any]]) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: ["card": name, "drawn": drawn, "elements": elements],
                                              options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// Where the record of `name` differs from `committed`: the first `limit` entries, each
    /// `elements[N] TAG KEY: OLD → NEW`, and how many more.
    static func differences(_ committed: String, _ drawn: [[String: Any]], limit: Int = 6) -> [String] {
        let old = (try? JSONSerialization.jsonObject(with: Data(committed.utf8)) as? [String: Any])?["elements"] as? [[String: Any]]
        guard let old else { return ["the committed record is not a record (no elements)"] }
        var found: [String] = []
        for index in 0..<max(old.count, drawn.count) {
            let before = index < old.count ? old[index] : nil, after = index < drawn.count ? drawn[index] : nil
            let tag = (after?["tag"] ?? before?["tag"]).map { "\($0)" } ?? "?"
            guard let before, let after else {
                found.append("elements[\(index)] \(tag): " + (before == nil ? "new" : "gone"))
                continue
            }
            for key in Set(before.keys).union(after.keys).sorted() {
                let was = before[key].map { "\($0)" } ?? "—", now = after[key].map { "\($0)" } ?? "—"
                if was != now { found.append("elements[\(index)] \(tag) \(key): \(was) → \(now)") }
            }
        }
        return found.count > limit ? Array(found.prefix(limit)) + ["and \(found.count - limit) more"] : found
    }
}

extension Browser {
    /// Draws the page as the gallery's records were drawn (``CardRecords/width``, light, no motion).
    func drawAsGallery() throws {
        try view(width: CardRecords.width, height: CardRecords.height)
        try emulate(scheme: "light", reducedMotion: true)
    }

    /// Waits until the page shows `count` messages, at the gallery's width with no scrollbar
    /// taking any of it, every picture of them decoded and the fonts loaded: what a record is
    /// taken of.
    func waitForGallery(messages count: Int) throws -> Bool {
        try waitUntil("""
            window.innerWidth === args[1] && document.querySelectorAll('main.messages .message').length === args[0]
              && (list => list.offsetWidth === list.clientWidth)(document.querySelector('main.messages'))
              && Array.from(document.querySelectorAll('main.messages img')).every(image => image.complete && image.naturalWidth > 0)
              && document.fonts.status === 'loaded'
            """, [count, CardRecords.width])
    }

    /// What ``waitForGallery(messages:)`` waits on, as the page has it now: for a test's message.
    func galleryState() -> String {
        (try? execute("""
            const list = document.querySelector('main.messages');
            return JSON.stringify({ width: window.innerWidth, messages: list.querySelectorAll('.message').length, fonts: document.fonts.status,
              scrollbar: list.offsetWidth - list.clientWidth,
              pictures: Array.from(list.querySelectorAll('img'), image => `${image.getAttribute('src')} ${image.complete} ${image.naturalWidth}`) })
            """) as? String) ?? "(the page did not answer)"
    }

    /// The records of the bubbles of messages `numbers`, as ``CardRecords/script`` takes them.
    func cardRecords(_ numbers: [Int]) throws -> [[[String: Any]]?] {
        (try execute(CardRecords.script, [numbers]) as? [Any] ?? []).map { $0 as? [[String: Any]] }
    }
}

/// Compares the record of card `name` with Golden/gallery/NAME.json. Differing, the test fails
/// naming the card and its first differences, and the new record is written beside the old
/// (NAME.new.json) to compare; with no record yet, it is written and the test fails saying so;
/// with UPDATE_GOLDENS=1 the record is written in place.
func expectCardRecord(_ elements: [[String: Any]], named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let path = CardRecords.folder + name + ".json", beside = CardRecords.folder + name + ".new.json"
    let json = try CardRecords.json(name, elements)
    let committed = try? String(contentsOfFile: path, encoding: .utf8)
    try? FileManager.default.removeItem(atPath: beside)
    if committed == json { return }
    let relative = "Tests/IMHostTests/Golden/gallery/" + name
    if ProcessInfo.processInfo.environment["UPDATE_GOLDENS"] == "1" {
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return
    }
    guard let committed else {
        try FileManager.default.createDirectory(atPath: CardRecords.folder, withIntermediateDirectories: true)
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        Issue.record("card \(name) had no record: written to \(relative).json; look at it and commit it", sourceLocation: sourceLocation)
        return
    }
    try json.write(toFile: beside, atomically: true, encoding: .utf8)
    Issue.record("""
        card \(name) is drawn otherwise than its record (\(relative).json):
          \(CardRecords.differences(committed, elements).joined(separator: "\n  "))
        the new record is beside it: diff \(relative).json \(relative).new.json; if the change is meant, move it over (or run with UPDATE_GOLDENS=1)
        """, sourceLocation: sourceLocation)
}

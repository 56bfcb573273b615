import IMHost
import IMHostRuntime
import IMKit

/// What a page posts (`POST /page/ID`): one act of the person's as a small JSON object, which
/// becomes the ``ChatAction`` the terminal's verbs become too. A text is text, whatever it
/// starts with: the page has no verbs.
///
/// ```
/// {"do":"text","text":"Is it still free?"}     {"do":"tap","message":3}
/// {"do":"tap","message":3,"button":"accept"}    {"do":"quick","item":2}
/// {"do":"submit","message":3,"button":"book","values":{"day":"2026-12-05","rooms":["two","three"]},"revision":0}
/// {"do":"bar","item":1}  {"do":"menu","item":2}  {"do":"more","count":20}
/// {"do":"reply","message":3,"text":"Yes, Saturday"}  {"do":"recall","message":5}  {"do":"react","message":3,"emoji":"👍"}
/// {"do":"retry","message":4}  {"do":"why","message":4}  {"do":"seen","through":9}
/// {"do":"block"}  {"do":"unblock"}  {"do":"route"}  {"do":"clear"}  {"do":"report"}   (asked first by the page)
/// {"do":"location","latitude":52.52,"longitude":13.405}   (sent as the built-in `location`)
/// ```
enum WebAction {
    /// Why a posted act was refused, in one line.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// The act `body` asks for.
    static func decode(_ body: [UInt8]) -> Result<ChatAction, Refusal> {
        guard let text = String(validating: body, as: UTF8.self) else { return .failure(Refusal(description: "the request is not UTF-8")) }
        let node: JSONNode
        do {
            node = try JSONParser.parse(text)
        } catch {
            return .failure(Refusal(description: "the request is not JSON (at \(error.position): \(error.message))"))
        }
        guard case .object(let members) = node.value, case .string(let verb)? = members.member("do")?.value else {
            return .failure(Refusal(description: "the request says no act ({\"do\": ...})"))
        }
        func number(_ key: String) -> Int? {
            guard case .number(let value, _)? = members.member(key)?.value, value >= 1, value <= Double(Int32.max), value == value.rounded() else { return nil }
            return Int(value)
        }
        func degrees(_ key: String, within limit: Double) -> Double? {
            guard case .number(let value, _)? = members.member(key)?.value, value.isFinite, abs(value) <= limit else { return nil }
            return value
        }
        func string(_ key: String) -> String? {
            if case .string(let value)? = members.member(key)?.value { value } else { nil }
        }
        // The revision of the card the values were given for: a whole number from 0.
        func revision() -> Int? {
            guard case .number(let value, _)? = members.member("revision")?.value, value >= 0, value <= Double(Int32.max), value == value.rounded() else { return nil }
            return Int(value)
        }
        // A card's values: {"INPUT": "VALUE" or ["VALUE", ...], ...}, as many as a card asks
        // (IMKit 1.4's limits); the host checks each against its input.
        func values() -> [String: [String]]? {
            guard case .object(let entries)? = members.member("values")?.value, entries.count <= MessageCard.inputLimit else { return nil }
            var values: [String: [String]] = [:]
            for entry in entries {
                switch entry.value.value {
                case .string(let text): values[entry.key] = [text]
                case .array(let items) where items.count <= CardInput.optionLimit:
                    var texts: [String] = []
                    for item in items {
                        guard case .string(let text) = item.value else { return nil }
                        texts.append(text)
                    }
                    values[entry.key] = texts
                default: return nil
                }
            }
            return values
        }
        let action: ChatAction? = switch verb {
        case "text": string("text").map(ChatAction.text)
        case "tap": number("message").map { .tap($0, button: string("button")) }
        case "submit":
            number("message").flatMap { number in
                string("button").flatMap { button in values().map { .submit(number, button: button, values: $0, revision: revision()) } }
            }
        case "quick": number("item").map(ChatAction.quick)
        case "bar": number("item").map(ChatAction.bar)
        case "menu": number("item").map { .menu($0) }
        case "more": number("count").map(ChatAction.more)
        case "retry": number("message").map(ChatAction.retry)
        case "reply": number("message").flatMap { number in string("text").map { .reply(to: number, text: $0) } }
        case "recall": number("message").map(ChatAction.recall)
        case "typing": .typing
        case "react": number("message").flatMap { number in string("emoji").map { .react(number, emoji: $0) } }
        case "why": number("message").map(ChatAction.why)
        case "seen": number("through").map { .seen(through: $0) }
        case "block": .block(nil)
        case "unblock": .unblock(nil)
        case "clear": .clear
        case "report": .report
        case "route": .route
        case "location":
            degrees("latitude", within: 90).flatMap { latitude in
                degrees("longitude", within: 180).map { longitude in
                    // The place's name is where it is: the browser gives no name.
                    .send(key: "location", payload: "{\"name\":\"\",\"latitude\":\(latitude),\"longitude\":\(longitude)}")
                }
            }
        default: nil
        }
        guard let action else { return .failure(Refusal(description: "the request's act is not one this page takes, or lacks what it needs")) }
        return .success(action)
    }
}

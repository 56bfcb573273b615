import IMHost
import IMKit

/// A scripted chat for QA: a JSON list of steps, each an object with one action.
///
/// ```json
/// [
///   { "open": "im://chat?rootCateID=1&cateID=12&peer=u42" },
///   { "receive": "house.listing", "payload": { "id": "L1", "title": "Flat", "price": 1, "area": 2, "rooms": 1 } },
///   { "send": "text", "payload": { "text": "hi" } },
///   { "text": "typed into the input bar" },
///   { "tap": 1 }, { "quick": 2 }, { "more": 20 },
///   { "killSwitch": { "lines": ["house"] } }, { "killSwitch": {} }, { "reload": true },
///   { "say": "a line for the reader" }, { "show": true },
///   { "tap": 2, "expectCrash": true }, { "liftQuarantine": "cars" },
///   { "expect": { "page": "legacy", "components": ["inputBar"], "contains": ["Unsupported"],
///                 "absent": ["🏠"], "stored": 2, "tap": "opened listing L1", "quarantined": ["cars"] } }
/// ]
/// ```
///
/// A step marked `"expectCrash": true` must crash (the crash is recorded and quarantined, and
/// the run goes on); any other step that crashes is reported, the run goes on, and it fails.
struct Scenario {
    struct Step {
        /// From 1, as the transcript and errors name it.
        var number: Int
        /// Where the step is written.
        var position: SourcePosition
        var action: Action
        /// The step is meant to crash a line.
        var expectCrash = false
    }

    enum Action {
        case open(String)
        case send(key: String, payload: String)
        case receive(key: String, payload: String)
        case text(String)
        case tap(Int)
        case quick(Int)
        case more(Int)
        case killSwitch(HostConfig.KillSwitch)
        case reload
        case show
        case say(String)
        case expect(Expectation)
        /// Lifts the quarantine of a line (or every entry, when `nil`), as `imhost quarantine lift` does.
        case liftQuarantine(String?)
    }

    struct Expectation {
        /// A line id, or `"legacy"`.
        var page: String?
        /// Component names, in order.
        var components: [String]?
        var contains: [String] = []
        var absent: [String] = []
        /// Messages stored in the open conversation.
        var stored: Int?
        /// What the last tap did.
        var tap: String?
        /// Lines or message keys the host has quarantined.
        var quarantined: [String] = []
    }

    var file: String
    var steps: [Step]

    static let actions = ["open", "send", "receive", "text", "tap", "quick", "more", "killSwitch", "reload", "show", "say", "expect",
                          "liftQuarantine"]

    /// Parses a scenario; every problem names the file, line, column and step.
    static func parse(_ text: String, file: String, lineOrder: [String]) throws(ConfigError) -> Scenario {
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw ConfigError(file: file, position: error.position, path: "", message: "JSON syntax: \(error.message)")
        }
        let reader = DocumentReader(file: file)
        var steps: [Step] = []
        for (index, node) in try reader.array(root, "").enumerated() {
            let path = "step \(index + 1)"
            let members = try reader.members(node, path, allowed: actions + ["payload", "expectCrash"])
            let named = members.filter { $0.key != "payload" && $0.key != "expectCrash" }
            guard named.count == 1, let action = named.first else {
                throw reader.fail(node, path, "a step has exactly one action (\(actions.joined(separator: ", "))), found \(named.count)")
            }
            let value = action.value
            let payload = members.first { $0.key == "payload" }?.value
            let actionPath = path + "." + action.key
            if payload != nil && action.key != "send" && action.key != "receive" {
                throw reader.fail(node, path, "\"payload\" goes with \"send\" or \"receive\" only")
            }
            func count() throws(ConfigError) -> Int {
                let number = try reader.id(value, actionPath)
                guard number > 0 else { throw reader.fail(value, actionPath, "expected a number from 1") }
                return number
            }
            let parsed: Action
            switch action.key {
            case "open": parsed = .open(try reader.string(value, actionPath))
            case "send", "receive":
                guard let payload else { throw reader.fail(node, path, "\"\(action.key)\" needs a \"payload\": the message's JSON") }
                let key = try reader.string(value, actionPath)
                parsed = action.key == "send" ? .send(key: key, payload: payload.jsonText) : .receive(key: key, payload: payload.jsonText)
            case "text": parsed = .text(try reader.string(value, actionPath))
            case "tap": parsed = .tap(try count())
            case "quick": parsed = .quick(try count())
            case "more": parsed = .more(try count())
            case "killSwitch": parsed = .killSwitch(try reader.killSwitch(value, actionPath, lineOrder: lineOrder))
            case "reload": _ = try reader.bool(value, actionPath); parsed = .reload
            case "show": _ = try reader.bool(value, actionPath); parsed = .show
            case "say": parsed = .say(try reader.string(value, actionPath))
            case "liftQuarantine":
                let target = try reader.string(value, actionPath)
                parsed = .liftQuarantine(target == "--all" ? nil : target)
            default: parsed = .expect(try expectation(value, actionPath, reader))
            }
            var step = Step(number: index + 1, position: node.position, action: parsed)
            if let flag = members.first(where: { $0.key == "expectCrash" }) {
                step.expectCrash = try reader.bool(flag.value, path + ".expectCrash")
            }
            steps.append(step)
        }
        return Scenario(file: file, steps: steps)
    }

    private static func expectation(_ node: JSONNode, _ path: String, _ reader: DocumentReader) throws(ConfigError) -> Expectation {
        var expectation = Expectation()
        for member in try reader.members(node, path, allowed: ["page", "components", "contains", "absent", "stored", "tap", "quarantined"]) {
            let memberPath = path + "." + member.key
            func strings() throws(ConfigError) -> [String] {
                if case .string(let one) = member.value.value { return [one] }
                var result: [String] = []
                for (i, element) in try reader.array(member.value, memberPath).enumerated() {
                    result.append(try reader.string(element, memberPath + "[\(i)]"))
                }
                return result
            }
            switch member.key {
            case "page": expectation.page = try reader.string(member.value, memberPath)
            case "components":
                let names = try strings()
                for name in names where ComponentSet(name: name) == nil {
                    throw reader.fail(member.value, memberPath, "unknown component \"\(name)\"; components: \(ComponentSet.all.names.joined(separator: ", "))")
                }
                expectation.components = names
            case "contains": expectation.contains = try strings()
            case "absent": expectation.absent = try strings()
            case "stored": expectation.stored = try reader.id(member.value, memberPath)
            case "quarantined": expectation.quarantined = try strings()
            default: expectation.tap = try reader.string(member.value, memberPath)
            }
        }
        return expectation
    }
}

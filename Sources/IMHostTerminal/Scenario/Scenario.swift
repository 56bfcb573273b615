import IMHost
import IMHostRuntime
import IMKit

/// A scripted chat for QA: a JSON list of steps, each an object with one action. Every chat verb
/// (``ChatVerb``) is a step, keyed by its name, and does what typing it in `imhost chat` does:
///
/// ```json
/// [
///   { "open": "im://chat?rootCateID=1&cateID=12&peer=u42" },
///   { "receive": "house.listing", "payload": { "id": "L1", "title": "Flat", "price": 1, "area": 2, "rooms": 1 } },
///   { "send": "text", "payload": { "text": "hi" } },
///   { "text": "typed into the input bar" },
///   { "tap": 1 }, { "tap": "1 details" }, { "why": 1 }, { "quick": 2 }, { "more": 20 }, { "menu": true }, { "menu": 2 }, { "bar": 5 },
///   { "route": true }, { "open": "house://listing/L1" }, { "offline": true }, { "online": true }, { "reload": true },
/// ```
///
/// and a scenario has steps of its own:
///
/// ```json
///   { "killSwitch": { "lines": ["house"] } }, { "killSwitch": {} },
///   { "say": "a line for the reader" }, { "show": true },
///   { "tap": 2, "expectCrash": true }, { "liftQuarantine": "cars" },
///   { "expect": { "page": "legacy", "components": ["inputBar"], "contains": ["Unsupported"],
///                 "absent": ["🏠"], "stored": 2, "tap": "opened listing L1", "quarantined": ["cars"] } }
/// ]
/// ```
///
/// A step marked `"expectCrash": true` must crash (the crash is recorded and quarantined, and
/// the run goes on); any other step that crashes is reported, the run goes on, and it fails.
///
/// A scenario of several people is an object: its users (each with its own host.json, or the
/// one `play` was given) and its steps, each acting as one of them (the first by default).
/// `play` starts a private broker for them; `await` waits, never on time, until what the
/// page shows meets the expectation (a message arrived, a receipt came back):
///
/// ```json
/// { "users": { "alice": "alice/host.json", "bob": "bob/host.json" },
///   "steps": [ { "as": "bob", "open": "im://chat?rootCateID=1&cateID=12&peer=alice" },
///              { "as": "alice", "open": "im://chat?rootCateID=1&cateID=12&peer=bob" },
///              { "as": "alice", "text": "hello" },
///              { "as": "bob", "await": { "contains": ["hello"] } }, { "as": "bob", "read": true },
///              { "as": "alice", "await": "read ✓✓" } ] }
/// ```
struct Scenario {
    /// One of the people of a scenario.
    struct User {
        var name: String
        /// Their host.json, absolute; `nil` for the one `play` was given.
        var config: String?
    }
    struct Step {
        /// From 1, as the transcript and errors name it.
        var number: Int
        /// Where the step is written.
        var position: SourcePosition
        var action: Action
        /// The step is meant to crash a line.
        var expectCrash = false
        /// Whom it acts as, in a scenario of several people.
        var user: String?
    }

    enum Action {
        /// A chat verb, as `imhost chat` does it.
        case verb(ChatAction)
        case killSwitch(HostConfig.KillSwitch)
        /// The operator's change to the fleet configuration (run by `play` itself, through the
        /// scenario's broker), and how it was written.
        case fleet(FleetCommand.Change, String)
        case show
        case say(String)
        case expect(Expectation)
        /// Lifts the quarantine of a line (or every entry, when `nil`), as `imhost quarantine lift` does.
        case liftQuarantine(String?)
        /// Waits until the page meets the expectation (what arrives through the broker).
        case await(Expectation)
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
    /// The people, in a scenario of several; empty for one (host.json's user).
    var users: [User] = []

    /// The scenario's own steps; the rest are chat verbs.
    static let ownSteps = ["text", "killSwitch", "show", "say", "expect", "liftQuarantine", "await", "fleet"]
    static let actions = ChatVerb.all.compactMap(\.step) + ownSteps

    /// Parses a scenario; every problem names the file, line, column and step.
    /// `folder` is where the files it names (photos) are, when not beside `file` (a bundled demo's).
    static func parse(_ text: String, file: String, folder: String? = nil, lineOrder: [String]) throws(ConfigError) -> Scenario {
        let filesFolder = folder ?? FileSystem.directory(of: FileSystem.resolve(file, against: "."))
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw ConfigError(file: file, position: error.position, path: "", message: "JSON syntax: \(error.message)")
        }
        let reader = DocumentReader(file: file)
        var users: [User] = []
        var stepsNode = root
        if case .object = root.value {
            let members = try reader.members(root, "", allowed: ["users", "steps"])
            guard let usersNode = members.member("users"), let listed = members.member("steps") else {
                throw reader.fail(root, "", "a scenario is a list of steps, or { \"users\": [...], \"steps\": [...] } for several people")
            }
            users = try parseUsers(usersNode, file: file, reader)
            stepsNode = listed
        }
        let names = Set(users.map(\.name))
        var steps: [Step] = []
        for (index, node) in try reader.array(stepsNode, users.isEmpty ? "" : "steps").enumerated() {
            let path = "step \(index + 1)"
            let members = try reader.members(node, path, allowed: actions + ["payload", "photos", "expectCrash", "as"])
            let named = members.filter { !["payload", "photos", "expectCrash", "as"].contains($0.key) }
            guard named.count == 1, let action = named.first else {
                throw reader.fail(node, path, "a step has exactly one action (\(actions.joined(separator: ", "))), found \(named.count)")
            }
            var user: String?
            if let who = members.member("as") {
                let name = try reader.string(who, path + ".as")
                guard names.contains(name) else {
                    throw reader.fail(who, path + ".as", users.isEmpty ? "\"as\" needs the scenario's users: { \"users\": [...], \"steps\": [...] }"
                                                                   : "\"\(name)\" is not one of the scenario's users (\(users.map(\.name).joined(separator: ", ")))")
                }
                user = name
            }
            if action.key == "await" || action.key == "fleet", users.isEmpty {
                throw reader.fail(node, path, action.key == "await" ? "\"await\" waits for what another user sends: it needs the scenario's users"
                                                                    : "\"fleet\" is the operator's change through the scenario's broker: it needs the scenario's users")
            }
            if action.key == "fleet", user != nil {
                throw reader.fail(node, path, "\"fleet\" is the operator's: it takes no \"as\"")
            }
            let value = action.value
            let payload = members.member("payload")
            let actionPath = path + "." + action.key
            let verb = ChatVerb.byStep[action.key]
            if payload != nil && verb?.argument != .keyAndPayload {
                throw reader.fail(node, path, "\"payload\" goes with \"send\" or \"receive\" only")
            }
            let parsed: Action
            let photos = members.member("photos")
            if photos != nil && action.key != "send" && action.key != "receive" {
                throw reader.fail(node, path, "\"photos\" goes with \"send\" or \"receive\" only")
            }
            switch action.key {
            case _ where photos != nil:
                var files: [String] = []
                for (i, element) in try reader.array(photos!, path + ".photos").enumerated() {
                    files.append(FileSystem.resolve(try reader.string(element, path + ".photos[\(i)]"), against: filesFolder))
                }
                let made = try parseVerb(verb!, value, payload: payload, node: node, path: path, reader)
                let parts: (key: String, json: String)? = switch made {
                case .send(let key, let json), .receive(let key, let json): (key, json)
                default: nil
                }
                guard let parts else { throw reader.fail(node, path, "\"photos\" goes with \"send\" or \"receive\" only") }
                parsed = .verb(.withPhotos(key: parts.key, payload: parts.json, files: files, receive: action.key == "receive"))
            case "voice":
                // A file the scenario names is beside it (or in the bundled demo's files).
                parsed = .verb(.voiceFile(FileSystem.resolve(try reader.string(value, actionPath), against: filesFolder)))
            case "file":
                parsed = .verb(.fileFrom(FileSystem.resolve(try reader.string(value, actionPath), against: filesFolder)))
            case _ where verb != nil: parsed = .verb(try parseVerb(verb!, value, payload: payload, node: node, path: path, reader))
            case "text": parsed = .verb(.text(try reader.string(value, actionPath)))
            case "killSwitch": parsed = .killSwitch(try reader.killSwitch(value, actionPath, lineOrder: lineOrder))
            case "show": try yes(value, actionPath, reader); parsed = .show
            case "say": parsed = .say(try reader.string(value, actionPath))
            case "fleet":
                let words = try reader.string(value, actionPath).split(separator: " ").map(String.init)
                switch FleetCommand.parse(words.first ?? "", Array(words.dropFirst())) {
                case .success(let change?): parsed = .fleet(change, words.joined(separator: " "))
                case .success(nil): throw reader.fail(value, actionPath, "a fleet step changes the configuration (kill, lift, kill-message, lift-message, kill-component, lift-component, rollout)")
                case .failure(let usage): throw reader.fail(value, actionPath, usage.text)
                }
            case "liftQuarantine":
                let target = try reader.string(value, actionPath)
                parsed = .liftQuarantine(target == "--all" ? nil : target)
            case "await":
                if case .string(let text) = value.value {
                    parsed = .await(Expectation(contains: [text]))
                } else {
                    parsed = .await(try expectation(value, actionPath, reader))
                }
            default: parsed = .expect(try expectation(value, actionPath, reader))
            }
            var step = Step(number: index + 1, position: node.position, action: parsed)
            if case .fleet = parsed {
                step.user = nil
            } else {
                step.user = users.isEmpty ? nil : (user ?? users[0].name)
            }
            if let flag = members.member("expectCrash") {
                step.expectCrash = try reader.bool(flag, path + ".expectCrash")
            }
            steps.append(step)
        }
        return Scenario(file: file, steps: steps, users: users)
    }

    /// `"users"`: a list of ids (each on the host.json `play` was given), or ids with their
    /// own host.json, relative to the scenario's folder.
    private static func parseUsers(_ node: JSONNode, file: String, _ reader: DocumentReader) throws(ConfigError) -> [User] {
        var users: [User] = []
        switch node.value {
        case .object(let members):
            let folder = FileSystem.directory(of: FileSystem.resolve(file, against: "."))
            for member in members {
                let config = try reader.string(member.value, "users." + member.key)
                users.append(User(name: member.key, config: FileSystem.resolve(config, against: folder)))
            }
        default:
            for (index, element) in try reader.array(node, "users").enumerated() {
                users.append(User(name: try reader.string(element, "users[\(index)]"), config: nil))
            }
        }
        guard !users.isEmpty else { throw reader.fail(node, "users", "name at least one user") }
        for user in users {
            if let problem = TransportID.problem(user.name) {
                throw reader.fail(node, "users", "the user id \"\(TerminalText.safe(user.name))\" \(problem)")
            }
        }
        guard Set(users.map(\.name)).count == users.count else { throw reader.fail(node, "users", "a user is named twice") }
        return users
    }

    /// A verb's step: its argument read from the step's value as the verb takes it.
    private static func parseVerb(_ verb: ChatVerb, _ value: JSONNode, payload: JSONNode?, node: JSONNode, path: String,
                                  _ reader: DocumentReader) throws(ConfigError) -> ChatAction {
        let actionPath = path + "." + (verb.step ?? verb.name)
        // A step's verb makes an act (help and quit are no steps).
        func make(_ parsed: ChatVerb.Parsed) throws(ConfigError) -> ChatAction {
            guard case .action(let action) = verb.make(parsed) else { throw reader.fail(value, actionPath, "\(verb.name) is not a step") }
            return action
        }
        func count() throws(ConfigError) -> Int {
            let number = try reader.id(value, actionPath)
            guard number > 0 else { throw reader.fail(value, actionPath, "expected a number from 1") }
            return number
        }
        switch verb.argument {
        case .none:
            try yes(value, actionPath, reader)
            return try make(.none)
        case .number:
            return try make(.number(try count()))
        case .optionalNumber:
            if case .bool = value.value {
                try yes(value, actionPath, reader)
                return try make(.none)
            }
            return try make(.number(try count()))
        case .rest:
            return try make(.text(try reader.string(value, actionPath)))
        case .optionalRest:
            if case .bool = value.value {
                try yes(value, actionPath, reader)
                return try make(.none)
            }
            return try make(.text(try reader.string(value, actionPath)))
        case .numberAndOptionalWord:
            if case .string(let text) = value.value {
                guard let parsed = ChatVerb.numberAndWord(text) else {
                    throw reader.fail(value, actionPath, "expected a number from 1, or \"N BUTTON\": a number, a space and a button's id")
                }
                return try make(parsed)
            }
            return try make(.numberAndWord(try count(), nil))
        case .press:
            if case .string(let text) = value.value {
                guard let parsed = ChatVerb.press(text) else {
                    throw reader.fail(value, actionPath, "expected a number from 1, or \"N BUTTON\" and perhaps INPUT=VALUE for each input: a number, a space and a button's id")
                }
                return try make(parsed)
            }
            return try make(.numberAndWord(try count(), nil))
        case .numberAndText:
            guard let parsed = ChatVerb.numberAndText(try reader.string(value, actionPath)) else {
                throw reader.fail(value, actionPath, "expected \"N TEXT\": a number from 1, a space and the text")
            }
            return try make(parsed)
        case .keyAndPayload:
            guard let payload else { throw reader.fail(node, path, "\"\(verb.step ?? verb.name)\" needs a \"payload\": the message's JSON") }
            return try make(.message(key: try reader.string(value, actionPath), payload: payload.jsonText))
        }
    }

    /// A step that takes no argument says `true`.
    private static func yes(_ value: JSONNode, _ path: String, _ reader: DocumentReader) throws(ConfigError) {
        guard try reader.bool(value, path) else { throw reader.fail(value, path, "expected true: the step takes no argument") }
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

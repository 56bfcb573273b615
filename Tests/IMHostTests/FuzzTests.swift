import Foundation
import Testing
@testable import IMHost
import IMHostRuntime
@testable import IMHostTerminal
@testable import IMHostWeb
import IMKit
import Synchronization

/// Seeded fuzz tests: inputs a peer, an operator or a file can produce, generated from a seed so
/// a failure repeats. A few seconds in `make test`; `make fuzz` runs many more
/// (`IMHOST_FUZZ_ITERATIONS`), and `IMHOST_FUZZ_SEED` replays one run.
@Suite("Fuzz: hostile input never crashes, never lies")
struct FuzzTests {
    static let iterations = ProcessInfo.processInfo.environment["IMHOST_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 400
    static let seed = ProcessInfo.processInfo.environment["IMHOST_FUZZ_SEED"].flatMap(UInt64.init) ?? 20261123

    /// One line, with nothing a terminal would act on: what every refusal must be where a front
    /// end says it (the core quotes outside text in it as it came).
    static func isOneSafeLine(_ text: String) -> Bool {
        !text.unicodeScalars.contains { TerminalText.needsEscape($0, newlines: false) }
    }

    /// A refusal as every command says it, through ``Output/diagnostic(_:)``: one safe line and
    /// its end.
    static func saidInOneSafeLine(_ refusal: String) -> Bool {
        let said = Said()
        Output(out: { _ in }, err: { line in said.text.withLock { $0 += line } }).diagnostic(refusal)
        let text = said.text.withLock { $0 }
        return text.hasSuffix("\n") && isOneSafeLine(String(text.dropLast()))
    }

    private final class Said: Sendable {
        let text = Mutex("")
    }

    // MARK: Pieces

    static let numbers = ["0", "-0", "1", "-1", "01", "5.", "5.0", ".5", "1e2", "1E+2", "1e-400", "1e400", "2017.5", "+1", "-",
                          "9007199254740993", "100000000000000000000", "0.1", "123456789012345", "1234567890123456", "NaN", "0x10"]
    static let strings = [#""""#, #""plain""#, #""esc\"aped""#, #""\u00e9""#, #""\u+041""#, #""line\nbreak""#, "\"raw\u{1}ctl\"",
                          "\"bidi\u{202E}x\"", #""🚗""#, "\"unterminated", #""\ud800""#, #""\uD83D\uDE97""#]
    static let others = ["true", "false", "null", "[]", "{}", "[1,2]", #"{"a":1}"#, "tru", "nul"]

    static func value(_ random: inout SeededGenerator) -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<4: numbers.randomElement(using: &random)!
        case 4..<8: strings.randomElement(using: &random)!
        default: others.randomElement(using: &random)!
        }
    }

    static func object(keys: [String], _ random: inout SeededGenerator) -> String {
        var members: [String] = []
        for key in keys where Int.random(in: 0..<6, using: &random) > 0 {
            members.append("\"\(key)\":" + value(&random))
        }
        if Bool.random(using: &random), let key = keys.randomElement(using: &random) { members.append("\"\(key)\":" + value(&random)) }
        members.shuffle(using: &random)
        let spaces = [" ", "", "\n", "\t", "\r\n"]
        var text = "{" + members.joined(separator: "," + spaces.randomElement(using: &random)!) + "}"
        if Int.random(in: 0..<8, using: &random) == 0 { text += spaces.randomElement(using: &random)! + "x" }
        return text
    }

    /// Flips, drops or inserts a few bytes.
    static func mutate(_ text: String, _ random: inout SeededGenerator) -> String {
        var bytes = Array(text.utf8)
        let tokens = Array("{}[]\",:\\ \n\r\t0-e.u".utf8) + [0x00, 0x1B, 0x7F, 0xC3, 0xE2, 0x80, 0xAE, 0xFF]
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            guard !bytes.isEmpty else { break }
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: bytes[at] = tokens.randomElement(using: &random)!
            case 1: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...8, using: &random)))
            default: bytes.insert(tokens.randomElement(using: &random)!, at: at)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Payloads

    @Test("the built-in builders read a payload exactly as JSONDecoder does: the same value, or both refuse")
    func builtinPayloads() throws {
        var random = SeededGenerator(seed: Self.seed)
        func check<Builder: MessageBuilder>(_ builder: Builder, keys: [String]) where Builder.Content: Decodable & Equatable {
            for _ in 0..<Self.iterations {
                let json = Self.object(keys: keys, &random)
                let fast = Result { try builder.content(from: MessagePayload(json: json)) }
                let reference = Result { try JSONDecoder().decode(Builder.Content.self, from: Data(json.utf8)) }
                switch (fast, reference) {
                case (.success(let a), .success(let b)): #expect(a == b, "\(builder.key) \(json)")
                case (.failure, .failure): break
                default: Issue.record("\(builder.key) reads \(json) as \(fast), JSONDecoder as \(reference) (seed \(Self.seed))")
                }
            }
        }
        check(BuiltinBuilders.Text(), keys: ["text"])
        check(BuiltinBuilders.Image(), keys: ["url", "width", "height"])
        check(BuiltinBuilders.Voice(), keys: ["url", "seconds"])
        check(BuiltinBuilders.Location(), keys: ["name", "latitude", "longitude"])
    }

    @Test("any payload of any key, received, shows as a message or a placeholder with a one-line reason")
    func payloadsOnAPage() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let page = try host.open(houseURL)
        var random = SeededGenerator(seed: Self.seed &+ 1)
        // An array, not a dictionary: its order must not change from run to run.
        let keys = [("house.listing", ["id", "title", "price", "area", "rooms"]), ("jobs.interview", ["company", "position", "time", "place"]),
                    ("text", ["text"]), ("image", ["url", "width", "height"]), ("nobody.knows", ["x"])]
        for round in 0..<min(Self.iterations, 300) {
            let (key, fields) = keys.randomElement(using: &random)!
            let json = Self.object(keys: fields, &random)
            do {
                try page.receive(key: key, payload: MessagePayload(json: json))
            } catch {
                #expect(error.code == .tooLarge, "\(error)")
                continue
            }
            let shown = try #require(try page.presented(width: [24, 40, 72].randomElement(using: &random)!).last)
            #expect(shown.message.shown.envelope.payload.json == json, "stored exactly as received")
            if let why = shown.message.degrade {
                // The reason quotes the payload as it is; each front end escapes it where it draws it.
                let view = try page.view(width: 72)
                let drawn = PageRenderer(width: 72, colors: false).render(view)
                #expect(drawn.split(separator: "\n").allSatisfy { Self.isOneSafeLine(String($0)) }, "round \(round): \(why.description.debugDescription) for \(json.debugDescription)")
                let html = PageHTML.body(view)
                #expect(!html.unicodeScalars.contains { $0 != "\t" && TerminalText.needsEscape($0, newlines: true) }, "round \(round): \(why.description.debugDescription)")
                #expect(Self.saidInOneSafeLine(why.description), "as /why says it")
            }
        }
    }

    // MARK: Documents

    @Test("host.json, mutated: loads, or is refused in one line at a place inside the file; never more lenient than JSONSerialization")
    func hostJSON() throws {
        let base = try String(contentsOfFile: BuildProducts.repository + "/host.json", encoding: .utf8)
        var random = SeededGenerator(seed: Self.seed &+ 2)
        for _ in 0..<Self.iterations {
            let text = Self.mutate(base, &random)
            let parsed = Result { () throws(JSONSyntaxError) in try JSONParser.parse(text) }
            let reference = (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil
            if case .success = parsed, !reference {
                Issue.record("JSONParser accepts what JSONSerialization refuses: \(text.debugDescription)")
            }
            do {
                _ = try HostConfig.parse(text, file: "host.json")
            } catch {
                #expect(Self.saidInOneSafeLine(error.description), "\(error.description)")
                if let line = error.line {
                    let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" }
                    #expect(line >= 1 && line <= lines.count + 1, "\(error.description)")
                }
            }
        }
    }

    @Test("scenario files, mutated: parse, or are refused in one line with their place")
    func scenarios() throws {
        let base = """
            [
              { "open": "im://chat?rootCateID=1&cateID=12&peer=u42" },
              { "receive": "house.listing", "payload": { "id": "L1", "title": "Flat", "price": 4200, "area": 56, "rooms": 2 } },
              { "send": "text", "payload": { "text": "hi" } },
              { "tap": 1 }, { "quick": 2 }, { "more": 5 },
              { "killSwitch": { "lines": ["house"], "components": ["inputBar"] } },
              { "expect": { "page": "legacy", "contains": ["Unsupported"], "stored": 2, "tap": "x" } }
            ]
            """
        var random = SeededGenerator(seed: Self.seed &+ 3)
        for _ in 0..<Self.iterations {
            let text = Self.mutate(base, &random)
            do {
                _ = try Scenario.parse(text, file: "s.json", lineOrder: ["house", "jobs"])
            } catch {
                #expect(Self.saidInOneSafeLine(error.description), "\(error.description)")
                #expect(error.description.hasPrefix("s.json"), "\(error.description)")
            }
        }
    }

    // MARK: Jump URLs

    @Test("jump URLs built from hostile pieces: decided or refused in one safe line, and route and open agree")
    func jumpURLs() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        var random = SeededGenerator(seed: Self.seed &+ 4)
        let schemes = ["im", "IM", "Im", "house", "http", "im:", ""]
        let hosts = ["chat", "CHAT", "chat/", "chat//", "chat/house", "chat/jobs", "chat/nosuch", "chat/House", "chat/house/x", "chatx", "listing/L1"]
        let parameters = ["rootCateID=1", "rootCateID=9", "rootCateID=-1", "rootCateID=99999999999", "rootCateID=1&rootCateID=2",
                          "cateID=12", "cateID=13", "cateID=", "peer=u42", "peer=%E5%BC%A0%E4%B8%89", "peer=%1B%5B2J", "peer=a%E2%80%AEb",
                          "peer=%zz", "peer=", "infoID=L1", "x=%", "&&", "#frag"]
        for round in 0..<Self.iterations {
            let query = (0..<Int.random(in: 0...4, using: &random)).map { _ in parameters.randomElement(using: &random)! }.joined(separator: "&")
            let url = schemes.randomElement(using: &random)! + "://" + hosts.randomElement(using: &random)! + (Bool.random(using: &random) ? "?" : "") + query
            let routed = Result { () throws(JumpURL.Malformed) in try host.converter.decide(chatURL: url) }
            if case .failure(let error) = routed {
                #expect(Self.saidInOneSafeLine(error.description), "\(error.description)")
            }
            // Opening builds a page: a sample of the URLs is enough to hold the two together.
            guard round % 8 == 0, url.lowercased().hasPrefix("im://chat") else { continue }
            let opened = Result { () throws(ChatHost.OpenError) in try host.open(route: url) }
            switch (routed, opened) {
            case (.success(let decision), .success(.page(let page))):
                #expect(page.decision.url == decision.url, "\(url)")
            case (.failure, .failure):
                break
            case (.success(let decision), .failure(let error)) where decision.jump.peer == nil:
                #expect(error.description.contains("no peer"), "\(url): \(error)")
            default:
                Issue.record("route and open disagree on \(url): \(routed) vs \(opened) (seed \(Self.seed))")
            }
        }
    }
}

import IMHost
import IMHostRuntime
import IMKit

/// One chat verb, declared once: its name, what it takes, what it does. The chat's help, its
/// "did you mean", the parser of typed lines and the scenario parser are all made from
/// ``ChatVerb/all``, and ``ChatDriver`` runs what they parse, for `chat` and `play` alike.
struct ChatVerb: Sendable {
    /// What the verb takes.
    enum Argument: Sendable {
        /// Nothing (a scenario step says `true`).
        case none
        /// A number from 1.
        case number
        /// A number from 1, or nothing (a scenario step says `true`).
        case optionalNumber
        /// The rest of the line: a URL, or text.
        case rest
        /// The rest of the line, or nothing (a scenario step says `true`).
        case optionalRest
        /// A message key and its JSON payload (a scenario step has `"payload"`).
        case keyAndPayload
        /// A number from 1, then perhaps a word (a scenario step says `N` or `"N WORD"`).
        case numberAndOptionalWord
        /// A number from 1, then perhaps a button's id and values for its card's inputs
        /// (`N BUTTON INPUT=VALUE ...`).
        case press
        /// A number from 1, then text (a scenario step says `"N TEXT"`).
        case numberAndText
    }

    /// Typed as `/name`.
    let name: String
    /// Its scenario step's key; `nil` for the chat's own verbs (`/help`, `/quit`).
    let step: String?
    let argument: Argument
    /// How the argument is shown in the help: `N`, `URL`, `KEY JSON`.
    let shape: String
    let summary: String
    /// How it is typed, for the chat's help.
    var example: String? = nil
    /// What it asks for, from the parsed argument.
    let make: @Sendable (Parsed) -> Typed

    /// What a typed line asks for: an act for the chat's worker, or the terminal's own help
    /// or leaving.
    enum Typed: Equatable, Sendable {
        case action(ChatAction)
        case help
        case quit
    }

    /// A parsed argument.
    enum Parsed: Sendable {
        case none
        case number(Int)
        case text(String)
        case message(key: String, payload: String)
        case numberAndWord(Int, String?)
        /// A message's number, a button's id and each input's value.
        case press(Int, String, [String: [String]])
        case numberAndText(Int, String)
    }

    static let all: [ChatVerb] = [
        ChatVerb(name: "send", step: "send", argument: .keyAndPayload, shape: "KEY JSON",
                 summary: "send a message of any kind", example: "/send location {\"name\":\"Home\",\"latitude\":1,\"longitude\":2}",
                 make: { if case .message(let key, let payload) = $0 { .action(.send(key: key, payload: payload)) } else { .help } }),
        ChatVerb(name: "photo", step: "photo", argument: .rest, shape: "PATH",
                 summary: "send a photo: a PNG, JPEG or WebP file of at most limits.photoBytes (1 MiB)", example: "/photo ~/flat.jpg",
                 make: { .action(.withPhotos(key: "photo", payload: "{}", files: [$0.text ?? ""])) }),
        ChatVerb(name: "voice", step: "voice", argument: .rest, shape: "PATH",
                 summary: "send a voice message: a WebM or Ogg file with Opus, at most 60 s and 1 MiB", example: "/voice ~/hello.webm",
                 make: { .action(.voiceFile($0.text ?? "")) }),
        ChatVerb(name: "file", step: "file", argument: .rest, shape: "PATH",
                 summary: "send a file: a document of at most limits.fileBytes (10 MiB), downloaded by the peer, never opened", example: "/file ~/cv.pdf",
                 make: { .action(.fileFrom($0.text ?? "")) }),
        ChatVerb(name: "recv", step: "receive", argument: .keyAndPayload, shape: "KEY JSON",
                 summary: "store a message from the peer, sending nothing", example: "/recv house.listing {\"id\":\"L1\",...}",
                 make: { if case .message(let key, let payload) = $0 { .action(.receive(key: key, payload: payload)) } else { .help } }),
        ChatVerb(name: "tap", step: "tap", argument: .press, shape: "N [BUTTON [INPUT=VALUE ...]]",
                 summary: "tap message #N, or press its card's button BUTTON (by id), giving its inputs' values (several choices: a,b)",
                 example: "/tap 2 book day=2026-12-05 at=10:00 note=after work",
                 make: {
                     switch $0 {
                     case .numberAndWord(let number, let button): .action(.tap(number, button: button))
                     case .press(let number, let button, let values): .action(.submit(number, button: button, values: values))
                     default: .action(.tap($0.number ?? 0))
                     }
                 }),
        ChatVerb(name: "why", step: "why", argument: .number, shape: "N", summary: "why message #N shows as a placeholder, in full",
                 make: { .action(.why($0.number ?? 0)) }),
        ChatVerb(name: "quick", step: "quick", argument: .number, shape: "N", summary: "tap quick reply N",
                 make: { .action(.quick($0.number ?? 0)) }),
        ChatVerb(name: "menu", step: "menu", argument: .optionalNumber, shape: "[N]", summary: "show the dropdown menu, or pick item N",
                 make: { .action(.menu($0.number)) }),
        ChatVerb(name: "bar", step: "bar", argument: .number, shape: "N", summary: "pick bottom-bar item N",
                 make: { .action(.bar($0.number ?? 0)) }),
        ChatVerb(name: "more", step: "more", argument: .optionalNumber, shape: "[N]", summary: "show N (default 20) older messages",
                 make: { .action(.more($0.number ?? 20)) }),
        ChatVerb(name: "route", step: "route", argument: .none, shape: "", summary: "why this page was chosen",
                 make: { _ in .action(.route) }),
        ChatVerb(name: "open", step: "open", argument: .rest, shape: "URL",
                 summary: "open a URL through the route table: a chat, or a line's page", example: "/open house://listing/L1001",
                 make: { .action(.open($0.text ?? "")) }),
        ChatVerb(name: "offline", step: "offline", argument: .none, shape: "", summary: "drop the connection: what you send waits as pending",
                 make: { _ in .action(.offline) }),
        ChatVerb(name: "online", step: "online", argument: .none, shape: "", summary: "reconnect: pending messages are delivered, in order",
                 make: { _ in .action(.online) }),
        ChatVerb(name: "reload", step: "reload", argument: .none, shape: "",
                 summary: "read host.json again (also on SIGHUP or when the file changes)",
                 make: { _ in .action(.reload) }),
        ChatVerb(name: "chats", step: "chats", argument: .none, shape: "", summary: "the conversations: newest first, unread counts",
                 make: { _ in .action(.chats) }),
        ChatVerb(name: "search", step: "search", argument: .rest, shape: "WORDS", summary: "find messages holding every word, newest first",
                 make: { .action(.search($0.text ?? "")) }),
        ChatVerb(name: "read", step: "read", argument: .none, shape: "", summary: "mark what the page shows as read (a chat does it as it shows)",
                 make: { _ in .action(.read) }),
        ChatVerb(name: "retry", step: "retry", argument: .number, shape: "N", summary: "send failed message #N again",
                 make: { .action(.retry($0.number ?? 0)) }),
        ChatVerb(name: "reply", step: "reply", argument: .numberAndText, shape: "N TEXT",
                 summary: "send TEXT as a reply to message #N (yours or theirs): it shows quoting #N", example: "/reply 3 Saturday at 10 suits me",
                 make: { if case .numberAndText(let number, let text) = $0 { .action(.reply(to: number, text: text)) } else { .help } }),
        ChatVerb(name: "recall", step: "recall", argument: .number, shape: "N",
                 summary: "recall your message #N, within limits.recallSeconds (2 minutes) of sending it, on every device of you both",
                 make: { .action(.recall($0.number ?? 0)) }),
        ChatVerb(name: "react", step: "react", argument: .numberAndOptionalWord, shape: "N [EMOJI]",
                 summary: "react to message #N with one of \(Envelope.Reaction.emoji.joined(separator: " ")); without EMOJI, take yours back",
                 example: "/react 3 👍",
                 make: { if case .numberAndWord(let number, let emoji) = $0 { .action(.react(number, emoji: emoji ?? "")) } else { .action(.react($0.number ?? 0, emoji: "")) } }),
        ChatVerb(name: "block", step: "block", argument: .optionalRest, shape: "[PEER]",
                 summary: "refuse a peer's messages (default: this chat's), as the menu's Block does",
                 make: { .action(.block($0.text)) }),
        ChatVerb(name: "unblock", step: "unblock", argument: .optionalRest, shape: "[PEER]", summary: "take a blocked peer's messages again",
                 make: { .action(.unblock($0.text)) }),
        ChatVerb(name: "clear", step: "clear", argument: .none, shape: "",
                 summary: "clear this chat on this device (your other devices keep theirs), as the menu's Clear does in a browser after asking",
                 make: { _ in .action(.clear) }),
        ChatVerb(name: "report", step: "report", argument: .none, shape: "",
                 summary: "report this person to the app's operator, with their last messages here, as the menu's Report does in a browser after asking",
                 make: { _ in .action(.report) }),
        ChatVerb(name: "help", step: nil, argument: .none, shape: "", summary: "this text", make: { _ in .help }),
        ChatVerb(name: "quit", step: nil, argument: .none, shape: "", summary: "leave (end of input does too)", make: { _ in .quit }),
    ]

    /// Verbs by name, and by scenario step.
    static let byName = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
    static let byStep = Dictionary(uniqueKeysWithValues: all.compactMap { verb in verb.step.map { ($0, verb) } })

    /// The chat's help, made from the verbs.
    static let help: String = {
        var lines = ["Type a line to send it as text (start it with // to send a line beginning with /)."]
        for verb in all {
            let usage = "/" + verb.name + (verb.shape.isEmpty ? "" : " " + verb.shape)
            lines.append("  " + usage.padding(17, cut: false) + (usage.count >= 17 ? " " : "") + verb.summary
                         + (verb.example.map { ", e.g. " + $0 } ?? ""))
        }
        return lines.joined(separator: "\n")
    }()

    /// The scenario steps of the verbs, for `play --help`, made from the verbs.
    static let stepHelp: String = all.compactMap { verb -> String? in
        guard let step = verb.step else { return nil }
        let value: String = switch verb.argument {
        case .none: "true"
        case .number: "N"
        case .optionalNumber: "N or true"
        case .rest: verb.shape == "URL" ? "URL" : "\"\(verb.shape)\""
        case .optionalRest: "\"\(verb.shape.trimmingCharacters(in: ["[", "]"]))\" or true"
        case .keyAndPayload: "KEY, \"payload\": JSON"
        case .numberAndOptionalWord: "N or \"N BUTTON\""
        case .press: "N or \"N BUTTON INPUT=VALUE ...\""
        case .numberAndText: "\"N TEXT\""
        }
        let shape = "{ \"\(step)\": \(value) }"
        return "  " + shape.padding(37, cut: false) + (shape.count >= 37 ? " " : "") + verb.summary
    }.joined(separator: "\n")

    /// A typed line as an action, or why it is not one (one line, with a hint for a near miss).
    static func parse(typed line: String) -> Result<Typed, UsageError> {
        let trimmed = line.trimmingSpaces
        if trimmed.hasPrefix("//") { return .success(.action(.text(String(trimmed.dropFirst())))) }
        guard trimmed.hasPrefix("/") else { return .success(.action(.text(trimmed))) }
        let parts = trimmed.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true).map(String.init)
        let name = String(parts[0].dropFirst())
        let rest = parts.count > 1 ? parts[1].trimmingSpaces : ""
        guard let verb = byName[name] ?? (name == "exit" ? byName["quit"] : nil) else {
            let hint = closestMatch(to: "/" + name, among: all.map { "/" + $0.name }).map { "; did you mean \($0)?" } ?? ""
            return .failure(UsageError(description: "unknown command /\(name)\(hint); type /help"))
        }
        return verb.parse(typed: rest).map(verb.make)
    }

    /// Why a typed verb's argument is wrong, in one line.
    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    private func parse(typed rest: String) -> Result<Parsed, UsageError> {
        let numbered = argument == .number || argument == .optionalNumber || argument == .numberAndOptionalWord || argument == .numberAndText || argument == .press
        let usage = UsageError(description: "usage: /\(name)\(shape.isEmpty ? "" : " " + shape)" + (numbered ? ", with N a number from 1" : ""))
        switch argument {
        case .none:
            return rest.isEmpty ? .success(.none) : .failure(usage)
        case .number, .optionalNumber:
            if rest.isEmpty { return argument == .optionalNumber ? .success(.none) : .failure(usage) }
            guard let number = Int(rest), number > 0 else { return .failure(usage) }
            return .success(.number(number))
        case .rest:
            return rest.isEmpty ? .failure(usage) : .success(.text(rest))
        case .optionalRest:
            return .success(rest.isEmpty ? .none : .text(rest))
        case .numberAndOptionalWord:
            return Self.numberAndWord(rest).map { .success($0) } ?? .failure(usage)
        case .press:
            return Self.press(rest).map { .success($0) } ?? .failure(usage)
        case .numberAndText:
            return Self.numberAndText(rest).map { .success($0) } ?? .failure(usage)
        case .keyAndPayload:
            let pieces = rest.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true).map(String.init)
            guard pieces.count == 2 else {
                return .failure(UsageError(description: "usage: /\(name) KEY JSON, e.g. /\(name) text {\"text\":\"hi\"}"))
            }
            do {
                _ = try JSONParser.parse(pieces[1])
            } catch {
                return .failure(UsageError(description: "/\(name): the JSON is not valid at column \(error.position.column): \(error.message)"))
            }
            return .success(.message(key: pieces[0], payload: pieces[1]))
        }
    }
}

extension ChatVerb {
    /// `N` or `N WORD` (spaces around and between), with N a number from 1 and WORD one word.
    static func numberAndWord(_ text: String) -> ChatVerb.Parsed? {
        let pieces = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard (1...2).contains(pieces.count), let number = Int(pieces[0]), number > 0 else { return nil }
        return .numberAndWord(number, pieces.count == 2 ? pieces[1] : nil)
    }
}

extension ChatVerb {
    /// `N`, `N BUTTON`, or `N BUTTON INPUT=VALUE ...`: each `INPUT=` starts an input's value
    /// (an input's id, then `=`), which runs to the next one, so a value may hold spaces
    /// (`note=after work`). `nil` when it is none of these, or an input is given twice.
    static func press(_ text: String) -> ChatVerb.Parsed? {
        let pieces = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard pieces.count > 2 else { return numberAndWord(text) }
        guard let number = Int(pieces[0]), number > 0 else { return nil }
        var values: [String: [String]] = [:]
        var current: String?
        for piece in pieces.dropFirst(2) {
            if let equals = piece.firstIndex(of: "="), CardButton.isValidID(String(piece[..<equals])) {
                let id = String(piece[..<equals])
                guard values[id] == nil else { return nil }
                values[id] = [String(piece[piece.index(after: equals)...])]
                current = id
            } else if let current {
                values[current]![0] += " " + piece
            } else {
                return nil
            }
        }
        return .press(number, pieces[1], values)
    }
}

extension ChatVerb {
    /// `N TEXT`, with N a number from 1 and TEXT the rest of the line (not empty).
    static func numberAndText(_ text: String) -> ChatVerb.Parsed? {
        let pieces = text.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard pieces.count == 2, let number = Int(pieces[0]), number > 0 else { return nil }
        let rest = pieces[1].trimmingPrefix(while: { $0 == " " })
        return rest.isEmpty ? nil : .numberAndText(number, String(rest))
    }
}

extension ChatVerb.Parsed {
    var number: Int? { if case .number(let number) = self { number } else { nil } }
    var text: String? { if case .text(let text) = self { text } else { nil } }
}

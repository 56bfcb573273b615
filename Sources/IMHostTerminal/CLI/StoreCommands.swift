import IMHost
import IMHostRuntime
import IMKit

/// The commands that read the signed-in user's store without opening a chat or running line
/// code: `imhost chats`, `imhost search`, `imhost store check`.
enum StoreCommands {
    static let chats = CommandLineTool.Command(
        name: "chats",
        summary: "list the conversations: newest first, unread counts, the page each opens on",
        options: [.json("the same as JSON, each with the URL that opens it"), .user],
        help: """
            Lists the signed-in user's conversations, newest first: the peer, how many of their
            messages are unread, when the last message came, the last message itself, and the
            page the conversation opens on (its last jump's rootCateID, cateID and infoID).
            Open one with  imhost chat --peer ID. Reads the store only; runs no line code.
            """,
        run: { arguments, output in
            guard arguments.positionals.isEmpty else {
                output.diagnostic("imhost chats: takes no arguments, got '\(arguments.positionals[0])'; see imhost chats --help")
                return CommandLineTool.ExitCode.usage
            }
            return withStore("chats", arguments, output) { (store) throws(StoreError) in
                let list = try store.conversations()
                if arguments.flags.contains("--json") {
                    output.out(JSONOutput.encode(list.map(StoreViews.json)))
                } else {
                    output.out(StoreViews.lines(list).joined(separator: "\n") + "\n")
                }
                return CommandLineTool.ExitCode.ok
            }
        })

    static let search = CommandLineTool.Command(
        name: "search",
        summary: "find messages by their words: every word required, newest first",
        arguments: "WORDS...",
        options: [.option("--peer", .id("peer"), "only the conversation with ID"), .json(), .user],
        help: """
            Finds the signed-in user's messages that hold every one of WORDS (a text message's
            text, a card's strings), newest first, at most 50: the conversation and the
            message's number in it (open it with imhost chat --peer ID, then /why N). Chinese
            words are found as Latin ones are; a word shorter than three characters is looked
            for in the newest 100,000 messages. Each word is taken as it is written: quotes,
            stars and NEAR are words, not syntax. No match says so and exits 0.
            """,
        run: { arguments, output in
            let words = arguments.positionals.flatMap { $0.split(separator: " ").map(String.init) }
            guard !words.isEmpty else {
                output.diagnostic("imhost search: expected the words to find; see imhost search --help")
                return CommandLineTool.ExitCode.usage
            }
            return withStore("search", arguments, output) { (store) throws(StoreError) in
                let hits = try store.search(words, peer: arguments.options["--peer"], limit: 50)
                if arguments.flags.contains("--json") {
                    output.out(JSONOutput.encode(hits.map(StoreViews.json)))
                } else {
                    output.out(StoreViews.lines(hits, words: words).joined(separator: "\n") + "\n")
                }
                return CommandLineTool.ExitCode.ok
            }
        })

    static let store = CommandLineTool.Command(
        name: "store",
        summary: "look at the store: imhost store check",
        subcommands: [
            .init(name: "check", summary: "run SQLite's quick_check over the signed-in user's database (every page and index looked at): print \"ok\", or what is wrong (exit 1)",
                  options: [.user]),
        ],
        help: """
            The database is <data>/users/<user>/messages.sqlite3; the sqlite3 shell reads it
            too (see docs/reference/store.md). What to do when it is damaged:
            docs/operating.md, "When a database is damaged".
            """,
        run: { arguments, output in
            guard arguments.positionals == ["check"] else {
                output.diagnostic("imhost store: expected 'check', got '\(arguments.positionals.joined(separator: " "))'; see imhost store --help")
                return CommandLineTool.ExitCode.usage
            }
            // What it found is its answer: said on standard output.
            return withStore("store check", arguments, output, say: { output.out(TerminalText.safe($0) + "\n") }) { (store) throws(StoreError) in
                let found = try store.check()
                // Damage found is said (by the store's note): the new database's "ok" would hide it.
                guard !store.foundDamage else { return CommandLineTool.ExitCode.failure }
                output.out(TerminalText.safe("\(store.path): " + found.joined(separator: "; ")) + "\n")
                return found == ["ok"] ? CommandLineTool.ExitCode.ok : CommandLineTool.ExitCode.failure
            }
        })

    /// Opens the signed-in user's store, runs `body`, and turns a store's refusal into one line
    /// and exit 1. What opening and `body` did that a person should know (a damaged database
    /// moved aside, and what was read out of it) goes to `say`: standard error by default.
    static func withStore(_ command: String, _ arguments: Arguments, _ output: Output,
                          say: ((String) -> Void)? = nil, _ body: (MessageStore) throws(StoreError) -> Int32) -> Int32 {
        guard let config = CommandLineTool.loadConfig(arguments, output: output) else { return CommandLineTool.ExitCode.usage }
        let say = say ?? { output.diagnostic("imhost: " + $0) }
        do throws(StoreError) {
            let store = try MessageStore(dataFolder: config.dataFolder, user: arguments.options["--user"] ?? config.user,
                                         say: { output.diagnostic("imhost: " + $0) })
            for note in store.takeNotes() { say(note) }
            defer { for note in store.takeNotes() { say(note) } }
            return try body(store)
        } catch {
            output.diagnostic("imhost \(command): \(error)")
            return CommandLineTool.ExitCode.failure
        }
    }
}

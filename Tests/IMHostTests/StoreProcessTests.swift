import Foundation
import Testing
@testable import IMHost
import IMKit

/// The store as the `imhost` commands use it: several writers, a writer killed, a full disk and
/// a file-size limit, a read-only folder, damage, the 1.0 import, and the commands that read it.
@Suite("The store under imhost", .serialized, .timeLimit(.minutes(5)))
struct StoreProcessTests {
    static let url = "im://chat?rootCateID=1&cateID=12&peer=u42"

    /// Every message of the conversation with u42, from the database itself.
    func stored(_ workspace: Workspace, peer: String = "u42") throws -> [StoredMessage] {
        try MessageStore(dataFolder: workspace.data, user: "me").stored(of: peer, endingBefore: nil, limit: 1_000_000)
    }

    @Test("two chats of one user at once: 2 x 300 messages, 600 distinct numbers, none lost")
    func twoWriters() throws {
        let workspace = try Workspace.standard()
        let first = try RunningProcess(BuildProducts.imhost, ["chat", Self.url], in: workspace.root)
        let second = try RunningProcess(BuildProducts.imhost, ["chat", Self.url], in: workspace.root)
        for n in 1...300 {
            first.send("first \(n)")
            second.send("second \(n)")
        }
        #expect(first.finish().status == 0)
        #expect(second.finish().status == 0)
        let messages = try stored(workspace)
        #expect(messages.count == 600)
        #expect(messages.map(\.position) == Array(0..<600), "numbers are taken in the write transaction")
        #expect(Set(messages.compactMap(\.envelope.globalID)).count == 600)
        for name in ["first", "second"] {
            let mine = messages.map(\.envelope.payload.json).filter { $0.contains(name) }
            #expect(mine == (1...300).map { #"{"text":"\#(name) \#($0)"}"# }, "each writer's messages, in its order")
        }
    }

    @Test("a chat that starts takes up the drafts of a chat that is gone, never those of another chat of the user that runs now (which would send them twice)")
    func draftsOfARunningChat() throws {
        let workspace = try Workspace.standard()
        let store = try MessageStore(dataFolder: workspace.data, user: "me")
        // Kept by this test's process, which runs: as a running chat's supervisor keeps what is typed.
        let kept = try store.addDraft(peer: "u42", typed: "typed in a chat that still runs", at: 1)
        let chat = try imhost(["chat", Self.url], input: "/quit\n", in: workspace)
        #expect(chat.status == 0, "\(chat.stderr)")
        #expect(!chat.stdout.contains("taking up what you typed"), "\(chat.stdout)")
        #expect(try stored(workspace).isEmpty)
        #expect(try store.drafts(of: "u42").map(\.id) == [kept])
        // Sent by its own chat, it is sent once; sent again (by a chat that took it up meanwhile), it is refused.
        _ = try store.storeOutgoing(to: "u42", key: "text", payload: MessagePayload(json: #"{"text":"typed in a chat that still runs"}"#), at: 2, draft: kept)
        #expect(throws: StoreError.self) {
            try store.storeOutgoing(to: "u42", key: "text", payload: MessagePayload(json: #"{"text":"typed in a chat that still runs"}"#), at: 3, draft: kept)
        }
        #expect(try stored(workspace).count == 1)
    }

    @Test("kill -9 while sending: every send reported is there, once, and nothing is half written")
    func killedWriter() throws {
        let workspace = try Workspace.standard()
        let doomed = try RunningProcess(BuildProducts.imhost, ["chat", Self.url], in: workspace.root)
        for n in 1...400 { doomed.send("doomed \(n)") }
        try #require(doomed.waitFor("│ doomed 40 │"), "it got going")
        for worker in children(of: doomed.pid) { kill(worker, SIGKILL) }
        doomed.signal(SIGKILL)
        let shown = doomed.finish().stdout
        let reported = (1...400).filter { shown.contains("│ doomed \($0) │") }
        let messages = try stored(workspace)
        #expect(messages.map(\.position) == Array(0..<messages.count))
        let texts = Set(messages.map(\.envelope.payload.json))
        for n in reported { #expect(texts.contains(#"{"text":"doomed \#(n)"}"#), "message \(n) was shown as sent, so it is on disk") }
        #expect(texts.count == messages.count, "none twice")
        let check = try imhost(["store", "check"], in: workspace)
        #expect(check.status == 0 && check.stdout.hasSuffix(": ok\n"), "\(check.stdout)\(check.stderr)")
    }

    @Test("a file-size limit refuses the send in one line naming the file; earlier messages stay, and later ones go in")
    func fileSizeLimit() throws {
        let workspace = try Workspace.standard()
        _ = try imhost(["chat", Self.url], input: "before\n", in: workspace)
        let text = String(repeating: "长", count: 2000)
        // RLIMIT_FSIZE: a write past it fails with EFBIG, as it would with ENOSPC.
        let result = try run("/usr/bin/prlimit", ["--fsize=65536", BuildProducts.imhost, "chat", Self.url],
                             input: (1...40).map { "\($0) \(text)" }.joined(separator: "\n") + "\n", currentDirectory: workspace.root)
        #expect(result.status == 0, "\(result.stderr)")
        let path = workspace.data + "/users/me/messages.sqlite3"
        #expect(result.stdout.contains("not sent: the message could not be stored: cannot write \(path): ")
                && result.stdout.contains("the disk is full or a file-size limit was reached; nothing was stored"),
                "\(result.stdout.suffix(1500))")
        let after = try imhost(["chat", Self.url], input: "after\n", in: workspace)
        #expect(after.stdout.contains("│ after │"))
        let messages = try stored(workspace)
        #expect(messages.first?.envelope.payload.json == #"{"text":"before"}"#, "\(messages.prefix(2).map(\.envelope.payload.json))")
        #expect(messages.last?.envelope.payload.json == #"{"text":"after"}"#)
        #expect(messages.map(\.position) == Array(0..<messages.count))
    }

    @Test("a full disk under an open chat refuses the send naming the file; the chat goes on and reads", .enabled(if: SmallDisk.canMount, SmallDisk.why))
    func diskFillsUp() throws {
        let workspace = try Workspace.standard()
        let disk = workspace.root + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mounted = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk])
        try #require(mounted.status == 0, "\(mounted.stderr)")
        defer { _ = try? run("/bin/umount", ["-l", disk]) }
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""plugins": "Plugins","#, with: #""plugins": "Plugins", "data": "disk/data","#))
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", Self.url], in: workspace.root)
        chat.send("before")
        #expect(chat.waitFor("│ before │"))
        _ = try sh("dd if=/dev/zero of=disk/fill bs=4k 2>/dev/null; true", in: workspace)
        let big = String(repeating: "x", count: 30_000)
        for n in 1...20 { chat.send("\(n) \(big)") }
        chat.send("/open \(Self.url)")
        let result = chat.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("not sent: the message could not be stored: cannot write \(workspace.root)/disk/data/users/me/messages.sqlite3"), "\(result.stdout.suffix(1200))")
        #expect(result.stdout.contains("the disk is full or a file-size limit was reached"))
        #expect(result.stdout.components(separatedBy: "│ before │").count >= 3, "still read after the disk filled")
    }

    @Test("a read-only data folder shows the history, with or without a write-ahead log left behind, and refuses to send in one line",
          arguments: [false, true])
    func readOnly(leftLog: Bool) throws {
        let workspace = try Workspace.standard()
        let first = try imhost(["chat", Self.url], input: "hello\n/recv text {\"text\":\"hi back\"}\n", in: workspace)
        #expect(first.status == 0)
        if leftLog { try leaveLog(workspace) }
        let folder = try lockUserFolder(workspace)
        defer { _ = try? run("/usr/bin/chattr", ["-R", "-i", folder]) }
        let result = try imhost(["chat", Self.url], input: "one more\n/recv text {\"text\":\"x\"}\n", in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("│ hello │") && result.stdout.contains("│ hi back │"))
        if leftLog {
            #expect(result.stdout.contains("│ only in the log │"), "the log is read too")
            #expect(result.stderr.contains("is read-only: its messages are shown from a copy taken now"))
            // Its words never reached the search index (a send leaves them to the next write),
            // and a read-only store cannot catch it up: search looks past it.
            let search = try imhost(["search", "only"], in: workspace)
            #expect(search.status == 0 && search.stdout.contains("only in the log"), "\(search.stdout)\(search.stderr)")
        }
        let search = try imhost(["search", "hello"], in: workspace)
        #expect(search.status == 0 && search.stdout.contains("hello"), "\(search.stdout)\(search.stderr)")
        #expect(result.stdout.contains("not sent: cannot send: the data folder (\(folder)) is read-only, so messages can be read but not stored; make it writable"))
        #expect(result.stdout.contains("/recv: not stored: cannot write \(folder)/messages.sqlite3: the data folder (\(folder)) is read-only"))
    }

    /// A chat killed outright leaves its write-ahead log: "only in the log" is only there.
    func leaveLog(_ workspace: Workspace) throws {
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", Self.url], in: workspace.root)
        chat.send("only in the log")
        #expect(chat.waitFor("│ only in the log │"))
        for worker in children(of: chat.pid) { kill(worker, SIGKILL) }
        chat.signal(SIGKILL)
        _ = chat.finish()
        #expect(FileManager.default.fileExists(atPath: workspace.data + "/users/me/messages.sqlite3-wal"))
    }

    /// Makes the user's folder and its files immutable: even root cannot write them (chattr needs
    /// CAP_LINUX_IMMUTABLE). Returns the folder; the caller makes it mutable again.
    func lockUserFolder(_ workspace: Workspace) throws -> String {
        let folder = workspace.data + "/users/me"
        let locked = try run("/usr/bin/chattr", ["-R", "+i", folder])
        try #require(locked.status == 0, "chattr +i failed: \(locked.stderr)")
        return folder
    }

    @Test("a read-only folder's private copy is off the disk as soon as it is open and still read; a killed process's copy goes at the next start")
    func readOnlyCopyRemoved() throws {
        let workspace = try Workspace.standard()
        _ = try imhost(["chat", Self.url], input: "hello\n", in: workspace)
        try leaveLog(workspace)
        // The temporary folder of this test's own, so what is left there is exactly this run's.
        let temporary = workspace.root + "/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        func copies() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix("imhost-store-") }.sorted() }
        // What a process killed while it held a copy leaves, and the copy of a process still running.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let stale = "imhost-store-\(gone.processIdentifier)-Ab3dEf", running = "imhost-store-\(getpid())-Ab3dEf"
        for name in [stale, running] {
            try FileManager.default.createDirectory(atPath: temporary + "/" + name, withIntermediateDirectories: false)
            try "a copy".write(toFile: temporary + "/" + name + "/messages.sqlite3", atomically: false, encoding: .utf8)
        }
        let folder = try lockUserFolder(workspace)
        defer { _ = try? run("/usr/bin/chattr", ["-R", "-i", folder]) }
        let environment = ["TMPDIR": temporary]

        let chats = try imhost(["chats"], in: workspace, environment: environment)
        #expect(chats.stderr.contains("is read-only: its messages are shown from a copy taken now"), "\(chats.stderr)")
        #expect(chats.stdout.contains("only in the log"), "the log was read: \(chats.stdout)")
        #expect(try copies() == [running], "its own copy is gone, and so is the dead process's; a running one's stays")
        let search = try imhost(["search", "only"], in: workspace, environment: environment)
        #expect(search.stdout.contains("u42 #2 me") && search.stdout.contains("only in the log"), "\(search.stdout)\(search.stderr)")
        #expect(try copies() == [running])

        // A chat reads its copy all along, though no file of it is left from the moment it opened.
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", Self.url], in: workspace.root, environment: environment)
        #expect(chat.waitFor("│ only in the log │"))
        #expect(try copies() == [running], "gone while the chat runs")
        chat.send("/search hello")
        #expect(chat.waitFor("u42 #1 me"), "\(chat.stdout)\(chat.stderr)")
        chat.send("/quit")
        #expect(chat.finish().status == 0)
        #expect(try copies() == [running])
    }

    @Test("a private copy an older imhost left (named without its process id) is removed at the next start, unless a process still has it open")
    func olderCopiesRemoved() throws {
        let workspace = try Workspace.standard()
        let temporary = workspace.root + "/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let abandoned = "imhost-store-Ab3dEf", held = "imhost-store-Gh5jKl", other = "imhost-store-notacopy"
        for name in [abandoned, held, other] {
            try FileManager.default.createDirectory(atPath: temporary + "/" + name, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            try "a copy".write(toFile: temporary + "/" + name + "/messages.sqlite3", atomically: false, encoding: .utf8)
        }
        // An older imhost still reading its copy: a process with the file open.
        let holder = try RunningProcess("/bin/sh", ["-c", "exec 3< \"$1\"; echo holding; read line", "sh", temporary + "/" + held + "/messages.sqlite3"],
                                        in: workspace.root)
        defer { holder.signal(SIGKILL); _ = holder.finish() }
        try #require(holder.waitFor("holding"))
        #expect(try imhost(["chats"], in: workspace, environment: ["TMPDIR": temporary]).status == 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary).sorted()
        #expect(left == [held, other], "the abandoned one is gone; the one in use, and a name mkdtemp never made, stay: \(left)")
    }

    @Test("a damaged database is said in one line naming it, moved aside, and the chat goes on with a fresh one")
    func damaged() throws {
        let workspace = try Workspace.standard()
        _ = try imhost(["chat", Self.url], input: "lost\n", in: workspace)
        let path = workspace.data + "/users/me/messages.sqlite3"
        try String(repeating: "not a database ", count: 500).write(toFile: path, atomically: false, encoding: .utf8)
        let result = try imhost(["chat", Self.url], input: "fresh\n", in: workspace)
        #expect(result.status == 0)
        #expect(result.stderr.hasPrefix("imhost: \(path) is damaged (it does not start as an SQLite database does): it was moved aside to messages.sqlite3.damaged-"), "\(result.stderr)")
        #expect(result.stdout.contains("│ fresh │") && !result.stdout.contains("│ lost │"))
        let aside = try FileManager.default.contentsOfDirectory(atPath: workspace.data + "/users/me").filter { $0.contains("damaged") }
        #expect(aside.count == 1)
    }

    @Test("a FIFO or a link in the database's place is refused in one line and never followed", arguments: ["fifo", "link"])
    func notAFile(_ kind: String) throws {
        let workspace = try Workspace.standard()
        let folder = workspace.data + "/users/me"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let target = workspace.root + "/elsewhere"
        if kind == "fifo" { #expect(mkfifo(folder + "/messages.sqlite3", 0o600) == 0) } else {
            #expect(symlink(target, folder + "/messages.sqlite3") == 0)
        }
        let result = try sh(#"timeout 30 "$IMHOST" chat "\#(Self.url)" < /dev/null"#, in: workspace)
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(folder)/messages.sqlite3 is \(kind == "fifo" ? "a FIFO" : "a link"), not a regular file: it is not opened; remove it"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target), "nothing was made through the link")
    }

    @Test("chats, search, store check and chat --peer read the store as a person would")
    func commands() throws {
        let workspace = try Workspace.standard()
        _ = try imhost(["chat", "im://chat?rootCateID=1&cateID=12&peer=alice&infoID=L7"], input: "the zebracorn flat\n/recv text {\"text\":\"阳光两居室 sunny\"}\n", in: workspace)
        _ = try imhost(["chat", "im://chat?rootCateID=9&cateID=12&peer=bob"], input: "/recv text {\"text\":\"interview at nine\"}\n", in: workspace)
        let chats = try imhost(["chats"], in: workspace)
        #expect(chats.status == 0)
        let lines = chats.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("bob") && lines[1].hasPrefix("alice"), "\(chats.stdout)")
        #expect(lines[1].contains("opens on rootCateID 1, cateID 12, infoID L7"))
        let json = try JSONSerialization.jsonObject(with: Data(try imhost(["chats", "--json"], in: workspace).stdout.utf8)) as? [[String: Any]]
        #expect(json?.first?["url"] as? String == "im://chat?rootCateID=9&cateID=12&peer=bob")
        #expect(json?.first?["unread"] as? Int == 0, "the interactive chat showed it: read")

        let found = try imhost(["search", "zebracorn"], in: workspace)
        #expect(found.stdout.hasPrefix("alice #1 me · "), "\(found.stdout)")
        #expect(try imhost(["search", "两居室"], in: workspace).stdout.hasPrefix("alice #2 alice · "))
        let none = try imhost(["search", "nothing here"], in: workspace)
        #expect(none.status == 0 && none.stdout == "No message matches \"nothing\" \"here\".\n")
        let scoped = try imhost(["search", "interview", "--peer", "alice", "--json"], in: workspace)
        #expect(scoped.stdout == "[\n\n]\n" || scoped.stdout.hasPrefix("["), "\(scoped.stdout)")

        let opened = try imhost(["chat", "--peer", "alice"], input: "/route\n", in: workspace)
        #expect(opened.stdout.contains("[house page]") && opened.stdout.contains("route: im://chat/house?rootCateID=1&cateID=12&peer=alice&infoID=L7"))
        let check = try imhost(["store", "check"], in: workspace)
        #expect(check.stdout == "\(workspace.data)/users/me/messages.sqlite3: ok\n")
        let inChat = try imhost(["chat", Self.url], input: "/chats\n/search sunny\n", in: workspace)
        #expect(inChat.stdout.contains("\nalice ") && inChat.stdout.contains("alice #2 alice · "))
    }

    /// A data folder as imhost 1.0 wrote it: conversation logs, their indexes, the outbox.
    func legacyFolder(_ workspace: Workspace, torn: Bool = false, damagedLine: Bool = false) throws -> String {
        let user = workspace.data + "/users/me"
        try FileManager.default.createDirectory(atPath: user, withIntermediateDirectories: true)
        func line(_ id: Int, _ from: String, _ to: String, _ text: String, _ conversation: String) -> String {
            #"{"conversation":"\#(conversation)","from":"\#(from)","id":"m\#(id)","key":"text","payload":"{\"text\":\"\#(text)\"}","timestamp":\#(1_767_603_600_000 + id * 60_000),"to":"\#(to)"}"#
        }
        var u42 = [line(1, "me", "u42", "hello", "u42"), line(2, "u42", "me", "hi", "u42")]
        // 1.0 numbered a line by its place, a damaged one included.
        if damagedLine { u42.append(#"{"not":"a message"}"#) }
        u42.append(line(u42.count + 1, "me", "u42", "still queued", "u42"))
        try (u42.joined(separator: "\n") + "\n" + (torn ? #"{"conversation":"u42","fr"# : "")).write(toFile: user + "/u42.jsonl", atomically: true, encoding: .utf8)
        try "index".write(toFile: user + "/u42.jsonl.index", atomically: true, encoding: .utf8)
        try (line(1, "me", "../x", "odd peer", "../x") + "\n").write(toFile: user + "/%2E%2E%2Fx.jsonl", atomically: true, encoding: .utf8)
        let id = damagedLine ? 4 : 3
        try (#"{"conversation":"u42","id":"m1","state":"pending"}"# + "\n" + #"{"conversation":"u42","id":"m1","state":"delivered"}"# + "\n"
             + #"{"conversation":"u42","id":"m\#(id)","state":"pending"}"# + "\n").write(toFile: user + "/outbox.jsonl", atomically: true, encoding: .utf8)
        return user
    }

    @Test("a 1.0 data folder opens with everything in it: numbers kept, pending still queued, old files kept aside, imported once")
    func importsLegacy() throws {
        let workspace = try Workspace.standard()
        let user = try legacyFolder(workspace, torn: true, damagedLine: true)
        let result = try imhost(["chat", Self.url], input: "/why 3\n/why 4\nnew one\n", in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("imhost: imported the 1.0 messages of user 'me': 2 conversations, 5 messages (1 still queued); the old files are kept in \(user)/imported-1.0"), "\(result.stderr)")
        #expect(result.stderr.contains("line 3 of \(user)/u42.jsonl is not a message: it is kept as a placeholder that says so"))
        #expect(result.stderr.contains("the last line of \(user)/u42.jsonl (line 5, 25 bytes) was cut short by a crash: it is not a message and was not imported"))
        #expect(result.stdout.contains("why #3 ((unreadable line)): the stored line does not read"))
        #expect(result.stdout.contains("why #4 (text): it shows normally, through its builder\n  state: queued"))
        #expect(result.stdout.contains("│ hello │") && result.stdout.contains("#5 me · "), "new messages follow the imported ones")
        let aside = try FileManager.default.contentsOfDirectory(atPath: user + "/imported-1.0").sorted()
        #expect(aside == ["%2E%2E%2Fx.jsonl", "outbox.jsonl", "u42.jsonl", "u42.jsonl.index"])
        #expect(try stored(workspace, peer: "../x").map(\.envelope.payload.json) == [#"{"text":"odd peer"}"#])
        let again = try imhost(["chat", Self.url], input: "", in: workspace)
        #expect(!again.stderr.contains("imported"), "never twice")
    }

    @Test("a second process waits for the one importing, says so, and finds the import done")
    func importWaits() throws {
        let workspace = try Workspace.standard()
        let user = workspace.data + "/users/me"
        try FileManager.default.createDirectory(atPath: user, withIntermediateDirectories: true)
        var log = ""
        for n in 1...60_000 {
            log += #"{"conversation":"u42","from":"u42","id":"m\#(n)","key":"text","payload":"{\"text\":\"n\#(n)\"}","timestamp":\#(n),"to":"me"}"# + "\n"
        }
        try log.write(toFile: user + "/u42.jsonl", atomically: true, encoding: .utf8)
        let first = try RunningProcess(BuildProducts.imhost, ["chats"], in: workspace.root)
        // Ready: the first holds the import lock.
        var locked = false
        for _ in 0..<3000 where !locked {
            let fd = open(user + "/import.lock", O_RDWR | O_CLOEXEC)
            if fd >= 0 {
                locked = flock(fd, LOCK_EX | LOCK_NB) != 0
                if !locked { flock(fd, LOCK_UN) }
                close(fd)
            }
            if !locked { _ = poll(nil, 0, 2) }
        }
        try #require(locked, "the first process took the lock")
        let second = try imhost(["chats"], in: workspace)
        #expect(second.stderr.contains("imhost: another imhost is importing the 1.0 messages of user 'me' in \(user); waiting for it"))
        #expect(!second.stderr.contains("imported the 1.0"), "it did not import again")
        #expect(second.stdout.hasPrefix("u42 "), "\(second.stderr)")
        let done = first.finish()
        #expect(done.stderr.contains("imported the 1.0 messages of user 'me': 1 conversation, 60000 messages"))
        #expect(try stored(workspace).count == 60_000)
    }

    @Test("a read-only 1.0 folder is read into memory for the run, and said so")
    func readOnlyLegacy() throws {
        let workspace = try Workspace.standard()
        let user = try legacyFolder(workspace)
        let locked = try run("/usr/bin/chattr", ["-R", "+i", user])
        try #require(locked.status == 0)
        defer { _ = try? run("/usr/bin/chattr", ["-R", "-i", user]) }
        let result = try imhost(["chat", Self.url], input: "", in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("\(user) is a read-only folder of the 1.0 store: its 4 messages were read into memory for this run, and nothing can be sent"))
        #expect(result.stdout.contains("│ still queued │"))
    }

    @Test("/more with nothing older says so and keeps every message in view")
    func moreKeepsWindow() throws {
        let workspace = try Workspace.standard()
        let result = try imhost(["chat", Self.url], input: "one\ntwo\n/more\n/recv text {\"text\":\"three\"}\n", in: workspace)
        #expect(result.stdout.contains("/more: no older messages; the whole conversation is shown"))
        let last = try #require(result.stdout.components(separatedBy: "════").last)
        #expect(last.contains("│ one │") && last.contains("│ three │"), "\(last)")
    }
}

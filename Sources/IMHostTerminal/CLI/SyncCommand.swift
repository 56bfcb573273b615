import IMHost
import IMHostRuntime
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// `imhost sync`: the connection without a chat. Connects, receives what waits, sends what is
/// queued, waits for receipts, and says what happened.
enum SyncCommand {
    static let command = CommandLineTool.Command(
        name: "sync",
        summary: "connect once: receive what waits, send what is queued, wait for receipts",
        options: [
            timeout,
            .json("what happened as JSON: counters, refused envelopes by why, what is still queued; when it could not connect, the failure and whether it is transient (trying later may work as it is)"),
            .user,
            .flag("--take", "take the session from another host of the user that holds it (that host stays offline until its /online)"),
        ],
        help: """
            Connects to the broker host.json's "transport" names, as the signed-in user:
            receives what waits for them (stored once each, answered delivered), sends what
            they queued, and waits up to the timeout for the receivers' receipts. Then it says
            what happened: received, sent, delivered, read, refused and failed, and what is
            still queued. imhost chats shows the unread counts after.

            When another imhost (a chat) holds this user's connection, sync does not take it:
            it says which process does, and waits for that one to send what is queued.

            When another host of this user (a chat in another data folder, or on another
            machine) holds the user's session on the broker, sync does not take it either: a
            one-shot command must not throw a running chat off. It leaves at once, takes
            nothing, says so, and exits 1; --take takes the session (that host stays offline
            until its /online).

            Exit 0 when it connected (whatever was delivered); 1 at once when it could not:
            it tries once, and says why and what to do in one line; 2 for a bad host.json or
            usage.
            """,
        run: { arguments, output in
            guard arguments.positionals.isEmpty else {
                output.diagnostic("imhost sync: takes no arguments, got '\(TerminalText.safe(arguments.positionals[0]))'; see imhost sync --help")
                return CommandLineTool.ExitCode.usage
            }
            let seconds = arguments.seconds(timeout)!
            guard let config = CommandLineTool.loadConfig(arguments, output: output) else { return CommandLineTool.ExitCode.usage }
            guard config.transport != nil else {
                output.diagnostic("imhost sync: there is no \"transport\" in \(TerminalText.safe(config.file)): this host works alone; add one to chat with others (see docs/using.md, \"Two people\")")
                return CommandLineTool.ExitCode.failure
            }
            let user = arguments.options["--user"] ?? config.user
            if let problem = TransportID.problem(user) {
                output.diagnostic("imhost sync: the user id \"\(TerminalText.safe(user))\" \(problem)")
                return CommandLineTool.ExitCode.usage
            }
            Interruption.install()
            let host = CommandLineTool.makeHost(config, user: user, verbose: arguments.flags.contains("--verbose"), connection: "sync")
            do {
                try host.signIn()
            } catch {
                output.diagnostic("imhost sync: \(error)")
                return CommandLineTool.ExitCode.failure
            }
            CommandLineTool.reportNotes(host.store, output: output)
            // And what the store says while syncing (a damaged database found storing an arrival).
            defer { CommandLineTool.reportNotes(host.store, output: output) }
            let json = arguments.flags.contains("--json")
            guard let courier = host.courier else {
                guard host.connectionHolder != nil else {
                    // Nobody holds the connection and this process could not take it (the
                    // folder is read-only, the lock file unusable): said above.
                    output.diagnostic("imhost sync: cannot hold \(TerminalText.safe(user))'s connection in this data folder, and no other process does; see the line above")
                    return CommandLineTool.ExitCode.failure
                }
                return throughDatabase(host, seconds: seconds, json: json, output)
            }
            // Another host of the user keeps the session, unless told to take it.
            // Taken, it stays taken when sync is done: the host it was taken from does not come
            // back by itself.
            if arguments.flags.contains("--take") { courier.keepsPresence = true } else { courier.connectUnlessHeld() }
            return run(host, courier, seconds: seconds, json: json, output)
        })

    /// How long to wait for receipts. Not 0: a sync that waits for nothing cannot connect.
    static let timeout = CommandLineTool.Option.option("--timeout", .seconds(0.1...3600, default: 10), "how long to wait for receipts, in seconds")

    /// Runs the connection until it has received what waited and sent what was queued, and the
    /// receipts came, or the time is up. An attempt to connect that fails ends it at once: sync
    /// tries once, and says why once.
    private static func run(_ host: ChatHost, _ courier: Courier, seconds: Double, json: Bool, _ output: Output) -> Int32 {
        let deadline = Clock.monotonic() + UInt64(seconds * 1e9)
        var everConnected = false
        courier.retries = false
        while Interruption.signal == nil, Clock.monotonic() < deadline {
            for event in host.serviceConnection() {
                if case .notice(let notice) = event {
                    // Without --json, what the connection says goes to standard error as it comes
                    // (another host holding the session is said below, in sync's own words).
                    if !json, !courier.connectedElsewhere { output.diagnostic("imhost: " + ConnectionWords.notice(notice)) }
                }
            }
            if courier.failedAttempt != nil || courier.connectedElsewhere { break }
            if courier.status == .online { everConnected = true }
            if courier.inboxConfirmed, courier.unanswered == 0,
               (try? host.store?.queuedCount()) == 0, (try? host.store?.dueReceipts(now: host.clock(), limit: 1).isEmpty) ?? true {
                break
            }
            let wait = courier.wakeAfter()
            courier.wait(milliseconds: Int32(max(0, min(Int64(wait), Int64((deadline &- Clock.monotonic()) / 1_000_000)))))
        }
        let outbox: (queued: Int, sent: Int) = (try? host.store?.outboxCounts()) ?? (0, 0)
        if json {
            output.out(JSONOutput.encode(SyncReport(connected: everConnected, heldBy: nil, counters: courier.counters, failure: courier.failedAttempt.map(Failure.init),
                                                    queued: outbox.queued, sent: outbox.sent,
                                                    unconfirmedReceipts: try? host.store?.unconfirmedReceipts())))
        }
        if courier.connectedElsewhere {
            let count = outbox.queued + outbox.sent
            let waiting = count == 0 ? "" : "; \(count) of your messages wait\(count == 1 ? "s" : "") here"
            output.diagnostic("imhost sync: \(TerminalText.safe(courier.user)) is connected elsewhere: another host of \(TerminalText.safe(courier.user)) holds the session, and sync does not throw it off: nothing was taken\(waiting); sync where that host runs, end it first, or add --take (it then stays offline until its /online)")
            return CommandLineTool.ExitCode.failure
        }
        guard everConnected else {
            // One line: why, what to do, and what waits meanwhile (no counts of a sync that did
            // not happen).
            let why = courier.failedAttempt.map { ConnectionWords.offline($0.reason) } ?? "no answer from the broker within \(seconds) s"
            let count = outbox.queued + outbox.sent
            let waiting = count == 0 ? "" : "; \(count) of your messages wait\(count == 1 ? "s" : "") for the next sync or chat"
            output.diagnostic("imhost sync: could not connect: \(why)\(waiting)")
            return CommandLineTool.ExitCode.failure
        }
        if !json { output.out(report(courier.counters, outbox: outbox) + "\n") }
        // Connected, lost the connection (said as it went), and could not make it again.
        if let failure = courier.failedAttempt { output.diagnostic("imhost sync: could not connect again: \(ConnectionWords.offline(failure.reason))") }
        return CommandLineTool.ExitCode.ok
    }

    /// Another process holds the connection: waits for it to send what is queued, watching
    /// the database.
    private static func throughDatabase(_ host: ChatHost, seconds: Double, json: Bool, _ output: Output) -> Int32 {
        let holder = host.connectionHolder.map(\.description) ?? "another process"
        output.diagnostic("imhost sync: \(holder) holds this user's connection; waiting up to \(seconds) s for it to send what is queued")
        let deadline = Clock.monotonic() + UInt64(seconds * 1e9)
        while Interruption.signal == nil, Clock.monotonic() < deadline, (try? host.store?.outboxCounts().queued) ?? 0 > 0 {
            _ = poll(nil, 0, 100)
        }
        let outbox: (queued: Int, sent: Int) = (try? host.store?.outboxCounts()) ?? (0, 0)
        if json {
            output.out(JSONOutput.encode(SyncReport(connected: false, heldBy: holder, counters: nil, failure: nil, queued: outbox.queued, sent: outbox.sent)))
        } else {
            // The holder names its command as its lock file says: escaped, as everything quoted is.
            output.out(TerminalText.safe(outboxText(outbox) + "; \(holder) holds the connection") + "\n")
        }
        return CommandLineTool.ExitCode.ok
    }

    /// "nothing is queued", "2 still queued", with how many wait for the receiver's receipt.
    private static func outboxText(_ outbox: (queued: Int, sent: Int)) -> String {
        let queued = outbox.queued == 0 ? "nothing is queued" : "\(outbox.queued) still queued"
        return queued + (outbox.sent == 0 ? "" : " (\(outbox.sent) sent, not yet delivered)")
    }

    struct SyncReport: Encodable {
        var connected: Bool
        var heldBy: String?
        var counters: Courier.Counters?
        /// Why the attempt to connect failed, and whether trying again later may work as it is
        /// (`transient`: the broker was down) or needs a fix first (a refused password).
        var failure: Failure?
        /// The user's messages not yet taken by the broker.
        var queued: Int
        /// The user's messages the broker took, waiting for the receiver's receipt.
        var sent: Int
        /// Read receipts this host sent (or will) that their peers have not confirmed having.
        var unconfirmedReceipts: Int?
    }

    /// A failed attempt to connect, as `--json` says it.
    struct Failure: Encodable {
        /// What failed and what to do, in one line.
        var reason: String
        var transient: Bool

        init(_ failure: Courier.AttemptFailure) {
            reason = ConnectionWords.offline(failure.reason)
            transient = failure.transient
        }
    }

    /// What a sync that connected did, in one line.
    private static func report(_ counters: Courier.Counters, outbox: (queued: Int, sent: Int)) -> String {
        var line = "received \(counters.received), sent \(counters.published), delivered \(counters.delivered), read \(counters.read)"
        let refused = counters.refused.values.reduce(0, +) + counters.blocked + counters.overBudget
        line += ", refused \(refused), failed \(counters.failed)"
        if counters.duplicates > 0 { line += ", \(counters.duplicates) arrived again" }
        line += "; " + outboxText(outbox)
        return line
    }
}

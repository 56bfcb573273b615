#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// One crash or hang of line code, as `<data>/crashes.log` keeps it: one JSON object a line.
public struct CrashRecord: Codable, Sendable, Equatable {
    /// When, in UTC: `2026-11-23T09:15:02Z`.
    public var time: String
    /// The line whose code was running, when known.
    public var line: String?
    /// The plugin file's name in the plugin folder, when known.
    public var file: String?
    /// The plugin file's identity, when known: a quarantine applies to exactly these bytes.
    public var identity: FileIdentity?
    /// What the host was calling: a ``CrashSite`` name such as `builder` or `route`.
    public var what: String
    /// The message key, hook, service id or URL being handled, when there was one.
    public var key: String?
    /// The id of the message being handled, when there was one.
    public var message: String?
    /// For a message that came from another host: who sent it, and its global id. A crash
    /// drawing such a message costs only that message (``Quarantine``), so one peer cannot
    /// switch a line off.
    public var sender: String?
    public var globalID: String?
    /// How it ended: a signal name such as `SIGSEGV`, `hung`, `exit 3`, or `unknown`.
    public var signal: String
    /// The last thing the process said on standard error (a Swift fatal error, say), one line.
    public var detail: String?
    /// What it cost: `key`, `line` or `file` was quarantined; `nil` when nothing was.
    public var quarantined: String?

    public init(time: String, line: String?, file: String?, identity: FileIdentity?, what: String, key: String?,
                message: String?, signal: String, detail: String? = nil, quarantined: String? = nil) {
        self.time = time
        self.line = line
        self.file = file
        self.identity = identity
        self.what = what
        self.key = key
        self.message = message
        self.signal = signal
        self.detail = detail
        self.quarantined = quarantined
    }

    /// The site named by ``what``.
    public var site: CrashSite { CrashSite(name: what) ?? .unknown }

    /// Whether it was a hang rather than a crash.
    public var isHang: Bool { signal == "hung" }

    /// A record of what a breadcrumb says, for a process that ended as `ending` says.
    package init(_ frame: Breadcrumb.Frame?, ending: String, detail: String?, at time: Int64 = Clock.now()) {
        let message = frame?.message.map(Breadcrumb.MessageOrigin.init(crumb:))
        self.init(time: Clock.iso8601(time), line: frame?.line, file: frame?.file, identity: frame?.identity,
                  what: (frame?.site ?? .unknown).name, key: frame?.key, message: message?.id, signal: ending,
                  detail: detail)
        sender = message?.sender
        globalID = message?.globalID
    }

    /// "crashed (SIGSEGV)" or "hung (did not return within its time limit)".
    public var ending: String {
        isHang ? "hung (did not return within its time limit)" : "crashed (\(signal))"
    }

    /// What happened, without whose code: "crashed (SIGSEGV) building message m3 (house.listing)",
    /// and "from bob" for a message from another host.
    public var event: String { "\(ending) \(site.phrase(key: key, message: message))" + (sender.map { " from \($0)" } ?? "") }

    /// One sentence: whose code, doing what, how it ended.
    public var summary: String {
        let who = line.map { "line '\($0)'" } ?? file.map { "plugin file \($0)" } ?? "line code"
        return "\(who) \(event)"
    }

    /// The name of a signal, e.g. `SIGSEGV`.
    public static func signalName(_ signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
            SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV",
            SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM", SIGSYS: "SIGSYS", SIGXCPU: "SIGXCPU",
        ]
        return names[signal] ?? "signal \(signal)"
    }
}

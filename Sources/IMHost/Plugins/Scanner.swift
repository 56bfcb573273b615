#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
@_spi(Host) import IMKit

/// The plugin scanner: the host run again as a child (`imhost __scan FILE...`) that opens new or
/// changed plugin files for it, as GStreamer's plugin scanner does. A file whose constructor,
/// entry or registration crashes or hangs costs the scanner, not the host: the file is recorded
/// as crashed or hung, with the signal, and a new scanner takes the files that remain.
///
/// The child reports over its standard output, one JSON object a line: before each step it
/// takes (`load`, `entry`, `register`) so a death is blamed on the right file and step, and when
/// a file is done, with its descriptor and the line's manifest, or why it was refused.
package enum Scanner {
    /// One report of the child.
    struct Report: Codable {
        var file: String
        /// The step about to run: `load`, `entry` or `register`.
        var stage: String?
        var line: String?
        var descriptor: PluginDescriptor?
        var manifest: LineManifest?
        var refusal: PluginRefusal?
        var done: Bool?
        /// A log entry a line wrote while it was scanned (in `register(with:)`): the host writes
        /// it where its own lines' logs go.
        var log: LogEntry?
    }

    struct LogEntry: Codable {
        var line: String
        var level: String
        var entry: String
    }

    /// What scanning one file found.
    enum Outcome {
        /// Facts about the bytes: a line and its manifest, or a refusal that will not change.
        case facts(PluginFacts)
        /// Refused or failed for now (a missing library, a failed registration): retried next start.
        case failed(PluginDescriptor?, PluginRefusal)
        /// The scanner died or overran its time limit on this file.
        case crashed(CrashRecord)
    }

    // MARK: The child

    /// `imhost __scan FILE...`: opens each file in turn and reports on `reports`, a pipe of its
    /// own (a plugin that prints on standard output cannot garble a report).
    package static func childMain(_ paths: [String], reports: Int32) -> Int32 {
        func emit(_ report: Report) { JSONLines.send(report, to: reports) }
        // What a line logs while it registers goes to the host, not into the scanner's last words.
        LogSink.install { line, level, entry in
            JSONLines.send(Report(file: "", log: LogEntry(line: line, level: level.rawValue, entry: entry)), to: reports)
        }
        for path in paths {
            var descriptor: PluginDescriptor?
            do throws(PluginRefusal) {
                emit(Report(file: path, stage: CrashSite.load.name))
                let handle = try PluginImage.load(path)
                emit(Report(file: path, stage: CrashSite.entry.name))
                let pointer = try PluginImage.entry(handle)
                descriptor = PluginImage.describe(pointer)
                let line = try PluginImage.check(descriptor!)
                emit(Report(file: path, stage: CrashSite.register.name, line: line, descriptor: descriptor))
                let staged = try PluginImage.register(pointer, lineID: line)
                emit(Report(file: path, line: line, descriptor: descriptor, manifest: staged.manifest, done: true))
            } catch {
                emit(Report(file: path, descriptor: descriptor, refusal: error, done: true))
            }
        }
        return 0
    }

    // MARK: The parent

    /// Scans `files` in scanner children of `executable`, allowing `limit` seconds a file.
    /// Returns an outcome for every file, keyed by path.
    static func scan(_ files: [(path: String, identity: FileIdentity)], executable: String, limit: Double) -> [String: Outcome] {
        var outcomes: [String: Outcome] = [:]
        var pending = files
        let decoder = JSONDecoder()
        while !pending.isEmpty {
            let child: ChildProcess
            do {
                child = try ChildProcess(executable: executable, arguments: ["__scan", "--parent", "\(getpid())"] + pending.map(\.path),
                                         stdin: .null, stdout: .null, stderr: .pipe, control: true)
            } catch {
                let refusal = PluginRefusal(.scannerFailed, "the plugin scanner could not start (\(error.call): \(error))",
                                            fix: "check that \(executable) exists and can run")
                for file in pending { outcomes[file.path] = .failed(nil, refusal) }
                return outcomes
            }
            let reports = LineBuffer()
            let said = LineBuffer()
            var lastWords = LastWords()
            var current: (file: String, stage: String, line: String?, since: UInt64)?
            var heard = false
            var ending: String?
            var interrupted = false
            var started = Clock.monotonic()
            /// Takes the whole reports read so far.
            func handle(_ reports: LineBuffer) {
                while let line = reports.nextLine() {
                    guard let report = try? decoder.decode(Report.self, from: Data(line.utf8)) else { continue }
                    heard = true
                    if let log = report.log {
                        LogSink.deliver(lineID: log.line, level: LogLevel(rawValue: log.level) ?? .info, entry: LogSink.entry(log.entry))
                        continue
                    }
                    guard let index = pending.firstIndex(where: { $0.path == report.file }) else { continue }
                    if report.done == true {
                        // Only the file being opened can be done: a line that prints a report
                        // for another file is not believed.
                        guard current?.file == report.file else { continue }
                        outcomes[report.file] = outcome(report, identity: pending[index].identity)
                        pending.remove(at: index)
                        current = nil
                        started = Clock.monotonic()
                    } else if let stage = report.stage {
                        let since = current?.file == report.file ? current!.since : Clock.monotonic()
                        current = (report.file, stage, report.line ?? current?.line, since)
                    }
                }
            }
            let budget = UInt64(limit * 1e9)
            reading: while true {
                // Its exit, not only its pipe: a plugin may hand the pipe to a process of its own.
                if let ended = child.poll() {
                    while !waitReadable([child.control], milliseconds: 0).isEmpty, reports.fill(from: child.control) {}
                    handle(reports)
                    ending = ended.description
                    interrupted = ended.isInterruption
                    break reading
                }
                let waited = Clock.monotonic() - (current?.since ?? started)
                // Between files only the scanner's own code runs: allow it time to start on a busy machine.
                let allowance = current == nil ? max(budget, 10_000_000_000) : budget
                if waited >= allowance {
                    child.signal(SIGKILL)
                    child.wait()
                    ending = "hung"
                    break reading
                }
                let remaining = Int32(min(1000, max(1, (allowance - waited) / 1_000_000)))
                let ready = waitReadable(child.waitable([reports.ended ? -1 : child.control, said.ended ? -1 : child.errors]),
                                         milliseconds: min(remaining, 50))
                if ready.contains(child.errors) {
                    _ = said.fill(from: child.errors)
                    while let line = said.nextLine() { lastWords.keep(line) }
                }
                if ready.contains(child.control) {
                    _ = reports.fill(from: child.control)
                    handle(reports)
                }
            }
            if let rest = said.rest() { lastWords.keep(rest) }
            if interrupted {
                // Stopped from outside (Ctrl-C, a kill): nothing of the plugin's doing. Not a crash;
                // the files left are tried again next time.
                let refusal = PluginRefusal(.scannerFailed, "the plugin scanner was interrupted (\(ending ?? "a signal"))",
                                            fix: "run the command again")
                for file in pending { outcomes[file.path] = .failed(nil, refusal) }
                return outcomes
            }
            if let current, let ending, let index = pending.firstIndex(where: { $0.path == current.file }) {
                let site = CrashSite(name: current.stage) ?? .unknown
                let record = CrashRecord(time: Clock.iso8601(Clock.now()), line: current.line, file: FileSystem.baseName(current.file),
                                         identity: pending[index].identity, what: site.name, key: nil, message: nil,
                                         signal: ending, detail: lastWords.detail)
                outcomes[current.file] = .crashed(record)
                pending.remove(at: index)
            } else if !pending.isEmpty && !heard {
                // The scanner died before it said anything: it cannot run here, and trying again would not help.
                let why = lastWords.detail.map { ": \($0)" } ?? ""
                let refusal = PluginRefusal(.scannerFailed, "the plugin scanner ended (\(ending ?? "no report")) before it opened a file\(why)",
                                            fix: "run \(executable) __scan FILE by hand to see why")
                for file in pending { outcomes[file.path] = .failed(nil, refusal) }
                return outcomes
            }
        }
        return outcomes
    }

    private static func outcome(_ report: Report, identity: FileIdentity) -> Outcome {
        if let manifest = report.manifest {
            return .facts(PluginFacts(identity: identity, descriptor: report.descriptor, verdict: .line(manifest)))
        }
        let refusal = report.refusal ?? PluginRefusal(.scannerFailed, "the scanner said nothing about it", fix: "report this as a host bug")
        if PluginFacts.cacheableRefusals.contains(refusal.code) {
            return .facts(PluginFacts(identity: identity, descriptor: report.descriptor, verdict: .refused(refusal)))
        }
        return .failed(report.descriptor, refusal)
    }
}

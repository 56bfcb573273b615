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
/// The child reports on its control pipe in ``ScannerReport``s: before each step it takes
/// (`load`, `entry`, `register`), so a death is blamed on the right file and step, and when a
/// file is done, with its descriptor and the line's manifest, or why it was refused. The host
/// watches it with a ``ChildWatch``, as the supervisor watches a chat worker.
package enum Scanner {
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
    package static func childMain(_ paths: [String], reports: ControlPipe) -> Int32 {
        reports.send(ScannerReport.hello(version: ScannerReport.version))
        // What a line logs while it registers goes to the host, not into the scanner's last words.
        LogSink.install { line, level, entry in
            reports.send(ScannerReport.log(line: line, level: level.rawValue, entry: entry))
        }
        for path in paths {
            var descriptor: PluginDescriptor?
            do throws(PluginRefusal) {
                // The file as it is now, just before it is opened: what is scanned, and what a
                // crash is recorded under, even when it was replaced after the host looked.
                reports.send(ScannerReport.step(file: path, stage: CrashSite.load.name, line: nil, descriptor: nil, identity: FileIdentity.of(path)))
                let handle = try PluginImage.load(path)
                reports.send(ScannerReport.step(file: path, stage: CrashSite.entry.name, line: nil, descriptor: nil, identity: nil))
                let pointer = try PluginImage.entry(handle)
                descriptor = PluginImage.describe(pointer)
                let line = try PluginImage.check(descriptor!)
                reports.send(ScannerReport.step(file: path, stage: CrashSite.register.name, line: line, descriptor: descriptor, identity: nil))
                let staged = try PluginImage.register(pointer, lineID: line)
                reports.send(ScannerReport.done(file: path, descriptor: descriptor, manifest: staged.manifest, refusal: nil))
            } catch {
                reports.send(ScannerReport.done(file: path, descriptor: descriptor, manifest: nil, refusal: error))
            }
        }
        return 0
    }

    // MARK: The parent

    /// The file a scanner is working on: since when, at which step, for which line.
    private struct Current {
        var file: String
        var stage: String
        var line: String?
        var since: UInt64
        /// The identity of the file the scanner opened.
        var identity: FileIdentity?
    }

    /// Scans `files` in scanner children of `executable`, allowing `limit` seconds a file.
    /// Returns an outcome for every file, keyed by path.
    static func scan(_ files: [(path: String, identity: FileIdentity)], executable: String, limit: Double) -> [String: Outcome] {
        var outcomes: [String: Outcome] = [:]
        var pending = files
        let budget = UInt64(limit * 1e9)
        func failAll(_ refusal: PluginRefusal) -> [String: Outcome] {
            for file in pending { outcomes[file.path] = .failed(nil, refusal) }
            return outcomes
        }
        while !pending.isEmpty {
            let watch: ChildWatch<ScannerReport>
            do {
                watch = ChildWatch(try ChildProcess(executable: executable, arguments: ["__scan", "--parent", "\(getpid())"] + pending.map(\.path),
                                                    stdin: .null, stdout: .null, stderr: .pipe, control: true))
            } catch {
                return failAll(PluginRefusal(.scannerFailed, "the plugin scanner could not start (\(error.call): \(error))",
                                             fix: "check that \(executable) exists and can run"))
            }
            var current: Current?
            var ending: ChildProcess.Termination?
            var started = Clock.monotonic()
            reading: while true {
                let waited = Clock.monotonic() - (current?.since ?? started)
                // Between files only the scanner's own code runs: allow it time to start on a busy machine.
                let allowance = current == nil ? max(budget, 10_000_000_000) : budget
                if waited >= allowance {
                    watch.kill()
                    break reading
                }
                switch watch.next(waiting: Int32(min(50, max(1, (allowance - waited) / 1_000_000)))) {
                case .quiet:
                    continue
                case .ended(let ended):
                    ending = ended
                    break reading
                case .mismatch(let version):
                    watch.kill()
                    return failAll(PluginRefusal(.scannerFailed, "the plugin scanner speaks version \(version), this host \(ScannerReport.version): \(executable) changed while the host ran",
                                                 fix: "run the command again"))
                case .message(let report):
                    switch report {
                    case .hello:
                        continue
                    case .log(let line, let level, let entry):
                        LogSink.deliver(lineID: line, level: LogLevel(rawValue: level) ?? .info, entry: LogSink.entry(entry))
                    case .step(let file, let stage, let line, _, let identity):
                        guard let index = pending.firstIndex(where: { $0.path == file }) else { continue }
                        let same = current?.file == file
                        current = Current(file: file, stage: stage, line: line ?? (same ? current?.line : nil),
                                          since: same ? current!.since : Clock.monotonic(),
                                          identity: identity ?? (same ? current?.identity : nil) ?? pending[index].identity)
                    case .done(let file, let descriptor, let manifest, let refusal):
                        // Only the file being opened can be done: a line that prints a report
                        // for another file is not believed.
                        guard current?.file == file, let index = pending.firstIndex(where: { $0.path == file }) else { continue }
                        outcomes[file] = outcome(descriptor: descriptor, manifest: manifest, refusal: refusal,
                                                 identity: current?.identity ?? pending[index].identity)
                        pending.remove(at: index)
                        current = nil
                        started = Clock.monotonic()
                    }
                }
            }
            if let ending, ending.isInterruption {
                // Stopped from outside (Ctrl-C, a kill): nothing of the plugin's doing. Not a crash;
                // the files left are tried again next time.
                return failAll(PluginRefusal(.scannerFailed, "the plugin scanner was interrupted (\(ending))", fix: "run the command again"))
            }
            let said = watch.lastWords.detail
            if let current, let index = pending.firstIndex(where: { $0.path == current.file }) {
                let site = CrashSite(name: current.stage) ?? .unknown
                let record = CrashRecord(time: Clock.iso8601(Clock.now()), line: current.line, file: FileSystem.baseName(current.file),
                                         identity: current.identity ?? pending[index].identity, what: site.name, key: nil, message: nil,
                                         signal: ending?.description ?? "hung", detail: said)
                outcomes[current.file] = .crashed(record)
                pending.remove(at: index)
            } else if !pending.isEmpty && !watch.heard {
                // The scanner died before it said anything: it cannot run here, and trying again would not help.
                let why = said.map { ": \($0)" } ?? ""
                return failAll(PluginRefusal(.scannerFailed, "the plugin scanner ended (\(ending?.description ?? "no report")) before it opened a file\(why)",
                                             fix: "run \(executable) __scan FILE by hand to see why"))
            }
        }
        return outcomes
    }

    private static func outcome(descriptor: PluginDescriptor?, manifest: LineManifest?, refusal: PluginRefusal?, identity: FileIdentity) -> Outcome {
        if let manifest {
            return .facts(PluginFacts(identity: identity, descriptor: descriptor, verdict: .line(manifest)))
        }
        let refusal = refusal ?? PluginRefusal(.scannerFailed, "the scanner said nothing about it", fix: "report this as a host bug")
        if PluginFacts.cacheableRefusals.contains(refusal.code) {
            return .facts(PluginFacts(identity: identity, descriptor: descriptor, verdict: .refused(refusal)))
        }
        return .failed(descriptor, refusal)
    }
}

#if canImport(Glibc)
import Glibc
#endif
@_spi(Host) import IMKit

/// A line's samples (``MessageBuilder/samples``, IMKit 1.4), drawn and checked in a child of
/// their own (`imhost __samples FILE`), never in the process that asks: `imhost plugins
/// --samples` and the workbench (`imhost preview`). The child opens the plugin as the scanner
/// does (load, entry, the compiler's and ABI's checks, registration), then, for each builder in
/// the order registered and each of its samples, encodes the sample's content, decodes it
/// again, lays it out and makes its view; a card is checked against the card rules
/// (``MessageCard/ruleErrors()``). A builder that throws is that sample's failure; one that
/// crashes or hangs costs the child, and is said as the failure of the sample it was drawing.
package enum SampleCheck {
    /// One sample, as drawn.
    package struct Report: Codable, Sendable, Equatable {
        /// The builder's key, and the sample's name as the line gave it.
        package var key: String
        package var name: String
        /// The payload the builder encoded (JSON); `nil` when encoding failed.
        package var payload: String?
        /// The card's rule errors, each with its path; empty when it keeps them all.
        package var problems: [Problem] = []
        /// Why it could not be drawn at all (a builder's error, a crash): one line.
        package var failure: String?

        /// Whether it draws and keeps every rule.
        package var isClean: Bool { problems.isEmpty && failure == nil }
    }

    /// A rule a card breaks (``CardRuleError``), as codes and words that travel.
    package struct Problem: Codable, Sendable, Equatable, CustomStringConvertible {
        package var path: String
        package var code: String
        package var detail: String
        package var description: String { path + ": " + detail }
    }

    /// What drawing a file's samples came to.
    package enum Outcome: Sendable, Equatable {
        /// The line, its version, and each sample in order (a crash ends the list with it).
        case drawn(line: String, version: String, samples: [Report])
        /// The file could not be opened as a line: why, in one line.
        case refused(String)
    }

    /// What the child says on its control pipe, one JSON object a line.
    enum Message: Codable, Equatable, ChildMessage {
        case hello(version: Int)
        /// The file is a line: its id and version.
        case line(id: String, version: String)
        /// About to draw this sample: a death from here is its failure.
        case drawing(key: String, name: String)
        case sample(Report)
        /// The file was refused before any sample: why.
        case refused(String)

        static let version = 1
        static var protocolVersion: Int { version }
        var helloVersion: Int? { if case .hello(let version) = self { version } else { nil } }
    }

    /// The width samples are laid out at: the terminal's default chat width less its margins.
    static let width = 60

    // MARK: The child

    /// `imhost __samples FILE`: opens `path` and draws every sample, reporting on `reports`.
    package static func childMain(_ path: String, reports: ControlPipe) -> Int32 {
        reports.send(Message.hello(version: Message.version))
        let staged: StagedLine
        let descriptor: PluginDescriptor
        let lineID: String
        do throws(PluginRefusal) {
            let handle = try PluginImage.load(path)
            let pointer = try PluginImage.entry(handle)
            descriptor = PluginImage.describe(pointer)
            lineID = try PluginImage.check(descriptor)
            staged = try PluginImage.register(pointer, lineID: lineID)
        } catch {
            reports.send(Message.refused(error.description))
            return 0
        }
        reports.send(Message.line(id: lineID, version: descriptor.version ?? "?"))
        for builder in staged.builders {
            draw(builder, announce: { reports.send(Message.drawing(key: $0, name: $1)) }, drawn: { reports.send(Message.sample($0)) })
        }
        return 0
    }

    /// Draws each of `builder`'s samples, calling `announce` before each and `drawn` after.
    static func draw<Builder: MessageBuilder>(_ builder: Builder, announce: (String, String) -> Void, drawn: (Report) -> Void) {
        let key = builder.key
        for sample in builder.samples {
            announce(key, sample.name)
            var report = Report(key: key, name: sample.name)
            guard (1...60).contains(sample.name.count) else {
                report.failure = "the sample's name has \(sample.name.count) characters; a name has 1 to 60"
                drawn(report)
                continue
            }
            do {
                let payload = try builder.payload(for: sample.content)
                report.payload = payload.json
                let layout = MessageLayout(width: width)
                let view = builder.view(for: try builder.model(for: try builder.content(from: payload), layout: layout))
                report.problems = view.card?.ruleErrors().map { Problem(path: $0.path, code: $0.code.name, detail: $0.detail) } ?? []
            } catch {
                report.failure = "the builder threw: " + String(describing: error).split(whereSeparator: \.isNewline).joined(separator: " ")
            }
            drawn(report)
        }
    }

    // MARK: The parent

    /// Draws the samples of the plugin at `file` in a child of `executable`, allowing `limit`
    /// seconds in all.
    package static func run(file: String, executable: String, limit: Double = 10) -> Outcome {
        let watch: ChildWatch<Message>
        do {
            watch = ChildWatch(try ChildProcess(executable: executable, arguments: ["__samples", "--parent", "\(getpid())", file],
                                                stdin: .null, stdout: .null, stderr: .pipe, control: true))
        } catch {
            return .refused("the sample drawer could not start (\(error.call): \(error)); check that \(executable) can run")
        }
        let deadline = Clock.monotonic() + UInt64(limit * 1e9)
        var line: (id: String, version: String)?
        var samples: [Report] = []
        var drawing: Report?
        var ending: ChildProcess.Termination?
        reading: while true {
            let now = Clock.monotonic()
            guard now < deadline else {
                _ = watch.kill()
                break reading
            }
            switch watch.next(waiting: Int32(min(50, max(1, (deadline - now) / 1_000_000)))) {
            case .quiet: continue
            case .ended(let ended):
                ending = ended
                break reading
            case .mismatch(let version):
                _ = watch.kill()
                return .refused("the sample drawer speaks version \(version), this host \(Message.version): \(executable) changed while the host ran; run the command again")
            case .message(let message):
                switch message {
                case .hello: continue
                case .line(let id, let version): line = (id, version)
                case .drawing(let key, let name): drawing = Report(key: key, name: name)
                case .sample(let report):
                    // Only the sample announced: a line that prints a report of its own is not believed.
                    guard let current = drawing, current.key == report.key, current.name == report.name else { continue }
                    samples.append(report)
                    drawing = nil
                case .refused(let why): return .refused(why)
                }
            }
        }
        guard let line else {
            let said = watch.lastWords.detail.map { ": " + $0 } ?? ""
            return .refused("the plugin could not be opened to draw its samples (\(ending?.description ?? "it took more than \(Int(limit)) s"))\(said)")
        }
        let said = watch.lastWords.detail.map { ": " + $0 } ?? ""
        if var current = drawing {
            current.failure = ending.map { "drawing it crashed (\($0))\(said)" } ?? "drawing it took more than \(Int(limit)) s"
            samples.append(current)
        } else if ending != .exited(0) {
            // Between samples only a builder's `samples` runs: what it cost is said on the list.
            let why = ending.map { "it ended (\($0))\(said)" } ?? "it took more than \(Int(limit)) s"
            return .refused("the samples after the \(samples.count) drawn could not be drawn: \(why)")
        }
        return .drawn(line: line.id, version: line.version, samples: samples)
    }
}

#if canImport(Glibc)
import Glibc
#endif
@_spi(Host) import IMKit

/// A line's samples (``MessageBuilder/samples``, IMKit 1.4), drawn and checked in a child of
/// their own (`imhost __samples FILE`), never in the process that asks: `imhost plugins
/// --samples` and the workbench (`imhost preview`). The child opens the plugin as the scanner
/// does (load, entry, the compiler's and ABI's checks, registration), then, for each builder in
/// the order registered and each of its samples, checks its name, encodes its content, decodes
/// it again, lays it out and makes its view; a card is checked against the card rules
/// (``MessageCard/ruleErrors()``), a payload against the size and depth a message may have. A
/// builder that throws is that sample's failure; one that crashes or hangs costs the child: the
/// sample it was drawing says so, and a new child draws the samples after it.
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
        /// Why it could not be drawn, or cannot be sent (a builder's error, a crash, a name or a
        /// payload refused): one line.
        package var failure: String?
        /// A builder that draws lines (not a card): its lines at the terminal's width, as a
        /// terminal chat shows them.
        package var lines: [String]?

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
        /// The line, its version, and each sample in order; `cut`: why the samples after those
        /// could not be drawn (the list of samples itself failed).
        case drawn(line: String, version: String, samples: [Report], cut: String?)
        /// The file could not be opened as a line: why, in one line.
        case refused(String)
    }

    /// What the child says on its control pipe, one JSON object a line.
    enum Message: Codable, Equatable, ChildMessage {
        case hello(version: Int)
        /// The file is a line: its id and version.
        case line(id: String, version: String)
        /// About to draw sample `index` (from 0, over every builder's): a death from here is its failure.
        case drawing(index: Int, key: String, name: String)
        case sample(Report)
        /// Every sample after the ones skipped is drawn: `count` in all.
        case done(count: Int)
        /// The file was refused before any sample: why.
        case refused(String)

        static let version = 2
        static var protocolVersion: Int { version }
        var helloVersion: Int? { if case .hello(let version) = self { version } else { nil } }
    }

    /// The width samples are laid out at: a message's body in a terminal chat of the default width.
    static var width: Int { ChatPage.bodyWidth(forPage: ChatPage.defaultWidth) }
    /// The longest a sample may take to draw, and the child to open the plugin, in seconds.
    package static let sampleSeconds: Double = 5, openSeconds: Double = 10

    // MARK: The child

    /// `imhost __samples FILE [SKIP]`: opens `path` and draws every sample after the first
    /// `skip`, reporting on `reports`.
    package static func childMain(_ path: String, skip: Int, reports: ControlPipe) -> Int32 {
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
        var index = 0
        for builder in staged.builders {
            draw(builder, from: &index, skip: skip, announce: { reports.send(Message.drawing(index: $0, key: $1, name: $2)) },
                 drawn: { reports.send(Message.sample($0)) })
        }
        reports.send(Message.done(count: index))
        return 0
    }

    /// Draws each of `builder`'s samples, numbering them on from `index`, skipping those numbered
    /// below `skip`, calling `announce` before each and `drawn` after.
    static func draw<Builder: MessageBuilder>(_ builder: Builder, from index: inout Int, skip: Int,
                                              announce: (Int, String, String) -> Void, drawn: (Report) -> Void) {
        let key = builder.key
        var names: Set<String> = []
        for sample in builder.samples {
            defer { index += 1 }
            let first = names.insert(sample.name).inserted
            guard index >= skip else { continue }
            announce(index, key, sample.name)
            var report = Report(key: key, name: sample.name)
            if let refused = refusal(name: sample.name, first: first) {
                report.failure = refused
                drawn(report)
                continue
            }
            do {
                let payload = try builder.payload(for: sample.content)
                report.payload = payload.json
                do throws(SendError) {
                    try MessageSender.check(payload, HostConfig.Limits())
                } catch {
                    report.failure = "its payload cannot be sent: \(error)"
                }
                let layout = MessageLayout(width: width)
                let view = builder.view(for: try builder.model(for: try builder.content(from: payload), layout: layout))
                if let card = view.card {
                    report.problems = card.ruleErrors().map { Problem(path: $0.path, code: $0.code.name, detail: $0.detail) }
                } else {
                    report.lines = view.lines
                }
            } catch {
                report.failure = "the builder threw: " + String(describing: error).split(whereSeparator: \.isNewline).joined(separator: " ")
            }
            drawn(report)
        }
    }

    /// Why a sample's name is refused: its length, a character that is not shown as itself (a
    /// control, a direction override), or a name another sample of its key has.
    static func refusal(name: String, first: Bool) -> String? {
        guard (1...60).contains(name.count) else { return "the sample's name has \(name.count) characters; a name has 1 to 60" }
        if !PlainText.isPlain(name) {
            return "the sample's name holds a control or direction character; a name is plain text"
        }
        guard first else { return "another sample of this key has this name; give each its own" }
        return nil
    }

    // MARK: The parent

    /// Draws the samples of the plugin at `file` in children of `executable`: a sample that
    /// crashes the child, or takes more than ``sampleSeconds``, is that sample's failure, and a
    /// new child draws the ones after it.
    package static func run(file: String, executable: String) -> Outcome {
        var samples: [Report] = []
        var line: (id: String, version: String)?
        while true {
            switch runOnce(file: file, executable: executable, skip: samples.count) {
            case .refused(let why):
                guard let line else { return .refused(why) }
                // Opened before, not now: the file changed meanwhile, or the line's registration did.
                return .drawn(line: line.id, version: line.version, samples: samples, cut: why)
            case .drawn(let id, let version, let more, let cut):
                line = (id, version)
                samples += more
                // A sample that ended the child: the next child starts after it.
                if let last = more.last, cut == nil, last.failure?.hasPrefix(Self.ended) == true { continue }
                return .drawn(line: id, version: version, samples: samples, cut: cut)
            }
        }
    }

    /// How the failure of a sample that ended its child begins.
    static let ended = "drawing it "

    private static func runOnce(file: String, executable: String, skip: Int) -> Outcome {
        let watch: ChildWatch<Message>
        do {
            watch = ChildWatch(try ChildProcess(executable: executable, arguments: ["__samples", "--parent", "\(getpid())", file, "\(skip)"],
                                                stdin: .null, stdout: .null, stderr: .pipe, control: true))
        } catch {
            return .refused("the sample drawer could not start (\(error.call): \(error)); check that \(executable) can run")
        }
        var deadline = Clock.monotonic() + UInt64(openSeconds * 1e9)
        var line: (id: String, version: String)?
        var samples: [Report] = []
        var drawing: Report?
        var ending: ChildProcess.Termination?
        var done = false
        reading: while !done {
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
                case .drawing(let index, let key, let name):
                    // Only the next sample in turn: a line that prints a report of its own is not believed.
                    guard index == skip + samples.count else { continue }
                    drawing = Report(key: key, name: name)
                    deadline = Clock.monotonic() + UInt64(sampleSeconds * 1e9)
                case .sample(let report):
                    guard let current = drawing, current.key == report.key, current.name == report.name else { continue }
                    samples.append(report)
                    drawing = nil
                case .done: done = true
                case .refused(let why): return .refused(why)
                }
            }
        }
        if done { _ = watch.kill() }
        let said = watch.lastWords.detail.map { ": " + $0 } ?? ""
        guard let line else {
            return .refused("the plugin could not be opened to draw its samples (\(ending?.description ?? "it took more than \(Int(openSeconds)) s"))\(said)")
        }
        if var current = drawing {
            current.failure = Self.ended + (ending.map { "crashed (\($0))\(said)" } ?? "took more than \(Int(sampleSeconds)) s")
            samples.append(current)
            return .drawn(line: line.id, version: line.version, samples: samples, cut: nil)
        }
        guard done else {
            // Between samples only a builder's `samples` runs: what it cost is said on the list.
            let why = ending.map { "the list of samples ended the drawer (\($0))\(said)" } ?? "the list of samples took more than \(Int(sampleSeconds)) s"
            return .drawn(line: line.id, version: line.version, samples: samples, cut: why)
        }
        return .drawn(line: line.id, version: line.version, samples: samples, cut: nil)
    }
}

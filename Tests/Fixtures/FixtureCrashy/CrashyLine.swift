import Foundation
import IMKit

/// A line that misbehaves where it is told to, for the containment tests. `IMHOST_CRASHY` holds
/// `PLACE:HOW` pairs separated by commas, e.g. `builder:segv` or `register:loop,tap:abort`.
///
/// Places: `register`, `open` (the page's init), `page` (its title hook), `tap`, `menu`,
/// `builder`, `note` (a second builder), `route`, `service` (its prepare), `finalize` (its
/// finalize), `thread` (a background thread its service starts). Hows: `abort`, `segv`, `trap` (a Swift runtime
/// error), `loop` (never returns), `overrun` (returns, but after two seconds), `exit` (calls exit),
/// `warn` (logs a warning and returns), `print` (prints a line on standard error and returns),
/// `fds` (prints the process's open descriptors on standard error, e.g. `fds: 0 1 2 3 4`).
enum Misbehaviour {
    static func at(_ place: String) {
        guard let plan = ProcessInfo.processInfo.environment["IMHOST_CRASHY"] else { return }
        for pair in plan.split(separator: ",") {
            let parts = pair.split(separator: ":")
            guard parts.count == 2, parts[0] == place else { continue }
            misbehave(String(parts[1]))
        }
    }

    static func misbehave(_ how: String) {
        switch how {
        case "abort": abort()
        case "segv":
            let pointer = UnsafeMutablePointer<Int>(bitPattern: 8)!
            pointer.pointee = 42
        case "trap":
            let values: [Int] = []
            _ = values[values.count + 1]
        case "loop":
            while ProcessInfo.processInfo.environment["IMHOST_CRASHY"] != nil { usleep(1000) }
        case "overrun": sleep(2)
        case "exit": exit(3)
        case "warn": CrashyLine.log.warning("a warning from crashy")
        case "print": FileHandle.standardError.write(Data("crashy printed this\n".utf8))
        case "fds":
            let fds = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap(Int.init).sorted()
            FileHandle.standardError.write(Data("fds: \(fds.map(String.init).joined(separator: " "))\n".utf8))
        default: break
        }
    }
}

final class CrashyPage: CarrierPage {
    required init(context: ChatContext) {
        Misbehaviour.at("open")
        super.init(context: context)
    }

    override var title: String {
        Misbehaviour.at("page")
        return "Crashy chat with \(context.peerID)"
    }

    override func menuItems() -> [String] { ["Misbehave"] }

    override func didSelectMenuItem(_ item: String) -> TapResult {
        Misbehaviour.at("menu")
        return .handled("chose \(item)")
    }

    override func didTap(_ message: ShownMessage) -> TapResult {
        Misbehaviour.at("tap")
        return .handled("tapped \(message.envelope.id)")
    }
}

struct BombBuilder: MessageBuilder {
    struct Content: Codable, Sendable { var text: String }
    let key = "crashy.bomb"
    func model(for content: Content, layout: MessageLayout) throws -> MessageModel {
        Misbehaviour.at("builder")
        return MessageModel(content: content, lines: layout.wrap("💣 " + content.text))
    }
    /// Drawn by `imhost plugins --samples` and the workbench: crashes with the builder.
    var samples: [MessageSample<Content>] { [MessageSample("ticking", Content(text: "tick"))] }
}

struct NoteBuilder: MessageBuilder {
    struct Content: Codable, Sendable { var text: String }
    let key = "crashy.note"
    func model(for content: Content, layout: MessageLayout) throws -> MessageModel {
        Misbehaviour.at("note")
        return MessageModel(content: content, lines: layout.wrap("📝 " + content.text))
    }
    /// Drawn after the bomb's: one whose name is given twice, one whose name holds a tab.
    var samples: [MessageSample<Content>] {
        [MessageSample("plain", Content(text: "after the bomb")), MessageSample("plain", Content(text: "again")),
         MessageSample("tab\there", Content(text: "tab"))]
    }
}

final class Engine: Service {
    static let id = "crashy.engine"

    required init() {}

    func prepare(in user: UserContext) throws {
        Misbehaviour.at("service")
        if ProcessInfo.processInfo.environment["IMHOST_CRASHY"]?.contains("thread:") == true {
            Thread.detachNewThread {
                usleep(50_000)
                Misbehaviour.at("thread")
            }
        }
    }

    func finalize() {
        Misbehaviour.at("finalize")
        // Lets a test see that finalize ran, on a normal exit or a signal.
        if let path = ProcessInfo.processInfo.environment["IMHOST_CRASHY_FINALIZED"] {
            _ = FileManager.default.createFile(atPath: path, contents: Data("finalized\n".utf8))
        }
    }
}

enum CrashyLine: BusinessLine {
    static let id = "crashy"
    static let displayName = "Crashy"
    static let version = "1.0.0"

    static func register(with registrar: LineRegistrar) throws {
        Misbehaviour.at("register")
        try registrar.registerPage(CrashyPage.self)
        try registrar.registerBuilder(BombBuilder())
        try registrar.registerBuilder(NoteBuilder())
        try registrar.registerService(Engine.self)
        try registrar.registerRoute("crashy://boom", allowExternal: true) { _ in
            Misbehaviour.at("route")
            return "boom"
        }
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: CrashyLine.self)
}

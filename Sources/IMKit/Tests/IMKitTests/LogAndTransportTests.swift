import Synchronization
import Testing
@_spi(Host) import IMKit

/// Both suites install the process-wide log receiver, so they run one at a time.
@Suite("Line logs and the transport", .serialized)
struct LogAndTransportTests {
    final class Entries: Sendable {
        let list = Mutex<[String]>([])
        func add(_ entry: String) { list.withLock { $0.append(entry) } }
        var all: [String] { list.withLock { $0 } }
    }

    @Test("a log entry is one safe line, prefixed by its line, cut at the maximum length; from any thread")
    func log() async throws {
        let entries = Entries()
        LogSink.install { line, level, entry in entries.add("\(line) \(level.rawValue) \(entry)") }
        enum DemoLine: BusinessLine {
            static let id = "demo"
            static let displayName = "Demo"
            static let version = "1"
            static func register(with registrar: LineRegistrar) throws {}
        }
        DemoLine.log.info("plain")
        DemoLine.log.warning("two\nlines \u{1B}[31mred\u{1B}[0m \u{202E}gnp.exe")
        await Task.detached { DemoLine.log.error("from a background task") }.value
        DemoLine.log.info(String(repeating: "界", count: 3000))
        let all = entries.all
        try #require(all.count == 4, "\(all)")
        #expect(all[0] == "demo info plain")
        #expect(all[1] == #"demo warning two\nlines \x1b[31mred\x1b[0m \u{202e}gnp.exe"#)
        #expect(all[2] == "demo error from a background task")
        #expect(all[3].utf8.count <= "demo info ".utf8.count + LineLog.maximumBytes)
        #expect(all[3].hasSuffix("界…"))
    }

    @Test("the transport tells its observers when the connection changes, while they keep their subscription")
    func transport() throws {
        var sent: [String] = []
        let transport = Transport(isOnline: true) { (key, payload, peer) throws(SendError) in
            sent.append("\(peer) \(key) \(payload.json)")
            return MessageEnvelope(id: "m1", conversation: peer, from: "me", to: peer, timestamp: 0, key: key, payload: payload)
        }
        var heard: [Bool] = []
        var subscription: Subscription? = transport.observeConnection { heard.append($0) }
        transport.setOnline(false)
        transport.setOnline(false)
        transport.setOnline(true)
        #expect(heard == [false, true], "each change once")
        subscription = nil
        transport.setOnline(false)
        #expect(heard == [false, true])
        #expect(!transport.isOnline)
        let message = try transport.send(key: "text", payload: MessagePayload(json: #"{"text":"hi"}"#), to: "u9")
        #expect(message.conversation == "u9")
        #expect(sent == [#"u9 text {"text":"hi"}"#])
        withExtendedLifetime(subscription) {}
    }

    @Test("terminal text: controls, DEL, C1 and bidi become visible escapes; newlines only where allowed")
    func terminalText() {
        #expect(TerminalText.safe("plain 你好 🚗") == "plain 你好 🚗")
        #expect(TerminalText.safe("a\u{1B}]0;title\u{07}b") == #"a\x1b]0;title\x07b"#)
        #expect(TerminalText.safe("\u{9B}31m\u{7F}") == #"\u{9b}31m\x7f"#)
        #expect(TerminalText.safe("x\u{2066}y\u{200F}") == #"x\u{2066}y\u{200f}"#)
        #expect(TerminalText.safe("one\ntwo\r") == #"one\ntwo\r"#)
        #expect(TerminalText.safe("one\ntwo", newlines: true) == "one\ntwo")
    }
}

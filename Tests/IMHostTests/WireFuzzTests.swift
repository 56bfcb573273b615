import Foundation
import Testing
@testable import IMHost
import IMHostRuntime
import IMKit

/// The wire parser where it is most exposed: every envelope a peer writes and every status a user
/// writes is read by `Envelope.read` and `FleetStatus.read`. In-process round trips for what
/// hosts write, and seeded fuzzing (`make fuzz` runs a million) for what anyone could.
@Suite("The wire, read from anyone")
struct WireFuzzTests {
    static let ids = ["01JCAROL000000000000000001", "a", String(repeating: "Z", count: 64), "probe-01J", "x_y-z"]

    /// One envelope of every kind, as hosts write them.
    static var written: [Envelope] {
        var envelopes: [Envelope] = []
        for id in ids {
            envelopes.append(.message(Envelope.Message(id: id, seq: 1, key: "text", payload: MessagePayload(json: #"{"text":"hé \"q\" 🚗"}"#),
                                                       sentAt: 1_767_603_600_000)))
            envelopes.append(.message(Envelope.Message(id: id, seq: 9_007_199_254_740_991, key: "house.listing",
                                                       payload: MessagePayload(json: #"{"id":"L1","price":1200}"#), sentAt: 0,
                                                       jump: JumpPage(rootCateID: 1, cateID: 12, infoID: "L1001"))))
            envelopes.append(.probe(id: id))
            envelopes.append(.presence(id: id, at: 1_767_603_600_000))
        }
        for state in Envelope.Receipt.State.allCases {
            envelopes.append(.receipt(Envelope.Receipt(state: state, ids: ids)))
        }
        envelopes.append(.receipt(Envelope.Receipt(state: .refused, ids: [ids[0]], code: .kind, reason: "an envelope of kind \"sticker\"")))
        envelopes.append(.receipt(Envelope.Receipt(state: .refused, ids: [ids[0]], code: Envelope.RefusalCode(rawValue: "from-the-future"))))
        envelopes.append(.receipt(Envelope.Receipt(state: .read, ids: Array(repeating: ids[0], count: Envelope.receiptIDs), confirm: true)))
        envelopes.append(.confirm(ids: ids))
        return envelopes
    }

    @Test("what a host writes reads back as the same envelope")
    func roundTrip() throws {
        for envelope in Self.written {
            #expect(try Envelope.read(envelope.bytes, payloadLimit: 65536, sender: "carol") == envelope, "\(envelope.text)")
        }
    }

    @Test("a status a host writes reads back as the same report; one cut to its limit says partial")
    func statusRoundTrip() throws {
        let report = FleetReport(applied: FleetConfig.Applied(version: 1_767_603_600_000, digest: "ab12"), lines: ["cars", "house"],
                                 keys: ["cars.offer", "house.listing"])
        let read = FleetStatus.read(user: "bob", report.document(state: .running, at: 5))
        #expect(read.report == report && read.state == .running && read.at == 5 && read.inventory == .complete)
        let many = FleetReport(lines: (0..<2000).map { "line\($0)" })
        let cut = FleetStatus.read(user: "bob", many.document(state: .running, at: 5))
        #expect(cut.inventory == .partial && !cut.report.lines.isEmpty && cut.report.lines.count < 2000)
    }

    /// Members of every kind, and a few that are not.
    static let members = ["v", "kind", "id", "seq", "key", "payload", "sentAt", "jump", "state", "ids", "code", "reason", "confirm", "at",
                          "from", "sender", "x"]
    static let values = ["1", "2", "0", "-1", "1.5", "1e3", "9007199254740992", #""message""#, #""receipt""#, #""confirm""#, #""probe""#,
                         #""presence""#, #""sticker""#, #""read""#, #""refused""#, #""kind""#, #""NOT A CODE""#, #""text""#,
                         #""house.listing""#, #""../x""#, #""01JCAROL000000000000000001""#, #""carol""#, #""alice""#, "true", "false", "null",
                         #"{"text":"hi"}"#, #"{"rootCateID":1,"cateID":12,"infoID":"L1"}"#, #"{"rootCateID":"1"}"#,
                         #"["01JCAROL000000000000000001"]"#, "[]", #"["a",1]"#, "\"\u{1B}[2J\"", "\"\u{202E}\"", "[[[[[[]]]]]]"]

    /// What each member mostly holds: what a host writes, or something near it.
    static let likely: [String: [String]] = [
        "v": ["1", "1", "1", "2"],
        "kind": [#""message""#, #""message""#, #""receipt""#, #""receipt""#, #""confirm""#, #""probe""#, #""presence""#, #""sticker""#],
        "id": [#""01JCAROL000000000000000001""#, #""../x""#],
        "seq": ["1", "2", "0"],
        "key": [#""text""#, #""house.listing""#, #""../x""#],
        "payload": [#"{"text":"hi"}"#, #""no""#],
        "sentAt": ["1767603600000", "-1"],
        "state": [#""read""#, #""refused""#, #""delivered""#, #""lost""#],
        "ids": [#"["01JCAROL000000000000000001"]"#, "[]"],
        "code": [#""kind""#, #""NOT A CODE""#],
        "confirm": ["true", "1"],
    ]

    static func envelope(_ random: inout SeededGenerator) -> String {
        let chosen = Self.members.filter { member in
            // A sender named in the envelope is refused before anything else: rarely, then.
            ["from", "sender"].contains(member) ? Int.random(in: 0..<20, using: &random) == 0 : Int.random(in: 0..<4, using: &random) > 0
        }
        var text = "{" + chosen.shuffled(using: &random).map { member in
            let pool = Int.random(in: 0..<4, using: &random) > 0 ? Self.likely[member] ?? Self.values : Self.values
            return "\"\(member)\":" + pool.randomElement(using: &random)!
        }.joined(separator: ",") + "}"
        if Int.random(in: 0..<4, using: &random) == 0 { text = FuzzTests.mutate(text, &random) }
        return text
    }

    @Test("any bytes: an envelope, or a typed refusal in one safe line; what reads writes back the same")
    func fuzzEnvelopes() throws {
        var random = SeededGenerator(seed: FuzzTests.seed &+ 11)
        var kinds: [Envelope.Refusal.Kind: Int] = [:]
        for _ in 0..<FuzzTests.iterations * 10 {
            let bytes = Array(Self.envelope(&random).utf8)
            do throws(Envelope.Refusal) {
                let envelope = try Envelope.read(bytes, payloadLimit: 1024, sender: "carol")
                #expect(try Envelope.read(envelope.bytes, payloadLimit: 1024, sender: "carol") == envelope, "\(String(decoding: bytes, as: UTF8.self))")
            } catch {
                kinds[error.kind, default: 0] += 1
                // Quoted as the envelope said it; as the chat, sync and play say it, one safe line.
                #expect(FuzzTests.isOneSafeLine(ConnectionWords.notice(.refused(error, from: "carol"))), "\(error.description)")
                #expect(error.messageID.map(GlobalID.isValid) ?? true)
                // A refusal a peer is told of carries a code a host can read back.
                #expect(Envelope.RefusalCode.isValid(error.code.rawValue))
            }
        }
        // The generator reaches every refusal, or it tests less than it seems.
        #expect(Set(kinds.keys).isSuperset(of: [.notJSON, .version, .kind, .id, .key, .payload, .receipt, .sender]), "\(kinds)")
    }

    @Test("any bytes on a status topic: a status, never a crash; names that are not names are dropped")
    func fuzzStatus() throws {
        var random = SeededGenerator(seed: FuzzTests.seed &+ 12)
        let members = ["v", "state", "version", "digest", "at", "lines", "keys", "partial"]
        let values = ["1", "-5", "1e20", #""running""#, #""gone""#, #""x""#, #"["house","Bad Line","\u001b"]"#, #"["house.listing","nokey"]"#,
                      "[]", "null", "true", #"{"a":1}"#]
        for _ in 0..<FuzzTests.iterations * 5 {
            var text = "{" + members.filter { _ in Bool.random(using: &random) }.map { "\"\($0)\":" + values.randomElement(using: &random)! }
                .joined(separator: ",") + "}"
            if Bool.random(using: &random) { text = FuzzTests.mutate(text, &random) }
            let status = FleetStatus.read(user: "bob", Array(text.utf8))
            // A state read is one the text says; anything else is unreadable.
            #expect(status.state == .unreadable || text.contains("\"\(status.state.rawValue)\""), "\(text)")
            #expect(status.report.lines.allSatisfy(LineID.isValid) && status.report.keys.allSatisfy(LineID.isValidMessageKey))
        }
    }
}

import Foundation
import IMHost
import IMKit

/// What drawing a chat page of 50 messages costs, and where the time goes: the house line's
/// page over a conversation of texts, 10 recalled texts and 40 listings (each once revised),
/// drawn unchanged and drawn after one card's revision (kept through another connection, as the
/// process holding the user's connection keeps it), beside each query and hook a draw runs,
/// timed alone. The revision row of `imhost-bench transport` ends with such a draw.
enum DrawBenchmark {
    static func run(folder: String, rounds: Int = 300) throws -> [Row] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try StartupBenchmark.install(count: 2, into: folder)
        let host = try ChatFeaturesBenchmark.pageHost("alice", data: folder + "/a", plugins: folder + "/Plugins")
        let page = try host.open("im://chat?rootCateID=1&cateID=12&peer=bob")
        guard let store = host.store else { throw TransportBenchmark.Failure(description: "the draw benchmark's host has no store") }
        let listing = #"{"id":"L1","title":"Sunny flat","price":4200,"area":56,"rooms":2,"status":"available"}"#
        let booked = #"{"id":"L1","title":"Sunny flat","price":4200,"area":56,"rooms":2,"status":"booked"}"#
        // A history of texts both ways, the last 10 recalled, then 40 listings alice sent, each
        // booked by bob: a window as the transport's revision row has in its middle rounds.
        for round in 0..<210 {
            if round % 3 == 0, round < 200 { _ = try page.receive(key: "text", payload: MessagePayload(json: TransportBenchmark.text)) }
            _ = try store.storeOutgoing(to: "bob", key: "text", payload: MessagePayload(json: TransportBenchmark.text), at: IMHost.Clock.now())
        }
        let texts = try store.count(of: "bob")
        for number in (texts - 9)...texts {
            guard case .recalled = try store.recall("bob", number: number, at: IMHost.Clock.now(), limit: 120_000) else {
                throw TransportBenchmark.Failure(description: "text \(number) could not be recalled")
            }
        }
        let courierStore = try MessageStore(dataFolder: folder + "/a", user: "alice")
        for _ in 0..<40 {
            let sent = try page.send(key: "house.listing", payload: MessagePayload(json: listing))
            let revision = Envelope.Revision(id: sent.globalID!, from: "alice", number: 1, key: "house.listing", payload: MessagePayload(json: booked),
                                             at: IMHost.Clock.now())
            _ = try courierStore.applyRevision(revision, by: "bob", peer: "bob")
        }
        let total = try store.count(of: "bob"), positions = (total - 50)...(total - 1)
        _ = try page.view(width: 72)

        // One listing's revision by bob, a newer one each call, on the newest listing shown.
        let newest = try store.stored(of: "bob", endingBefore: nil, limit: 50).last { $0.envelope.key == "house.listing" }!
        var number = 1
        // The draws after a revision alone, and after another connection's write elsewhere
        // (those parts' times include the writes).
        var revisedDraws: [Double] = [], touchedDraws: [Double] = []
        func revise() throws {
            number += 1
            let revision = Envelope.Revision(id: newest.envelope.globalID!, from: "alice", number: number, key: "house.listing",
                                             payload: MessagePayload(json: number % 2 == 0 ? booked : listing), at: IMHost.Clock.now())
            guard try courierStore.applyRevision(revision, by: "bob", peer: "bob") else { throw TransportBenchmark.Failure(description: "revision \(number) was not kept") }
        }

        let parts: [(name: String, run: () throws -> Void)] = [
            ("view", { blackHole(try page.view(width: 72)) }),
            ("presented", { blackHole(try page.presented(width: 72)) }),
            ("stored", { blackHole(try store.stored(of: "bob", endingBefore: nil, limit: 50)) }),
            ("count", { blackHole(try store.count(of: "bob")) }),
            ("blocked", { blackHole(try store.blocked("bob")) }),
            ("photos", { blackHole(try store.photoSlots(peer: "bob", positions: positions)) }),
            ("voices", { blackHole(try store.voiceSlots(peer: "bob", positions: positions)) }),
            ("files", { blackHole(try store.fileSlots(peer: "bob", positions: positions)) }),
            ("reactions", { blackHole(try store.reactions(peer: "bob", positions: positions)) }),
            ("peer lines", { blackHole(try store.peerLines(of: "bob")) }),
            ("title", { blackHole(page.carrier.title) }),
            ("revised", { try revise(); let start = now(); blackHole(try page.view(width: 72)); revisedDraws.append(Double(now() - start)) }),
            ("touched", {
                _ = courierStore.firstTime("draw benchmark \(number) \(touchedDraws.count)")
                let start = now()
                blackHole(try page.view(width: 72))
                touchedDraws.append(Double(now() - start))
            }),
        ]
        var times: [String: [Double]] = [:]
        // Interleaved, so a burst of load on the shared machine hits every part alike.
        for _ in 0..<rounds {
            for part in parts {
                let start = now()
                try part.run()
                times[part.name, default: []].append(Double(now() - start))
            }
        }
        let p50 = times.mapValues { TransportBenchmark.percentile($0, 0.5) }
        let unchanged = p50["view"]!, revised = TransportBenchmark.percentile(revisedDraws, 0.5)
        let touched = TransportBenchmark.percentile(touchedDraws, 0.5)
        let queries = ["stored", "count", "blocked", "photos", "voices", "files", "reactions", "peer lines", "title"]
        progress("draw: p50 by part, µs: " + (["view", "presented"] + queries).map { "\($0) \(format(p50[$0]! / 1000, 1))" }.joined(separator: ", ")
                 + "; after another connection's write elsewhere \(format(touched / 1000, 1)); after a revision \(format(revised / 1000, 1))")
        let storedText = "its window's query alone: \(format(p50["stored"]! / 1000, 1)) µs"
        return [
            Row(what: "draw a chat page of 50 messages", measure: "p50, nothing changed since the last draw (house line, texts and listings)",
                figure: "\(format(unchanged / 1000, 1)) µs", baseline: storedText, ratio: "\(format(unchanged / p50["stored"]!, 2))x",
                target: "reported", met: nil),
            Row(what: "draw a chat page of 50 messages", measure: "p50, another connection wrote elsewhere since (SQLite's cache dropped)",
                figure: "\(format(touched / 1000, 1)) µs", baseline: "nothing changed: \(format(unchanged / 1000, 1)) µs",
                ratio: "\(format(touched / unchanged, 2))x", target: "reported", met: nil),
            Row(what: "draw a chat page of 50 messages", measure: "p50, one card revised since the last draw (by another connection)",
                figure: "\(format(revised / 1000, 1)) µs", baseline: "nothing changed: \(format(unchanged / 1000, 1)) µs",
                ratio: "\(format(revised / unchanged, 2))x", target: "reported", met: nil),
        ]
    }
}

import Foundation
import IMHost
import IMHostTerminal
import IMKit

/// Benchmarks that run inside this process, against the real host types and the release
/// house and jobs plugins.
enum InProcessBenchmarks {
    /// A host over a scratch folder with house and jobs installed and `routes` extra rules.
    static func host(rules: Int, folder: String) throws -> ChatHost {
        try StartupBenchmark.install(count: 2, into: folder)
        var routes = [#"{ "rootCateID": 1, "cateID": "*", "line": "house" }"#]
        for index in 0..<max(0, rules - 1) {
            let cate = index % 2 == 0 ? #""*""# : "[\(index % 50), \(index % 50 + 50)]"
            routes.append(#"{ "rootCateID": \#(1000 + index), "cateID": \#(cate), "line": "\#(index % 3 == 0 ? "jobs" : "house")" }"#)
        }
        let text = #"{ "lines": { "house": {}, "jobs": {} }, "routes": [\#(routes.joined(separator: ",\n"))] }"#
        let config = try HostConfig.parse(text, file: folder + "/host.json")
        return ChatHost(config: config, options: ChatHost.Options(durable: false, scanner: products + "/imhost", breadcrumbs: .none))
    }

    static func converter(folder: String) throws -> [Row] {
        var rates: [Int: Double] = [:]
        for rules in [10, 10_000] {
            let host = try host(rules: rules, folder: folder + "/rules\(rules)")
            var generator = SystemRandomNumberGenerator()
            let urls = (0..<1024).map { _ in
                let index = Int.random(in: 0..<(rules - 1), using: &generator)
                return "im://chat?rootCateID=\(1000 + index)&cateID=\(index % 50)&peer=u42&infoID=L1001"
            }
            let converter = host.converter
            let decisions = 1_000_000
            let time = try median(runs: 5) {
                for index in 0..<decisions {
                    blackHole(try converter.decide(urls[index & 1023]))
                }
            }
            rates[rules] = Double(decisions) / (time / 1e9)
        }
        let ratio = rates[10]! / rates[10_000]!
        return [
            Row(what: "converter", measure: "decisions/s, URL parsing included, 10 rules", figure: "\(format(rates[10]! / 1e6, 2)) M/s",
                baseline: "-", ratio: "-", target: ">= 1 M/s", met: rates[10]! >= 1e6),
            Row(what: "converter", measure: "decisions/s, 10,000 rules", figure: "\(format(rates[10_000]! / 1e6, 2)) M/s",
                baseline: "10 rules: \(format(rates[10]! / 1e6, 2)) M/s", ratio: "\(format(ratio, 2))x time",
                target: ">= 1 M/s, <= 1.2x", met: rates[10_000]! >= 1e6 && ratio <= 1.2),
        ]
    }

    struct QuickReply: ChatEvent { var text: String }

    final class Subscriber {
        var received = 0
        var subscription: Subscription?
    }

    static func sessionBus() -> [Row] {
        let events = 200_000
        let bus = SessionBus()
        let subscribers = (0..<10).map { _ in Subscriber() }
        for subscriber in subscribers {
            // As the SDK recommends: the subscriber keeps its subscription and is captured unowned.
            subscriber.subscription = bus.subscribe(QuickReply.self) { [unowned subscriber] event in
                subscriber.received += event.text.utf8.count
            }
        }
        let busTime = median(runs: 5) {
            for _ in 0..<events { bus.publish(QuickReply(text: "Hello!")) }
        }

        // The article's design: NSNotificationCenter, names prefixed with the session's uid.
        let center = NotificationCenter()
        let name = Notification.Name("session-7f3a9c.quickReply")
        // queue: nil runs observers synchronously on the posting thread, this one: no race.
        nonisolated(unsafe) let counter = Subscriber()
        var tokens: [NSObjectProtocol] = []
        for _ in 0..<10 {
            tokens.append(center.addObserver(forName: name, object: nil, queue: nil) { note in
                counter.received += (note.userInfo?["text"] as? String)?.utf8.count ?? 0
            })
        }
        let notificationEvents = 20_000
        let centerTime = median(runs: 5) {
            for _ in 0..<notificationEvents { center.post(name: name, object: nil, userInfo: ["text": "Hello!"]) }
        }
        tokens.forEach(center.removeObserver)
        let busPerEvent = busTime / Double(events)
        let centerPerEvent = centerTime / Double(notificationEvents)
        blackHole(subscribers.map(\.received).reduce(0, +) + counter.received)
        return [Row(what: "session bus", measure: "ns per event to 10 subscribers", figure: "\(format(busPerEvent)) ns",
                    baseline: "NotificationCenter: \(format(centerPerEvent)) ns", ratio: "\(format(centerPerEvent / busPerEvent))x faster",
                    target: ">= 10x faster", met: centerPerEvent / busPerEvent >= 10)]
    }

    /// A builder that is never used: it only makes the registry larger.
    struct Unused: MessageBuilder {
        let key: String
        func model(for content: TextContent, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: content, lines: [content.text])
        }
    }

    static func sampleMessages(_ count: Int, conversation: String = "u42", prefix: String = "") -> [MessageEnvelope] {
        let payloads: [(String, String)] = [
            ("text", #"{"text":"你好,这套房子还在吗? Is the flat still available this weekend?"}"#),
            ("image", #"{"height":600,"url":"https://img.example/flat/1.jpg","width":800}"#),
            ("voice", #"{"seconds":12,"url":"v/1.amr"}"#),
            ("location", #"{"latitude":39.99,"longitude":116.47,"name":"望京 Wangjing"}"#),
        ]
        return (0..<count).map { index in
            let (key, json) = payloads[index % payloads.count]
            return MessageEnvelope(id: "m\(index + 1)", conversation: conversation, from: index % 3 == 0 ? "me" : "u42",
                                   to: index % 3 == 0 ? "u42" : "me", timestamp: 1_767_603_600_000 + Int64(index) * 1000,
                                   key: prefix + key, payload: MessagePayload(json: json))
        }
    }

    /// A built-in builder registered by a line under its own key, so the host calls it as line
    /// code: inside a breadcrumb frame.
    struct LineCopy<Builder: MessageBuilder>: MessageBuilder {
        let inner: Builder
        let key: String
        func content(from payload: MessagePayload) throws -> Builder.Content { try inner.content(from: payload) }
        func payload(for content: Builder.Content) throws -> MessagePayload { try inner.payload(for: content) }
        func model(for content: Builder.Content, layout: MessageLayout) throws -> MessageModel { try inner.model(for: content, layout: layout) }
        func view(for model: MessageModel) -> MessageView { inner.view(for: model) }
    }

    static let line = "benchmsg"
    static let text = LineCopy(inner: BuiltinBuilders.Text(), key: "benchmsg.text")
    static let image = LineCopy(inner: BuiltinBuilders.Image(), key: "benchmsg.image")
    static let voice = LineCopy(inner: BuiltinBuilders.Voice(), key: "benchmsg.voice")
    static let location = LineCopy(inner: BuiltinBuilders.Location(), key: "benchmsg.location")

    /// The baseline: a hand-written switch over the same kinds, calling the same builders and the
    /// same cell drawing directly, without breadcrumbs: only the dispatch differs.
    static func switchRows(_ message: MessageEnvelope, number: Int, renderer: PageRenderer) throws -> [String] {
        let layout = MessageLayout(width: 48)
        let view: MessageView
        switch message.key {
        case "benchmsg.text": view = text.view(for: try text.model(for: try text.content(from: message.payload), layout: layout))
        case "benchmsg.image": view = image.view(for: try image.model(for: try image.content(from: message.payload), layout: layout))
        case "benchmsg.voice": view = voice.view(for: try voice.model(for: try voice.content(from: message.payload), layout: layout))
        case "benchmsg.location":
            view = location.view(for: try location.model(for: try location.content(from: message.payload), layout: layout))
        default:
            return renderer.cell(number: number, envelope: message, view: nil, outgoing: message.from == "me")
        }
        return renderer.cell(number: number, envelope: message, view: view, outgoing: message.from == "me")
    }

    static func messages(folder: String) throws -> [Row] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let breadcrumb = folder + "/bench.crumb"
        _ = FileManager.default.createFile(atPath: breadcrumb, contents: nil)
        let messages = sampleMessages(10_000, prefix: line + ".")
        func registry(keys: Int) -> MessageRegistry {
            var registry = MessageRegistry.builtIn
            registry.add([text, image, voice, location], line: line)
            registry.add((0..<(keys - registry.allKeys.count)).map { Unused(key: "\(line).filler\($0)") }, line: line)
            return registry
        }
        let small = MessageListRenderer(registry: registry(keys: 10), userID: "me", breadcrumb: breadcrumb)
        let large = MessageListRenderer(registry: registry(keys: 1000), userID: "me", breadcrumb: breadcrumb)
        let bare = MessageListRenderer(registry: registry(keys: 10), userID: "me")
        let page = PageRenderer(width: 72, colors: false)
        var runs: [String: [Double]] = [:]
        // Interleaved rounds, so a burst of load on the shared machine hits all of them alike.
        for _ in 0..<15 {
            runs["switch", default: []].append(try median(runs: 1) {
                for (index, message) in messages.enumerated() { blackHole(try switchRows(message, number: index + 1, renderer: page)) }
            })
            for (name, renderer) in [("small", small), ("large", large), ("bare", bare)] {
                runs[name, default: []].append(median(runs: 1) {
                    for (index, message) in messages.enumerated() { blackHole(renderer.rows(number: index + 1, message)) }
                })
            }
        }
        let time = runs.mapValues(median)
        let switchTime = time["switch"]!, smallTime = time["small"]!, largeTime = time["large"]!, bareTime = time["bare"]!
        let rate = Double(messages.count) / (smallTime / 1e9)
        return [
            Row(what: "messages", measure: "stored messages to rendered rows/s, 10 keys, breadcrumbs on", figure: "\(format(rate / 1000)) k/s",
                baseline: "hand-written switch: \(format(Double(messages.count) / (switchTime / 1e9) / 1000)) k/s",
                ratio: "\(format(smallTime / switchTime, 2))x time", target: ">= 100 k/s, <= 1.3x", met: rate >= 100_000 && smallTime / switchTime <= 1.3),
            Row(what: "messages", measure: "rendered rows/s, 1,000 keys", figure: "\(format(Double(messages.count) / (largeTime / 1e9) / 1000)) k/s",
                baseline: "10 keys: \(format(rate / 1000)) k/s", ratio: "\(format(largeTime / smallTime, 2))x time",
                target: "<= 1.1x", met: largeTime / smallTime <= 1.1),
            Row(what: "messages", measure: "breadcrumbs: rows/s with a frame around each builder call", figure: "\(format(rate / 1000)) k/s",
                baseline: "no breadcrumb: \(format(Double(messages.count) / (bareTime / 1e9) / 1000)) k/s",
                ratio: "\(format(smallTime / bareTime, 2))x time", target: "report", met: nil),
        ]
    }

    static func memory(folder: String) throws -> [Row] {
        let host = try host(rules: 2, folder: folder)
        var pages: [ChatPage] = []
        // Warm up: the first pages fault in code and caches that every later page shares.
        for index in 0..<5 { pages.append(try host.open("im://chat?rootCateID=1&cateID=12&peer=warm\(index)&infoID=L1001")) }
        let renderer = PageRenderer(width: 72, colors: false)
        for page in pages { blackHole(try renderer.render(page)) }
        let before = residentKiB()
        let heapBefore = heapInUse()
        for index in 0..<100 {
            let page = try host.open("im://chat?rootCateID=1&cateID=12&peer=peer\(index)&infoID=L1001")
            blackHole(try renderer.render(page))
            pages.append(page)
        }
        let after = residentKiB()
        let heapAfter = heapInUse()
        blackHole(pages)
        // Resident memory moves in pages and often not at all for 100 small pages (the heap
        // had room), so the heap's own count of bytes in use is the figure; RSS is reported too.
        let perPage = Double(heapAfter - heapBefore) / 100 / 1024
        let rssPerPage = Double(after - before) / 100
        return [Row(what: "memory", measure: "memory per open chat page, 100 open", figure: "\(format(perPage)) KiB heap",
                    baseline: "RSS: +\(format(rssPerPage)) KiB a page", ratio: "-", target: "< 200 KiB", met: max(perPage, rssPerPage) < 200)]
    }
}

import Foundation
import Testing
@testable @_spi(Host) import IMKit

@Suite("IMKit's surface")
struct SurfaceTests {
    enum DemoLine: BusinessLine {
        static let id = "demo"
        static let displayName = "Demo"
        static let version = "1.2.3"
        static func register(with registrar: LineRegistrar) throws {}
    }

    @Test("a descriptor has the ABI's layout: version, then line id, name, version and compiler; one per line")
    func descriptor() {
        let pointer = PluginEntry.descriptor(for: DemoLine.self)
        #expect(PluginEntry.descriptor(for: DemoLine.self) == pointer, "the same pointer every call")
        #expect(pointer.load(as: UInt32.self) == PluginEntry.abiVersion)
        func text(_ offset: Int) -> String {
            String(cString: pointer.load(fromByteOffset: offset, as: UnsafePointer<CChar>.self))
        }
        #expect(text(8) == "demo")
        #expect(text(16) == "Demo")
        #expect(text(24) == "1.2.3")
        #expect(text(32) == SwiftCompiler.version)
    }

    @Test("SwiftCompiler.version is the toolchain's own, exactly as swiftc --version says it")
    func compilerVersion() throws {
        let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { $0 + "/swiftc" } + ["/opt/swift/usr/bin/swiftc"]
        let swiftc = try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0) })
        let process = Process()
        process.executableURL = URL(fileURLWithPath: swiftc)
        process.arguments = ["--version"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let first = try #require(output.split(separator: "\n").first)
        #expect(first.hasSuffix("Swift version " + SwiftCompiler.version))
        #expect(SwiftCompiler.version.contains("("), "the build tag is kept, so two builds of one version differ")
    }

    @Test("component names: each alone, in the platform's order, and back")
    func components() {
        #expect(ComponentSet.platformOrder.map(\.name) == ["topPost", "quickReplies", "bottomBar", "dropdownMenu", "inputBar"])
        #expect(ComponentSet(name: "bottomBar") == .bottomBar)
        #expect(ComponentSet(name: "bottombar") == nil)
        #expect(ComponentSet.all.name == nil)
        #expect(([.inputBar, .topPost] as ComponentSet).names == ["topPost", "inputBar"])
        #expect(ComponentSet.all.description == "[topPost, quickReplies, bottomBar, dropdownMenu, inputBar]")
    }

    @Test("a builder's defaults: JSON content both ways, the card layout, the view, and an ignored tap")
    func builderDefaults() throws {
        struct Offer: Codable, Sendable, Equatable { var model: String; var price: Int }
        struct OfferBuilder: MessageBuilder {
            let key = "demo.offer"
            func model(for offer: Offer, layout: MessageLayout) throws -> MessageModel {
                MessageModel(content: offer, lines: layout.card(title: offer.model, fields: [CardField("Price", "¥\(offer.price)")]))
            }
        }
        let builder = OfferBuilder()
        let payload = try builder.payload(for: Offer(model: "Civic", price: 90000))
        #expect(payload.json == #"{"model":"Civic","price":90000}"#)
        #expect(try builder.content(from: payload) == Offer(model: "Civic", price: 90000))
        let view = try builder.render(payload, layout: MessageLayout(width: 12))
        #expect(view.lines == ["Civic", "Price:", "¥90000"])
        let model = try builder.model(for: Offer(model: "Civic", price: 1), layout: MessageLayout(width: 40))
        #expect(model.columns == 9 && model.rows == 2, "\"Price: ¥1\" is the widest line")
        #expect(model.summary == "Civic")
        let context = ChatContext(userID: "me", peerID: "u1", rootCateID: 4, cateID: nil, parameters: [:], lineID: "demo",
                                  user: UserContext(userID: "me", transport: Transport(isOnline: true) { (_, _, _) throws(SendError) in
                                      throw SendError(.notStored, "no store")
                                  }),
                                  sender: { (_, _) throws(SendError) in }, opener: { _ in .notFound("none") })
        let shown = ShownMessage(envelope: MessageEnvelope(id: "m1", conversation: "u1", from: "u1", to: "me", timestamp: 0,
                                                           key: "demo.offer", payload: payload), model: model, isOutgoing: false)
        #expect(builder.didTap(Offer(model: "Civic", price: 1), message: shown, context: context) == .ignored)
        #expect(BuiltinBuilders.Image().didTap(ImageContent(url: "u", width: 1, height: 1), message: shown, context: context)
                == .handled("opened image viewer: u"))
    }

    @Test("a send that cannot encode says so with a code")
    func sendErrors() {
        struct Bad: Encodable, Sendable {
            func encode(to encoder: any Encoder) throws { throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no")) }
        }
        struct BadBuilder: MessageBuilder {
            let key = "demo.bad"
            func content(from payload: MessagePayload) throws -> Bad { Bad() }
            func model(for content: Bad, layout: MessageLayout) throws -> MessageModel { MessageModel(content: content, lines: []) }
        }
        var sent = 0
        let context = ChatContext(userID: "me", peerID: "u1", rootCateID: 4, cateID: nil, parameters: [:], lineID: "demo",
                                  user: UserContext(userID: "me", transport: Transport(isOnline: true) { (_, _, _) throws(SendError) in
                                      throw SendError(.notStored, "no store")
                                  }),
                                  sender: { (_, _) throws(SendError) in sent += 1 }, opener: { _ in .notFound("none") })
        do {
            try context.send(Bad(), with: BadBuilder())
            Issue.record("an unencodable content was sent")
        } catch {
            #expect(error.code == .undecodable)
            #expect(error.description.hasPrefix("'demo.bad' content does not encode"))
        }
        #expect(sent == 0)
    }
}

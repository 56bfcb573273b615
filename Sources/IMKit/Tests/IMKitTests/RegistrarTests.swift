import Testing
@_spi(Host) import IMKit

@Suite("Line registrar")
struct RegistrarTests {
    struct Note: MessageBuilder {
        struct Content: Codable, Sendable { var text: String }
        let key: String
        func model(for content: Content, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: content, lines: layout.wrap(content.text))
        }
    }

    final class Stock: Service {
        static let id = "demo.stock"
        init() {}
    }

    final class Stray: Service {
        static let id = "other.stock"
        init() {}
    }

    func registrar(taken: [String] = []) -> LineRegistrar {
        LineRegistrar(lineID: "demo", descriptor: nil) { claim in
            if case .messageKey(let key) = claim, taken.contains(key) { return "line 'other'" }
            return nil
        }
    }

    @Test("a line registers its own keys, services and routes")
    func accepted() throws {
        let registrar = registrar()
        try registrar.registerBuilder(Note(key: "demo.note"))
        try registrar.registerService(Stock.self)
        try registrar.registerRoute("demo://note/:id", allowExternal: false) { _ in "note" }
        #expect(registrar.builders.map(\.key) == ["demo.note"])
        #expect(registrar.routes.map(\.pattern.description) == ["demo://note/:id"])
        #expect(registrar.firstRefusal == nil)
    }

    @Test("refusals carry a code and a sentence, and the first one is remembered even when caught")
    func refused() {
        let registrar = registrar(taken: ["demo.taken"])
        #expect(throws: RegistrationError(.keyOutsideNamespace, "line 'demo' registered message key 'jobs.note', which belongs to line 'jobs'. Name it 'demo.<name>'")) {
            try registrar.registerBuilder(Note(key: "jobs.note"))
        }
        #expect(registrar.firstRefusal?.code == .keyOutsideNamespace)
        #expect(throws: RegistrationError.self) { try registrar.registerBuilder(Note(key: "demo.bad key")) }
        #expect(throws: RegistrationError(.duplicateKey, "message key 'demo.taken' is already registered by line 'other'; line 'demo' cannot register it too. Use a key under 'demo.'")) {
            try registrar.registerBuilder(Note(key: "demo.taken"))
        }
        #expect(throws: RegistrationError(.keyOutsideNamespace, "line 'demo' registered service id 'other.stock'; a line's service ids are 'demo.<name>'. Rename it")) {
            try registrar.registerService(Stray.self)
        }
        #expect(throws: RegistrationError(.invalid, "line 'demo' registered route 'jobs://x'; a line's routes use its own scheme. Write it as 'demo://x'")) {
            try registrar.registerRoute("jobs://x", allowExternal: true) { _ in "" }
        }
        #expect(throws: RegistrationError(.invalid, "line 'demo' registered route 'im://chat'; the im:// scheme is the host's. Use a scheme of your own, e.g. 'demo://'")) {
            try registrar.registerRoute("im://chat", allowExternal: true) { _ in "" }
        }
        #expect(registrar.firstRefusal?.code == .keyOutsideNamespace, "the first refusal stays the one reported")
        #expect(registrar.builders.isEmpty)
    }

    @Test("line ids and message keys follow one grammar")
    func grammar() {
        #expect(LineID.isValid("house"))
        #expect(LineID.isValid("used-cars2"))
        #expect(!LineID.isValid("used_cars"), "a line id is its routes' scheme, which has no '_'")
        #expect(!LineID.isValid("im"), "the host's own scheme")
        #expect(!LineID.isValid("House"))
        #expect(!LineID.isValid("2cars"))
        #expect(!LineID.isValid(String(repeating: "a", count: 33)))
        #expect(LineID.isValid(String(repeating: "a", count: 32)))
        #expect(LineID.isValidMessageKey("text"))
        #expect(LineID.isValidMessageKey("house.listing.v2"))
        #expect(!LineID.isValidMessageKey("house."))
        #expect(!LineID.isValidMessageKey("house.listing\u{1B}"))
        #expect(LineID.owner(ofMessageKey: "house.listing") == "house")
    }
}

// A line built against IMKit 1.0's committed interface (Sources/IMKit/API/IMKit-1.0.swiftinterface),
// and against 1.2's, the last before cards, not against the IMKit being built: the
// library-evolution tests compile it with swiftc, link it to the current libIMKit.so, and drive
// it through `imhost chat` and, built against 1.2, `imhost web`. It uses as much of the 1.0
// surface as a line would (a page and its hooks, a builder and its tap, a route, a service on
// the transport, the bus, the log), so a 1.x change that breaks lines built against 1.0 fails
// here as well as in .ci/api-check.
import IMKit

enum BaselineLine: BusinessLine {
    static let id = "baseline"
    static let displayName = "Built against IMKit 1.0"
    static let version = "1.0.0"

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerPage(BaselinePage.self)
        try registrar.registerBuilder(NoteBuilder())
        try registrar.registerService(Counter.self)
        #if PICTURES
        // Built against 1.3 or later (the tests pass -DPICTURES): a picture without alt text,
        // which a line built against 1.3 may register and one built against 1.4 may not.
        try registrar.registerPicture("dot", base64: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
        #endif
        try registrar.registerRoute("baseline://note/:id", allowExternal: false) { request in
            let counter = try request.user.require(Counter.self)
            counter.opened += 1
            return "note \(request.parameters["id"] ?? "?") (opened \(counter.opened) time\(counter.opened == 1 ? "" : "s"))"
        }
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: BaselineLine.self)
}

struct Note: Codable, Sendable {
    var id: String?
    var text: String
}

struct NoteBuilder: MessageBuilder {
    let key = "baseline.note"

    func model(for note: Note, layout: MessageLayout) throws -> MessageModel {
        MessageModel(content: note, lines: layout.card(title: "📝 \(note.text)", fields: [CardField("Note", note.id ?? "none")]),
                     summary: "[Note]")
    }

    func didTap(_ note: Note, message: ShownMessage, context: ChatContext) -> TapResult {
        guard let id = note.id else { return .failed("this note has no id") }
        switch context.open("baseline://note/\(id)") {
        case .opened(let what): return .handled("opened \(what)")
        case .notFound(let why), .refused(let why): return .failed(why)
        @unknown default: return .failed("unknown result")
        }
    }
}

final class BaselinePage: CarrierPage {
    private var said: Subscription?

    required init(context: ChatContext) {
        super.init(context: context)
        said = context.bus.subscribe(TextSent.self) { event in
            BaselineLine.log.info("sent \(event.text.count) characters")
        }
    }

    override var title: String { "Baseline · \(context.peerID)" }
    override var disabledComponents: ComponentSet { [.bottomBar] }
    override func topPost() -> TopPost? { TopPost(title: "Built against 1.0", detail: "user \(context.userID)") }
    override func quickReplies() -> [String] { ["From 1.0"] }
    override func menuItems() -> [String] { ["Count"] }

    override func didSelectMenuItem(_ item: String) -> TapResult {
        guard let counter = context.user.service(Counter.self) else { return .failed("no counter") }
        return .handled("counter says \(counter.opened) opened, online \(counter.online)")
    }
}

final class Counter: Service {
    static let id = "baseline.counter"
    static let dependencies = [HostServices.transport]
    var opened = 0
    var online = true
    private var connection: Subscription?

    init() {}

    func initialize(in user: UserContext) throws {
        online = user.transport.isOnline
        connection = user.transport.observeConnection { [unowned self] online in self.online = online }
    }
}

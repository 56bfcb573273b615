import IMHost
import IMHostRuntime
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// The files of a new line's package: the line's sources, a scenario, and a host.json of its own
/// (with a Plugins folder beside it) so the package can be tried where it is made.
struct LineTemplate {
    var id: String
    var type: String
    var imkit: String
    var rootCateID: Int

    var files: [(path: String, text: String)] {
        [
            ("Sources/\(type)/\(type)Line.swift", line),
            ("Sources/\(type)/\(type)Page.swift", page),
            ("Sources/\(type)/NoteBuilder.swift", builder),
            ("scenario.json", scenario),
            ("README.md", readme),
        ] + Self.common(id: id, type: type, imkit: imkit, routes: [(rootCateID, "\"*\"")])
    }

    /// What every line package has: its Package.swift, a host.json that enables it and routes
    /// `routes` (rootCateID, cateID as JSON) to it, and a .gitignore.
    static func common(id: String, type: String, imkit: String, routes: [(Int, String)]) -> [(path: String, text: String)] {
        let routing = routes.map { #"{ "rootCateID": \#($0.0), "cateID": \#($0.1), "line": "\#(id)" }"# }.joined(separator: ",\n    ")
        return [
            ("Package.swift", package(id: id, type: type, imkit: imkit)),
            ("host.json", """
                {
                  "plugins": "Plugins",
                  "data": ".imhost",
                  "lines": { "\(id)": { "enabled": true } },
                  "routes": [
                    \(routing)
                  ]
                }

                """),
            (".gitignore", ".build/\n.swiftpm/\nPackage.resolved\nPlugins/\n.imhost/\n"),
        ]
    }

    /// A Swift string literal of `text`.
    private func literal(_ text: String) -> String { Self.literal(text) }

    static func literal(_ text: String) -> String {
        var out = "\""
        for character in text {
            if character == "\\" || character == "\"" { out.append("\\") }
            out.append(character)
        }
        return out + "\""
    }

    static func package(id: String, type: String, imkit: String) -> String {
        """
        // swift-tools-version: 6.1
        // The '\(id)' business line: a plugin the imhost host loads from its Plugins folder.
        import PackageDescription

        let package = Package(
            name: \(literal(id)),
            products: [
                // A dynamic library: the host opens it and calls imkit_plugin_entry.
                .library(name: "\(type)", type: .dynamic, targets: ["\(type)"]),
            ],
            dependencies: [
                // The IMKit SDK the host was built with. The line links to it; it never ships
                // its own copy (the host refuses libIMKit.so in its Plugins folder).
                .package(path: \(literal(imkit))),
            ],
            targets: [
                .target(name: "\(type)", dependencies: [.product(name: "IMKit", package: "IMKit")]),
            ]
        )

        """
    }

    var line: String {
        """
        import IMKit

        /// The '\(id)' line: what it is, and what it registers with the host.
        enum \(type)Line: BusinessLine {
            static let id = \(literal(id))
            static let displayName = \(literal(type))
            static let version = "0.1.0"

            static func register(with registrar: LineRegistrar) throws {
                try registrar.registerPage(\(type)Page.self)
                try registrar.registerBuilder(NoteBuilder())
                try registrar.registerService(NoteHistory.self)
                // A line's routes use its id as their scheme.
                try registrar.registerRoute("\(id)://note/:id", allowExternal: false) { request in
                    let id = request.parameters["id"] ?? "?"
                    request.user.service(NoteHistory.self)?.opened.append(id)
                    return "note \\(id)"
                }
            }
        }

        /// What the host calls first: the line's descriptor, built by IMKit.
        @c(imkit_plugin_entry)
        public func imkitPluginEntry() -> UnsafeRawPointer {
            PluginEntry.descriptor(for: \(type)Line.self)
        }

        /// Notes opened by the signed-in user: one instance a user, made and finalized by the host.
        final class NoteHistory: Service {
            static let id = "\(id).history"
            var opened: [String] = []

            init() {}

            func finalize() {
                \(type)Line.log.info("opened \\(opened.count) note\\(opened.count == 1 ? "" : "s")")
            }
        }

        """
    }

    var page: String {
        """
        import IMKit

        /// The '\(id)' line's chat page. Override only what the line needs; the platform draws
        /// its components (top post, quick replies, bottom bar, menu, input bar) in its order.
        final class \(type)Page: CarrierPage {
            override var title: String { "\(type) · \\(context.peerID)" }

            override func topPost() -> TopPost? {
                guard let item = context.parameters["infoID"] else { return nil }
                return TopPost(title: "📌 \\(item)", detail: "from the jump URL's infoID")
            }

            override func quickReplies() -> [String] { ["Tell me more"] }

            override func bottomBarItems() -> [String] { ["Share"] }

            override func didSelectBottomBarItem(_ item: String) -> TapResult {
                guard item == "Share" else { return .ignored }
                return .handled("shared this chat with \\(context.peerID)")
            }
        }

        """
    }

    var builder: String {
        """
        import IMKit

        /// A note: what a `\(id).note` message carries. Stored messages keep the shape they were
        /// sent in, so a field added later must be optional or have a default.
        struct Note: Codable, Sendable {
            var id: String
            var text: String
        }

        /// `\(id).note`: a card with a button. A tap on the card, or its Open button, opens the
        /// note's route, on whichever page the card is shown.
        struct NoteBuilder: MessageBuilder {
            let key = "\(id).note"

            func model(for note: Note, layout: MessageLayout) throws -> MessageModel {
                let card = MessageCard(title: "📝 \\(note.text)", fields: [CardField("Note", note.id)],
                                       buttons: [CardButton(id: "open", label: "Open")])
                return MessageModel(content: note, card: card, layout: layout, summary: "[Note] \\(note.text)")
            }

            func didTap(_ note: Note, message: ShownMessage, context: ChatContext) -> TapResult {
                open(note, context: context)
            }

            /// A press of one of the card's buttons, by its id: `/tap N open` in a chat, or a click
            /// in the browser.
            func didTapButton(_ button: String, content note: Note, message: ShownMessage, context: ChatContext) -> TapResult {
                button == "open" ? open(note, context: context) : .ignored
            }

            /// Examples of the card, each named: what `imhost preview` (the workbench) draws, and
            /// `imhost plugins --samples` checks. One for each way the card looks.
            var samples: [MessageSample<Note>] {
                [MessageSample("short", Note(id: "n1", text: "Hello from \(type)")),
                 MessageSample("long text", Note(id: "n2", text: "A note long enough to wrap on a phone, to see how the card takes it"))]
            }

            private func open(_ note: Note, context: ChatContext) -> TapResult {
                switch context.open("\(id)://note/\\(note.id)") {
                case .opened(let what): return .handled("opened \\(what)")
                case .notFound(let why), .refused(let why): return .failed(why)
                @unknown default: return .failed("the note could not be opened")
                }
            }
        }

        """
    }

    var scenario: String {
        """
        [
          { "open": "im://chat?rootCateID=\(rootCateID)&peer=u1&infoID=N1" },
          { "receive": "\(id).note", "payload": { "id": "n1", "text": "Hello from \(type)" } },
          { "tap": 1 },
          { "expect": { "page": "\(id)", "contains": ["📝 Hello from \(type)", "📌 N1"], "tap": "opened note n1" } },
          { "tap": "1 open" },
          { "expect": { "contains": ["[Open] /tap 1 open"], "tap": "opened note n1" } }
        ]

        """
    }

    /// The README's section on building and trying a line, the same for every package.
    static func tryIt(id: String, type: String, routes: [(Int, String)], chat: String) -> String {
        let routing = routes.map { #"{ "rootCateID": \#($0.0), "cateID": \#($0.1), "line": "\#(id)" }"# }.joined(separator: ", ")
        return """
        ## Build, install, try

        Build with the Swift compiler `imhost --version` names (a plugin built by another one is
        refused). This folder has a `host.json` of its own that enables the line and routes to
        it, with its plugin folder `Plugins/`, so it can be tried right here.

        The commands below call `imhost`. This package was made by
        `\(CommandLineTool.executablePath)`. To put it on your PATH for this shell:

            export PATH="\(FileSystem.directory(of: CommandLineTool.executablePath)):$PATH"

        or for good, as a link in `~/.local/bin` (Debian and Ubuntu put that folder on PATH at
        login once it exists; elsewhere add it to PATH in your shell's profile):

            mkdir -p ~/.local/bin && ln -sf "\(CommandLineTool.executablePath)" ~/.local/bin/imhost

        Then build, install and try the line:

            swift build
            mkdir -p Plugins && install -m 0644 .build/debug/lib\(type).so Plugins/\(id).so
            imhost plugins                  # \(id).so ... loaded
            imhost play scenario.json       # the scenario, against this folder's host.json
            imhost chat '\(chat)'

        To add it to a host, install the library into that host's Plugins folder as `\(id).so`
        and add to its `host.json`:

            "lines": { "\(id)": { "enabled": true } },
            "routes": [ \(routing) ]

        Never put libIMKit.so in a Plugins folder: the host brings its own. If the host already
        has a file for line '\(id)', both are refused until host.json pins one
        (`"lines": { "\(id)": { "file": "\(id).so" } }`).
        """
    }

    var readme: String {
        """
        # \(type): the '\(id)' business line

        A plugin for the imhost chat host, made by `imhost new-line \(id)`. It has a carrier page
        (`\(type)Page`), one message (`\(id).note`, a card built by `NoteBuilder`; tapping it or
        its Open button opens the route `\(id)://note/:id`), and a service (`NoteHistory`).

        \(Self.tryIt(id: id, type: type, routes: [(rootCateID, "\"*\"")], chat: "im://chat?rootCateID=\(rootCateID)&peer=u1"))

        ## Rules a line lives by

        - Message keys are `\(id).<name>`, routes use the scheme `\(id)://`, service ids are
          `\(id).<name>`; anything else is refused at registration, and the line fails whole.
        - Everything is called on the chat's thread; from a background task use only `Sendable`
          values and `\(type)Line.log`.
        - Stored messages outlive your builder: new fields are optional or have a default.
        - A crash or hang in the line's code quarantines it (see `imhost quarantine`); the host
          and the other lines go on.

        """
    }
}

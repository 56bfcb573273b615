/// What the host was doing in a line's code when the line crashed or hung.
///
/// The site decides the quarantine: a crash in a builder costs its message key first; a crash
/// anywhere else costs the whole line at once (see ``Quarantine``).
public enum CrashSite: UInt32, Sendable, Codable, CaseIterable {
    /// Not known: the process died in line code the breadcrumb could not name.
    case unknown = 0
    /// Opening the library: its constructors ran (`dlopen`).
    case load = 1
    /// Calling `imkit_plugin_entry` for the descriptor.
    case entry = 2
    /// The line's `register_line`.
    case register = 3
    /// Creating the line's page and its components.
    case pageOpen = 4
    /// A page hook while the page is drawn: title, top post, quick replies, bar and menu items.
    case pageHook = 5
    /// The page's tap hook, or a builder's tap handling.
    case tap = 6
    /// A menu item, quick reply or bar item the user picked, as the page and its components handle it.
    case action = 7
    /// A message builder: decoding, laying out or viewing a message.
    case builder = 8
    /// A route handler.
    case route = 9
    /// A service: built, prepared, initialized, taken online or offline, or finalized.
    case service = 10
    /// A thread the line started, while the host was not calling into it: found on the crashed
    /// thread's stack (see `imhost_crash_watch`).
    case background = 11

    /// The site's name in crash records and `imhost quarantine`.
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .load: "load"
        case .entry: "entry"
        case .register: "register"
        case .pageOpen: "page-open"
        case .pageHook: "page-hook"
        case .tap: "tap"
        case .action: "action"
        case .builder: "builder"
        case .route: "route"
        case .service: "service"
        case .background: "background"
        }
    }

    /// The site with this name.
    public init?(name: String) {
        guard let site = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = site
    }

    /// Said for a person: "while loading", "in its page's hooks", "building message m3 (house.listing)".
    package func phrase(key: String?, message: String?) -> String {
        let subject = key.map { " \($0)" } ?? ""
        switch self {
        case .unknown: return "in its code"
        case .load: return "while its library was loaded (a constructor)"
        case .entry: return "in imkit_plugin_entry"
        case .register: return "while registering"
        case .pageOpen: return "while opening its page"
        case .pageHook: return "in its page's hooks" + (key.map { " (\($0))" } ?? "")
        case .tap: return "handling a tap" + (message.map { " on message \($0)" } ?? "") + (key.map { " (\($0))" } ?? "")
        case .action: return "handling\(subject.isEmpty ? " an action" : subject)"
        case .builder:
            return (message.map { "building message \($0)" } ?? "building a message") + (key.map { " (\($0))" } ?? "")
        case .route: return "in its route handler" + (key.map { " for \($0)" } ?? "")
        case .service: return "in its service" + subject
        case .background: return "in a thread it started"
        }
    }
}

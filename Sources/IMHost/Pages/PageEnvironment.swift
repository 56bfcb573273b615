@_spi(Host) import IMKit

/// What a chat page needs from the host, handed to it when it opens: the user, their
/// conversations and the sender for their messages, how to find a message's builder and why a
/// key cannot show, and the breadcrumb guard every call into line code goes through.
struct PageEnvironment {
    let user: UserContext
    let store: MessageStore
    let sender: MessageSender
    let lineGuard: LineGuard
    /// The page's line, for breadcrumbs; `nil` on the legacy page (host code).
    let mark: LineMark?
    let isLegacy: Bool
    /// The builder for a key, opening its line first if need be.
    let lookup: (String) -> RegisteredBuilder?
    /// Why messages of a key cannot show now (turned off, quarantined, line unavailable).
    let degrade: (String) -> Degrade?
    /// Whether a line serves on this host now (its key unknown there means its version lacks it).
    var lineServes: (String) -> Bool = { _ in false }
    /// Why one message from another host (its sender and global id) cannot show: quarantined.
    var degradeMessage: (_ sender: String, _ globalID: String, _ key: String) -> Degrade? = { _, _, _ in nil }
    /// A picture a line registered: its line's version and the picture, when the line is open.
    var picture: (_ line: String, _ name: String) -> (version: String, picture: LinePicture)? = { _, _ in nil }
    /// The version of an open line, as its manifest says it.
    var lineVersion: (_ line: String) -> String? = { _ in nil }
    /// A line's message keys, as its manifest says them.
    var lineKeys: (_ line: String) -> [String] = { _ in [] }
    let killedComponents: ComponentSet
    /// Who turned a component off, as a place ("killSwitch.components in host.json").
    let componentPlace: @Sendable (ComponentSet) -> String?
    let limits: HostConfig.Limits
    /// Opens a URL through the route table.
    let open: (String) -> RouteResult
}

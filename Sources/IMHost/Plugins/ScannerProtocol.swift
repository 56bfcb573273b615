/// What the plugin scanner child reports to the host, one JSON object a line on its control pipe
/// (see ``Scanner``). It reports each step before it takes it, so a death is blamed on the right
/// file and step.
enum ScannerReport: Codable, Equatable, ChildMessage {
    /// First, once: the protocol version the scanner speaks.
    case hello(version: Int)
    /// About to take `stage` (`load`, `entry` or `register`) on `file`; the line and descriptor
    /// once the entry point gave them; at `load`, the identity of the file as it is opened (it
    /// may have been replaced since the host looked), which its facts and crashes are kept under.
    case step(file: String, stage: String, line: String?, descriptor: PluginDescriptor?, identity: FileIdentity?)
    /// `file` is done: the line's manifest, or why it was refused.
    case done(file: String, descriptor: PluginDescriptor?, manifest: LineManifest?, refusal: PluginRefusal?)
    /// A log entry a line wrote while it was scanned (in `register(with:)`): the host writes it
    /// where its lines' logs go.
    case log(line: String, level: String, entry: String)

    /// Changes whenever a report changes.
    static let version = 3

    static var protocolVersion: Int { version }
    var helloVersion: Int? { if case .hello(let version) = self { version } else { nil } }
}

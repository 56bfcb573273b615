/// Facts about one version of one plugin file: what holds for these bytes whatever host.json
/// says. They are what the plugin cache keeps, keyed by the file's identity.
///
/// Facts read from the cache keep their descriptor and manifest as the cache's bytes until
/// asked for: a start needs only each file's identity, line id and verdict, and decoding the rest
/// of 200 files would cost more than everything else a start does.
struct PluginFacts: Equatable, Sendable {
    /// What the file turned out to be.
    enum Verdict: Equatable, Sendable {
        /// A line that registers this.
        case line(LineManifest)
        /// Refused for a property of the bytes themselves (not ELF, wrong ABI or compiler, no
        /// entry, invalid id): it will be refused again, so it is not opened again.
        case refused(PluginRefusal)
    }

    var identity: FileIdentity
    /// The file's SHA-256 in hex, once a pin made the host compute it.
    var sha256: String?
    /// The line id the descriptor claims, as written.
    let lineID: String?
    /// Whether the verdict is a line (else a refusal).
    let isLine: Bool
    private let content: Content

    private enum Content: Equatable, Sendable {
        case decoded(PluginDescriptor?, Verdict)
        /// The cache line, and a way to decode it.
        case cached(PluginCache.Line)
    }

    init(identity: FileIdentity, descriptor: PluginDescriptor?, verdict: Verdict, sha256: String? = nil) {
        self.identity = identity
        self.sha256 = sha256
        lineID = descriptor?.lineID
        if case .line = verdict { isLine = true } else { isLine = false }
        content = .decoded(descriptor, verdict)
    }

    init(identity: FileIdentity, lineID: String?, isLine: Bool, sha256: String?, cached line: PluginCache.Line) {
        self.identity = identity
        self.sha256 = sha256
        self.lineID = lineID
        self.isLine = isLine
        content = .cached(line)
    }

    /// What its descriptor says.
    var descriptor: PluginDescriptor? {
        switch content {
        case .decoded(let descriptor, _): descriptor
        case .cached(let line): line.descriptor
        }
    }

    /// What it is: a line and its manifest, or why it is refused.
    var verdict: Verdict {
        switch content {
        case .decoded(_, let verdict): verdict
        case .cached(let line): line.verdict ?? .refused(PluginRefusal(.unreadable, "its cache entry does not read", fix: "delete the plugin cache"))
        }
    }

    /// The manifest, when it is a line.
    var manifest: LineManifest? {
        if case .line(let manifest) = verdict { return manifest }
        return nil
    }

    /// Refusals that depend on the bytes only, and so may be cached. A `dlopen` failure (a
    /// missing dependency) or a failed registration may pass next time: those are retried.
    static let cacheableRefusals: Set<PluginRefusal.Code> = [.notELF, .wrongMachine, .noEntry, .abiMismatch, .swiftMismatch, .invalidLineID]
}

/// What a line registers, scoped to that line: it can add its own page and builders, never
/// another line's or the host's.
///
/// Registrations are staged. The host keeps them only if the whole of
/// ``BusinessLine/register(with:)`` succeeds and nothing was refused.
public final class LineRegistrar {
    /// The id of the line registering.
    public let lineID: String

    /// The carrier page registered, if any.
    @_spi(Host) public private(set) var page: CarrierPage.Type?
    /// The builders registered, in order.
    @_spi(Host) public private(set) var builders: [any MessageBuilder] = []
    /// The first registration refused; when set, the host fails the line.
    @_spi(Host) public private(set) var firstRefusal: RegistrationError?
    /// The descriptor this registrar registers for (its address identifies the plugin).
    @_spi(Host) public let descriptor: UnsafeRawPointer?

    private let ownerOfKey: (String) -> String?

    /// Creates a registrar for `lineID`. `ownerOfKey` names who already registered a key
    /// (a line id, or `"the host"`), or returns `nil`.
    @_spi(Host)
    public init(lineID: String, descriptor: UnsafeRawPointer?, ownerOfKey: @escaping (String) -> String?) {
        self.lineID = lineID
        self.descriptor = descriptor
        self.ownerOfKey = ownerOfKey
    }

    /// Registers the line's carrier page: a subclass of ``CarrierPage``. A line has at most one;
    /// a line without one opens on the platform's base page.
    ///
    /// - Throws: ``RegistrationError`` `.secondPage` when a page is already registered.
    public func registerPage(_ page: CarrierPage.Type) throws {
        if let existing = self.page {
            try refuse(.secondPage, "line '\(lineID)' registered a second page \(page) after \(existing); a line has one carrier page. Register only one.")
        }
        self.page = page
    }

    /// Registers a message builder under its ``MessageBuilder/key``, which must be
    /// `<lineid>.<name>` for this line.
    ///
    /// - Throws: ``RegistrationError`` `.invalidKey`, `.duplicateKey` (names both owners) or
    ///   `.keyOutsideNamespace`.
    public func register(_ builder: some MessageBuilder) throws {
        let key = builder.key
        guard LineID.isValidMessageKey(key) else {
            try refuse(.invalidKey, "line '\(lineID)' registered message key '\(key)', which is not '\(lineID).<name>' (name: letters, digits, '_', '-', '.'). Rename the key.")
        }
        if builders.contains(where: { $0.key == key }) {
            try refuse(.duplicateKey, "line '\(lineID)' registered message key '\(key)' twice. Register each key once.")
        }
        if let owner = ownerOfKey(key) {
            try refuse(.duplicateKey, "message key '\(key)' is already registered by \(owner); line '\(lineID)' cannot register it too. Use a key under '\(lineID).'.")
        }
        guard let owner = LineID.owner(ofMessageKey: key), owner == lineID[...] else {
            let belongs = LineID.owner(ofMessageKey: key).map { "which belongs to line '\($0)'" }
                ?? "which has no line prefix (such keys belong to the host)"
            try refuse(.keyOutsideNamespace, "line '\(lineID)' registered message key '\(key)', \(belongs). Name it '\(lineID).<name>'.")
        }
        builders.append(builder)
    }

    /// Records a failure the line reports itself, failing the whole line.
    @_spi(Host)
    public func recordFailure(_ reason: String) {
        if firstRefusal == nil { firstRefusal = RegistrationError(.lineFailed, reason) }
    }

    private func refuse(_ code: RegistrationError.Code, _ reason: String) throws -> Never {
        let error = RegistrationError(code, reason)
        if firstRefusal == nil { firstRefusal = error }
        throw error
    }
}

#if canImport(FoundationEssentials)
internal import FoundationEssentials
#else
internal import Foundation
#endif

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
    /// The services registered, in order.
    @_spi(Host) public private(set) var services: [any Service.Type] = []
    /// The routes registered, in order.
    @_spi(Host) public private(set) var routes: [RegisteredRoute] = []
    /// The pictures registered, by name, in order (``registerPicture(_:bytes:alt:)``), each
    /// with its alt text (`nil`: a line built before IMKit 1.4 gave none).
    @_spi(Host) public private(set) var pictures: [(name: String, bytes: [UInt8], alt: String?)] = []
    /// The descriptor this registrar registers for (its address identifies the plugin).
    @_spi(Host) public let descriptor: UnsafeRawPointer?

    /// What a registration claims, for the host to say who holds it already.
    @_spi(Host)
    public enum Claim {
        case messageKey(String)
        case service(String)
        case route(shape: String)
    }

    private let owner: (Claim) -> String?

    /// Creates a registrar for `lineID`. `owner` names who already holds a claim
    /// (`line 'house'`, or `the host`), or returns `nil`.
    @_spi(Host)
    public init(lineID: String, descriptor: UnsafeRawPointer?, owner: @escaping (Claim) -> String?) {
        self.lineID = lineID
        self.descriptor = descriptor
        self.owner = owner
    }

    /// Registers the line's carrier page: a subclass of ``CarrierPage``. A line has at most one;
    /// a line without one opens on the platform's base page.
    ///
    /// - Throws: ``RegistrationError`` `.secondPage` when a page is already registered.
    public func registerPage(_ page: CarrierPage.Type) throws(RegistrationError) {
        if let existing = self.page {
            try refuse(.secondPage, "line '\(lineID)' registered a second page \(page) after \(existing); a line has one carrier page. Register only one")
        }
        self.page = page
    }

    /// Registers a message builder under its ``MessageBuilder/key``, which must be
    /// `<lineid>.<name>` for this line.
    ///
    /// - Throws: ``RegistrationError`` `.invalidKey`, `.duplicateKey` (names both owners) or
    ///   `.keyOutsideNamespace`.
    public func registerBuilder(_ builder: some MessageBuilder) throws(RegistrationError) {
        let key = builder.key
        guard LineID.isValidMessageKey(key) else {
            try refuse(.invalidKey, "line '\(lineID)' registered message key '\(key)', which is not '\(lineID).<name>' (name: letters, digits, '_', '-', '.'). Rename the key")
        }
        if builders.contains(where: { $0.key == key }) {
            try refuse(.duplicateKey, "line '\(lineID)' registered message key '\(key)' twice. Register each key once")
        }
        if let owner = owner(.messageKey(key)) {
            try refuse(.duplicateKey, "message key '\(key)' is already registered by \(owner); line '\(lineID)' cannot register it too. Use a key under '\(lineID).'")
        }
        guard let owner = LineID.owner(ofMessageKey: key), owner == lineID[...] else {
            let belongs = LineID.owner(ofMessageKey: key).map { "which belongs to line '\($0)'" }
                ?? "which has no line prefix (such keys belong to the host)"
            try refuse(.keyOutsideNamespace, "line '\(lineID)' registered message key '\(key)', \(belongs). Name it '\(lineID).<name>'")
        }
        builders.append(builder)
    }

    /// Registers a service type, built for each signed-in user. Its ``Service/id`` must be
    /// `<lineid>.<name>` for this line; its dependencies must be the host's services or this
    /// line's (checked when registration ends).
    ///
    /// - Throws: ``RegistrationError`` `.invalidKey`, `.duplicateKey` or `.keyOutsideNamespace`.
    public func registerService(_ service: any Service.Type) throws(RegistrationError) {
        let id = service.id
        guard LineID.isValidMessageKey(id), LineID.owner(ofMessageKey: id) != nil else {
            try refuse(.invalidKey, "line '\(lineID)' registered service id '\(id)', which is not '\(lineID).<name>' (name: letters, digits, '_', '-', '.'). Rename it")
        }
        guard LineID.owner(ofMessageKey: id) == lineID[...] else {
            try refuse(.keyOutsideNamespace, "line '\(lineID)' registered service id '\(id)'; a line's service ids are '\(lineID).<name>'. Rename it")
        }
        if services.contains(where: { $0.id == id }) {
            try refuse(.duplicateKey, "line '\(lineID)' registered service '\(id)' twice. Register each service once")
        }
        if let owner = owner(.service(id)) {
            try refuse(.duplicateKey, "service '\(id)' is already registered by \(owner); line '\(lineID)' cannot register it too")
        }
        services.append(service)
    }

    /// Registers a URL route such as `house://listing/:id`, handled by `handler`. A line's routes
    /// use its own scheme: the line id (`house://` for the `house` line).
    /// `allowExternal` says whether URLs from outside the app (a push, the web) may open it.
    ///
    /// - Throws: ``RegistrationError`` `.invalid` for a malformed pattern, the host's `im`
    ///   scheme or another line's scheme, `.duplicateKey` when this line claims the same
    ///   pattern twice.
    public func registerRoute(_ pattern: String, allowExternal: Bool, handler: @escaping RouteHandler) throws(RegistrationError) {
        let parsed: RoutePattern
        switch RoutePattern.parse(pattern) {
        case .success(let value): parsed = value
        case .failure(let error): try refuse(error.code, "line '\(lineID)': \(error.description)")
        }
        guard parsed.scheme != "im" else {
            try refuse(.invalid, "line '\(lineID)' registered route '\(pattern)'; the im:// scheme is the host's. Use a scheme of your own, e.g. '\(lineID)://'")
        }
        guard parsed.scheme == lineID else {
            let rest = RoutePattern.schemeSeparator(in: pattern).map { String(pattern[$0.upperBound...]) } ?? ""
            try refuse(.invalid, "line '\(lineID)' registered route '\(pattern)'; a line's routes use its own scheme. Write it as '\(lineID)://\(rest)'")
        }
        if let mine = routes.first(where: { $0.pattern.shape == parsed.shape }) {
            try refuse(.duplicateKey, "line '\(lineID)' registered route '\(pattern)', which claims the same URLs as its '\(mine.pattern)'. Register it once")
        }
        if let owner = owner(.route(shape: parsed.shape)) {
            try refuse(.duplicateKey, "route '\(pattern)' is already registered by \(owner); line '\(lineID)' cannot register it too. Use a scheme or path of your own")
        }
        routes.append(RegisteredRoute(pattern: parsed, allowExternal: allowExternal, handler: handler))
    }

    /// The most pictures a line registers.
    public static let pictureLimit = 16
    /// The most bytes one picture a line registers may have.
    public static let pictureBytesLimit = 256 * 1024

    /// The longest alt text a picture has, in characters.
    public static let altLimit = 200

    /// Hands the host a picture the line ships, under `name`, with `alt`: what it shows, in a
    /// few words, for those who cannot see it ("58 Tech's logo", "A red hatchback"). A card
    /// shows it with ``CardImage/picture(_:)`` and that name; a screen reader reads `alt`
    /// where it stands, and a browser shows it when the picture cannot be drawn. `bytes` are a
    /// PNG, JPEG or WebP file's, as it is (the host recognises its kind and reads its size from
    /// the bytes when it loads the line, and refuses the line's registration, saying why, when
    /// they are not such a picture). The host never fetches a picture from anywhere: what a card
    /// shows is what a line registered or a photo its message carries. Since IMKit 1.4.
    ///
    /// ```swift
    /// try registrar.registerPicture("logo", base64: Pictures.logo, alt: "58 Tech's logo")
    /// ```
    ///
    /// - Throws: ``RegistrationError`` `.invalid` for a name that is not 1 to 32 ASCII
    ///   letters, digits, `-`, `_` or `.` (starting with a letter or digit), for an `alt` that
    ///   is empty, only spaces, longer than ``altLimit`` characters or holds a control
    ///   character, for empty bytes, more than ``pictureBytesLimit`` bytes or more than
    ///   ``pictureLimit`` pictures; `.duplicateKey` for a name registered twice.
    public func registerPicture(_ name: String, bytes: [UInt8], alt: String) throws(RegistrationError) {
        let words = String(String.UnicodeScalarView(alt.unicodeScalars.drop(while: \.properties.isWhitespace).reversed().drop(while: \.properties.isWhitespace).reversed()))
        // Words in any script (joiners, marks, emoji tags): only what would break a line or its
        // direction is refused.
        let breaking = words.unicodeScalars.contains { scalar in
            [.control, .lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory)
                || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        }
        guard !words.isEmpty, words.count <= Self.altLimit, !breaking else {
            try refuse(.invalid, "line '\(lineID)' registered picture '\(name)' with alt text that is empty, longer than \(Self.altLimit) characters, or holds a control, line-break or direction character; say in a few words, on one line, what it shows")
        }
        try addPicture(name, bytes: bytes, alt: words)
    }

    /// ``registerPicture(_:bytes:alt:)`` with the file's bytes as base64 text, the way a line
    /// carries a small picture in its source (`base64 -w0 logo.png`). Since IMKit 1.4.
    ///
    /// - Throws: ``RegistrationError`` `.invalid` when `base64` is not base64, and as
    ///   ``registerPicture(_:bytes:alt:)`` does.
    public func registerPicture(_ name: String, base64: String, alt: String) throws(RegistrationError) {
        guard let data = Data(base64Encoded: base64) else {
            try refuse(.invalid, "line '\(lineID)' registered picture '\(name)' whose text is not base64. Write it with base64 -w0 FILE")
        }
        try registerPicture(name, bytes: [UInt8](data), alt: alt)
    }

    /// A picture without alt text, as lines built against IMKit 1.3 register it: taken from
    /// them, refused from a line built against 1.4 or later, which says what each picture shows
    /// (``registerPicture(_:bytes:alt:)``). Since IMKit 1.3.
    ///
    /// - Throws: ``RegistrationError`` `.invalid` from a line built against IMKit 1.4 or later,
    ///   and as ``registerPicture(_:bytes:alt:)`` does.
    @available(*, deprecated, message: "say what the picture shows: registerPicture(_:bytes:alt:); a line built against IMKit 1.4 is refused without it when it loads")
    public func registerPicture(_ name: String, bytes: [UInt8]) throws(RegistrationError) {
        if let descriptor, PluginEntry.builtAgainstMinor(descriptor) >= 4 {
            try refuse(.invalid, "line '\(lineID)' registered picture '\(name)' without alt text; a line built against IMKit 1.4 says what each picture shows. Use registerPicture(\"\(name)\", base64: ..., alt: \"what it shows\")")
        }
        try addPicture(name, bytes: bytes, alt: nil)
    }

    private func addPicture(_ name: String, bytes: [UInt8], alt: String?) throws(RegistrationError) {
        guard CardButton.isValidID(name) else {
            try refuse(.invalid, "line '\(lineID)' registered picture '\(name)'; a picture's name is 1 to 32 ASCII letters, digits, '-', '_' or '.', starting with a letter or digit. Rename it")
        }
        guard !pictures.contains(where: { $0.name == name }) else {
            try refuse(.duplicateKey, "line '\(lineID)' registered picture '\(name)' twice. Register each picture once")
        }
        guard !bytes.isEmpty, bytes.count <= Self.pictureBytesLimit else {
            try refuse(.invalid, "line '\(lineID)' registered picture '\(name)' of \(bytes.count) bytes; a picture has 1 to \(Self.pictureBytesLimit). Make it smaller")
        }
        guard pictures.count < Self.pictureLimit else {
            try refuse(.invalid, "line '\(lineID)' registered more than \(Self.pictureLimit) pictures. Register at most \(Self.pictureLimit)")
        }
        pictures.append((name, bytes, alt))
    }

    /// ``registerPicture(_:bytes:)`` with the file's bytes as base64 text: taken from lines
    /// built against IMKit 1.3, refused from those built against 1.4 or later. Since IMKit 1.3.
    ///
    /// - Throws: ``RegistrationError`` `.invalid` when `base64` is not base64, and as
    ///   ``registerPicture(_:bytes:)`` does.
    @available(*, deprecated, message: "say what the picture shows: registerPicture(_:base64:alt:); a line built against IMKit 1.4 is refused without it when it loads")
    public func registerPicture(_ name: String, base64: String) throws(RegistrationError) {
        guard let data = Data(base64Encoded: base64) else {
            try refuse(.invalid, "line '\(lineID)' registered picture '\(name)' whose text is not base64. Write it with base64 -w0 FILE")
        }
        try registerPicture(name, bytes: [UInt8](data))
    }

    private func refuse(_ code: RegistrationError.Code, _ reason: String) throws(RegistrationError) -> Never {
        let error = RegistrationError(code, reason)
        if firstRefusal == nil { firstRefusal = error }
        throw error
    }
}

/// A route as a line registered it.
@_spi(Host)
public struct RegisteredRoute {
    public let pattern: RoutePattern
    public let allowExternal: Bool
    public let handler: RouteHandler
}

/// Why the host refused something a line tried to register.
///
/// A line's `register(with:)` may catch and ignore these, but the registrar remembers the first
/// one and the host then fails the whole line: a line registers everything or nothing.
public struct RegistrationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A stable code tests and tools can match; new codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, e.g. `"key-outside-namespace"`.
        public let name: String
        /// Creates a code. Lines normally use the predefined codes.
        public init(_ name: String) { self.name = name }
        /// The code's name.
        public var description: String { name }

        /// A message key that is not `<lineid>.<name>` with a valid name.
        public static let invalidKey = Code("invalid-key")
        /// A message key outside the registering line's namespace.
        public static let keyOutsideNamespace = Code("key-outside-namespace")
        /// A message key another line, the host, or this line already registered.
        public static let duplicateKey = Code("duplicate-key")
        /// A second carrier page for the same line.
        public static let secondPage = Code("second-page")
        /// A registration that is wrong for another reason (a route or service).
        public static let invalid = Code("invalid")
    }

    /// What went wrong, as a code.
    public let code: Code
    /// One sentence a person can act on: what was refused, why, and what to do.
    public let description: String

    /// Creates an error with a code and a sentence a person can act on.
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}

/// Why the host refused a plugin file or failed its line, with what to do about it.
public struct PluginRefusal: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    /// A stable code for tests and tools.
    public enum Code: String, Sendable, Codable {
        case notRegularFile = "not-regular-file"
        case leavesFolder = "leaves-folder"
        case writableByOthers = "writable-by-others"
        case notELF = "not-elf"
        case wrongMachine = "wrong-machine"
        case dlopenFailed = "dlopen-failed"
        case noEntry = "no-entry-symbol"
        case abiMismatch = "abi-mismatch"
        case swiftMismatch = "swift-mismatch"
        case invalidLineID = "invalid-line-id"
        case duplicateLineID = "duplicate-line-id"
        case registrationFailed = "registration-failed"
        case unreadable = "unreadable"
        case notConfigured = "not-configured"
        case missing = "missing"
        case killed = "killed"
    }

    public var code: Code
    /// What is wrong, e.g. `ABI version 2, this host speaks 1`.
    public var reason: String
    /// What to do, e.g. `rebuild the plugin against this host's IMKit`.
    public var fix: String

    init(_ code: Code, _ reason: String, fix: String) {
        self.code = code
        self.reason = reason
        self.fix = fix
    }

    public var description: String { "\(reason); \(fix)" }
}

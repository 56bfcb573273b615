/// Why the host refused a plugin file or failed its line, with what to do about it.
public struct PluginRefusal: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    /// A stable code for tests and tools.
    public enum Code: String, Sendable, Codable {
        case notRegularFile = "not-regular-file"
        case leavesFolder = "leaves-folder"
        case writableByOthers = "writable-by-others"
        /// The file, its folder or a folder above is owned by a user other than root or the host's.
        case untrustedOwner = "untrusted-owner"
        /// The file's name has control or bidirectional characters.
        case unsafeName = "unsafe-name"
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
        /// Two files claim the same line, or a file claims a line host.json pins to another file.
        case pinnedElsewhere = "pinned-elsewhere"
        /// The file's SHA-256 is not the one host.json pins.
        case digestMismatch = "digest-mismatch"
        /// The plugin scanner could not run.
        case scannerFailed = "scanner-failed"
        /// The line's code crashed while it was loaded or registered.
        case crashed = "crashed"
        /// The line's code did not return within its time limit while it was loaded or registered.
        case hung = "hung"
        /// The host quarantined the line after its code crashed or hung.
        case quarantined = "quarantined"
        /// The file is the IMKit SDK itself (libIMKit.so), not a line.
        case sdkNotLine = "sdk-not-a-line"
        /// The name is a link to another plugin file in the folder: one file, two names.
        case otherName = "other-name"
    }

    public var code: Code
    /// What is wrong, e.g. `ABI version 2, this host speaks 1`.
    public var reason: String
    /// What to do, e.g. `rebuild the plugin against this host's IMKit`.
    public var fix: String

    package init(_ code: Code, _ reason: String, fix: String) {
        self.code = code
        self.reason = reason
        self.fix = fix
    }

    public var description: String { "\(reason); \(fix)" }
}

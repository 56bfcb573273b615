/// What a plugin's descriptor says about it, read before any of its Swift code runs.
public struct PluginDescriptor: Equatable, Sendable, Codable {
    /// The line id it claims, as written (it may be invalid).
    public var lineID: String?
    public var displayName: String?
    public var version: String?
    /// The Swift compiler it was built with.
    public var swiftVersion: String?

    public init(lineID: String?, displayName: String?, version: String?, swiftVersion: String?) {
        self.lineID = lineID
        self.displayName = displayName
        self.version = version
        self.swiftVersion = swiftVersion
    }
}

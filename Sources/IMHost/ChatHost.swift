/// The running host: its configuration, the plugins as loaded, and the converter built from both.
///
/// Plugins are loaded once per process; they are never unloaded.
public final class ChatHost {
    /// The configuration in force.
    public private(set) var config: HostConfig
    /// The plugins found, loaded, refused or failed.
    public let catalog: PluginCatalog
    /// Routes jump URLs with the configuration in force.
    public private(set) var converter: Converter

    /// Loads host.json and the plugins it names.
    ///
    /// - Throws: ``ConfigError`` when host.json is missing or invalid; nothing is loaded then.
    public convenience init(configPath: String) throws(ConfigError) {
        self.init(config: try HostConfig.load(from: configPath))
    }

    /// Loads the plugins a configuration names.
    public init(config: HostConfig) {
        self.config = config
        catalog = PluginLoader.load(config: config)
        converter = Converter(config: config, catalog: catalog)
    }

    /// The lines the host could not use, each as one line for stderr: file, line, reason, fix.
    public var problems: [String] {
        var lines: [String] = catalog.folderProblem.map { [$0] } ?? []
        for entry in catalog.entries where [.refused, .failed, .missing].contains(entry.status) {
            guard let problem = entry.problem else { continue }
            let file = entry.file.map { FileSystem.baseName($0) + ": " } ?? ""
            let line = entry.lineID.map { "line '\($0)': " } ?? ""
            lines.append("\(entry.status.rawValue) \(file)\(line)\(problem)")
        }
        return lines
    }
}

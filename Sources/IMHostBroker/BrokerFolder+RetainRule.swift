import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// imhost's retain rule: a mosquitto plugin (Sources/CIMHostRetainRule) that refuses a retained
/// message except on the topics imhost retains by design (the fleet configuration, each host's
/// status, each device's own session record) and except an empty one, which clears. Without it
/// the dynamic-security plugin, which grants topics and never retain on them, lets any user
/// leave a retained message on every topic it may write, and fill the broker's memory and disk.
/// `imhost broker init` copies the built plugin into the folder (the broker runs as the
/// folder's owner, and reads what the folder holds); `imhost broker upgrade` adds it to a folder
/// made before.
extension BrokerFolder {
    /// The plugin's copy in the folder, which mosquitto.conf names.
    public var retainRulePath: String { path + "/imhost-retain-rule.so" }

    /// The library `swift build` makes of the plugin.
    package static let retainRuleLibrary = "libIMHostRetainRule.so"

    /// The longest retained message the rule keeps: the largest document imhost retains (the
    /// fleet configuration; a host's status is at most 8 KiB, a session record far less). Hosts
    /// read none longer, so refusing one costs nothing, and bounds what the broker holds retained
    /// to this much for each login and user (and each of a user's report slots: 32 at most).
    static let retainedBytes = max(FleetConfig.byteLimit, FleetStatus.byteLimit)

    /// The first words of the configuration's retain paragraph, by which ``upgradeRetainRule()``
    /// knows a folder has it.
    static let retainRuleStart = "# Retained messages:"

    /// The built plugin: beside the running executable (`.build/debug/` as `swift build` leaves
    /// it), in an install prefix's `lib/imhost/` above it, then `/usr/local/lib/imhost/` and
    /// `/usr/lib/imhost/`. `nil`: none of them.
    static func retainRuleBuild() -> String? {
        var folders: [String] = []
        if let executable = try? FileSystem.realPath("/proc/self/exe") {
            let own = FileSystem.directory(of: executable)
            folders += [own, FileSystem.directory(of: own) + "/lib/imhost"]
        }
        folders += ["/usr/local/lib/imhost", "/usr/lib/imhost"]
        return folders.map { $0 + "/" + retainRuleLibrary }.first { access($0, R_OK) == 0 }
    }

    /// The folder imhost runs from, where ``retainRuleBuild()`` looks first.
    static var ownFolder: String {
        (try? FileSystem.realPath("/proc/self/exe")).map(FileSystem.directory(of:)) ?? "imhost's folder"
    }

    /// The configuration's paragraph loading the plugin. It goes before the dynamic-security
    /// plugin's line.
    var retainRuleParagraph: String {
        """
        \(Self.retainRuleStart) only those imhost retains by design are kept (\(Topic.fleetConfig),
        # \(Topic.fleetStatus(user: "<user>")), a user's reports on imhost/fleet/report/<user>/<0-31>, and each login's own session record on \(Topic.inbox(to: "<user>", from: "<user>"))
        # or .../<user>/<device>), each at most \(Self.retainedBytes) bytes, and an empty one clears any. Every other
        # retained publish is refused: PUBACK 135 under MQTT 5; under 3.1.1 an ordinary PUBACK, and
        # nothing kept. This log says so, once every 10 s at most. Without it a user could leave a
        # retained message on every topic it may write, and fill the broker's memory and disk.
        # imhost's plugin, copied here by imhost broker init (and upgrade). Its line comes before the
        # dynamic-security plugin's: mosquitto takes the first plugin's answer that is not "no
        # opinion", and this one answers only its refusals.
        plugin \(retainRulePath)
        plugin_opt_max_retained_bytes \(Self.retainedBytes)
        """
    }

    /// Copies the built plugin into the folder, mode 0644 and owned like the folder, when the
    /// copy there is missing or differs. A running broker keeps the one it loaded (the copy is a
    /// new file renamed over the old). Returns whether it copied.
    @discardableResult
    func installRetainRule(from build: String) throws(Failure) -> Bool {
        let bytes: [UInt8]
        do throws(FileSystem.Failure) { bytes = try FileSystem.readBytes(build, limit: 64 << 20) } catch {
            throw Failure(.retainRuleUnreadable(build: build, error))
        }
        if let present = try? FileSystem.readBytes(retainRulePath, limit: 64 << 20), present == bytes { return false }
        do throws(FileSystem.Failure) { try FileSystem.writeAtomically(bytes, to: retainRulePath, mode: 0o644) } catch {
            throw Failure(.cannotWrite(file: retainRulePath, error))
        }
        chmod(retainRulePath, 0o644)
        var folder = stat()
        if geteuid() == 0, stat(path, &folder) == 0 { _ = chown(retainRulePath, folder.st_uid, folder.st_gid) }
        return true
    }

    /// Brings a folder made before the retain rule to it: the plugin copied in (again, when the
    /// built one changed) and its paragraph put before the authentication paragraph. Returns
    /// whether it changed anything.
    func upgradeRetainRule() throws(Failure) -> Bool {
        guard let build = Self.retainRuleBuild() else { throw Failure(.retainRuleMissing(beside: Self.ownFolder)) }
        let copied = try installRetainRule(from: build)
        let text: String
        do throws(FileSystem.Failure) { text = try FileSystem.readText(configPath) } catch { throw Failure(.cannotRead(file: configPath, error)) }
        var lines = text.components(separatedBy: "\n")
        if lines.contains(where: { $0.hasPrefix(Self.retainRuleStart) }) { return copied }
        guard let authentication = lines.firstIndex(where: { $0.hasPrefix(Self.authenticationStart) }) else {
            throw Failure(.noAuthenticationParagraph(config: configPath))
        }
        lines.insert(contentsOf: (retainRuleParagraph + "\n").components(separatedBy: "\n"), at: authentication)
        // Its mode stays: with a bridge it holds a password, and is its owner's only.
        var info = stat()
        let mode = stat(configPath, &info) == 0 ? info.st_mode & 0o777 : 0o644
        try write(lines.joined(separator: "\n"), to: configPath, mode: mode)
        return true
    }
}

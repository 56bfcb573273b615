import IMHost
#if canImport(Glibc)
import Glibc
#endif

/// A broker folder's sizing (the largest packet and what is kept for an absent client, from the
/// hosts' limits), and bringing a folder made by an older `imhost broker init` up to date.
extension BrokerFolder {
    /// The broker's `max_queued_bytes`: what it keeps for one absent or slow client. A bound on
    /// the broker's memory for each absent user, not a multiple of the packet (256 of the largest
    /// packets, as before photos, would be 376 MB a user): 32 MiB holds a thousand texts of 32 KB,
    /// or about twenty of the largest messages with photos; past it the broker drops what comes,
    /// and the senders' resends bring it once the user reads the queue down. At least 16 of the
    /// largest packets, for a site whose limits are larger.
    public static func maxQueuedBytes(packet: Int) -> Int { max(32 << 20, 3 * packet) }

    /// The first words of the sizing paragraph, by which ``upgrade(payloadLimit:photoLimit:)`` finds it.
    package static let sizingStart = "# The largest packet:"

    /// The sizing paragraph of the configuration: `max_packet_size`, `max_queued_messages` and
    /// `max_queued_bytes`, each saying why.
    static func sizing(payloadLimit: Int, photoLimit: Int, fileLimit: Int, queuedMessages: Int = 1000) -> String {
        let packet = Envelope.packetLimit(payloadLimit: payloadLimit, photoLimit: photoLimit, fileLimit: fileLimit)
        return """
            \(sizingStart) the largest message host.json allows (limits.payloadBytes \(payloadLimit),
            # limits.photoBytes \(photoLimit) or limits.fileBytes \(fileLimit) as base64) and the envelope and topic around it. Larger ones are
            # refused before they cost memory; a host reads it from the broker and refuses a larger
            # message at its sender. imhost broker upgrade DIR rewrites this paragraph.
            max_packet_size \(packet)
            # What the broker keeps for one slow or offline client: at most this many messages and
            # bytes (past them it drops messages, and imhost's resends bring them later). The bytes
            # bound the broker's memory for each absent user: 32 MiB (a thousand texts of 32 KB, or
            # about twenty messages with photos), or 16 of the largest packets if that is more; a
            # multiple of the packet alone would let each absent user hold hundreds of MB.
            max_queued_messages \(queuedMessages)
            max_queued_bytes \(maxQueuedBytes(packet: packet))
            """
    }

    /// What ``upgrade(payloadLimit:photoLimit:)`` did to a folder's sizing.
    public struct Upgrade: Sendable, Equatable {
        /// `max_packet_size` and `max_queued_bytes` as they were (`nil`: not set).
        public var packetBefore: Int?, queuedBefore: Int?
        /// And as they are now.
        public var packet: Int, queued: Int
        /// The limits they are sized from.
        public var payloadLimit: Int, photoLimit: Int, fileLimit: Int
        /// Whether the configuration was written (false: it was up to date).
        public var changed: Bool
        /// Whether a folder made before devices (a password file and an ACL) was moved to the
        /// dynamic-security plugin: every login keeps its password and session.
        public var devices = false
        /// Whether imhost's retain rule was added to the folder, or its copy there replaced by
        /// the one built now.
        public var retainRule = false
        /// Whether users' roles were given rules they lacked (reports).
        public var roles = false
        /// The running broker's process id, when it runs with sizes (or a plugin) older than the
        /// folder's: it must be restarted (mosquitto 2.0 does not read them again on a reload).
        public var restartNeeded: Int32?
    }

    /// Rewrites the sizing paragraph of a folder made by `imhost broker init` (before photos, or
    /// with other limits): `max_packet_size` and `max_queued_bytes` follow `payloadLimit` (`nil`:
    /// the one the folder was made for) and `photoLimit`; `max_queued_messages` and every other
    /// line (passwords, ACL, listeners, TLS, bridge) stay as they are. A folder made before
    /// devices moves to the dynamic-security plugin first, and one made before the retain rule
    /// gets it (``upgradeRetainRule()``). Written only when it changes anything.
    public func upgrade(payloadLimit: Int?, photoLimit: Int, fileLimit: Int = HostConfig.Limits().fileBytes) throws(Failure) -> Upgrade {
        try requireInitialized()
        var text: String
        do throws(FileSystem.Failure) { text = try FileSystem.readText(configPath) } catch { throw Failure(.cannotRead(file: configPath, error)) }
        guard text.hasPrefix("# Written by imhost broker init.") else {
            throw Failure(.notWrittenByInit(config: configPath, packet: Envelope.packetLimit(payloadLimit: payloadLimit ?? HostConfig.Limits().payloadBytes, photoLimit: photoLimit, fileLimit: fileLimit)))
        }
        let devices = try upgradeAuthentication()
        let retainRule = try upgradeRetainRule()
        let roles = try upgradeRoles()
        if devices || retainRule {
            do throws(FileSystem.Failure) { text = try FileSystem.readText(configPath) } catch { throw Failure(.cannotRead(file: configPath, error)) }
        }
        var lines = text.components(separatedBy: "\n")
        func value(_ name: String) -> Int? {
            lines.lazy.compactMap { line -> Int? in
                let parts = line.split(separator: " ")
                return parts.count == 2 && parts[0] == name ? Int(parts[1]) : nil
            }.first
        }
        let packetBefore = value("max_packet_size"), queuedBefore = value("max_queued_bytes")
        // The payload limit the folder was made for: its comment says it (as written before
        // photos: "allows (N bytes)"; since: "limits.payloadBytes N,"), else its packet does.
        let said = lines.lazy.compactMap { line -> Int? in
            for marker in ["limits.payloadBytes ", "host.json allows ("] {
                guard let range = line.range(of: marker) else { continue }
                return Int(line[range.upperBound...].prefix(while: \.isNumber))
            }
            return nil
        }.first
        let payload = payloadLimit ?? said ?? packetBefore.map { $0 - Envelope.overhead - Envelope.topicRoom } ?? HostConfig.Limits().payloadBytes
        guard let start = lines.firstIndex(where: { $0.hasPrefix(Self.sizingStart) }),
              let end = lines[start...].firstIndex(where: { $0.hasPrefix("max_queued_bytes ") }) else {
            throw Failure(.noSizingParagraph(config: configPath, packet: Envelope.packetLimit(payloadLimit: payload, photoLimit: photoLimit, fileLimit: fileLimit)))
        }
        let sizing = Self.sizing(payloadLimit: payload, photoLimit: photoLimit, fileLimit: fileLimit, queuedMessages: value("max_queued_messages") ?? 1000)
        let packet = Envelope.packetLimit(payloadLimit: payload, photoLimit: photoLimit, fileLimit: fileLimit)
        var upgrade = Upgrade(packetBefore: packetBefore, queuedBefore: queuedBefore, packet: packet, queued: Self.maxQueuedBytes(packet: packet),
                              payloadLimit: payload, photoLimit: photoLimit, fileLimit: fileLimit, changed: devices || retainRule || roles, devices: devices, retainRule: retainRule, roles: roles)
        if lines[start...end].joined(separator: "\n") != sizing {
            lines.replaceSubrange(start...end, with: sizing.components(separatedBy: "\n"))
            // Its mode stays: with a bridge it holds a password, and is its owner's only.
            var info = stat()
            let mode = stat(configPath, &info) == 0 ? info.st_mode & 0o777 : 0o644
            try write(lines.joined(separator: "\n"), to: configPath, mode: mode)
            upgrade.changed = true
        }
        // A broker started before the sizes were written runs with the old ones: mosquitto 2.0
        // reads max_packet_size and max_queued_bytes at start only (a SIGHUP reloads the
        // configuration and keeps them: measured, and so its config__copy says), and loads its
        // plugins at start only.
        if let pid = runningPID(), startedBefore(configPath, pid) || startedBefore(retainRulePath, pid) { upgrade.restartNeeded = pid }
        return upgrade
    }

    /// Whether process `pid` started before `file` was last written.
    private func startedBefore(_ file: String, _ pid: Int32) -> Bool {
        var info = stat()
        guard stat(file, &info) == 0 else { return true }
        // The process's start, in clock ticks after boot (field 22 of /proc/PID/stat); the boot,
        // as the wall clock now less the time since boot.
        guard let stat = try? FileSystem.readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return true }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the ")": state is field 3, so starttime (22) is the 20th.
        guard fields.count > 19, let ticks = Double(fields[19]) else { return true }
        var wall = timespec(), sinceBoot = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        clock_gettime(CLOCK_BOOTTIME, &sinceBoot)
        func seconds(_ time: timespec) -> Double { Double(time.tv_sec) + Double(time.tv_nsec) / 1e9 }
        let started = seconds(wall) - seconds(sinceBoot) + ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
        // Ticks are 10 ms: a broker started within 20 ms after the write counts as started before
        // it (a restart it does not need may be said, never one it needs left unsaid).
        return started < seconds(info.st_mtim) + 0.02
    }
}

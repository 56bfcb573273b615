#if canImport(Glibc)
import Glibc
#endif

/// Whether the host may trust a plugin file: the policy sshd's StrictModes applies to a user's
/// files, applied to the plugin folder. Whoever can replace a plugin, or a folder on the way to
/// it, chooses what the host runs; so a plugin is used only when
///
/// - the file is a regular file (or a link to one inside the plugin folder), owned by root or
///   the host's user, and not writable by group or others;
/// - the plugin folder and every folder above it, up to `/`, are owned by root or the host's
///   user and not writable by group or others (a root-owned folder with the sticky bit, like
///   `/tmp`, excepted: others may add files there but not replace ours);
/// - every folder a link passes through on its way to its target is as trusted as the plugin
///   folder, and a plugin folder named through a link needs the link's folders trusted too.
///
/// Each check is the system call it names (`lstat`, `stat`, `readlink`), made before the file is
/// read; a refusal names the file or folder, what is wrong, and the command that fixes it.
enum PluginFolderTrust {
    /// The user the host runs as: the owner a plugin file or folder may have, besides root.
    static let hostUser = geteuid()

    /// Checks the plugin folder itself: the folder `real` is (links resolved), and when the
    /// configured path `folder` reaches it through a link, the folders of that link too.
    static func checkFolder(_ folder: String, real: String) -> PluginRefusal? {
        if let refusal = checkFolders(real) { return refusal }
        // Reached through a link: whoever may replace the link chooses the folder, so the
        // folders the configured path names must be trusted too.
        guard real != folder, folder.hasPrefix("/") else { return nil }
        return checkFolders(FileSystem.directory(of: folder)) ?? checkLinkHops(folder, stoppingAt: nil)
    }

    /// Checks a plugin file before anything reads it: a regular file, or a link to one inside the
    /// folder, not writable by group or others, owned by root or the host's user. `name` is
    /// looked up in the open folder `folderFD` (one `lstat` a file; the path to the folder is
    /// walked once, not once a file). Returns its identity and whether its name is a link.
    static func checkFile(_ name: String, in folderFD: Int32, folder: String, folderReal: String)
        throws(PluginRefusal) -> (identity: FileIdentity, isLink: Bool) {
        let path = folder + "/" + name
        var info = stat()
        var isLink = false
        do {
            // A name read from the folder has no slash, so a file that is not a link is in the
            // folder; only a link needs resolving.
            if folderFD >= 0 {
                guard fstatat(folderFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                    throw FileSystem.Failure(call: "lstat", code: errno)
                }
            } else {
                info = try FileSystem.status(path, followLinks: false)
            }
            if info.st_mode & S_IFMT == S_IFLNK {
                isLink = true
                let real = try FileSystem.realPath(path)
                guard real.hasPrefix(folderReal + "/") else {
                    throw PluginRefusal(.leavesFolder, "is a symbolic link to \(real), outside the plugin folder",
                                        fix: "copy the plugin into the folder instead of linking to it")
                }
                // Every folder a hop of the link lands in (a subfolder, or a folder a link on the
                // way sits in) must be as trusted as the plugin folder, or its owner could swap
                // the file or repoint the link.
                if let refusal = checkLinkHops(path, stoppingAt: folderReal) { throw refusal }
                info = try FileSystem.status(real, followLinks: true)
            }
        } catch let refusal as PluginRefusal {
            throw refusal
        } catch let failure as FileSystem.Failure {
            throw PluginRefusal(.unreadable, "cannot be read (\(failure.call): \(failure))", fix: "fix the file or link, or remove it")
        } catch {
            throw PluginRefusal(.unreadable, "cannot be read (\(error))", fix: "fix the file or link, or remove it")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw PluginRefusal(.notRegularFile, "is not a regular file", fix: "remove it from the plugin folder")
        }
        guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw PluginRefusal(.writableByOthers, "is writable by group or others (mode \(octal(info.st_mode)))",
                                fix: "run chmod go-w \(path)")
        }
        guard info.st_uid == 0 || info.st_uid == hostUser else {
            throw PluginRefusal(.untrustedOwner, "is owned by \(describe(user: info.st_uid)), not root or \(describe(user: hostUser)) (the host's user)",
                                fix: "run chown \(hostUser) \(path), or remove it: another user could change what the host runs")
        }
        return (FileIdentity(info), isLink)
    }

    /// The folder `real` and every folder above it, up to `/` (or, with `stop`, up to and
    /// excluding `stop`: the folders between a link's target and the plugin folder): each owned
    /// by root or the host's user, and not writable by group or others unless it is root's and
    /// sticky.
    static func checkFolders(_ real: String, stoppingAt stop: String? = nil) -> PluginRefusal? {
        var path = real
        while path != stop {
            var info = stat()
            guard stat(path, &info) == 0 else {
                return PluginRefusal(.unreadable, "its folder \(path) cannot be checked (stat: \(String(cString: strerror(errno))))",
                                     fix: "check the folder exists and can be read")
            }
            let owner = info.st_uid
            guard owner == 0 || owner == hostUser else {
                return PluginRefusal(.untrustedOwner, "its folder \(path) is owned by \(describe(user: owner)), not root or \(describe(user: hostUser)) (the host's user)",
                                     fix: "run chown \(hostUser) \(path), or keep plugins in a folder you own")
            }
            let sticky = info.st_mode & S_ISVTX != 0 && owner == 0
            if info.st_mode & (S_IWGRP | S_IWOTH) != 0 && !sticky {
                return PluginRefusal(.writableByOthers, "its folder \(path) is writable by group or others (mode \(octal(info.st_mode)))",
                                     fix: "run chmod go-w \(path)")
            }
            if path == "/" { return nil }
            path = FileSystem.directory(of: path)
            if path.isEmpty { path = "/" }
        }
        return nil
    }

    /// Follows the links at `path` one hop at a time and checks the folder each hop lands in,
    /// as ``checkFolders(_:stoppingAt:)`` does (up to `stop`, or to `/` for a folder outside it):
    /// whoever may write in a folder a link passes through decides what the link names.
    static func checkLinkHops(_ path: String, stoppingAt stop: String?) -> PluginRefusal? {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return nil }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink(current, &buffer, buffer.count - 1)
            guard length > 0 else { return nil }
            let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let next = target.hasPrefix("/") ? target : FileSystem.directory(of: current) + "/" + target
            let holder = (try? FileSystem.realPath(FileSystem.directory(of: next))) ?? FileSystem.directory(of: next)
            if holder != stop, let refusal = checkFolders(holder, stoppingAt: stop.flatMap { holder.hasPrefix($0 + "/") ? $0 : nil }) {
                return refusal
            }
            current = next
        }
        return PluginRefusal(.unreadable, "has more than 40 links in a row", fix: "link straight to the file")
    }

    /// Why a file name is refused before it is even looked up: control or bidirectional
    /// characters would reach a terminal, or make one name read as another.
    static func nameProblem(_ name: String) -> PluginRefusal? {
        // Printable ASCII needs no escape: checked on the bytes first, as most names are.
        guard name.utf8.withContiguousStorageIfAvailable({ !$0.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }) ?? true,
              !PlainText.isPlain(name) else { return nil }
        return PluginRefusal(.unsafeName, "its name has control or bidirectional characters (\(name))",
                             fix: "rename it to plain letters, digits, '-' and '.'")
    }

    /// "uid 1234 (alice)".
    static func describe(user uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "uid \(uid) (\(String(cString: name)))"
    }

    /// A mode as `chmod` takes it: "0755".
    static func octal(_ mode: mode_t) -> String { "0" + String(mode & 0o7777, radix: 8) }
}

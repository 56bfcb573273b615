#if canImport(Glibc)
import Glibc
#endif

/// A user's folder under the data folder, `<data>/users/<encoded user id>`: made (mode 0700,
/// parents as `mkdir -p` would, each flushed with its folder) when it is missing, and found
/// read-only when it exists but cannot be written. The user id never becomes a path: it is
/// encoded (``StorePath``).
struct StoreFolder {
    let path: String
    /// Whether it can only be read.
    let isReadOnly: Bool

    init(dataFolder: String, user: String) throws(StoreError) {
        let userName: String
        do {
            userName = try StorePath.fileName(for: user, kind: "user")
        } catch {
            throw StoreError(.refused, "\(error)")
        }
        path = dataFolder + "/users/" + userName
        var readOnly = false
        // The data folder's own parents are made as `mkdir -p` would; a parent that cannot be
        // made is named below, with the first folder that exists above it.
        let parent = FileSystem.directory(of: dataFolder)
        if access(parent, F_OK) != 0 { try? FileSystem.makeFolders(parent) }
        for folder in [dataFolder, dataFolder + "/users", path] {
            if mkdir(folder, 0o700) == 0 {
                // The new folder's name must survive a power cut.
                FileSystem.syncFolder(FileSystem.directory(of: folder))
            } else if errno == EROFS || errno == EACCES || errno == EPERM {
                // A folder that exists but cannot be written is read; one that cannot be made
                // is an error, said of the folder that is missing.
                let code = errno
                guard access(folder, F_OK) == 0 else {
                    throw StoreError(.readOnly, "cannot create data folder \(folder): \(String(cString: strerror(code))); "
                                     + "make \(Self.existingAncestor(of: folder)) writable, or set \"data\" in host.json")
                }
                readOnly = true
            } else if errno != EEXIST {
                let code = errno
                // ENOENT: a parent could not be made; say why of the folder that stops it.
                let stop = Self.existingAncestor(of: folder)
                let why = code == ENOENT && access(stop, W_OK) != 0 ? "\(stop) is not writable" : String(cString: strerror(code))
                throw StoreError(.failed, "cannot create data folder \(folder): \(why); make \(stop) writable, or set \"data\" in host.json")
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw StoreError(.refused, "\(path) is not a folder (\(FileSystem.kind(info.st_mode))); remove it")
        }
        if access(path, W_OK) != 0 { readOnly = true }
        isReadOnly = readOnly
    }

    /// The nearest folder above `path` (or `path` itself) that exists.
    static func existingAncestor(of path: String) -> String {
        var folder = FileSystem.directory(of: path)
        while access(folder, F_OK) != 0, folder != "/", folder != "." {
            folder = FileSystem.directory(of: folder)
        }
        return folder
    }
}

import Foundation
import Testing
@testable import IMHost

/// The plugin folder trust policy, in process: each check against real files, folders, modes,
/// owners and links made for it.
@Suite("Plugin folder trust")
struct PluginFolderTrustTests {
    /// A user id that is neither root nor the tests' own: `nobody`.
    static let otherUser: uid_t = 65534

    func folder() throws -> Workspace { try Workspace() }

    func check(_ name: String, in workspace: Workspace) throws(PluginRefusal) -> (identity: FileIdentity, isLink: Bool) {
        let folderFD = open(workspace.plugins, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(folderFD) }
        return try PluginFolderTrust.checkFile(name, in: folderFD, folder: workspace.plugins,
                                              folderReal: try! FileSystem.realPath(workspace.plugins))
    }

    func refusal(_ name: String, in workspace: Workspace) -> PluginRefusal? {
        do throws(PluginRefusal) {
            _ = try check(name, in: workspace)
            return nil
        } catch {
            return error
        }
    }

    @Test("a regular file owned by the host's user, not writable by others, is trusted")
    func plainFile() throws {
        let workspace = try folder()
        try workspace.writePlugin("a.so", contents: "x")
        let checked = try check("a.so", in: workspace)
        #expect(!checked.isLink)
        #expect(checked.identity == FileIdentity.of(workspace.plugins + "/a.so"))
        #expect(PluginFolderTrust.checkFolder(workspace.plugins, real: try FileSystem.realPath(workspace.plugins)) == nil)
    }

    @Test("a file writable by group or others is refused with the chmod that fixes it")
    func writableFile() throws {
        let workspace = try folder()
        try workspace.writePlugin("a.so", contents: "x", mode: 0o666)
        let refused = try #require(refusal("a.so", in: workspace))
        #expect(refused.code == .writableByOthers)
        #expect(refused.description == "is writable by group or others (mode 0666); run chmod go-w \(workspace.plugins)/a.so")
    }

    @Test("a file owned by another user is refused, naming the owner")
    func foreignOwner() throws {
        guard PluginFolderTrust.hostUser == 0 else { return }  // only root can give a file away
        let workspace = try folder()
        try workspace.writePlugin("a.so", contents: "x")
        #expect(chown(workspace.plugins + "/a.so", Self.otherUser, gid_t(Self.otherUser)) == 0)
        let refused = try #require(refusal("a.so", in: workspace))
        #expect(refused.code == .untrustedOwner)
        #expect(refused.reason.hasPrefix("is owned by uid 65534"))
    }

    @Test("a FIFO, a folder or a device named .so is not a regular file")
    func notRegular() throws {
        let workspace = try folder()
        #expect(mkfifo(workspace.plugins + "/pipe.so", 0o600) == 0)
        #expect(mkdir(workspace.plugins + "/dir.so", 0o700) == 0)
        #expect(symlink("/dev/zero", workspace.plugins + "/zero.so") == 0)
        #expect(refusal("pipe.so", in: workspace)?.code == .notRegularFile)
        #expect(refusal("dir.so", in: workspace)?.code == .notRegularFile)
        #expect(refusal("zero.so", in: workspace)?.code == .leavesFolder, "a link out of the folder is refused before what it names")
    }

    @Test("a link to a file outside the folder is refused; one to a file beside it is trusted")
    func links() throws {
        let workspace = try folder()
        try workspace.writePlugin("real.so", contents: "x")
        #expect(symlink("real.so", workspace.plugins + "/beside.so") == 0)
        #expect(try check("beside.so", in: workspace).isLink)
        try "x".write(toFile: workspace.root + "/outside.so", atomically: false, encoding: .utf8)
        #expect(symlink(workspace.root + "/outside.so", workspace.plugins + "/out.so") == 0)
        let refused = try #require(refusal("out.so", in: workspace))
        #expect(refused.code == .leavesFolder)
    }

    @Test("a link into a subfolder others can write is refused: they could swap the file")
    func linkIntoOpenSubfolder() throws {
        let workspace = try folder()
        let sub = workspace.plugins + "/sub"
        #expect(mkdir(sub, 0o755) == 0)
        try "x".write(toFile: sub + "/h.so", atomically: false, encoding: .utf8)
        chmod(sub + "/h.so", 0o644)
        #expect(symlink("sub/h.so", workspace.plugins + "/house.so") == 0)
        #expect(refusal("house.so", in: workspace) == nil, "a trusted subfolder is fine")
        chmod(sub, 0o777)
        let refused = try #require(refusal("house.so", in: workspace))
        #expect(refused.code == .writableByOthers)
        #expect(refused.reason.contains("its folder \(try FileSystem.realPath(sub)) is writable by group or others (mode 0777)"))
    }

    @Test("a plugin folder others can write is refused, unless it is root's and sticky, like /tmp")
    func folders() throws {
        let workspace = try folder()
        let real = try FileSystem.realPath(workspace.plugins)
        chmod(workspace.plugins, 0o777)
        #expect(PluginFolderTrust.checkFolder(workspace.plugins, real: real)?.code == .writableByOthers)
        if PluginFolderTrust.hostUser == 0 {
            chmod(workspace.plugins, 0o1777)
            #expect(PluginFolderTrust.checkFolder(workspace.plugins, real: real) == nil, "root's sticky folder: others add, never replace")
            chmod(workspace.plugins, 0o755)
            #expect(chown(workspace.plugins, Self.otherUser, gid_t(Self.otherUser)) == 0)
            let refused = PluginFolderTrust.checkFolder(workspace.plugins, real: real)
            #expect(refused?.code == .untrustedOwner)
            #expect(refused?.reason.hasPrefix("its folder \(real) is owned by uid 65534") == true)
        }
    }

    @Test("a plugin folder named through a link needs the link's folder trusted too")
    func folderThroughLink() throws {
        let workspace = try folder()
        let open = workspace.root + "/open"
        #expect(mkdir(open, 0o777) == 0)
        chmod(open, 0o777)
        #expect(symlink(workspace.plugins, open + "/plugins") == 0)
        let named = open + "/plugins"
        let refused = PluginFolderTrust.checkFolder(named, real: try FileSystem.realPath(named))
        #expect(refused?.code == .writableByOthers)
        #expect(refused?.reason.contains(open) == true)
    }

    @Test("names with control or bidirectional characters are refused before they are looked up")
    func names() {
        #expect(PluginFolderTrust.nameProblem("house.so") == nil)
        #expect(PluginFolderTrust.nameProblem("房子.so") == nil)
        #expect(PluginFolderTrust.nameProblem("a\u{1B}[31m.so")?.code == .unsafeName)
        // Named as it is: `imhost plugins` escapes it where it prints it (PluginLoadingTests).
        #expect(PluginFolderTrust.nameProblem("a\u{202E}os.so")?.reason.contains("(a\u{202E}os.so)") == true)
    }
}

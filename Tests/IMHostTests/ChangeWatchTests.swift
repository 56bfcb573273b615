import Foundation
import Testing
@testable import IMHost
import IMKit

/// What wakes a chat that does not hold the connection (a browser page's worker, a second
/// terminal): another process's commit to the user's store, never the passing of time.
@Suite("A chat without the connection is woken by changes")
struct ChangeWatchTests {
    @Test("another process storing a message wakes the watch on the real database file; a file beside it that is not followed does not")
    func wokenByAnotherProcess() throws {
        let workspace = try Workspace.standard()
        // The store as the page's worker has it open.
        let store = try MessageStore(dataFolder: workspace.data, user: "me")
        _ = store.changedElsewhere()
        let watch = try #require(ChangeWatch(files: [store.path, store.path + "-wal"]))
        _ = watch.drain()
        let folder = String(store.path[..<store.path.lastIndex(of: "/")!])
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/unrelated.txt"))
        #expect(!watch.drain(), "a file the watch does not follow")
        // Another process: imhost play stores an arrival in the same database.
        try workspace.receive("text", #"{"text":"from elsewhere"}"#)
        var polls = [pollfd(fd: watch.descriptor, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&polls, 1, 30_000) == 1, "no wake within 30 s")
        #expect(watch.drain())
        #expect(store.changedElsewhere(), "what woke it is a commit of another connection")
    }
}

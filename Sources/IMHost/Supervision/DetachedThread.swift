#if canImport(Glibc)
import Glibc
#endif

/// Work on a thread of its own, detached: a web page's chat, a line's samples being drawn.
package enum DetachedThread {
    /// Starts `work` on a new thread; false when no thread could be made.
    package static func start(_ work: @escaping @Sendable () -> Void) -> Bool {
        let body = Body(work)
        var thread = pthread_t()
        let made = pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, Unmanaged.passRetained(body).toOpaque())
        if made != 0 {
            Unmanaged.passUnretained(body).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// A thread's work, handed to pthread_create.
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}

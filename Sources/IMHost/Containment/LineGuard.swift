/// Calls into a line's code inside a breadcrumb frame, so that if the call kills the process or
/// never returns, the supervisor (or the next start) knows whose code it was and what it did.
///
/// Without a breadcrumb (a host that runs no line code, or one a test builds), calls run as they are.
final class LineGuard {
    let breadcrumb: Breadcrumb?

    init(breadcrumb: Breadcrumb?) { self.breadcrumb = breadcrumb }

    /// Runs `body`, line code of the line `mark` names, as `site`, about message `key` and `message`.
    @inline(__always)
    func run<T, Failure: Error>(_ site: CrashSite, _ mark: LineMark?, key: String? = nil, message: String? = nil,
                                _ body: () throws(Failure) -> T) throws(Failure) -> T {
        guard let breadcrumb, let mark else { return try body() }
        let level = breadcrumb.enter(site, mark, key: key, message: message)
        defer { breadcrumb.leave(level) }
        return try body()
    }
}

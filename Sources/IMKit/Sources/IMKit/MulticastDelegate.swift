/// Many observers of one service, held weakly: an observer that is released simply stops being
/// called. Use it where one object would otherwise have a single `delegate`.
///
/// `Observer` is a class-bound protocol (`protocol ListingObserver: AnyObject`) or a class. Only
/// objects can be added: passing a struct does not compile. An object is held weakly, so add
/// the object that lives on (the page, the service), never a temporary: a value boxed with
/// `as AnyObject` is released at once, and is never called.
///
/// ```swift
/// protocol ListingObserver: AnyObject { func listingViewed(_ id: String) }
/// let observers = MulticastDelegate<any ListingObserver>()
/// observers.add(page)
/// observers.notify { $0.listingViewed("L1") }
/// ```
///
/// Used on the chat's thread only, like the services that hold it.
public final class MulticastDelegate<Observer> {
    private var entries: [Weak] = []

    private struct Weak {
        weak var object: AnyObject?
    }

    /// Creates an empty set of observers.
    public init() {}

    /// Adds an observer; adding one twice has no effect.
    ///
    /// - Returns: `false` when `observer` is not an `Observer` (it is then not added): check it
    ///   where that can happen.
    @discardableResult
    public func add<Object: AnyObject>(_ observer: Object) -> Bool {
        guard observer is Observer else { return false }
        if !entries.contains(where: { $0.object === observer }) { entries.append(Weak(object: observer)) }
        return true
    }

    /// Removes an observer.
    public func remove<Object: AnyObject>(_ observer: Object) {
        entries.removeAll { $0.object == nil || $0.object === observer }
    }

    /// Calls `body` for every live observer, in the order they were added, and forgets released ones.
    public func notify(_ body: (Observer) -> Void) {
        entries.removeAll { $0.object == nil }
        for entry in entries {
            if let observer = entry.object as? Observer { body(observer) }
        }
    }

    /// How many observers are alive.
    public var count: Int { entries.count { $0.object != nil } }
}

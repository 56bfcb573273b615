/// Many observers of one service, held weakly: an observer that is released simply stops being
/// called. Use it where one object would otherwise have a single `delegate`.
///
/// ```swift
/// protocol ListingObserver: AnyObject { func listingViewed(_ id: String) }
/// let observers = MulticastDelegate<ListingObserver>()
/// observers.add(page)
/// observers.notify { $0.listingViewed("L1") }
/// ```
public final class MulticastDelegate<Observer> {
    private var entries: [Weak] = []

    private struct Weak {
        weak var object: AnyObject?
    }

    /// Creates an empty set of observers.
    public init() {}

    /// Adds an observer (a class instance); adding one twice has no effect.
    public func add(_ observer: Observer) {
        let object = observer as AnyObject
        guard !entries.contains(where: { $0.object === object }) else { return }
        entries.append(Weak(object: object))
    }

    /// Removes an observer.
    public func remove(_ observer: Observer) {
        let object = observer as AnyObject
        entries.removeAll { $0.object == nil || $0.object === object }
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

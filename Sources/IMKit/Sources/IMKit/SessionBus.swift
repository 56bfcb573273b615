/// An event components of one chat page send each other, for example "a quick reply was tapped".
///
/// Declare a struct per event; its type is its name, so two events never collide by spelling.
public protocol ChatEvent {}

/// An object that subscribes to a ``SessionBus``. It keeps its subscriptions in a stored
/// ``SubscriptionBag``; when the object is released, the bag goes with it and every subscription
/// it made ends. Nobody unsubscribes by hand.
///
/// ```swift
/// final class DraftSaver: BusSubscriber {
///     let subscriptions = SubscriptionBag()
///     init(context: ChatContext) {
///         context.bus.subscribe(TextSent.self, by: self) { saver, event in saver.clear() }
///     }
/// }
/// ```
public protocol BusSubscriber: AnyObject {
    /// Where this object's subscriptions live: a `let` stored property, created with the object.
    var subscriptions: SubscriptionBag { get }
}

/// The subscriptions one subscriber made. When it is released (with its owner), they end.
public final class SubscriptionBag {
    fileprivate var tokens: [SessionBus.Token] = []

    /// An empty bag; declare one as a stored property of each subscriber.
    public init() {}

    deinit {
        for token in tokens { token.isActive = false }
    }
}

/// Events scoped to one chat page's ``ChatContext``.
///
/// Subscribers are called in the order they subscribed. A subscription ends by itself when its
/// subscriber is released (its ``SubscriptionBag`` goes with it). Events published on one context
/// never reach another context, even for the same peer and event type.
///
/// The bus belongs to its page and is used from the page's thread only. Do not publish from a
/// subscriber's `deinit`.
public final class SessionBus {
    // Delivery holds no weak references: the subscriber is alive exactly as long as its bag, so
    // a token the bag deactivates on release is enough, and calling costs no atomic reference
    // counting. Subscribing and publishing are inlinable so they are specialized for each event
    // type in the module that uses them.

    /// Whether a subscription is live; the subscriber's bag turns it off.
    @usableFromInline
    final class Token {
        @usableFromInline var isActive = true
        @usableFromInline init() {}
    }

    /// One subscription: its token, its subscriber, and how to call it. The event is passed by
    /// address, type-erased, so one non-generic list serves every event type without casts.
    @frozen @usableFromInline
    struct Entry {
        @usableFromInline let token: Token
        @usableFromInline unowned(unsafe) let subscriber: AnyObject
        @usableFromInline let deliver: (AnyObject, UnsafeRawPointer) -> Void

        @inlinable
        init(token: Token, subscriber: AnyObject, deliver: @escaping (AnyObject, UnsafeRawPointer) -> Void) {
            self.token = token
            self.subscriber = subscriber
            self.deliver = deliver
        }
    }

    /// The subscriptions for one event type, in subscription order.
    @usableFromInline
    final class Subscriptions {
        @usableFromInline var entries: [Entry] = []
        @usableFromInline init() {}
    }

    /// Event type → its subscriptions.
    @usableFromInline var subscriptions: [ObjectIdentifier: Subscriptions] = [:]

    /// Creates an empty bus. Each ``ChatContext`` makes its own.
    public init() {}

    @usableFromInline
    func keep(_ token: Token, in bag: SubscriptionBag) {
        bag.tokens.append(token)
    }

    /// Calls `handler` with `subscriber` for every `Event` published on this bus, for as long
    /// as `subscriber` lives. The handler receives the subscriber so it need not capture it
    /// (capturing it strongly would keep it alive for ever).
    @inlinable
    public func subscribe<Subscriber: BusSubscriber, Event: ChatEvent>(
        _ event: Event.Type, by subscriber: Subscriber,
        _ handler: @escaping (Subscriber, Event) -> Void
    ) {
        let list = subscriptions[ObjectIdentifier(event)] ?? {
            let made = Subscriptions()
            subscriptions[ObjectIdentifier(event)] = made
            return made
        }()
        let token = Token()
        keep(token, in: subscriber.subscriptions)
        list.entries.append(Entry(token: token, subscriber: subscriber) { target, event in
            handler(unsafeDowncast(target, to: Subscriber.self), event.assumingMemoryBound(to: Event.self).pointee)
        })
    }

    /// Delivers `event` to this bus's live subscribers of its type, in subscription order.
    /// Subscriptions of released subscribers are dropped.
    @inlinable
    public func publish<Event: ChatEvent>(_ event: Event) {
        guard let list = subscriptions[ObjectIdentifier(Event.self)] else { return }
        var released = false
        // A handler may subscribe more: deliver to those subscribed when publishing began.
        let entries = list.entries
        withUnsafePointer(to: event) { event in
            for entry in entries {
                // Checked before each call: an earlier handler may have released this subscriber.
                if entry.token.isActive {
                    entry.deliver(entry.subscriber, UnsafeRawPointer(event))
                } else {
                    released = true
                }
            }
        }
        if released {
            list.entries.removeAll { !$0.token.isActive }
        }
    }

    /// The number of live subscribers for `event`.
    @inlinable
    public func subscriberCount<Event: ChatEvent>(for event: Event.Type) -> Int {
        subscriptions[ObjectIdentifier(event)]?.entries.count { $0.token.isActive } ?? 0
    }
}

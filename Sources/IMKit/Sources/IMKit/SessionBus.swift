/// An event components of one chat page send each other, for example "a quick reply was tapped".
///
/// Declare a struct per event; its type is its name, so two events never collide by spelling.
public protocol ChatEvent {}

/// Events scoped to one chat page's ``ChatContext``.
///
/// Subscribers are called in the order they subscribed. A subscription ends by itself when its
/// subscriber is released: nobody unsubscribes by hand. Events published on one context never
/// reach another context, even for the same peer and event type.
///
/// The bus belongs to its page and is used from the page's thread only.
public final class SessionBus {
    private struct Subscription {
        weak var subscriber: AnyObject?
        let deliver: (AnyObject, any ChatEvent) -> Void
    }

    private var subscriptions: [ObjectIdentifier: [Subscription]] = [:]

    /// Creates an empty bus. Each ``ChatContext`` makes its own.
    public init() {}

    /// Calls `handler` with `subscriber` for every `Event` published on this bus, for as long
    /// as `subscriber` lives. The handler receives the subscriber so it need not capture it
    /// (capturing it strongly would keep it alive for ever).
    public func subscribe<Subscriber: AnyObject, Event: ChatEvent>(
        _ event: Event.Type, by subscriber: Subscriber,
        _ handler: @escaping (Subscriber, Event) -> Void
    ) {
        let subscription = Subscription(subscriber: subscriber) { target, event in
            handler(unsafeDowncast(target, to: Subscriber.self), event as! Event)
        }
        subscriptions[ObjectIdentifier(event), default: []].append(subscription)
    }

    /// Delivers `event` to this bus's live subscribers of its type, in subscription order.
    /// Subscribers released since the last delivery are dropped.
    public func publish<Event: ChatEvent>(_ event: Event) {
        let key = ObjectIdentifier(Event.self)
        guard let list = subscriptions[key] else { return }
        var released = false
        for subscription in list {
            if let subscriber = subscription.subscriber {
                subscription.deliver(subscriber, event)
            } else {
                released = true
            }
        }
        if released {
            subscriptions[key]?.removeAll { $0.subscriber == nil }
        }
    }

    /// The number of live subscribers for `event`.
    public func subscriberCount<Event: ChatEvent>(for event: Event.Type) -> Int {
        subscriptions[ObjectIdentifier(event)]?.count { $0.subscriber != nil } ?? 0
    }
}

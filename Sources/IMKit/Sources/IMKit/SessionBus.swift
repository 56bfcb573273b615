/// An event components of one chat page send each other, for example "a quick reply was tapped".
///
/// Declare a struct per event; its type is its name, so two events never collide by spelling.
public protocol ChatEvent {}

/// Events scoped to one chat page's ``ChatContext``.
///
/// A subscription lasts as long as the ``Subscription`` that ``subscribe(_:_:)`` returns: keep it
/// in a stored property of the object that handles the events, and capture that object `unowned`
/// in the handler. When the object is released, its subscription goes with it, before the
/// object is gone, so the handler is never called on a released object:
///
/// ```swift
/// final class DraftSaver {
///     private var textSent: Subscription?
///     init(context: ChatContext) {
///         textSent = context.bus.subscribe(TextSent.self) { [unowned self] event in clear() }
///     }
///     func clear() {}
/// }
/// ```
///
/// Subscribers are called in the order they subscribed. Events published on one context never
/// reach another context, even for the same peer and event type.
///
/// The bus belongs to its page and is used from the chat's thread only (see ``CarrierPage``).
public final class SessionBus {
    /// One subscription's place on the bus: how to deliver to it, and whether it still wants to.
    final class Slot {
        let deliver: (UnsafeRawPointer) -> Void
        // The bus is used from the chat's thread only and its accesses never overlap, so these
        // properties skip the dynamic exclusivity check, which cost as much as a delivery.
        @exclusivity(unchecked) var isActive = true

        init(_ deliver: @escaping (UnsafeRawPointer) -> Void) { self.deliver = deliver }
    }

    /// Event type → its subscriptions, in subscription order.
    @exclusivity(unchecked) private var slots: [ObjectIdentifier: [Slot]] = [:]

    /// Creates an empty bus. Each ``ChatContext`` makes its own.
    public init() {}

    /// Calls `handler` for every `Event` published on this bus, for as long as the returned
    /// subscription lives (or until it is cancelled). Keep it: a subscription nobody keeps ends
    /// at once.
    ///
    /// Inlinable so the event's type is known where the handler is written: the bus then stores
    /// an opaque delivery and never casts, and an event costs a few calls (the session-bus row of
    /// `imhost-bench` needs it). Only ``add(_:_:)`` is part of the ABI, not the bus's storage.
    @inlinable
    public func subscribe<Event: ChatEvent>(_ event: Event.Type, _ handler: @escaping (Event) -> Void) -> Subscription {
        add(ObjectIdentifier(event)) { pointer in
            // Safe: `publish` delivers a pointer to an `Event` only to deliveries added for `Event`'s type.
            handler(pointer.assumingMemoryBound(to: Event.self).pointee)
        }
    }

    /// Delivers `event` to this bus's subscriptions of its type, in subscription order. A
    /// handler may subscribe, cancel or publish: new subscriptions get the next event, not this
    /// one; a subscription cancelled during delivery gets nothing more.
    ///
    /// Inlinable for the same reason as ``subscribe(_:_:)``: only ``deliver(_:_:)`` is ABI.
    @inlinable
    public func publish<Event: ChatEvent>(_ event: Event) {
        withUnsafePointer(to: event) { deliver(ObjectIdentifier(Event.self), UnsafeRawPointer($0)) }
    }

    /// The number of live subscriptions to `event`.
    public func subscriberCount<Event: ChatEvent>(for event: Event.Type) -> Int {
        slots[ObjectIdentifier(event)]?.count { $0.isActive } ?? 0
    }

    /// Adds a delivery for an event type. Called by ``subscribe(_:_:)`` only. Usable from
    /// inlinable code because plugins call it from their copy of `subscribe` (the session-bus
    /// row of `imhost-bench`): its name and signature are ABI, its body is not.
    @usableFromInline
    func add(_ event: ObjectIdentifier, _ deliver: @escaping (UnsafeRawPointer) -> Void) -> Subscription {
        let slot = Slot(deliver)
        slots[event, default: []].append(slot)
        return Subscription(bus: self, event: event, slot: slot)
    }

    /// Calls the live deliveries of an event type with a pointer to the event. Called by
    /// ``publish(_:)`` only; usable from inlinable code for the same reason as ``add(_:_:)``.
    @usableFromInline
    func deliver(_ event: ObjectIdentifier, _ pointer: UnsafeRawPointer) {
        // A copy: handlers may subscribe or cancel while it is delivered.
        guard let list = slots[event] else { return }
        withExtendedLifetime(list) {
            for index in list.indices {
                // Safe: `list` holds every slot strongly until the loop is over (the extended
                // lifetime), so this reference cannot outlive its slot. Unretained, a delivery
                // saves a retain and a release: a quarter of its cost (the session-bus row).
                unowned(unsafe) let slot = list[index]
                if slot.isActive { slot.deliver(pointer) }
            }
        }
    }

    /// Forgets a cancelled subscription.
    fileprivate func remove(_ slot: Slot, of event: ObjectIdentifier) {
        slots[event]?.removeAll { $0 === slot }
    }
}

/// One subscription to a ``SessionBus``: events are delivered while it lives. It ends when it is
/// released or cancelled.
public final class Subscription {
    private weak var bus: SessionBus?
    private let event: ObjectIdentifier
    private let slot: SessionBus.Slot

    fileprivate init(bus: SessionBus, event: ObjectIdentifier, slot: SessionBus.Slot) {
        self.bus = bus
        self.event = event
        self.slot = slot
    }

    deinit { cancel() }

    /// Whether events are still delivered.
    public var isActive: Bool { slot.isActive }

    /// Ends the subscription: no more events are delivered to it, from now on.
    public func cancel() {
        guard slot.isActive else { return }
        slot.isActive = false
        bus?.remove(slot, of: event)
    }
}

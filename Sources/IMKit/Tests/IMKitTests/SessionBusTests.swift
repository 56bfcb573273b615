import Testing
import IMKit

@Suite("Session bus")
struct SessionBusTests {
    struct Ping: ChatEvent { var text: String }
    struct Pong: ChatEvent {}

    final class Listener {
        var heard: [String] = []
        var subscription: Subscription?
    }

    @Test("subscribers are called in order; another bus and another event type hear nothing")
    func order() {
        let bus = SessionBus(), other = SessionBus()
        var order: [String] = []
        let a = bus.subscribe(Ping.self) { order.append("a:" + $0.text) }
        let b = bus.subscribe(Ping.self) { order.append("b:" + $0.text) }
        let elsewhere = other.subscribe(Ping.self) { order.append("other:" + $0.text) }
        let pong = bus.subscribe(Pong.self) { _ in order.append("pong") }
        bus.publish(Ping(text: "1"))
        #expect(order == ["a:1", "b:1"])
        withExtendedLifetime((a, b, elsewhere, pong)) {}
    }

    @Test("a subscription ends when it is released or cancelled, before its owner is gone")
    func lifetime() {
        let bus = SessionBus()
        var listener: Listener? = Listener()
        listener!.subscription = bus.subscribe(Ping.self) { [unowned listener = listener!] in listener.heard.append($0.text) }
        bus.publish(Ping(text: "heard"))
        #expect(listener?.heard == ["heard"])
        #expect(bus.subscriberCount(for: Ping.self) == 1)
        listener = nil
        #expect(bus.subscriberCount(for: Ping.self) == 0, "the owner's subscription went with it")
        bus.publish(Ping(text: "nobody"))

        var calls = 0
        let kept = bus.subscribe(Ping.self) { _ in calls += 1 }
        kept.cancel()
        #expect(!kept.isActive)
        bus.publish(Ping(text: "x"))
        #expect(calls == 0)

        _ = bus.subscribe(Ping.self) { _ in calls += 1 }
        bus.publish(Ping(text: "y"))
        #expect(calls == 0, "a subscription nobody keeps ends at once")
    }

    @Test("a handler may cancel, subscribe and publish while an event is delivered")
    func reentrancy() {
        let bus = SessionBus()
        var log: [String] = []
        var second: Subscription?
        var added: Subscription?
        let first = bus.subscribe(Ping.self) { ping in
            log.append("first:" + ping.text)
            second?.cancel()
            if added == nil { added = bus.subscribe(Ping.self) { log.append("added:" + $0.text) } }
            if ping.text == "1" { bus.publish(Ping(text: "nested")) }
        }
        second = bus.subscribe(Ping.self) { log.append("second:" + $0.text) }
        bus.publish(Ping(text: "1"))
        #expect(log == ["first:1", "first:nested", "added:nested"], "a cancelled subscription gets nothing more; a new one gets the next event")
        withExtendedLifetime(first) {}
    }
}

@Suite("Multicast delegate")
struct MulticastDelegateTests {
    final class Observer {
        let name: String
        init(_ name: String) { self.name = name }
    }

    @Test("calls live observers in order, once each, and forgets released ones")
    func observers() {
        let observers = MulticastDelegate<Observer>()
        let first = Observer("first")
        var second: Observer? = Observer("second")
        var order: [String] = []
        observers.add(first)
        observers.add(second!)
        observers.add(first)
        observers.notify { order.append($0.name) }
        #expect(order == ["first", "second"])
        second = nil
        observers.notify { order.append($0.name) }
        #expect(order == ["first", "second", "first"])
        #expect(observers.count == 1)
        observers.remove(first)
        #expect(observers.count == 0)
    }

    @Test("a multicast delegate over a class-bound protocol holds its conformers, and refuses other objects")
    func multicastProtocol() {
        final class Listener: Heard {
            var heard = 0
            func hear() { heard += 1 }
        }
        final class Stranger {}
        let observers = MulticastDelegate<any Heard>()
        let listener = Listener()
        #expect(observers.add(listener))
        let existential: any Heard = listener
        let addedExistential = observers.add(existential)
        #expect(addedExistential, "an existential opens to its class")
        #expect(!observers.add(Stranger()), "an object that is not an observer is refused, not dropped silently")
        observers.notify { $0.hear() }
        #expect(listener.heard == 1)
        #expect(observers.count == 1)
    }
}

protocol Heard: AnyObject {
    func hear()
}

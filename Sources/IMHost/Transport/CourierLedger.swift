/// What the ``Courier``'s parts did during one ``Courier/service()``: the events for whoever shows
/// the chat, in the order they happened, and the counters `imhost sync --json` reports. Each part
/// writes here; the courier hands the events over and keeps the counters.
final class CourierLedger {
    var counters = Courier.Counters()
    private var events: [Courier.Event] = []

    /// Something for a person.
    func say(_ notice: ConnectionNotice) { events.append(.notice(notice)) }

    func record(_ event: Courier.Event) { events.append(event) }

    /// The events since the last call.
    func takeEvents() -> [Courier.Event] {
        defer { events = [] }
        return events
    }
}

/// The user's reports of people, one of the ``Courier``'s parts: each goes from the store to the
/// broker, retained on its own topic (``Topic/report(user:id:)``), where only the operator reads
/// it. A report is marked taken when the broker answers it; one not answered (the connection
/// went, the process ended) goes again at the next connect, and the same id again is the same
/// retained message, so nothing is reported twice.
final class ReportSender {
    private let store: MessageStore
    private let connection: BrokerConnection
    private let ledger: CourierLedger
    /// Whether the store may hold reports not sent on this connection: at each connect, and
    /// when this process or another queued one.
    private var due = true
    /// Reports published on this connection and not answered yet.
    private var out: Set<String> = []

    init(store: MessageStore, connection: BrokerConnection, ledger: CourierLedger) {
        self.store = store
        self.connection = connection
        self.ledger = ledger
    }

    /// The connection went or was made anew: what was not answered goes again.
    func reset() {
        due = true
        out = []
    }

    /// Something may have been queued (a wake): the store is read at the next service.
    func queuedChanged() { due = true }

    /// Publishes what the store holds and this connection has not published.
    func send() {
        guard due, connection.isOnline else { return }
        due = false
        guard let untaken = try? store.untakenReports(limit: 50) else { return }
        for (id, body) in untaken where !out.contains(id) {
            switch connection.send(topic: Topic.report(user: connection.user, id: id).name, payload: body, retain: true, as: .report(id)) {
            case .queued: out.insert(id)
            case .notNow:
                due = true
                return
            case .tooLarge:
                // A report is at most 16 KiB: far below any packet limit a broker is given.
                continue
            }
        }
    }

    /// The broker answered report `id`: taken, it is done; refused (a broker whose users' rules
    /// predate reports), it is said, and kept for the next connect.
    func answered(_ id: String, _ answer: BrokerAnswer, now: Int64) {
        out.remove(id)
        switch answer {
        case .taken: try? store.reportTaken(id, at: now)
        case .refused(let reason): ledger.say(.acl(.publishRefused(user: connection.user, topic: Topic.report(user: connection.user, id: id).name, reason: reason)))
        }
    }
}

/// The user's reports of people, one of the ``Courier``'s parts: each goes from the store to the
/// broker, retained on the user's report topic of its slot (``Topic/report(user:slot:)``), where
/// only the operator reads it. A report is marked taken when the broker answers it; one not
/// answered (the connection went, the process ended) goes again at the next connect (the same
/// slot again is the same retained message, so nothing is reported twice); one refused is said
/// once, and tried again at the next connect. A broker killed outright loses what it took in
/// the second before (mosquitto saves every second): the reports it took in the last
/// ``resendWindow`` of a connection that was lost go again at the next.
final class ReportSender {
    private let store: MessageStore
    private let connection: BrokerConnection
    private let ledger: CourierLedger
    /// Whether the store may hold reports not sent on this connection: at each connect, and
    /// when this process or another queued one.
    private var due = true
    /// Reports published on this connection: not answered yet, or refused.
    private var out: Set<String> = []
    /// When this connection was last seen online, and from when the reports taken before it
    /// was lost go again.
    private var onlineAt: Int64?
    private var resendSince: Int64?
    /// How long before a lost connection a report the broker took is sent again, in milliseconds.
    static let resendWindow: Int64 = 5_000

    init(store: MessageStore, connection: BrokerConnection, ledger: CourierLedger) {
        self.store = store
        self.connection = connection
        self.ledger = ledger
    }

    /// The connection went or was made anew: what was not taken goes again.
    func reset() {
        due = true
        out = []
        if let onlineAt { resendSince = onlineAt - Self.resendWindow }
        onlineAt = nil
    }

    /// Something may have been queued (a wake): the store is read at the next service.
    func queuedChanged() { due = true }

    /// Publishes what the store holds and this connection has not published.
    func send(now: Int64) {
        guard connection.isOnline else { return }
        onlineAt = now
        guard due else { return }
        due = false
        // Those refused on this connection are among the oldest: asked past them.
        guard var untaken = try? store.untakenReports(limit: out.count + 16) else { return }
        if let since = resendSince {
            resendSince = nil
            untaken += (try? store.reportsTaken(since: since)) ?? []
        }
        for report in untaken where !out.contains(report.id) {
            let topic = Topic.report(user: connection.user, slot: report.slot).name
            switch connection.send(topic: topic, payload: report.body, retain: true, as: .report(report.id)) {
            case .queued:
                out.insert(report.id)
            case .notNow:
                due = true
                return
            case .tooLarge(let bytes, let limit):
                // A report is at most 16 KiB, far below any packet a broker is given: said, kept.
                out.insert(report.id)
                ledger.say(.acl(.publishRefused(user: connection.user, topic: topic,
                                                reason: "a packet of \(bytes) bytes is larger than the broker takes (\(limit.map(String.init) ?? "?") bytes)")))
            }
        }
    }

    /// The broker answered report `id`: taken, it is done; refused (a broker whose users' rules
    /// predate reports, under MQTT 5), it is said, and kept for the next connect.
    func answered(_ id: String, _ answer: BrokerAnswer, now: Int64) {
        switch answer {
        case .taken:
            out.remove(id)
            try? store.reportTaken(id, at: now)
        case .refused(let reason):
            ledger.say(.acl(.publishRefused(user: connection.user, topic: Topic.Filter.reportsBy(connection.user).name, reason: reason)))
        }
    }
}

/// The values a ``BrokerConnection`` keeps and hands back: what this host knows of the
/// connection it has, and what a service of it brings.
extension BrokerConnection {
    /// What this host knows of the connection it has now.
    struct Online {
        /// The fleet configuration's subscription, and when the broker granted it.
        var fleet: (id: Int32, grantedAt: Int64?)?
        /// The probe sent through the inbox once it is subscribed.
        var probe = Probe.notSent

        enum Probe: Equatable {
            case notSent
            /// Out, to come back by `deadline`.
            case out(id: String, deadline: Int64)
            /// It came back: the broker has delivered everything that waited before it.
            case back
            /// It did not come back in time.
            case lost
        }
    }

    /// What ``service(now:)`` hands back.
    enum Happening {
        /// A connection was made: what was not delivered goes again.
        case connected
        /// A message that is not the fleet configuration's.
        case message(topic: String, payload: [UInt8], retained: Bool)
        /// The broker answered a message or receipts publish.
        case answered(BrokerLink.Publish, BrokerAnswer)
        /// A fleet configuration came (retained, or as the operator published it): its bytes.
        case fleet([UInt8])
    }
}

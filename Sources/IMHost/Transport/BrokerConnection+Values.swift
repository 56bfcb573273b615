/// The values a ``BrokerConnection`` keeps and hands back: what an online connection knows, what
/// a publish waiting for the broker's answer was, and what a service of it brings.
extension BrokerConnection {
    /// What an online connection knows.
    struct Online {
        /// The inbox's subscription: asked for (its id), then granted; until then nothing is sent.
        var inbox: Subscription = .notAsked
        /// The subscription that brings the retained presence record.
        var presence: Int32?
        /// The fleet configuration's subscription, and when the broker granted it.
        var fleet: (id: Int32, grantedAt: Int64?)?
        /// The probe sent through the inbox once it is subscribed.
        var probe = Probe.notSent
        /// The largest packet the broker takes, as it said when it took the connection (`nil`:
        /// it said none).
        var packetLimit: Int?

        enum Subscription: Equatable {
            case notAsked, asked(Int32), granted
        }

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

    /// What became of a publish.
    enum Sent: Equatable {
        /// Queued on the connection; the broker's answer comes later.
        case queued
        /// The connection cannot take it now (offline, or the client could not queue it).
        case notNow
        /// Larger than the broker takes: a packet of `bytes`, and the broker's limit when it said
        /// one. It fails the same way until the broker's operator raises the limit.
        case tooLarge(bytes: Int, limit: Int?)
    }

    /// What a publish the broker has yet to answer was, for whoever made it.
    enum Publish {
        case message(QueuedSend)
        case receipts([MessageStore.QueuedReceipt])
        /// A receipt, a confirmation, a presence record or a status: nothing waits on its answer.
        case answer
        case probe
    }

    /// What ``service(now:)`` hands back.
    enum Happening {
        /// A connection was made: what was not delivered goes again.
        case connected
        /// A message that is not the fleet configuration's.
        case message(topic: String, payload: [UInt8], retained: Bool)
        /// The broker answered a message or receipts publish.
        case answered(Publish, BrokerAnswer)
        /// A fleet configuration came (retained, or as the operator published it): its bytes.
        case fleet([UInt8])
    }
}

extension BrokerConnection.Online.Subscription {
    /// The id an answer to it names, while it waits for one.
    var id: Int32? { if case .asked(let id) = self { id } else { nil } }
}

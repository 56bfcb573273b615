/// The values a ``BrokerLink`` is made with and hands back: who connects where and how, how long
/// it keeps trying, what an online connection knows, what a publish was, and what a service of
/// it brings.
extension BrokerLink {
    /// Who connects, where, and how.
    struct Endpoint {
        /// The broker's addresses, tried in turn (``Failover``). Never empty.
        var addresses: [HostConfig.Transport.Address]
        var protocolChoice: HostConfig.Transport.ProtocolChoice
        /// The login, and the user whose session it is (``ConnectionNotice/takenOver(user:)``
        /// names it).
        var login: String
        var user: String
        var password: Password
        var tls: BrokerClientSettings.TLSFiles?
        /// Whether the broker keeps the session while this login is away (a host's), or starts
        /// it clean each time (a command's).
        var keepsSession: Bool
        /// The largest packet this connection takes.
        var maximumPacket: Int
        /// What the connection subscribes to first, the inbox: its answers come there. Until
        /// the broker grants it nothing is sent; a broker that refuses it, or does not answer
        /// it within ``BrokerLink/answerWait``, is left for the next address. `nil`: none.
        var inbox: String?

        /// A host's connection, as host.json's `transport` says: its first device's login is the
        /// user, another's is `transport.login`.
        init(transport: HostConfig.Transport, user: String, keepsSession: Bool, maximumPacket: Int, inbox: String?) {
            addresses = transport.addresses
            protocolChoice = transport.protocolChoice
            login = transport.login ?? user
            self.user = user
            password = .file(transport.passwordFile)
            tls = transport.caFile.map { .init(ca: $0, cert: transport.certFile, key: transport.keyFile) }
            self.keepsSession = keepsSession
            self.maximumPacket = maximumPacket
            self.inbox = inbox
        }

        init(addresses: [HostConfig.Transport.Address], login: String, password: String, maximumPacket: Int, inbox: String?) {
            self.addresses = addresses
            protocolChoice = .auto
            self.login = login
            user = login
            self.password = .given(password)
            keepsSession = false
            self.maximumPacket = maximumPacket
            self.inbox = inbox
        }

        /// The password file a refused login is told to check (none for a password given).
        var passwordFile: String {
            if case .file(let file) = password { file } else { "" }
        }
    }

    /// Where the password comes from: a file read at each attempt (host.json's `passwordFile`),
    /// or one the caller holds.
    enum Password {
        case file(String)
        case given(String)
    }

    /// How long a connection keeps trying.
    enum Persistence: Equatable {
        /// For as long as it is wanted, saying each outage once (a chat, `imhost web`).
        case always
        /// Each address once, unsaid: the first round's failure ends it (`imhost sync`, a command
        /// on one broker).
        case oneRound
        /// Unsaid; a failure that may pass as it is (a node down or not serving, none
        /// answering) is tried again, round after round, until this time (the clock's), any
        /// other ends it (a command on a cluster).
        case until(Int64)
    }

    /// What an online connection knows.
    struct Online {
        /// The inbox's subscription: asked for (its id), then granted.
        var inbox: Subscription = .notAsked
        /// What each publish the broker has yet to answer was.
        var publishing: [Int32: Publish] = [:]
        /// Subscriptions whose answer is waited for as a publish's is.
        var awaited: Set<Int32> = []
        /// Since when what waits for the broker's answer has had none: the broker moved on from
        /// after ``BrokerLink/answerWait``.
        var waitingSince: Int64?
        /// The largest packet the broker takes, as it said when it took the connection (`nil`:
        /// it said none).
        var packetLimit: Int?

        /// Whether anything waits for the broker's answer.
        var awaitsAnswer: Bool { !publishing.isEmpty || inbox.id != nil || !awaited.isEmpty }

        enum Subscription: Equatable {
            case notAsked, asked(Int32), granted

            /// The id an answer to it names, while it waits for one.
            var id: Int32? { if case .asked(let id) = self { id } else { nil } }
        }
    }

    /// What a publish the broker has yet to answer was, for whoever made it.
    enum Publish {
        case message(QueuedSend)
        case receipts([MessageStore.QueuedReceipt])
        /// A receipt, a confirmation, a presence record or a status: nothing waits on its answer.
        case answer
        case probe
        /// A person's report (``ReportSender``), by its id.
        case report(String)
        /// A command's publish, whose answer the command waits for.
        case call
    }

    /// What became of a publish.
    enum Sent: Equatable {
        /// Queued on the connection, under this id; the broker's answer comes later.
        case queued(Int32)
        /// The connection cannot take it now (offline, or the client could not queue it).
        case notNow
        /// Larger than the broker takes: a packet of `bytes`, and the broker's limit when it said
        /// one. It fails the same way until the broker's operator raises the limit.
        case tooLarge(bytes: Int, limit: Int?)
    }

    /// What ``service(now:)`` hands back.
    enum Event {
        /// The broker took the connection: its owner subscribes what it reads (the inbox first,
        /// ``subscribeInbox()``).
        case connected
        /// The broker granted the inbox: what is sent now gets its answers.
        case inboxGranted
        /// The broker answered a subscription that is not the inbox's.
        case subscribed(id: Int32, BrokerAnswer)
        case message(topic: String, payload: [UInt8], retained: Bool)
        /// The broker answered publish `id` (but an ``Publish/answer``).
        case answered(id: Int32, Publish, BrokerAnswer)
    }
}

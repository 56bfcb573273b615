/// The host and the broker: which process talks to it (the one holding the user's connection
/// lock), and what everyone else does (works through the database).
extension ChatHost {
    /// Whether host.json names a transport; without one the host works alone and what is sent
    /// stays queued.
    public var hasTransport: Bool { config.transport != nil }

    /// Takes the user's connection when this process is to talk to the broker and nobody else
    /// of this user does; otherwise notes who does. Either way, what `sender` queues wakes the
    /// process that holds it.
    func takeConnection(store: MessageStore, sender: MessageSender, online: Bool, elsewhere: Bool = false) {
        guard let transport = config.transport else { return }
        // Also in a process that never holds it (a browser page's worker): the holder is woken,
        // and does not look at the outbox every second.
        sender.onQueued = { [weak self] _ in self?.wakeConnection() }
        sender.onRevised = { [weak self] in self?.wakeConnection() }
        guard let command = connectionCommand else { return }
        guard userID != TransportID.operatorID else {
            announce("\(TransportID.operatorID) publishes the fleet configuration (imhost fleet) and does not chat: this process works through the database only; sign in as a user")
            return
        }
        switch ConnectionLock.take(for: store, command: command) {
        case .taken(let lock):
            let courier = Courier(settings: transport, user: userID, store: store, payloadLimit: config.limits.payloadBytes, photoLimit: config.limits.photoBytes, fileLimit: config.limits.fileBytes,
                                  budget: MessageStore.PeerBudget(config.limits), lock: lock,
                                  // Real time, even under a scenario's fixed clock: backoffs, leases and
                                  // giving up are measured in it.
                                  clock: { Clock.now() })
            if !online { courier.setOnline(false) } else if elsewhere { courier.resumeElsewhere() }
            courier.fleetReport = fleetReport
            // Its receipts say which lines it draws: those that serve now (ChatHost.apply keeps it so).
            courier.drawnLines = Envelope.Draws.lines(of: lines.builds)
            courier.showsOnline = config.onlineStatus == .everyone
            self.courier = courier
        case .held(let holder):
            // Who, when the lock file says; another process of this user in any case.
            connectionHolder = holder ?? ConnectionLock.Holder(pid: 0, command: "(unknown)")
            // sync says so itself, with how long it waits.
            if command != "sync" {
                announce("\(holder.map(\.description) ?? "another imhost process") holds \(userID)'s connection: it sends what this one queues; this one works through the database")
            }
        case .unusable(let why):
            announce("cannot hold the connection to the broker: \(why); this process works through the database only")
        }
    }

    /// Something was queued (a send, `/retry`, a read receipt): the process holding the
    /// connection sends it at once, this one or another of the user's (woken through its
    /// ``WakeSocket``).
    public func wakeConnection() {
        if let courier {
            courier.sendSoon()
        } else if let store {
            WakeSocket.poke(store)
        }
    }

    /// The user is typing to `peer`: the process holding the connection signals it (this one,
    /// or another of the user's, through its ``WakeSocket``; never through the store).
    public func typing(to peer: String) {
        if let courier {
            courier.typing(to: peer)
        } else if let folder = store?.folder {
            WakeSocket.typing(folder: folder, peer: peer)
        }
    }

    /// Where `peer` stands as the connection knows it (online, last heard from); `nil` in a
    /// process that does not hold it.
    public func seen(_ peer: String) -> (online: Bool, lastSeen: Int64?)? {
        courier?.seen(peer)
    }

    /// Runs the connection once (see ``Courier/service()``): lines' services go online and
    /// offline with it. Returns what happened.
    public func serviceConnection() -> [Courier.Event] {
        guard let courier else { return [] }
        let events = courier.service().compactMap { event in
            guard case .fleet(let bytes) = event else { return event }
            return receiveFleet(bytes)
        }
        let online = courier.status == .online
        if session?.isOnline != online { session?.setOnline(online) }
        return events
    }

    /// Takes the user online or offline (`/online`, `/offline`): the connection, and lines'
    /// services (`online()` in order, `offline()` in reverse). Returns what happened, for a person.
    @discardableResult
    public func setOnline(_ online: Bool) -> OnlineAnswer {
        wantsOnline = online
        guard hasTransport else { return .noTransport(file: FileSystem.baseName(config.file)) }
        guard let courier else { return .heldElsewhere(holder: connectionHolder.map { "\($0)" }) }
        courier.setOnline(online)
        if !online { session?.setOnline(false) }
        return online ? .online : .offline
    }

    /// What asking to be online or offline came to.
    public enum OnlineAnswer: Sendable, Equatable {
        /// Connecting, or dropped: what is sent waits, queued, until online again.
        case online, offline
        /// host.json (`file`) has no transport: nothing is sent anywhere.
        case noTransport(file: String)
        /// Another process holds the user's connection (`holder`, as it said, when known) and sends
        /// what this one sends: this chat works through the database.
        case heldElsewhere(holder: String?)
    }

    /// Why a peer id cannot be chatted with over this host's transport, if it cannot.
    func transportProblem(peer: String) -> String? {
        guard hasTransport, let problem = TransportID.problem(peer) else { return nil }
        return "the peer id \"\(peer)\" \(problem)"
    }
}

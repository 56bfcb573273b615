/// Who holds the user's session (the presence record, the probe), and the fleet status report
/// and goodbye: the parts of a ``BrokerConnection`` that speak for this host on its own topics.
extension BrokerConnection {
    // MARK: Who holds the session

    /// Says, retained on the user's own inbox, that this connection holds the user's session.
    func publishPresence() {
        publish(topic: presenceTopic, payload: Envelope.presence(id: claim.connectionID, at: clock()).bytes, retain: true, as: .answer)
    }

    /// A presence record came through the inbox: this host holds the session, or another host of
    /// the user took it after this one did, and this one leaves (without a goodbye: the status
    /// topic is the other host's now) and stays offline until the user says otherwise.
    func sawPresence(_ id: String) {
        guard claim.saw(id) == .takenOver, let client else { return }
        client.disconnect()
        claim.tookElsewhere()
        link.stop(.connectedElsewhere(user: user))
        notices.say(.connectedElsewhere(user: user))
    }

    /// The first connection takes the session only if no other host of the user holds it; when
    /// one does, this one leaves at once (``connectedElsewhere``). For `imhost sync`: a one-shot
    /// command must not throw a running chat off for good.
    func connectUnlessHeld() { claim.claimNone() }

    /// Starts where a worker that was thrown off left it (a chat's worker started again):
    /// offline, connected elsewhere, until `/online` takes the session back.
    func resumeElsewhere() {
        claim.tookElsewhere()
        link.stop(.connectedElsewhere(user: user))
        notices.say(.stillElsewhere(user: user))
    }

    func sendProbe(now: Int64) {
        let id = "probe-" + GlobalID.make(at: now)
        guard publish(topic: Topic.inbox(to: user, from: user).name, payload: Envelope.probe(id: id).bytes, as: .probe) else { return }
        online?.probe = .out(id: id, deadline: now + (version == .v311 ? Self.probeMilliseconds311 : Self.probeMilliseconds))
    }

    /// A probe came back through the inbox: when it is this connection's, the inbox works.
    func probeCame(_ id: String) {
        guard case .out(id, _)? = online?.probe else { return }
        online?.probe = .back
        // The connection works end to end: the backoff and the run of failed addresses restart.
        link.confirmed()
        // Sent after the fleet subscription: a retained configuration came before it.
        fleetSettled = true
        // And after the inbox's: so did a presence record. None came: the broker lost it.
        if claim.noRecordCame() { publishPresence() }
    }

    // MARK: Fleet status and goodbye

    /// Publishes this host's status, retained. Returns the publish's message id.
    @discardableResult
    func reportFleetStatus(state: Envelope.Status.State = .running) -> Int32? {
        guard case .queued(let id) = link.send(topic: Topic.fleetStatus(user: user).name, payload: fleetReport.document(state: state, at: clock()),
                                               retain: true, as: .answer) else {
            return nil
        }
        return id
    }

    /// Reports this host gone (with the version it applied: the will, made at connect, may name
    /// an older one) and disconnects, keeping the session. Waits (at most half a second) for the
    /// broker to take the report first: mosquitto 2.0 treats a client that leaves before its
    /// PUBACK as lost, and publishes its will over the report. The broker's answers to messages
    /// and receipts meanwhile go to `answered`, a batch at a time; a message arriving now is not
    /// stored, so not answered: its sender sends it again.
    func goodbye(_ answered: ([(BrokerLink.Publish, BrokerAnswer)]) -> Void) {
        guard isOnline, let client else { return }
        // Its presence record goes with the host that holds the session (before the status,
        // whose answer is waited for): a host of the user that comes later does not take it
        // for one still here.
        if claim.settled, !keepsPresence { _ = client.publish(topic: presenceTopic, payload: [], retain: true) }
        guard let report = reportFleetStatus(state: .gone) else { return }
        let deadline = Clock.monotonic() + 500_000_000
        var taken = false
        while !taken, Clock.monotonic() < deadline {
            var batch: [(BrokerLink.Publish, BrokerAnswer)] = []
            for event in client.service() {
                switch event {
                case .published(let id, let answer):
                    if let what = link.takeAnswer(id, now: clock()) { batch.append((what, answer)) }
                    if id == report { taken = true }
                case .disconnected:
                    answered(batch)
                    return
                default:
                    break
                }
            }
            answered(batch)
            if !taken { MQTTClient.wait(on: client.descriptors, milliseconds: 20) }
        }
        client.disconnect()
    }
}

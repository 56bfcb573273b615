import IMKit

/// The host's service for the connection (`host.transport`, ``HostServices/transport``): a
/// line's service that sends or watches the connection declares it as a dependency, so it is
/// built after it and finalized before it. Without a transport in host.json the user stays
/// offline, and what they send stays queued in the store.
final class ConnectionService: Service {
    static let id = HostServices.transport

    required init() {}
}

@_spi(Host) import IMKit

/// One signed-in user's services, driven through their lifecycle: prepare, initialize, online
/// and offline, finalize. Built in dependency order, finalized in reverse.
final class UserSession {
    let context: UserContext
    /// Services that could not be built, each with the reason; the rest run without them.
    private(set) var problems: [String] = []
    private(set) var isOnline = false
    private var built: [any Service] = []

    init(user: String, services registrations: [ServiceRegistration]) {
        context = UserContext(user: user)
        start(registrations)
    }

    /// Builds services in dependency order (`prepare` all, then `initialize` all) and, when the
    /// user is online, takes them online. Used at sign-in, and when a line loads later: its
    /// services depend only on the host's and its own, which are already running.
    func start(_ registrations: [ServiceRegistration]) {
        let running = Set(built.map { type(of: $0).id })
        let ordered: [ServiceRegistration]
        switch ServiceRegistration.buildOrder(registrations.filter { !running.contains($0.id) }, running: running) {
        case .success(let order): ordered = order
        case .failure(let error):
            // Registration refuses cycles and missing dependencies; this is a last guard.
            problems.append("\(error)")
            return
        }
        let instances = ordered.map { ($0, $0.make()) }
        var ready: [(ServiceRegistration, any Service)] = []
        for (registration, service) in instances {
            do {
                try service.prepare(in: context)
                ready.append((registration, service))
            } catch {
                problems.append("service '\(registration.id)' (\(registration.owner)) failed to prepare: \(error)")
                service.finalize()
            }
        }
        var failed: Set<String> = Set(instances.map(\.0.id)).subtracting(ready.map(\.0.id))
        var started: [any Service] = []
        for (registration, service) in ready {
            if let missing = registration.dependencies.first(where: failed.contains) {
                problems.append("service '\(registration.id)' (\(registration.owner)) is not started: it depends on '\(missing)', which failed")
                failed.insert(registration.id)
                service.finalize()
                continue
            }
            // Initialize sees its dependencies in the context, already initialized.
            context.add(service)
            do {
                try service.initialize(in: context)
                started.append(service)
            } catch {
                problems.append("service '\(registration.id)' (\(registration.owner)) failed to initialize: \(error)")
                failed.insert(registration.id)
                context.remove(service)
                service.finalize()
            }
        }
        built += started
        if isOnline { started.forEach { $0.online() } }
    }

    /// Calls `online()` on every service in dependency order, or `offline()` in reverse.
    func setOnline(_ online: Bool) {
        guard online != isOnline else { return }
        isOnline = online
        if online {
            built.forEach { $0.online() }
        } else {
            built.reversed().forEach { $0.offline() }
        }
    }

    /// Takes the user offline, then finalizes every service in reverse order and drops them.
    func finalize() {
        setOnline(false)
        for service in built.reversed() {
            service.finalize()
            context.remove(service)
        }
        built = []
    }
}
